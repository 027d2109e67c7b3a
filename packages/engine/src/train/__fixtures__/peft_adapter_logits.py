"""Loads a LoRA adapter with PEFT onto its base model and prints how far its logits are from the merged checkpoint's.

    python peft_adapter_logits.py <base dir> <adapter dir> <merged dir>

Prints one JSON line: {"maxAbsDiff": float, "baseGap": float, "adapted": [module names PEFT wrapped]}; `baseGap` is how
far the base model's own logits are from the merged checkpoint's (what the adapter changes).
"""

import json
import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

base_dir, adapter_dir, merged_dir = sys.argv[1:4]
base = AutoModelForCausalLM.from_pretrained(base_dir, torch_dtype=torch.float32)
adapted = PeftModel.from_pretrained(base, adapter_dir)
merged = AutoModelForCausalLM.from_pretrained(merged_dir, torch_dtype=torch.float32)
ids = torch.tensor([[1, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70]])
with torch.no_grad():
    want = merged(input_ids=ids).logits
    gap = (adapted(input_ids=ids).logits - want).abs().max().item()
    with adapted.disable_adapter():
        base_gap = (adapted(input_ids=ids).logits - want).abs().max().item()
wrapped = sorted({n.split(".lora_A")[0] for n, _ in adapted.named_parameters() if ".lora_A" in n})
print(json.dumps({"maxAbsDiff": gap, "baseGap": base_gap, "adapted": wrapped}))

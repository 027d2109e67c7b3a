"""Loads LoRA adapters with PEFT onto their base models and prints how far their logits are from the merged checkpoints'.

    python peft_adapter_logits.py <base dir> <adapter dir> <merged dir> [<base dir> <adapter dir> <merged dir> ...]

Prints one JSON line: a list with, for each triple, {"maxAbsDiff": float, "baseGap": float, "adapted": [module names
PEFT wrapped]}; `baseGap` is how far the base model's own logits are from the merged checkpoint's (what the adapter
changes).
"""

import json
import sys

import torch
from peft import PeftModel
from transformers import AutoModelForCausalLM

ids = torch.tensor([[1, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70]])
checks = []
args = sys.argv[1:]
for base_dir, adapter_dir, merged_dir in zip(args[0::3], args[1::3], args[2::3]):
    base = AutoModelForCausalLM.from_pretrained(base_dir, torch_dtype=torch.float32)
    adapted = PeftModel.from_pretrained(base, adapter_dir)
    merged = AutoModelForCausalLM.from_pretrained(merged_dir, torch_dtype=torch.float32)
    with torch.no_grad():
        want = merged(input_ids=ids).logits
        gap = (adapted(input_ids=ids).logits - want).abs().max().item()
        with adapted.disable_adapter():
            base_gap = (adapted(input_ids=ids).logits - want).abs().max().item()
    wrapped = sorted({n.split(".lora_A")[0] for n, _ in adapted.named_parameters() if ".lora_A" in n})
    checks.append({"maxAbsDiff": gap, "baseGap": base_gap, "adapted": wrapped})
print(json.dumps(checks))

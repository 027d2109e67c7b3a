"""transformers' own logits for rope-scaling.test.ts: for each RoPE scaling in the JSON on stdin, a tiny random Llama
saved with save_pretrained under <out>/<name>, and its float32 logits on the given token ids (printed as JSON)."""
import json
import os
import sys

import torch
from transformers import AutoModelForCausalLM, LlamaConfig

request = json.load(sys.stdin)
out = {}
for name, scaling in request["scalings"].items():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=264, hidden_size=64, intermediate_size=176, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256,
                         rope_theta=10000.0, rope_scaling=scaling, tie_word_embeddings=True)
    model = AutoModelForCausalLM.from_config(config).eval()
    directory = os.path.join(request["out"], name)
    model.save_pretrained(directory)
    with torch.no_grad():
        logits = model(torch.tensor([request["tokens"]])).logits[0]
    out[name] = logits.tolist()
print(json.dumps(out))

"""Generates the same batch on a small random Llama with the shared-prefix prefill and without it, and prints as JSON
the largest log-prob difference, whether every row's tokens are the same, and how many token positions the model
ran in each case (the shared prefix runs once, not once per row)."""

import json
import types

import torch
from transformers import LlamaConfig, LlamaForCausalLM

from arc_torch.sampling import generate

torch.manual_seed(0)
config = LlamaConfig(vocab_size=300, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                     num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
model = LlamaForCausalLM(config).eval()
positions_run = [0]
model.register_forward_pre_hook(lambda _, args, kwargs: positions_run.__setitem__(
    0, positions_run[0] + kwargs["input_ids"].numel()), with_kwargs=True)
engine = types.SimpleNamespace(model=model, device="cpu", hf_config=config, tokenizer=None, eos_ids=[], version=0,
                               prefix_cache=None)
system = list(range(10, 60))
requests = [
    {"promptTokens": system + [5, 6, 7], "n": 3, "maxTokens": 8, "temperature": 1.0, "seed": 1, "topLogprobs": 2},
    {"promptTokens": system + [9] * 9, "maxTokens": 10, "temperature": 0, "seed": 2},
    {"promptTokens": system + [1], "maxTokens": 6, "temperature": 0.7, "seed": 3},
]
runs = {}
for share in (True, False):
    positions_run[0] = 0
    results = generate(engine, requests, lambda _: False, share_prefix=share)
    runs[share] = (results, positions_run[0])
shared, plain = runs[True][0], runs[False][0]
print(json.dumps({
    "sameTokens": all(a["outputTokens"] == b["outputTokens"] for a, b in zip(shared, plain)),
    "maxLogprobDiff": max(abs(x - y) for a, b in zip(shared, plain)
                          for x, y in zip(a["outputLogprobs"], b["outputLogprobs"])),
    "positionsShared": runs[True][1],
    "positionsPlain": runs[False][1],
}))

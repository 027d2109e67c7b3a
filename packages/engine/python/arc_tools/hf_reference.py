"""What plain transformers makes of a checkpoint, the reference Arc's engines are held to: the ids of
`apply_chat_template` (tools included), the log-prob of every token of a sequence after its first, and greedy
decoding with `generate`. Float32 on the CPU.

    python -m arc_tools.hf_reference < request.json > answer.json

The request: `{"modelDir", "threads"?, "conversations": [{"messages", "tools"?}], "sequences": [[ids...]],
"greedy": [{"promptTokens", "maxTokens"}], "adapters"?: [folder...]}`; the answer: `{"templates": [[ids...]],
"logprobs": [[...]], "greedy": [[ids...]], "adapterGreedy": [[[ids...]]], "seconds": {...}}`, each list in the
request's order. `adapters` are LoRA adapter folders in PEFT's layout: PEFT puts each on the model in turn, and
`adapterGreedy[i]` is the greedy decoding of every prompt with adapter i.
"""

import json
import sys
import time
from typing import Any

import torch


def decode_greedily(model: Any, prompts: list) -> list:
    """`generate`'s greedy tokens for each `{"promptTokens", "maxTokens"}`, one prompt at a time (no padding)."""
    eos = model.generation_config.eos_token_id
    pad = eos if isinstance(eos, int) else (eos or [None])[0]
    out = []
    with torch.no_grad():
        for g in prompts:
            prompt = torch.tensor([g["promptTokens"]])
            tokens = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=g["maxTokens"],
                                    do_sample=False, eos_token_id=eos, pad_token_id=pad)
            out.append(tokens[0, prompt.shape[1]:].tolist())
    return out


def main() -> None:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    request = json.load(sys.stdin)
    torch.set_num_threads(int(request.get("threads") or 1))
    seconds = {}
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(request["modelDir"])
    model = AutoModelForCausalLM.from_pretrained(request["modelDir"], dtype=torch.float32).eval()
    seconds["load"] = time.perf_counter() - started

    started = time.perf_counter()
    templates = [
        list(tokenizer.apply_chat_template(c["messages"], tools=c.get("tools"), add_generation_prompt=True,
                                           tokenize=True, return_dict=True)["input_ids"])
        for c in request.get("conversations", [])
    ]
    seconds["templates"] = time.perf_counter() - started

    started = time.perf_counter()
    logprobs = []
    with torch.no_grad():
        for ids in request.get("sequences", []):
            tokens = torch.tensor([ids])
            logits = model(tokens).logits[0, :-1].float()  # [T-1, V]
            picked = torch.log_softmax(logits, -1).gather(-1, tokens[0, 1:, None])[:, 0]
            logprobs.append(picked.tolist())
    seconds["logprobs"] = time.perf_counter() - started

    started = time.perf_counter()
    greedy = decode_greedily(model, request.get("greedy", []))
    adapter_greedy = []
    if request.get("adapters"):
        from peft import PeftModel

        for i, folder in enumerate(request["adapters"]):
            if i == 0:
                model = PeftModel.from_pretrained(model, folder, adapter_name="adapter0").eval()
            else:
                model.load_adapter(folder, adapter_name=f"adapter{i}")
            model.set_adapter(f"adapter{i}")
            adapter_greedy.append(decode_greedily(model, request.get("greedy", [])))
    seconds["greedy"] = time.perf_counter() - started
    json.dump({"templates": templates, "logprobs": logprobs, "greedy": greedy, "adapterGreedy": adapter_greedy,
               "seconds": seconds}, sys.stdout)


if __name__ == "__main__":
    main()

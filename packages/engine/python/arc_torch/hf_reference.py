"""What plain transformers makes of a checkpoint, the reference Arc's engines are held to: the ids of
`apply_chat_template` (tools included), the log-prob of every token of a sequence after its first, and greedy
decoding with `generate`. Float32 on the CPU.

    python -m arc_torch.hf_reference < request.json > answer.json

The request: `{"modelDir", "threads"?, "conversations": [{"messages", "tools"?}], "sequences": [[ids...]],
"greedy": [{"promptTokens", "maxTokens"}]}`; the answer: `{"templates": [[ids...]], "logprobs": [[...]],
"greedy": [[ids...]], "seconds": {...}}`, each list in the request's order.
"""

import json
import sys
import time

import torch


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
    greedy = []
    eos = model.generation_config.eos_token_id
    with torch.no_grad():
        for g in request.get("greedy", []):
            prompt = torch.tensor([g["promptTokens"]])
            out = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=g["maxTokens"],
                                 do_sample=False, eos_token_id=eos, pad_token_id=eos if isinstance(eos, int) else
                                 (eos or [None])[0])
            greedy.append(out[0, prompt.shape[1]:].tolist())
    seconds["greedy"] = time.perf_counter() - started
    json.dump({"templates": templates, "logprobs": logprobs, "greedy": greedy, "seconds": seconds}, sys.stdout)


if __name__ == "__main__":
    main()

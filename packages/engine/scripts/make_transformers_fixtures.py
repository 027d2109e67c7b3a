#!/usr/bin/env python3
"""Reference outputs of HF transformers itself, for the engine's checkpoint tests (hf-transformers.test.ts).

Usage (where torch and transformers are installed, e.g. the GPU machine):
    python3 packages/engine/scripts/make_transformers_fixtures.py <repo-root> <out-dir> [<checkpoint-dir> ...]

Checkpoint dirs given after <out-dir> (relative to <repo-root>) replace the fixtures' list in exported.json: a
one-off check of other exported models (e.g. the committed teachers) that hf-transformers.test.ts runs when that
exported.json takes the fixture's place.

It writes into <out-dir>:
- exported.json: for each checkpoint the engine exported (models/toolcall-base, models/arith-base, and a tiny
  teacher the engine exported, kept beside the fixtures in exported/teacher-toolcall-sft: the committed teachers
  are retrained more often than a machine with transformers is at hand),
  what AutoTokenizer.apply_chat_template makes of the conversations in conversations.json, the decoded text,
  AutoModelForCausalLM's logits on those ids (every position of the first conversation for the first model, the
  last position otherwise), and its greedy generation (model.generate, do_sample=False).
- made-by-transformers/<name>/: tiny random checkpoints written by transformers' save_pretrained (a Llama
  with tied embeddings in float32, a Qwen2 with an untied head in bfloat16, sharded), and made.json with
  their logits (read back from disk in float32) on fixed token ids.
Everything runs on the CPU in float32, so the numbers do not depend on GPU kernels.
"""
import json
import os
import sys

import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig, Qwen2Config

EXPORTED = [
    "models/toolcall-base",
    "models/arith-base",
    "packages/engine/src/checkpoint/__fixtures__/transformers/exported/teacher-toolcall-sft",
]
MAX_NEW_TOKENS = 48
MADE_TOKENS = [256, 260, 72, 101, 108, 108, 111, 33, 263, 261, 200, 13, 7, 99, 1, 0, 255]


def rounded(rows):
    return [[round(float(x), 5) for x in row] for row in rows]


def chat_ids(tokenizer, messages):
    out = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
    if hasattr(out, "keys"):
        out = out["input_ids"]
    return [int(i) for i in out]


def load_float32(directory):
    try:
        return AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32).eval()
    except TypeError:
        return AutoModelForCausalLM.from_pretrained(directory, torch_dtype=torch.float32).eval()


def exported_reference(root, directory, conversations, full_logits):
    path = os.path.join(root, directory)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = load_float32(path)
    eos = model.generation_config.eos_token_id
    cases = []
    for i, conversation in enumerate(conversations):
        ids = chat_ids(tokenizer, conversation["messages"])
        with torch.no_grad():
            logits = model(torch.tensor([ids])).logits[0]
            generated = model.generate(
                torch.tensor([ids]),
                attention_mask=torch.ones(1, len(ids), dtype=torch.long),
                do_sample=False,
                max_new_tokens=MAX_NEW_TOKENS,
                eos_token_id=eos,
                pad_token_id=tokenizer.pad_token_id,
            )[0][len(ids) :].tolist()
        full = full_logits and i == 0
        rows = logits if full else logits[-1:]
        cases.append(
            {
                "name": conversation["name"],
                "ids": ids,
                "decoded": tokenizer.decode(ids, skip_special_tokens=True),
                "logits_from_position": 0 if full else len(ids) - 1,
                "logits": rounded(rows.tolist()),
                "greedy": [int(t) for t in generated],
                "greedy_text": tokenizer.decode(generated, skip_special_tokens=True),
            }
        )
    return {"eos_token_id": eos, "cases": cases}


def scaled_random_init(model, seed):
    torch.manual_seed(seed)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("norm.weight"):
                p.copy_(1 + 0.2 * torch.randn_like(p))
            else:
                p.copy_(0.3 * torch.randn_like(p))


def made_checkpoints(out):
    common = dict(
        vocab_size=264,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        bos_token_id=256,
        eos_token_id=263,
        pad_token_id=258,
    )
    made = {
        "llama-tied-f32": (LlamaConfig(**common, tie_word_embeddings=True, rope_theta=500000.0), torch.float32, None),
        "qwen2-untied-bf16-sharded": (
            Qwen2Config(**common, tie_word_embeddings=False, rope_theta=1000000.0),
            torch.bfloat16,
            "20KB",
        ),
    }
    results = {}
    for seed, (name, (config, dtype, shard)) in enumerate(made.items()):
        model = AutoModelForCausalLM.from_config(config).eval()
        scaled_random_init(model, seed)
        directory = os.path.join(out, "made-by-transformers", name)
        model.to(dtype).save_pretrained(directory, **({"max_shard_size": shard} if shard else {}))
        reread = load_float32(directory)
        with torch.no_grad():
            logits = reread(torch.tensor([MADE_TOKENS])).logits[0]
        results[name] = {"files": sorted(os.listdir(directory)), "logits": rounded(logits.tolist())}
    return {"tokens": MADE_TOKENS, "checkpoints": results}


def main():
    root, out, checkpoints = sys.argv[1], sys.argv[2], sys.argv[3:] or EXPORTED
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(4)
    conversations = json.load(
        open(os.path.join(root, "packages/engine/src/checkpoint/__fixtures__/transformers/conversations.json"))
    )["conversations"]
    versions = {"transformers": transformers.__version__, "torch": torch.__version__}
    exported = {"versions": versions, "models": {}}
    for directory in checkpoints:
        try:
            full_logits = directory == checkpoints[0]
            exported["models"][directory] = exported_reference(root, directory, conversations, full_logits)
        except Exception as error:  # recorded so that one run reports every failure
            exported["models"][directory] = {"error": repr(error)}
            print(f"{directory}: {error!r}")
    with open(os.path.join(out, "exported.json"), "w") as f:
        json.dump(exported, f)
    made = made_checkpoints(out)
    made["versions"] = versions
    with open(os.path.join(out, "made-by-transformers", "made.json"), "w") as f:
        json.dump(made, f)
    for directory, model in exported["models"].items():
        for case in model.get("cases", []):
            print(f"{directory} | {case['name']}: {len(case['ids'])} ids, greedy {case['greedy_text']!r}")
    for name, checkpoint in made["checkpoints"].items():
        print(f"made {name}: {checkpoint['files']}")
        print(open(os.path.join(out, "made-by-transformers", name, "config.json")).read())
    print(json.dumps(versions))


if __name__ == "__main__":
    main()

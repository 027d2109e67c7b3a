#!/usr/bin/env python3
"""Logits of an exported checkpoint from an implementation independent of the engine's code.

Usage: hf_reference.py <checkpoint-dir> <comma-separated token ids>
Prints a JSON list of logit rows (one per token). With HF transformers installed (e.g. on a GPU machine)
it runs AutoModelForCausalLM; otherwise a NumPy transcription of HF's LlamaForCausalLM / Qwen2ForCausalLM
forward pass (modeling_llama.py: RMSNorm, rotate_half RoPE, repeat_kv, SwiGLU), reading the safetensors
files with its own parser. Either way nothing of the TypeScript engine is reused.
"""
import json
import os
import sys

import numpy as np


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    n = int.from_bytes(raw[:8], "little")
    header = json.loads(raw[8 : 8 + n])
    base = 8 + n
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        begin, end = meta["data_offsets"]
        buf = raw[base + begin : base + end]
        if meta["dtype"] == "F32":
            arr = np.frombuffer(buf, dtype="<f4")
        elif meta["dtype"] == "F16":
            arr = np.frombuffer(buf, dtype="<f2").astype(np.float32)
        elif meta["dtype"] == "BF16":
            arr = (np.frombuffer(buf, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        else:
            raise ValueError(f"{path}: {name}: unsupported dtype {meta['dtype']}")
        out[name] = arr.reshape(meta["shape"]).astype(np.float64)
    return out


def load_weights(d):
    index = os.path.join(d, "model.safetensors.index.json")
    if os.path.exists(index):
        files = sorted(set(json.load(open(index))["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    w = {}
    for f in files:
        w.update(read_safetensors(os.path.join(d, f)))
    return w


def rms_norm(x, weight, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def numpy_logits(d, ids):
    c = json.load(open(os.path.join(d, "config.json")))
    w = load_weights(d)
    H, K = c["num_attention_heads"], c["num_key_value_heads"]
    D = c["hidden_size"] // H
    T = len(ids)
    eps = c["rms_norm_eps"]
    inv_freq = 1.0 / (c.get("rope_theta", 10000.0) ** (np.arange(0, D, 2) / D))
    freqs = np.outer(np.arange(T), inv_freq)
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)  # [T, D]
    x = w["model.embed_tokens.weight"][ids]  # [T, d]
    causal = np.triu(np.full((T, T), -np.inf), 1)
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        h = rms_norm(x, w[p + "input_layernorm.weight"], eps)

        def proj(name):
            y = h @ w[p + f"self_attn.{name}.weight"].T
            bias = w.get(p + f"self_attn.{name}.bias")
            return y if bias is None else y + bias

        q = proj("q_proj").reshape(T, H, D).transpose(1, 0, 2)  # [H, T, D]
        k = proj("k_proj").reshape(T, K, D).transpose(1, 0, 2)  # [K, T, D]
        v = proj("v_proj").reshape(T, K, D).transpose(1, 0, 2)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k = np.repeat(k, H // K, axis=0)  # repeat_kv
        v = np.repeat(v, H // K, axis=0)
        scores = q @ k.transpose(0, 2, 1) / np.sqrt(D) + causal
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        probs = scores / scores.sum(-1, keepdims=True)
        attn = (probs @ v).transpose(1, 0, 2).reshape(T, H * D)
        x = x + attn @ w[p + "self_attn.o_proj.weight"].T
        h = rms_norm(x, w[p + "post_attention_layernorm.weight"], eps)
        gate = h @ w[p + "mlp.gate_proj.weight"].T
        up = h @ w[p + "mlp.up_proj.weight"].T
        x = x + (gate / (1 + np.exp(-gate)) * up) @ w[p + "mlp.down_proj.weight"].T
    x = rms_norm(x, w["model.norm.weight"], eps)
    head = w.get("lm_head.weight", w["model.embed_tokens.weight"])
    return x @ head.T


def transformers_logits(d, ids):
    import torch
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float32).eval()
    with torch.no_grad():
        return model(torch.tensor([ids])).logits[0].numpy()


if __name__ == "__main__":
    directory, tokens = sys.argv[1], [int(t) for t in sys.argv[2].split(",")]
    try:
        import transformers  # noqa: F401

        logits, impl = transformers_logits(directory, tokens), "transformers"
    except ImportError:
        logits, impl = numpy_logits(directory, tokens), "numpy"
    print(json.dumps({"implementation": impl, "logits": np.asarray(logits, dtype=np.float64).tolist()}))

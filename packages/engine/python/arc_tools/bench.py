"""The worker's own benchmark, runnable from Python alone (GPU machines here have no Node.js).

    python -m arc_tools.bench --out <repository>/bench/gpu/torch-gpu.json   # Qwen2-0.5B shape, random weights, bf16
    python -m arc_tools.bench --shape small --device cpu --dtype float32

Training: SFT steps of `--batch` rows of `--length` tokens through the engine (AdamW, clipping), median step time.
Generation: `--gen-batch` prompts of 128 tokens, 256 new tokens each (ignoring end-of-turn) through the engine's
sampler, and the same through transformers' `model.generate` for comparison: medians of `--repeats`, interleaved.
The record names how it was made: the command line as Python read it and the folder it ran in, the SHA-256 of this
script and of the worker's code, and the device as torch names it. `docs/benchmarks.md` shows the file in
bench/gpu/ that a GPU run wrote, as it wrote it.
"""

import argparse
import datetime
import hashlib
import json
import os
import pathlib
import platform
import shlex
import statistics
import sys
import tempfile
import time
from typing import Any

import torch
from transformers import AutoModelForCausalLM, Qwen2Config
from transformers.utils import logging as transformers_logging

import arc_torch
from arc_torch.distributed import DataParallel
from arc_torch.engine import TorchEngine
from arc_torch.sampling import generate

SHAPES = {
    # Qwen2-0.5B's architecture (Qwen/Qwen2-0.5B config.json)
    "qwen2-0.5b": dict(hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
                       num_key_value_heads=2, vocab_size=151936, max_position_embeddings=32768, rope_theta=1e6,
                       tie_word_embeddings=True, rms_norm_eps=1e-6),
    # Arc's demo size over a byte vocabulary, for a CPU run
    "small": dict(hidden_size=128, intermediate_size=352, num_hidden_layers=4, num_attention_heads=4,
                  num_key_value_heads=4, vocab_size=264, max_position_embeddings=2048, tie_word_embeddings=True),
}


#: The worker's code (the `arc_torch` package), whose SHA-256 a record carries beside its script's.
WORKER_FILES = sorted(pathlib.Path(arc_torch.__file__).resolve().parent.glob("*.py"))


def file_sha256(paths: list[pathlib.Path]) -> str:
    """SHA-256 of the files at `paths` in order, each as its name then its bytes."""
    digest = hashlib.sha256()
    for path in paths:
        if len(paths) > 1:
            digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def random_checkpoint(shape: str, directory: str) -> None:
    torch.manual_seed(0)
    config = Qwen2Config(**SHAPES[shape], eos_token_id=None)
    AutoModelForCausalLM.from_config(config).to(torch.bfloat16).save_pretrained(directory)


def bench_train(engine: TorchEngine, batch: int, length: int, steps: int, vocab: int) -> tuple[float, list[float]]:
    g = torch.Generator().manual_seed(1)
    ids = torch.randint(0, vocab, (batch, length), generator=g).tolist()
    data = {"promptTokens": [row[:1] for row in ids], "outputTokens": [row[1:] for row in ids]}
    times = []
    for i in range(steps + 2):
        synchronize(engine.device)
        t = time.perf_counter()
        engine.step(data, {"kind": "sft"})
        synchronize(engine.device)
        if i >= 2:  # the first steps allocate and tune kernels
            times.append(time.perf_counter() - t)
    return batch * length / statistics.median(times), times


def random_prompts(rows: int, vocab: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(2)
    return torch.randint(0, vocab, (rows, 128), generator=g)


def bench_generate(engine: TorchEngine, rows: int, new_tokens: int, vocab: int) -> float:
    """Tokens per second of the engine's sampler on `rows` prompts."""
    prompts = random_prompts(rows, vocab).tolist()
    requests = [{"promptTokens": p, "maxTokens": new_tokens, "ignoreEos": True, "seed": i} for i, p in enumerate(prompts)]
    synchronize(engine.device)
    t = time.perf_counter()
    results = generate(engine, requests, lambda _: False)
    synchronize(engine.device)
    return sum(len(r["outputTokens"]) for r in results) / (time.perf_counter() - t)


def bench_hf_generate(model: Any, rows: int, new_tokens: int, vocab: int, device: torch.device) -> float:
    """Tokens per second of transformers' `model.generate` (sampling, the same cache) on the same prompts."""
    prompts = random_prompts(rows, vocab).to(device)
    synchronize(device)
    t = time.perf_counter()
    with torch.no_grad():
        out = model.generate(prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=new_tokens,
                             min_new_tokens=new_tokens, do_sample=True, top_k=0, pad_token_id=0)
    synchronize(device)
    return (out.shape[1] - prompts.shape[1]) * rows / (time.perf_counter() - t)


def bench_generation(engine: TorchEngine, rows: int, new_tokens: int, vocab: int, repeats: int = 3) -> tuple[float, float]:
    """Medians of the engine's sampler and of `model.generate`, interleaved, after a warm-up of each at the same
    batch size (the first pass at a new batch shape allocates and picks kernels)."""
    bench_generate(engine, rows, 16, vocab)
    bench_hf_generate(engine.model, rows, 16, vocab, engine.device)
    ours, theirs = [], []
    for _ in range(repeats):
        ours.append(bench_generate(engine, rows, new_tokens, vocab))
        theirs.append(bench_hf_generate(engine.model, rows, new_tokens, vocab, engine.device))
    return statistics.median(ours), statistics.median(theirs)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="qwen2-0.5b", choices=sorted(SHAPES))
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--micro-batch-rows", type=int, default=None)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--gen-batch", type=int, default=64)
    parser.add_argument("--new-tokens", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    transformers_logging.disable_progress_bar()
    vocab = SHAPES[args.shape]["vocab_size"]
    with tempfile.TemporaryDirectory() as directory:
        random_checkpoint(args.shape, directory)
        settings = {"learningRate": 1e-5}
        if args.micro_batch_rows:
            settings["microBatchRows"] = args.micro_batch_rows
        params = {"modelDir": directory, "device": args.device, "dtype": args.dtype, "settings": settings}
        engine = TorchEngine(params, DataParallel())
        train, step_times = bench_train(engine, args.batch, args.length, args.steps, vocab)
        peak = torch.cuda.max_memory_allocated(engine.device) / 2**30 if engine.device.type == "cuda" else None
        del engine
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
        sampler = TorchEngine({**params, "role": "inference"}, DataParallel())
        gen, hf_gen = bench_generation(sampler, args.gen_batch, args.new_tokens, vocab, args.repeats)
        info = sampler.info()
    here = pathlib.Path(__file__).resolve()
    result = {
        "bench": "torch-gpu" if info["deviceName"] != "cpu" else "torch-python",
        "command": shlex.join(sys.orig_argv),
        "cwd": os.getcwd(),
        "script_sha256": file_sha256([here]),
        "worker_sha256": file_sha256(WORKER_FILES),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"device": info["deviceName"], "cpus": os.cpu_count(), "platform": platform.platform()},
        "shape": args.shape,
        "device": info["deviceName"],
        "dtype": args.dtype,
        "torch": torch.__version__,
        "train_batch": [args.batch, args.length],
        "train_tokens_per_s": round(train),
        "train_step_seconds": [round(t, 4) for t in step_times],
        "train_peak_memory_gib": None if peak is None else round(peak, 1),
        "generate_batch": args.gen_batch,
        "generate_new_tokens": args.new_tokens,
        "generate_repeats": args.repeats,
        "generate_tokens_per_s": round(gen),
        "hf_generate_tokens_per_s": round(hf_gen),
        "parameters": info["parameters"],
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()

"""The real-model GPU check, runnable from Python alone (GPU machines here have no Node.js), under 8 minutes on one H100.

    cd packages/engine/python && python -m arc_tools.gpu_check --out ../../../bench/gpu/real-model-gpu.json
    python -m arc_tools.gpu_check --device cpu --dtype float32 --shapes tiny --batch 2 --length 32 --steps 1   # a dry run

For each shape (SmolLM2-135M's and Qwen2-0.5B's architectures, random weights: the GPU machines receive at most 64 MiB
of files a run, so the 98 MB SmolLM2 GGUF does not travel, and throughput does not depend on the weights), it trains in
the same run, alternating:
- Arc's PyTorch engine (the worker's TorchEngine): SFT steps, full fine-tuning and LoRA (rank 16 on every projection),
  in bfloat16 (float32 master weights, passes under autocast);
- plain transformers, and transformers + PEFT for LoRA: the same model, batch, optimizer (AdamW), clipping, autocast
  and micro-batches, written as a user of those libraries writes a training loop.
Each figure is tokens/s, the median of `--steps` timed steps after two. `npm run bench:real-model` reads the file
this writes as it was written.
"""

import argparse
import contextlib
import datetime
import json
import os
import pathlib
import platform
import shlex
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import torch
from transformers import AutoModelForCausalLM, LlamaConfig, Qwen2Config
from transformers.utils import logging as transformers_logging

from arc_torch.distributed import DataParallel
from arc_torch.engine import TorchEngine

from .bench import SHAPES as BENCH_SHAPES, WORKER_FILES, file_sha256, synchronize

#: The architectures trained, by name: config class and fields.
SHAPES = {
    # HuggingFaceTB/SmolLM2-135M-Instruct's config.json
    "smollm2-135m": (LlamaConfig, dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30,
                                       num_attention_heads=9, num_key_value_heads=3, head_dim=64, vocab_size=49152,
                                       max_position_embeddings=8192, rope_theta=100000.0, tie_word_embeddings=True,
                                       rms_norm_eps=1e-5)),
    "qwen2-0.5b": (Qwen2Config, BENCH_SHAPES["qwen2-0.5b"]),
    # a dry run's size
    "tiny": (LlamaConfig, dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
                               num_key_value_heads=2, vocab_size=512, max_position_embeddings=512,
                               tie_word_embeddings=True)),
}
PROJECTIONS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LORA = {"rank": 16, "alpha": 32, "targets": PROJECTIONS}
LEARNING_RATE = 1e-5


def random_checkpoint(shape: str, directory: str) -> int:
    """Writes a random-weight bfloat16 checkpoint of `shape`; returns its vocabulary size."""
    torch.manual_seed(0)
    config_class, fields = SHAPES[shape]
    config = config_class(**fields, eos_token_id=None, bos_token_id=None)
    AutoModelForCausalLM.from_config(config).to(torch.bfloat16).save_pretrained(directory)
    return fields["vocab_size"]


def batch_ids(batch: int, length: int, vocab: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(1)
    return torch.randint(0, vocab, (batch, length), generator=g)


def timed(step: Callable[[], object], steps: int, device: torch.device) -> list:
    times = []
    for i in range(steps + 2):
        synchronize(device)
        started = time.perf_counter()
        step()
        synchronize(device)
        if i >= 2:  # the first steps allocate and tune kernels
            times.append(time.perf_counter() - started)
    return times


def arc_engine(directory: str, ids: torch.Tensor, args: argparse.Namespace, lora: bool) -> list:
    """Step times of Arc's torch engine on the batch."""
    params = {"modelDir": directory, "device": args.device, "dtype": args.dtype,
              "settings": {"learningRate": LEARNING_RATE, "microBatchRows": args.micro_batch_rows}}
    if lora:
        params["lora"] = LORA
    engine = TorchEngine(params, DataParallel())
    rows = ids.tolist()
    data = {"promptTokens": [row[:1] for row in rows], "outputTokens": [row[1:] for row in rows]}
    try:
        return timed(lambda: engine.step(data, {"kind": "sft"}), args.steps, engine.device)
    finally:
        del engine
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def plain_transformers(directory: str, ids: torch.Tensor, args: argparse.Namespace, lora: bool) -> list:
    """Step times of a plain transformers (+ PEFT) training loop on the batch: float32 weights, AdamW, passes under
    bfloat16 autocast, micro-batches, clipping at 1, as Arc's engine trains."""
    device = torch.device("cuda" if args.device == "auto" and torch.cuda.is_available() else
                          ("cpu" if args.device == "auto" else args.device))
    loaded: Any = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    model = loaded.to(device)
    if lora:
        from peft import LoraConfig, get_peft_model

        model = get_peft_model(model, LoraConfig(r=LORA["rank"], lora_alpha=LORA["alpha"],
                                                 target_modules=PROJECTIONS, lora_dropout=0.0))
    model.train()
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=LEARNING_RATE)
    ids = ids.to(device)
    chunks = ids.split(args.micro_batch_rows)
    autocast = (torch.autocast(device.type, dtype=torch.bfloat16) if args.dtype == "bfloat16"
                else contextlib.nullcontext())

    def step():
        optimizer.zero_grad(set_to_none=True)
        for chunk in chunks:
            with autocast:
                loss = model(input_ids=chunk, labels=chunk).loss * (len(chunk) / len(ids))
            loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    try:
        return timed(step, args.steps, device)
    finally:
        del model, optimizer
        if torch.cuda.is_available():
            torch.cuda.empty_cache()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shapes", default="smollm2-135m,qwen2-0.5b")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--dtype", default="bfloat16")
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--length", type=int, default=1024)
    parser.add_argument("--micro-batch-rows", type=int, default=4)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    transformers_logging.disable_progress_bar()
    started = time.perf_counter()
    shapes = {}
    for shape in args.shapes.split(","):
        with tempfile.TemporaryDirectory() as directory:
            vocab = random_checkpoint(shape, directory)
            ids = batch_ids(args.batch, args.length, vocab)
            figures = {}
            for mode in ("full", "lora"):
                arc = arc_engine(directory, ids, args, mode == "lora")
                plain = plain_transformers(directory, ids, args, mode == "lora")
                tokens = args.batch * args.length
                figures[mode] = {
                    "arc_tokens_per_s": round(tokens / statistics.median(arc)),
                    "transformers_tokens_per_s": round(tokens / statistics.median(plain)),
                    "arc_step_seconds": [round(t, 4) for t in arc],
                    "transformers_step_seconds": [round(t, 4) for t in plain],
                }
                figures[mode]["arc_vs_transformers"] = round(
                    figures[mode]["arc_tokens_per_s"] / figures[mode]["transformers_tokens_per_s"], 3)
                print(f"{shape} {mode}: {json.dumps(figures[mode])}", file=sys.stderr)
            shapes[shape] = figures
    device = torch.cuda.get_device_name() if torch.cuda.is_available() and args.device != "cpu" else "cpu"
    here = pathlib.Path(__file__).resolve()
    result = {
        "bench": "real-model-gpu" if device != "cpu" else "real-model-python",
        "command": shlex.join(sys.orig_argv),
        "cwd": os.getcwd(),
        "script_sha256": file_sha256([here]),
        "worker_sha256": file_sha256(WORKER_FILES),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"device": device, "cpus": os.cpu_count(), "platform": platform.platform()},
        "dtype": args.dtype,
        "torch": torch.__version__,
        "train_batch": [args.batch, args.length],
        "micro_batch_rows": args.micro_batch_rows,
        "lora": LORA,
        "shapes": shapes,
        "train_tokens_per_s_lora": {s: f["lora"]["arc_tokens_per_s"] for s, f in shapes.items()},
        "train_tokens_per_s_vs_transformers": {
            s: {m: f[m]["arc_vs_transformers"] for m in ("full", "lora")} for s, f in shapes.items()},
        "seconds": round(time.perf_counter() - started, 1),
    }
    print(json.dumps(result, indent=2))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=2)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()

"""The PyTorch engine: both roles of the Engine API over a transformers causal LM.

Training keeps float32 master weights; `dtype: bfloat16` runs the forward and backward passes under autocast.
LoRA adapters (peft) can be the only trained weights; checkpoints are written merged, in the HF layout, with the
training state (`trainer_state.json`, `torch_optimizer.safetensors`) and the adapter in PEFT's layout (`adapter/`)
beside them.
"""

import contextlib
import copy
import os
from collections.abc import Iterator
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

from . import checkpoint
from .distributed import DataParallel
from .errors import BatchError, CheckpointError, WorkerError
from .grid import batch_totals, length_groups, off_grid, on_grid, slice_rows, take_rows, token_grid
from .lora_init import draw_like_embedded
from .losses import dpo_loss, grpo_loss, sft_loss
from .optim import ADAMW_DEFAULTS, learning_rate, make_adamw
from .prefix_cache import DEFAULT_MAX_BYTES, PrefixCache

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def resolve_device(name: str, local_rank: int) -> torch.device:
    if name in (None, "auto"):
        return torch.device(f"cuda:{local_rank}" if torch.cuda.is_available() else "cpu")
    if name == "cuda":
        return torch.device(f"cuda:{local_rank}")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise WorkerError(f"device: {name} asked for, but torch sees no CUDA device")
    return torch.device(name)


def grpo_defaults(objective: dict) -> dict:
    return {
        "clipEpsilon": objective.get("clipEpsilon", 0.2),
        "klCoef": objective.get("klCoef", 0.0),
        "entropyCoef": objective.get("entropyCoef", 0.0),
        "aggregation": objective.get("aggregation", "token"),
        "decoupled": objective.get("decoupled", False),
        "behaviourWeightCap": objective.get("behaviourWeightCap"),
    }


def load_model(directory: str) -> torch.nn.Module:
    checkpoint.read_config(directory)  # names a missing or malformed config.json before transformers does
    try:
        model = AutoModelForCausalLM.from_pretrained(directory, dtype=torch.float32)
    except (OSError, ValueError, KeyError) as error:
        raise CheckpointError(f"{directory}: transformers cannot load this checkpoint ({error})") from None
    return model.eval()


def load_tokenizer(directory: str) -> Any:
    """The checkpoint's tokenizer for decoding and stop strings, or None when it has none transformers reads."""
    try:
        return AutoTokenizer.from_pretrained(directory)
    except Exception:  # noqa: BLE001 - a checkpoint without a readable tokenizer still runs on token ids
        return None


def eos_ids(directory: str, config: dict) -> set:
    ids = set()
    for source in (config, checkpoint.read_json_or_empty(os.path.join(directory, "generation_config.json"))):
        value = source.get("eos_token_id")
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(v for v in value if isinstance(v, int))
    return ids


class TorchEngine:
    """One engine in one worker process (or one rank of a data-parallel group)."""

    def __init__(self, params: dict, parallel: DataParallel) -> None:
        self.parallel = parallel
        self.model_dir = params["modelDir"]
        self.device = resolve_device(params.get("device", "auto"), parallel.local_rank)
        self.autocast_dtype = checkpoint.torch_dtype(params.get("dtype", "float32"))
        self.role = params.get("role", "train")
        if self.role not in ("train", "inference"):
            raise WorkerError(f"role: expected train or inference, got {self.role!r}")
        if params.get("threads"):
            torch.set_num_threads(int(params["threads"]))
        settings = params.get("settings") or {}
        unknown = set(settings) - set(ADAMW_DEFAULTS) - {"maxGradNorm", "microBatchRows"}
        if unknown:
            raise WorkerError(f"settings: unknown field {sorted(unknown)[0]!r}")
        self.options = {**ADAMW_DEFAULTS, **{k: v for k, v in settings.items() if k in ADAMW_DEFAULTS}}
        self.max_grad_norm = settings.get("maxGradNorm", 1.0)
        self.micro_batch_rows = settings.get("microBatchRows")
        self.version = int(params.get("version", 0))
        self.seed = int(params.get("seed", 0))
        self.config = checkpoint.read_config(self.model_dir)
        # a transformers model (a peft one once adapters are added), typed by transformers at run time only
        self.model: Any = load_model(self.model_dir)
        self.hf_config: Any = self.model.config
        self.tokenizer = load_tokenizer(self.model_dir)
        self.eos_ids = eos_ids(self.model_dir, self.config)
        self.lora: dict | None = None
        if self.role == "inference":
            self.model.to(self.device, dtype=self.autocast_dtype)
        else:
            self.model.to(self.device)
            if params.get("lora"):
                self._add_adapters(params["lora"])
        if self.role == "inference":
            self.model.requires_grad_(False)
        self.step_count = 0
        cache_bytes = params.get("prefixCacheBytes", DEFAULT_MAX_BYTES)
        if not isinstance(cache_bytes, int) or isinstance(cache_bytes, bool) or cache_bytes < 0:
            raise WorkerError(f"prefixCacheBytes: expected a non-negative integer, got {cache_bytes!r}")
        # keys and values of earlier prompts' prefixes, for later calls; None when turned off (0 bytes)
        self.prefix_cache = PrefixCache(cache_bytes) if cache_bytes > 0 else None
        # what a training forward goes through: the model, or DDP over it under torchrun
        self.train_module: Any = parallel.wrap(self.model, self.device) if self.role == "train" else None
        self.optimizer: Any = make_adamw(self._trainable(), self.options) if self.role == "train" else None
        # the frozen reference policy: adapter weights by name (LoRA) or a copy of the model
        self.reference: Any = None
        if self.role == "train":
            self._snapshot_reference()

    # --- weights -------------------------------------------------------------------------------------------

    def _add_adapters(self, lora: dict) -> None:
        from peft import LoraConfig, get_peft_model

        rank, alpha = lora.get("rank"), lora.get("alpha")
        targets = lora.get("targets") or ["q_proj", "v_proj"]
        if not isinstance(rank, int) or rank < 1:
            raise WorkerError(f"lora.rank: expected a positive integer, got {rank!r}")
        if not isinstance(alpha, (int, float)) or alpha <= 0:
            raise WorkerError(f"lora.alpha: expected a positive number, got {alpha!r}")
        for t in targets:
            if t not in LORA_TARGETS:
                raise WorkerError(f"lora.targets: expected names among {', '.join(LORA_TARGETS)}, got {t!r}")
        # peft declares lora_alpha an int; a float scales the same (alpha / rank)
        config = LoraConfig(r=rank, lora_alpha=alpha,  # pyright: ignore[reportArgumentType]
                             target_modules=list(targets), lora_dropout=0.0, bias="none")
        self.model = get_peft_model(self.model, config)
        self.lora = {"rank": rank, "alpha": alpha, "targets": list(targets)}
        base = self._base_model()
        attention = ("q_proj", "k_proj", "v_proj", "o_proj")
        layers = [base.get_submodule(f"model.layers.{i}.{'self_attn' if t in attention else 'mlp'}.{t}")
                  for i in range(self.hf_config.num_hidden_layers) for t in targets]
        draw_like_embedded(layers, rank, self.seed)

    def _base_model(self) -> torch.nn.Module:
        return self.model.get_base_model() if self.lora else self.model

    def _named_trainable(self) -> list:
        return [(n, p) for n, p in self.model.named_parameters() if p.requires_grad]

    def _trainable(self) -> list:
        return [p for _, p in self._named_trainable()]

    def _lora_layers(self) -> Iterator[tuple[str, Any]]:
        """(HF module path, peft LoRA layer) of every adapted projection."""
        from peft.tuners.lora import LoraLayer

        for name, module in self._base_model().named_modules():
            if isinstance(module, LoraLayer):
                yield name, module

    def _merged_state(self) -> dict:
        """The policy's weights by HF name, adapters merged; a tied output head is left out."""
        if not self.lora:
            state = {n: p for n, p in self.model.named_parameters()}
        else:
            state = {}
            adapted = {}
            for path, layer in self._lora_layers():
                adapted[f"{path}.weight"] = layer.base_layer.weight + layer.get_delta_weight("default")
            for name, p in self._base_model().named_parameters():
                if "lora_" in name:
                    continue
                state[name.replace(".base_layer.", ".")] = p
            state.update(adapted)
        if self.hf_config.tie_word_embeddings:
            state.pop("lm_head.weight", None)
        return {k: v.detach() for k, v in state.items()}

    def _assign_weights(self, tensors: dict, source: str) -> None:
        """Copies HF-named tensors into the base weights (under a LoRA layer, into its base layer)."""
        base = self._base_model()
        with torch.no_grad():
            for name, value in tensors.items():
                path, attr = name.rsplit(".", 1)
                try:
                    module = base.get_submodule(path)
                except AttributeError:
                    raise CheckpointError(f"{source}: unexpected tensor {name}") from None
                module = getattr(module, "base_layer", module)
                target = getattr(module, attr, None)
                if target is None or tuple(target.shape) != tuple(value.shape):
                    got = None if target is None else tuple(target.shape)
                    raise CheckpointError(
                        f"{source}: tensor {name} has shape {tuple(value.shape)}, expected {got}"
                    )
                target.copy_(value.to(target.dtype))

    def _weights_changed(self) -> None:
        """Drops the prefix cache: keys and values computed under other weights are never reused."""
        if self.prefix_cache is not None:
            self.prefix_cache.clear()

    def _snapshot_reference(self) -> None:
        """Makes the current policy the reference: the adapters' values with LoRA, else a frozen copy."""
        if self.lora:
            self.reference = {n: p.detach().clone() for n, p in self._named_trainable()}
        else:
            self.reference = copy.deepcopy(self.model).eval()
            self.reference.requires_grad_(False)

    @contextlib.contextmanager
    def _reference_model(self):
        if not self.lora:
            yield self.reference
            return
        live = {n: p.detach().clone() for n, p in self._named_trainable()}
        params = dict(self._named_trainable())
        with torch.no_grad():
            for n, v in self.reference.items():
                params[n].copy_(v)
        try:
            yield self.model
        finally:
            with torch.no_grad():
                for n, v in live.items():
                    params[n].copy_(v)

    # --- log-probs and losses ------------------------------------------------------------------------------

    def _autocast(self):
        if self.autocast_dtype == torch.float32 or self.role == "inference":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.type, dtype=self.autocast_dtype)

    def grid_logprobs(self, model: Any, grid: Any, with_entropy: bool = False) -> Any:
        """Log-prob of every next token on the grid [B, L-1] (and the entropy of each next-token distribution)."""
        tokens = grid.tokens.to(self.device)
        targets = grid.targets.to(self.device)
        with self._autocast():
            logits = model(input_ids=tokens, use_cache=False).logits[:, :-1]
        logits = logits.float()
        log_z = torch.logsumexp(logits, dim=-1)
        logp = logits.gather(-1, targets.unsqueeze(-1)).squeeze(-1) - log_z
        if not with_entropy:
            return logp, None
        entropy = log_z - (torch.softmax(logits, dim=-1) * logits).sum(dim=-1)
        return logp, entropy

    def _grid(self, batch):
        return token_grid(batch, self.hf_config.vocab_size, self.hf_config.max_position_embeddings)

    def logprobs(self, batch: dict) -> list:
        grid = self._grid(batch)
        with torch.no_grad():
            logp, _ = self.grid_logprobs(self.model, grid)
        return off_grid(grid, logp)

    def _micro_loss(self, batch, objective, grpo, totals):
        grid = self._grid(batch)
        dev = self.device
        kind = objective["kind"]
        needs_ref = kind == "dpo" or (grpo is not None and grpo["klCoef"] != 0)
        ref = None
        if batch.get("refLogprobs") is not None:
            ref = on_grid(grid, batch["refLogprobs"], "batch.refLogprobs").to(dev)
        elif needs_ref:
            with torch.no_grad(), self._reference_model() as reference:
                ref, _ = self.grid_logprobs(reference, grid)
        old = behaviour = None
        if grpo is not None and grpo["decoupled"]:
            behaviour = on_grid(grid, batch["oldLogprobs"], "batch.oldLogprobs").to(dev)
            if batch.get("proximalLogprobs") is not None:
                old = on_grid(grid, batch["proximalLogprobs"], "batch.proximalLogprobs").to(dev)
        elif grpo is not None and batch.get("oldLogprobs") is not None:
            old = on_grid(grid, batch["oldLogprobs"], "batch.oldLogprobs").to(dev)
        with_entropy = grpo is not None or (kind == "dpo" and objective.get("entropyCoef", 0) != 0)
        logp, entropy = self.grid_logprobs(self.train_module, grid, with_entropy)
        mask = grid.mask.to(dev)
        if kind == "sft":
            return sft_loss(logp, mask, totals)
        if kind == "dpo":
            assert ref is not None  # DPO always needs the reference's log-probs
            return dpo_loss(
                logp, ref, mask, totals,
                beta=objective.get("beta", 0.1), variant=objective.get("loss", "sigmoid"),
                entropy_coef=objective.get("entropyCoef", 0.0), entropy=entropy,
                nll_coef=objective.get("nllCoef", 0.0),
            )
        # Without given log-probs the old (proximal) policy is the one this update starts from: this very
        # forward pass, held constant.
        if old is None:
            old = logp.detach()
        weight = None
        if behaviour is not None:
            weight = torch.exp(old - behaviour).detach()
            assert grpo is not None  # behaviour log-probs are read for GRPO's decoupled objective only
            cap = grpo["behaviourWeightCap"]
            if cap is not None:
                weight = torch.where(weight > cap, torch.zeros_like(weight), weight)
        assert grpo is not None  # what is neither SFT nor DPO is GRPO (_check refused the rest)
        advantages = torch.tensor(batch["advantages"], dtype=torch.float32, device=dev)
        return grpo_loss(logp, old, advantages, mask, totals, grpo, ref_logp=ref, entropy=entropy,
                         behaviour_weight=weight)

    def _check(self, batch, objective):
        kind = objective.get("kind") if isinstance(objective, dict) else None
        if kind not in ("sft", "dpo", "grpo"):
            raise WorkerError(f"objective.kind: expected sft, dpo or grpo, got {kind!r}")
        if self.role != "train":
            raise WorkerError("step: this worker was started for inference; start one with role train")
        grid = self._grid(batch)
        rows = grid.rows
        grpo = grpo_defaults(objective) if kind == "grpo" else None
        if kind == "dpo" and rows % 2:
            raise BatchError(f"batch: DPO expects (chosen, rejected) row pairs, got an odd number of rows ({rows})")
        if grpo is not None:
            adv = batch.get("advantages")
            if not isinstance(adv, list) or len(adv) != rows:
                got = len(adv) if isinstance(adv, list) else "none"
                raise BatchError(f"batch.advantages: GRPO expects one advantage per row ({rows}), got {got}")
            if grpo["decoupled"] and batch.get("oldLogprobs") is None:
                raise BatchError("batch.oldLogprobs: the decoupled GRPO objective needs the behaviour policy's log-probs")
        return grid, grpo

    def _accumulate(self, batch, objective) -> tuple:
        """Validates the batch, then leaves the whole batch's gradients on the trainable weights; returns
        (figures summed over micro-batches and ranks, the batch's grid)."""
        grid, grpo = self._check(batch, objective)
        totals = batch_totals(grid)
        multiple = 2 if objective["kind"] == "dpo" else 1
        start, end = self.parallel.shard(grid.rows, multiple)
        shard = slice_rows(batch, start, end)
        if objective["kind"] == "sft" and self.micro_batch_rows is None:
            # SFT's loss is a sum over tokens, so rows may pass in any grouping: short rows (a rehearsal answer)
            # then do not pad to the longest (a prompt with its tools)
            lengths = [len(p) + len(o) for p, o in zip(shard["promptTokens"], shard["outputTokens"])]
            parts = [take_rows(shard, rows) for rows in length_groups(lengths)]
        else:
            per_pass = self.micro_batch_rows or max(end - start, 1)
            per_pass = max(multiple, per_pass - per_pass % multiple)
            parts = [slice_rows(shard, s, s + per_pass) for s in range(0, end - start, per_pass)]
        figures = {}
        self.model.train()
        # a rank whose shard is empty still runs one pass: every rank joins each gradient all-reduce
        passes = parts or [None]
        for i, part in enumerate(passes):
            with self.parallel.no_sync(self.train_module) if i < len(passes) - 1 else contextlib.nullcontext():
                if part is None:
                    loss, extra = self._idle_loss(), {}
                else:
                    loss, extra = self._micro_loss(part, objective, grpo, totals)
                    figures["loss"] = figures.get("loss", 0.0) + float(loss.detach())
                loss.backward()
            for k, v in extra.items():
                figures[k] = figures.get(k, 0.0) + float(v.detach())
        self.model.eval()
        figures = self.parallel.sum_figures(figures)
        figures.setdefault("loss", 0.0)
        return figures, grid

    def _idle_loss(self):
        """A zero loss through the training module, for a rank with no rows: it adds nothing to any gradient."""
        token = torch.zeros((1, 1), dtype=torch.long, device=self.device)
        with self._autocast():
            return self.train_module(input_ids=token, use_cache=False).logits.float().sum() * 0.0

    def step(self, batch: dict, objective: dict) -> dict:
        figures, grid = self._accumulate(batch, objective)
        params = self._trainable()
        grads = [p.grad for p in params if p.grad is not None]
        norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g.float()) for g in grads]))) if grads else 0.0
        if self.max_grad_norm > 0 and norm > self.max_grad_norm:
            scale = self.max_grad_norm / (norm + 1e-6)
            for g in grads:
                g.mul_(scale)
        lr = learning_rate(self.options, self.step_count)
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.step_count += 1
        self._weights_changed()
        loss = figures.pop("loss")
        return {
            "step": self.step_count,
            "loss": loss,
            "gradNorm": norm,
            "learningRate": lr,
            "tokens": int((grid.mask > 0).sum()),
            "extra": figures,
        }

    def gradients(self, batch: dict, objective: dict, path: str) -> dict:
        """The whole batch's gradients without an update, written to `path` (safetensors, HF names); for tests
        that compare engines."""
        figures, _ = self._accumulate(batch, objective)
        grads = {n.replace(".base_layer.", "."): p.grad.detach().float().cpu() for n, p in self._named_trainable()
                 if p.grad is not None}
        self.optimizer.zero_grad(set_to_none=True)
        if self.parallel.leader:
            from safetensors.torch import save_file

            save_file({k: v.contiguous() for k, v in grads.items()}, path)
        loss = figures.pop("loss")
        return {"loss": loss, "extra": figures, "path": path}

    def sync_reference(self) -> None:
        self._snapshot_reference()

    # --- checkpoints ---------------------------------------------------------------------------------------

    def save(self, directory: str, weights_only: bool = False) -> None:
        """Writes the policy (adapters merged) in the HF layout; unless `weights_only`, the training state too."""
        if not self.parallel.leader:
            return
        os.makedirs(directory, exist_ok=True)
        checkpoint.copy_description(self.model_dir, directory)
        checkpoint.write_weights(directory, self._merged_state())
        if self.role != "train" or weights_only:
            return
        tensors = {}
        names = dict((id(p), n) for n, p in self._named_trainable())
        for p, state in self.optimizer.state.items():
            name = names[id(p)]
            tensors[f"exp_avg.{name}"] = state["exp_avg"]
            tensors[f"exp_avg_sq.{name}"] = state["exp_avg_sq"]
        if self.lora:
            for name, value in self.reference.items():
                tensors[f"reference.{name}"] = value
            for name, p in self._named_trainable():
                tensors[f"lora.{name}"] = p
            for path, layer in self._lora_layers():
                tensors[f"lora_base.{path}.weight"] = layer.base_layer.weight
            self.model.save_pretrained(os.path.join(directory, "adapter"))
        else:
            ref_state = self.reference.state_dict()
            if self.hf_config.tie_word_embeddings:
                ref_state.pop("lm_head.weight", None)
            for name, value in ref_state.items():
                tensors[f"reference.{name}"] = value
        checkpoint.write_trainer_state(
            directory,
            {"step": self.step_count, "optimizer": self.options, "maxGradNorm": self.max_grad_norm,
             **({"lora": self.lora} if self.lora else {})},
            tensors,
        )

    def load(self, directory: str) -> None:
        """Restores weights, and the optimizer, step and reference saved beside them by `save` (a plain model
        checkpoint keeps the optimizer as it is and makes its weights the reference)."""
        config = checkpoint.read_config(directory)
        checkpoint.check_same_shape(directory, config, self.config)
        self._assign_weights(checkpoint.read_weights(directory), f"{directory}/model.safetensors")
        self._weights_changed()
        saved = checkpoint.read_trainer_state(directory) if self.role == "train" else None
        if saved is None:
            if self.role == "train":
                self._snapshot_reference()
            return
        state, tensors = saved
        if bool(state.get("lora")) != bool(self.lora):
            raise CheckpointError(
                f"{directory}/trainer_state.json: saved {'with' if state.get('lora') else 'without'} LoRA adapters, "
                f"but this engine trains {'with' if self.lora else 'without'} them"
            )
        trainable = dict(self._named_trainable())
        with torch.no_grad():
            for key, value in tensors.items():
                kind, name = key.split(".", 1)
                if kind == "lora":
                    trainable[name].copy_(value)
                elif kind == "lora_base":
                    self._assign_weights({name: value}, f"{directory}/torch_optimizer.safetensors")
        self.options = {**self.options, **state.get("optimizer", {})}
        self.max_grad_norm = state.get("maxGradNorm", self.max_grad_norm)
        self.step_count = int(state["step"])
        self.optimizer = make_adamw(self._trainable(), self.options)
        for name, p in trainable.items():
            if f"exp_avg.{name}" in tensors:
                self.optimizer.state[p] = {
                    "step": torch.tensor(float(self.step_count)),
                    "exp_avg": tensors[f"exp_avg.{name}"].to(p.device, p.dtype),
                    "exp_avg_sq": tensors[f"exp_avg_sq.{name}"].to(p.device, p.dtype),
                }
        if self.lora:
            self.reference = {n: tensors[f"reference.{n}"].to(self.device) for n in trainable}
        else:
            self.reference = copy.deepcopy(self.model).eval()
            self.reference.requires_grad_(False)
            ref = {k[len("reference."):]: v for k, v in tensors.items() if k.startswith("reference.")}
            missing = [k for k in self._merged_state() if k not in ref]
            if missing:
                raise CheckpointError(f"{directory}/torch_optimizer.safetensors: no reference.{missing[0]}")
            self.reference.load_state_dict(ref, strict=False)

    def set_weights(self, version: int, directory: str) -> None:
        """Swaps in a checkpoint's weights for sampling, as weight version `version`."""
        config = checkpoint.read_config(directory)
        checkpoint.check_same_shape(directory, config, self.config)
        self._assign_weights(checkpoint.read_weights(directory), f"{directory}/model.safetensors")
        self._weights_changed()
        self.version = version

    def info(self) -> dict:
        return {
            "device": str(self.device),
            "deviceName": torch.cuda.get_device_name(self.device) if self.device.type == "cuda" else "cpu",
            "dtype": str(self.autocast_dtype).replace("torch.", ""),
            "role": self.role,
            "parameters": sum(p.numel() for p in self._base_model().parameters()),
            "trainableParameters": sum(p.numel() for p in self._trainable()),
            "step": self.step_count,
            "version": self.version,
            "worldSize": self.parallel.world,
            "vocabSize": self.hf_config.vocab_size,
            "trainModule": type(self.train_module).__name__ if self.train_module is not None else None,
            "torch": torch.__version__,
            "prefixCache": self.prefix_cache.stats() if self.prefix_cache is not None else None,
        }

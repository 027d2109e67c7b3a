"""Reading and writing checkpoint directories in the Hugging Face layout, with the training state beside them."""

import json
import os
import shutil

import torch
from safetensors.torch import load_file, save_file

from .errors import CheckpointError

#: Files a checkpoint directory holds that are weights or training state, not model description.
STATE_FILES = {
    "model.safetensors",
    "model.safetensors.index.json",
    "pytorch_model.bin",
    "trainer_state.json",
    "optimizer.safetensors",
    "torch_optimizer.safetensors",
}
#: The architecture fields two checkpoints must share for one's weights to load into the other's model.
SHAPE_FIELDS = (
    "vocab_size",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "tie_word_embeddings",
)


def read_config(directory: str) -> dict:
    path = os.path.join(directory, "config.json")
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise CheckpointError(f"{path}: not found (a checkpoint directory holds config.json)") from None
    except json.JSONDecodeError as error:
        raise CheckpointError(f"{path}: not JSON ({error})") from None


def read_json_or_empty(path: str) -> dict:
    """A JSON file's object, or {} where the file does not exist."""
    if not os.path.exists(path):
        return {}
    with open(path) as f:
        return json.load(f)


def check_same_shape(directory: str, config: dict, expected: dict) -> None:
    """Raises naming the first architecture field in which `config` differs from `expected`."""
    for field in SHAPE_FIELDS:
        if config.get(field) != expected.get(field):
            raise CheckpointError(
                f"{directory}/config.json: {field} is {config.get(field)}, expected {expected.get(field)} "
                "(this engine's architecture)"
            )


def read_weights(directory: str) -> dict:
    """Every tensor of the checkpoint's safetensors files (one file or an index of shards), by HF name."""
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    tensors = {}
    for name in files:
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            raise CheckpointError(f"{path}: not found")
        tensors.update(load_file(path))
    return tensors


def write_weights(directory: str, tensors: dict) -> None:
    save_file({k: v.detach().float().cpu().contiguous() for k, v in tensors.items()},
              os.path.join(directory, "model.safetensors"), metadata={"format": "pt"})


def copy_description(source: str, target: str) -> None:
    """Copies the checkpoint's config, generation config and tokenizer files (every top-level file that is not
    weights or training state) from `source` to `target`."""
    if os.path.abspath(source) == os.path.abspath(target):
        return
    for name in os.listdir(source):
        path = os.path.join(source, name)
        if os.path.isfile(path) and name not in STATE_FILES and not name.endswith((".safetensors", ".bin", ".pt")):
            shutil.copyfile(path, os.path.join(target, name))


def read_trainer_state(directory: str) -> tuple[dict, dict] | None:
    """`trainer_state.json` and the torch engine's state tensors, or None for a checkpoint with no training state."""
    path = os.path.join(directory, "trainer_state.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        state = json.load(f)
    if state.get("engine") != "torch":
        raise CheckpointError(
            f"{path}: training state of the embedded engine, whose optimizer layout this engine does not read; "
            "start from these weights with a fresh optimizer instead of resuming"
        )
    tensors_path = os.path.join(directory, "torch_optimizer.safetensors")
    if not os.path.exists(tensors_path):
        raise CheckpointError(f"{tensors_path}: not found, though trainer_state.json names the torch engine")
    return state, load_file(tensors_path)


def write_trainer_state(directory: str, state: dict, tensors: dict) -> None:
    save_file({k: v.detach().cpu().contiguous() for k, v in tensors.items()},
              os.path.join(directory, "torch_optimizer.safetensors"))
    with open(os.path.join(directory, "trainer_state.json"), "w") as f:
        json.dump({"engine": "torch", **state}, f, indent=2)


def torch_dtype(name: str) -> torch.dtype:
    dtypes = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
    if name not in dtypes:
        raise CheckpointError(f"dtype: expected one of {', '.join(dtypes)}, got {name!r}")
    return dtypes[name]

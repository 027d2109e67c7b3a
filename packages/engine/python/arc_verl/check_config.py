"""Checks a list of Hydra overrides of `verl.trainer.main_ppo` the way VERL loads them, without GPUs.

    python -m arc_verl.check_config overrides.json

The file holds one list of overrides, or an object of named lists, each checked in turn.
VERL's own code composes its `ppo_trainer` configuration with the overrides (an unknown key fails here), runs the
`validate_config` that `main_ppo` runs before it trains (batch sizes against GPUs, micro-batches, the actor's
loss aggregation, the critic) and builds the actor, rollout and algorithm dataclasses. Then Arc's own checks here
refuse what VERL leaves unchecked until its GPU job starts: scalar types, the advantage estimator, the KL estimator
and the rollout engine. Without vLLM, `validate_config`'s LoRA-rank helper from vLLM is replaced by Arc's stand-in.
Prints one JSON line per configuration, `{"name", "ok": true, ...}` or `{"name", "ok": false, "refused_by", "error"}`
(`refused_by`: "verl" for VERL's and Hydra's own errors, "arc" for Arc's checks), and exits with status 1 when any
failed.
"""

import contextlib
import dataclasses
import json
import os
import sys
import types
import typing

os.environ.setdefault("HF_HUB_OFFLINE", "1")

#: The LoRA ranks vLLM serves; VERL rounds a LoRA rank up to one of them (it asks vLLM, absent on a CPU machine).
VLLM_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)
#: Values VERL reads as names only when its GPU job runs.
ADVANTAGE_ESTIMATORS = {"gae", "grpo", "reinforce_plus_plus", "reinforce_plus_plus_baseline", "remax", "rloo",
                        "opo", "grpo_passk", "gpg", "rloo_vectorized", "grpo_vectorized", "optimal_token_baseline",
                        "tir_optimal_token_baseline", "gdpo"}
KL_ESTIMATORS = {"kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3"}
ROLLOUT_ENGINES = {"vllm", "sglang", "trtllm"}


class ArcCheckError(ValueError):
    """A value VERL itself accepts until its GPU job starts, refused by Arc's checks here."""


def _without_vllm():
    """Stands in for vLLM's LoRA-rank helper, which `validate_config` imports for a LoRA run on vLLM; True if it did."""
    name = "verl.workers.rollout.vllm_rollout.utils"
    try:
        __import__(name)
        return False
    except Exception:  # without vLLM the module refuses to import (ImportError, or ValueError naming the version)
        sys.modules.pop(name, None)

    def max_lora_rank(rank):
        fits = [r for r in VLLM_LORA_RANKS if rank <= r]
        if rank <= 0 or not fits:
            raise ValueError(f"lora_rank: expected 1 to {VLLM_LORA_RANKS[-1]}, got {rank}")
        return fits[0]

    stand_in = types.ModuleType(name)
    setattr(stand_in, "get_vllm_max_lora_rank", max_lora_rank)
    sys.modules[name] = stand_in
    return True


def _type_errors(obj, path):
    """Fields of a built configuration dataclass whose scalar value is not of its declared type."""
    errors = []
    hints = typing.get_type_hints(type(obj))
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        where = f"{path}.{field.name}"
        if dataclasses.is_dataclass(value):
            errors += _type_errors(value, where)
            continue
        if value is None:
            continue
        hint = hints.get(field.name)
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        options = [a for a in (typing.get_args(hint) if union else (hint,)) if a is not type(None)]
        scalars = [a for a in options if a in (bool, int, float, str)]
        if not scalars or len(scalars) != len(options):
            continue
        fits = any(
            (isinstance(value, kind) and not (kind is int and isinstance(value, bool)))
            or (kind is float and isinstance(value, int) and not isinstance(value, bool))
            for kind in scalars
        )
        if not fits:
            errors.append(f"{where}: expected {' or '.join(k.__name__ for k in scalars)}, got {value!r}")
    return errors


def check(overrides: list[str]) -> typing.Any:
    """The composed configuration of `overrides`; raises with VERL's own error, or ArcCheckError naming the key."""
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra
    from omegaconf import OmegaConf

    import verl.trainer.main_ppo as main_ppo
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import omega_conf_to_dataclass, validate_config

    GlobalHydra.instance().clear()
    config_dir = os.path.join(os.path.dirname(main_ppo.__file__), "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        config = compose(config_name="ppo_trainer", overrides=list(overrides))
    validate_config(
        config=config,
        use_reference_policy=need_reference_policy(config),
        use_critic=need_critic(config),
    )
    errors = []
    for key in ("actor_rollout_ref.actor", "actor_rollout_ref.rollout", "algorithm"):
        errors += _type_errors(omega_conf_to_dataclass(OmegaConf.select(config, key)), key)
    named = {
        "algorithm.adv_estimator": ADVANTAGE_ESTIMATORS,
        "actor_rollout_ref.actor.kl_loss_type": KL_ESTIMATORS,
        "actor_rollout_ref.rollout.name": ROLLOUT_ENGINES,
    }
    for key, allowed in named.items():
        value = str(OmegaConf.select(config, key)).rstrip("+")
        if value not in allowed:
            errors.append(f"{key}: expected one of {', '.join(sorted(allowed))}, got {value!r}")
    if errors:
        raise ArcCheckError("; ".join(errors))
    OmegaConf.to_container(config, resolve=True)
    return config


def _report(name, overrides, vllm_stand_in):
    try:
        # VERL prints its own progress on stdout; the reports alone go there
        with contextlib.redirect_stdout(sys.stderr):
            config = check(overrides)
    except Exception as error:  # VERL's and Hydra's errors are many; each is reported as it is
        refused_by = "arc" if isinstance(error, ArcCheckError) else "verl"
        return {"name": name, "ok": False, "refused_by": refused_by, "error": f"{type(error).__name__}: {error}"}
    return {
        "name": name,
        "ok": True,
        "adv_estimator": config.algorithm.adv_estimator,
        "reference_policy": bool(config.actor_rollout_ref.actor.use_kl_loss),
        "lora_rank": config.actor_rollout_ref.model.lora_rank,
        "vllm_stand_in": vllm_stand_in,
    }


def main() -> None:
    if len(sys.argv) != 2:
        print("usage: python -m arc_verl.check_config overrides.json", file=sys.stderr)
        sys.exit(2)
    with open(sys.argv[1]) as file:
        given = json.load(file)
    configs = given if isinstance(given, dict) else {"overrides": given}
    vllm_stand_in = _without_vllm()
    reports = [_report(name, overrides, vllm_stand_in) for name, overrides in configs.items()]
    for report in reports:
        print(json.dumps(report))
    sys.exit(0 if all(r["ok"] for r in reports) else 1)


if __name__ == "__main__":
    main()

"""Compose rlif's trainer config from Hydra overrides, and check runs against it.

rlif's trainer config (``TRAINER_CONFIG_NAME`` in the package ``TRAINER_CONFIG_MODULE``) is verl 0.9.1's
``ppo_trainer`` with rlif's hooks and shared settings; the launcher passes the same module and name to ``main_ppo``.
``compose`` is what ``main_ppo`` itself does before it starts Ray (Hydra compose, then ``validate_config``); the CPU
demo's training phase and the generator's check both compose through ``trainer_composer``. ``check_all`` adds the
checks verl leaves to run time (docs/recipes.md): each override's type against the default's type, the enum-like
names (advantage estimator, rollout engine, strategies, reward manager, KL estimator), the conversion of the nodes
verl turns into dataclasses, and a full resolve of every interpolation.

The generator runs the check as ``python -m rlif.verl_glue.config`` in a Python that has verl
(``run_verl_check`` starts it), reading ``{"runs": {name: [override, ...]}}`` as JSON on stdin and writing a JSON
list of problems to stdout, so the generator itself needs no verl import: verl is imported only inside the
functions that compose. Hydra's config directory is initialised once per check and each run is one compose.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from rlif.runs.problems import Problem

TRAINER_CONFIG_MODULE = "rlif.verl_glue.trainer_config"
"""The package holding rlif's trainer config (``main_ppo --config-path=pkg://<module>``)."""

TRAINER_CONFIG_NAME = "rlif_trainer"
"""rlif's trainer config (``main_ppo --config-name``): ``ppo_trainer`` with rlif's hooks and shared settings."""

ROLLOUT_NAMES = frozenset({"vllm", "sglang", "trtllm"})
"""Rollout engines verl 0.9.1 registers (``verl.workers.rollout.base``); an unknown one fails only at start-up."""

STRATEGIES = frozenset({"fsdp", "fsdp2", "megatron"})
"""Actor/reference strategies verl 0.9.1's workers implement."""

KL_TYPES = frozenset({"kl", "k1", "abs", "mse", "k2", "low_var_kl", "k3", "full"})
"""KL estimators of ``core_algos.kl_penalty`` (a trailing ``+`` selects the straight-through variant)."""

TRAINER_MODES = frozenset({"sync", "colocate_async", "separate_async"})
"""``trainer.v1.trainer_mode`` values of verl 0.9.1."""


def run_verl_check(runs: Mapping[str, list[str]], python: str, timeout: float = 600.0) -> list[Problem]:
    """Check every run in one subprocess of ``python``.

    Args:
        runs: run name -> its override texts (placeholders already substituted).
        python: an interpreter that can import verl 0.9.1 and this package.
        timeout: seconds before the check is abandoned.

    Returns:
        The problems found, in run order.

    Raises:
        RuntimeError: the checker could not run (no verl there, a crash); the message carries its stderr tail.
    """
    env = dict(os.environ)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = here + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("HYDRA_FULL_ERROR", "0")
    proc = subprocess.run(
        [python, "-m", "rlif.verl_glue.config"],
        input=json.dumps({"runs": dict(runs)}),
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(
            f"verl config check failed to run with {python} (rc {proc.returncode}):\n{proc.stderr[-3000:]}"
        )
    return [Problem(**p) for p in json.loads(proc.stdout.strip().splitlines()[-1])]


@contextmanager
def trainer_composer() -> Iterator[Callable[[Sequence[str]], Any]]:
    """Initialise Hydra on rlif's trainer config package once; yield ``compose(overrides)`` of the config.

    Composing many runs in one initialisation is what makes checking the whole matrix quick. verl's own config
    directory is on the search path through the config's ``hydra.searchpath``.
    """
    import hydra

    with hydra.initialize_config_module(config_module=TRAINER_CONFIG_MODULE, version_base=None):
        yield lambda overrides: hydra.compose(config_name=TRAINER_CONFIG_NAME, overrides=list(overrides))


def validate(cfg: Any) -> None:
    """verl's own start-up validation of a composed config, as ``main_ppo`` runs it.

    Raises:
        AssertionError, ValueError: verl rejects the config (verl's own message).
    """
    from verl.trainer.ppo.utils import need_critic, need_reference_policy
    from verl.utils.config import validate_config

    validate_config(cfg, use_reference_policy=need_reference_policy(cfg), use_critic=need_critic(cfg))


def compose(overrides: Sequence[str]) -> Any:
    """rlif's trainer config with ``overrides``, validated as ``main_ppo`` validates it before Ray starts."""
    with trainer_composer() as compose_one:
        config = compose_one(overrides)
    validate(config)
    return config


def check_all(runs: Mapping[str, list[str]]) -> list[Problem]:
    """Compose and check every run in this process (needs verl, hydra and omegaconf).

    Args:
        runs: run name -> override texts.

    Returns:
        The problems found.
    """
    from omegaconf import OmegaConf

    problems: list[Problem] = []
    with trainer_composer() as compose_one:
        base = compose_one([])
        for name, overrides in runs.items():
            try:
                cfg = compose_one(overrides)
            except Exception as err:
                problems.append(Problem(name, _key_in(str(err)), f"does not compose: {_first_line(err)}"))
                continue
            problems += _check_types(name, base, cfg, overrides)
            problems += _check_names(name, cfg)
            problems += _check_verl(name, cfg)
            try:
                OmegaConf.to_container(cfg, resolve=True)
            except Exception as err:
                problems.append(Problem(name, _key_in(str(err)), f"does not resolve: {_first_line(err)}"))
    return problems


def _check_types(name: str, base: Any, cfg: Any, overrides: list[str]) -> list[Problem]:
    """Each overridden existing key keeps the kind of value verl's default has (the yaml has no schema)."""
    from omegaconf import OmegaConf

    problems = []
    for text in overrides:
        if text.startswith("+"):
            continue
        key = text.split("=", 1)[0]
        try:
            default = OmegaConf.select(base, key, throw_on_missing=False)
        except Exception:
            continue
        value = OmegaConf.select(cfg, key, throw_on_missing=False)
        if default is None or value is None or key in STR_OR_LIST_KEYS:
            continue
        if key in FLOAT_KEYS:
            default = float(default)
        if not _same_kind(default, value):
            problems.append(Problem(name, key, f"expects {type(default).__name__} like {default!r}, got {value!r}"))
    return problems


STR_OR_LIST_KEYS = frozenset({"data.train_files", "data.val_files"})
"""Keys verl documents as a path or a list of paths (its yaml default is a single string)."""

FLOAT_KEYS = frozenset({"actor_rollout_ref.rollout.val_kwargs.temperature"})
"""Keys whose yaml default is an integer but whose dataclass field is a float (``SamplingConfig.temperature``)."""


def _same_kind(default: Any, value: Any) -> bool:
    from omegaconf import DictConfig, ListConfig

    if isinstance(default, bool) or isinstance(value, bool):
        return isinstance(default, bool) and isinstance(value, bool)
    if isinstance(default, float):
        return isinstance(value, int | float)
    if isinstance(default, int):
        return isinstance(value, int)
    if isinstance(default, str):
        return isinstance(value, str)
    if isinstance(default, ListConfig | list):
        return isinstance(value, ListConfig | list)
    if isinstance(default, DictConfig | dict):
        return isinstance(value, DictConfig | dict)
    return True


def _check_names(name: str, cfg: Any) -> list[Problem]:
    """Names verl looks up in registries only once the trainer has started."""
    from verl.experimental.reward_loop.reward_manager.registry import get_reward_manager_cls
    from verl.trainer.ppo.core_algos import get_adv_estimator_fn

    problems = []
    arr = cfg.actor_rollout_ref

    def need(ok: bool, key: str, message: str) -> None:
        if not ok:
            problems.append(Problem(name, key, message))

    need(
        arr.rollout.name in ROLLOUT_NAMES,
        "actor_rollout_ref.rollout.name",
        f"{arr.rollout.name!r} not in {sorted(ROLLOUT_NAMES)}",
    )
    need(
        arr.actor.strategy in STRATEGIES,
        "actor_rollout_ref.actor.strategy",
        f"{arr.actor.strategy!r} not in {sorted(STRATEGIES)}",
    )
    need(
        arr.ref.strategy in STRATEGIES,
        "actor_rollout_ref.ref.strategy",
        f"{arr.ref.strategy!r} not in {sorted(STRATEGIES)}",
    )
    kl = str(arr.actor.kl_loss_type).removesuffix("+")
    need(
        kl in KL_TYPES, "actor_rollout_ref.actor.kl_loss_type", f"{arr.actor.kl_loss_type!r} not in {sorted(KL_TYPES)}"
    )
    mode = cfg.trainer.v1.trainer_mode
    need(mode in TRAINER_MODES, "trainer.v1.trainer_mode", f"{mode!r} not in {sorted(TRAINER_MODES)}")
    try:
        get_adv_estimator_fn(cfg.algorithm.adv_estimator)
    except ValueError as err:
        problems.append(Problem(name, "algorithm.adv_estimator", str(err)))
    if cfg.reward.reward_manager.source == "register":
        try:
            get_reward_manager_cls(cfg.reward.reward_manager.name)
        except (ValueError, KeyError) as err:
            problems.append(Problem(name, "reward.reward_manager.name", _first_line(err)))
    return problems


def _check_verl(name: str, cfg: Any) -> list[Problem]:
    """verl's own start-up validation and the dataclass conversion of the nodes its workers convert."""
    from verl.utils.config import omega_conf_to_dataclass

    problems = []
    try:
        validate(cfg)
    except Exception as err:  # verl raises AssertionError, ValueError and Hydra's InstantiationException here
        problems.append(Problem(name, "validate_config", _root_message(err)))
    for key in ("actor_rollout_ref.actor", "actor_rollout_ref.rollout", "algorithm"):
        node = cfg
        for part in key.split("."):
            node = node[part]
        try:
            omega_conf_to_dataclass(node)
        except Exception as err:
            problems.append(Problem(name, key, f"rejected by verl's config class: {_root_message(err)}"))
    return problems


def _root_message(err: BaseException) -> str:
    """The first line of the innermost cause (Hydra wraps verl's own message)."""
    while err.__cause__ is not None:
        err = err.__cause__
    return _first_line(err)


def _key_in(message: str) -> str:
    match = re.search(r"'([\w.+-]+)'", message)
    return match.group(1) if match else "config"


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]


def main() -> int:
    """Read runs as JSON on stdin, print the problems as one JSON line on stdout."""
    request = json.load(sys.stdin)
    problems = check_all(request["runs"])
    sys.stdout.write("\n" + json.dumps([p.__dict__ for p in problems]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

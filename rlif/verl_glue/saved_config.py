"""What a finished run's saved verl config says about the run, read without verl.

verl writes the resolved config of every run (Hydra's ``.hydra/config.yaml``). Code outside this package (the model
card) needs a few of its values; this module names verl's keys for them in one place, so a verl upgrade that moves a
key changes this file only.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

KEYS = {
    "model_path": "actor_rollout_ref.model.path",
    "total_training_steps": "trainer.total_training_steps",
    "train_files": "data.train_files",
    "val_files": "data.val_files",
    "sampler": "data.rlif_sampler",
    "reward_function": "reward.custom_reward_function",
}
"""verl 0.9.1's key for each field of ``SavedRunConfig``."""


@dataclass(frozen=True)
class SavedRunConfig:
    """The values of a saved run config that describe the run (None or empty where the config lacks them).

    Attributes:
        model_path: the model the run started from (``actor_rollout_ref.model.path``).
        total_training_steps: the step limit; None when verl derived it from epochs (null in the config).
        train_files: training data files, as written in the config.
        val_files: validation data files.
        sampler_name: rlif's sampling policy (``data.rlif_sampler.name``); None without the node (verl's default:
            rlif's dataset then samples uniformly).
        sampler_params: the policy's parameters, parsed from the JSON text generated scripts write.
        sampler_seed: the policy's seed.
        reward_path: ``reward.custom_reward_function.path`` (e.g. ``pkg://rlif.verl_glue.hooks``); None without it.
        reward_name: the reward function's name in that module.
        reward_kwargs: the reward options passed to it.
    """

    model_path: str | None = None
    total_training_steps: int | None = None
    train_files: tuple[str, ...] = ()
    val_files: tuple[str, ...] = ()
    sampler_name: str | None = None
    sampler_params: dict[str, Any] = field(default_factory=dict)
    sampler_seed: int | None = None
    reward_path: str | None = None
    reward_name: str | None = None
    reward_kwargs: dict[str, Any] = field(default_factory=dict)


def read_saved_config(config: Mapping[str, Any]) -> SavedRunConfig:
    """The run-describing values of a resolved verl config mapping (e.g. ``yaml.safe_load`` of
    ``.hydra/config.yaml``).

    Raises:
        ValueError: a value of the wrong kind (a step limit that is no integer, sampler params that are neither a
            mapping nor JSON text of one).
    """
    total = _get(config, KEYS["total_training_steps"])
    if total is not None and (isinstance(total, bool) or not isinstance(total, int)):
        raise ValueError(f"{KEYS['total_training_steps']}: expected an integer or null, got {total!r}")
    model = _get(config, KEYS["model_path"])
    sampler = _get(config, KEYS["sampler"])
    sampler = sampler if isinstance(sampler, Mapping) else {}
    reward = _get(config, KEYS["reward_function"])
    reward = reward if isinstance(reward, Mapping) else {}
    seed = sampler.get("seed")
    return SavedRunConfig(
        model_path=None if model is None else str(model),
        total_training_steps=total,
        train_files=_files(_get(config, KEYS["train_files"])),
        val_files=_files(_get(config, KEYS["val_files"])),
        sampler_name=None if sampler.get("name") is None else str(sampler["name"]),
        sampler_params=_params(sampler.get("params")),
        sampler_seed=None if seed is None else int(seed),
        reward_path=str(reward["path"]) if reward.get("path") else None,
        reward_name=str(reward["name"]) if reward.get("name") else None,
        reward_kwargs=dict(reward.get("reward_kwargs") or {}),
    )


def _get(config: Mapping[str, Any], dotted: str) -> Any:
    node: Any = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return None
        node = node[part]
    return node


def _files(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    return tuple(str(v) for v in (value if isinstance(value, list | tuple) else [value]))


def _params(value: Any) -> dict[str, Any]:
    """Sampler params as generated scripts write them (JSON text) or as a hand-written override composes them."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError as err:
            raise ValueError(f"{KEYS['sampler']}.params: not JSON text ({err})") from None
    if not isinstance(value, Mapping):
        raise ValueError(f"{KEYS['sampler']}.params: expected a mapping, got {value!r}")
    return dict(value)

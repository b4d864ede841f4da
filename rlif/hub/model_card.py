"""Write the model card (``README.md``) that goes up with a merged checkpoint.

A pushed checkpoint is only useful if someone can tell what it is, so the card records the base model, the
training and validation files, the sampling policy, the reward options, the step, and the last validation metrics
logged at or before that step. The facts come from the run itself, never typed by hand:

* the resolved verl config, saved as YAML in the run directory (``config.yaml`` or Hydra's ``.hydra/config.yaml``)
  or given explicitly; it names the model path, data files, ``data.rlif_sampler`` and
  ``reward.custom_reward_function``;
* verl's file logger output (``trainer.logger`` with ``file``; the generated scripts set
  ``VERL_FILE_LOGGER_PATH=<run_dir>/metrics.<job>.<restart>.jsonl``, one file per job attempt):
  one JSON object ``{"step", "data"}`` per line, where validation metrics are the ``val-core/`` and ``val-aux/``
  keys.

A fact that the run did not record is written as "not recorded", never guessed. A published card never carries a
path of the machine the run was trained on: the base model appears as its Hub repo id (recovered from a Hub cache
snapshot path) or as "local model", and file paths in the data, sampler and reward settings are cut to file names.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import yaml

from rlif.hub.checkpoints import Checkpoint
from rlif.jsonl import read_json_lines

CONFIG_NAMES = ("config.yaml", ".hydra/config.yaml")
METRICS_GLOB = "metrics*.jsonl"
NOT_RECORDED = "not recorded"
LOCAL_MODEL = "local model"
MAX_METRICS = 40
_CACHE_PATH = re.compile(r"models--(?P<owner>[^/]+?)--(?P<name>[^/]+)/snapshots/")
_REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class SavedConfig(Protocol):
    """The run-describing values of a saved verl config, as ``rlif.verl_glue.saved_config`` reads them (the glue
    names verl's keys; the card only reads these attributes)."""

    model_path: str | None
    total_training_steps: int | None
    train_files: tuple[str, ...]
    val_files: tuple[str, ...]
    sampler_name: str | None
    sampler_params: Mapping[str, Any]
    sampler_seed: int | None
    reward_path: str | None
    reward_name: str | None
    reward_kwargs: Mapping[str, Any]


ConfigReader = Callable[[Mapping[str, Any]], SavedConfig]
"""Turns a loaded config mapping into ``SavedConfig`` (``rlif.verl_glue.saved_config.read_saved_config``); raises
``ValueError`` for a value of the wrong kind."""


@dataclass(frozen=True)
class RunInfo:
    """What the model card says about a checkpoint.

    Attributes:
        run_name: the run directory's name.
        step: the checkpoint's ``global_step``.
        total_steps: ``trainer.total_training_steps`` when set.
        base_model: a Hub repo id or ``LOCAL_MODEL``; None when not recorded.
        train_files: ``data.train_files``.
        val_files: ``data.val_files``.
        sampler: ``data.rlif_sampler`` (name, params, seed); None when the run had no config.
        reward: the reward function and its options; None when the run had no config.
        val_metrics: the last validation metrics logged at or before ``step``.
        val_metrics_step: the step those metrics were logged at.
    """

    run_name: str
    step: int
    total_steps: int | None = None
    base_model: str | None = None
    train_files: tuple[str, ...] = ()
    val_files: tuple[str, ...] = ()
    sampler: Mapping[str, Any] | None = None
    reward: Mapping[str, Any] | None = None
    val_metrics: Mapping[str, float] = field(default_factory=dict)
    val_metrics_step: int | None = None


def find_config(run_dir: Path) -> Path | None:
    """The run's saved verl config, if one of ``CONFIG_NAMES`` exists in ``run_dir``."""
    for name in CONFIG_NAMES:
        if (run_dir / name).is_file():
            return run_dir / name
    return None


def base_model_id(model_path: str) -> str:
    """The Hub repo id a model path stands for, or ``LOCAL_MODEL``; never the path itself.

    ``.../models--Qwen--Qwen3-8B/snapshots/<sha>`` gives ``Qwen/Qwen3-8B``; an ``owner/name`` that is not an existing
    directory is taken as the repo id it is; anything else (a directory of the training machine) is a local model.
    """
    match = _CACHE_PATH.search(model_path)
    if match:
        return f"{match['owner']}/{match['name']}"
    if _REPO_ID.match(model_path) and not Path(model_path).exists():
        return model_path
    return LOCAL_MODEL


def public_path(value: str) -> str:
    """``value`` with a local file path cut to its file name (``pkg://`` and other URLs are kept)."""
    if "://" in value or ("/" not in value and "\\" not in value):
        return value
    return value.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]


def _public(value: Any) -> Any:
    """``public_path`` applied to every string that looks like a path, through nested settings."""
    if isinstance(value, Mapping):
        return {k: _public(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_public(v) for v in value]
    if isinstance(value, str) and value.startswith(("/", "~", "./", "../")):
        return public_path(value)
    return value


def read_val_metrics(metrics_file: Path, step: int) -> tuple[dict[str, float], int | None]:
    """The last record at or before ``step`` that has validation metrics, and its step.

    Raises:
        ValueError: a line is not a ``{"step", "data"}`` JSON object (names the file and line).
    """
    best: dict[str, float] = {}
    best_step = None
    for line_no, record in read_json_lines(metrics_file):
        try:
            record_step = int(record["step"])
            data = record["data"]
        except (KeyError, TypeError, ValueError) as err:
            raise ValueError(f"{metrics_file}: line {line_no}: not a verl file-logger record ({err})") from err
        val = {
            k: float(v)
            for k, v in data.items()
            if k.startswith("val-") and isinstance(v, int | float) and math.isfinite(v)
        }
        if val and record_step <= step and (best_step is None or record_step >= best_step):
            best, best_step = val, record_step
    return best, best_step


def collect_run_info(
    checkpoint: Checkpoint,
    *,
    read_config: ConfigReader,
    config_file: Path | None = None,
    metrics_file: Path | None = None,
    base_model: str | None = None,
) -> RunInfo:
    """Gather the card's facts from the run directory (or the given files).

    Args:
        checkpoint: the checkpoint being published.
        read_config: reads the run-describing values of the loaded config (see ``ConfigReader``).
        config_file: the resolved verl config YAML; default ``find_config(run_dir)``.
        metrics_file: verl file-logger output; default every ``<run_dir>/metrics*.jsonl`` (the latest validation
            record across them).
        base_model: a Hub repo id that overrides the config's model path.

    Raises:
        ValueError: a given file is missing, the config or metrics file is malformed, or ``base_model`` is not an
            ``owner/name`` repo id.
    """
    if base_model is not None and not _REPO_ID.match(base_model):
        raise ValueError(
            f"--base-model {base_model!r}: give the Hub repo id (owner/name) the run started from; the card never "
            f"carries a local path (without --base-model a local model is written as {LOCAL_MODEL!r})"
        )
    run_dir = checkpoint.run_dir
    config_path = config_file if config_file is not None else find_config(run_dir)
    config: Mapping[str, Any] = {}
    if config_path is not None:
        try:
            loaded = yaml.safe_load(Path(config_path).read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as err:
            raise ValueError(f"{config_path}: cannot read the run config ({err})") from err
        if not isinstance(loaded, Mapping):
            raise ValueError(f"{config_path}: the run config is not a mapping")
        config = loaded
    if metrics_file is not None:
        if not metrics_file.is_file():
            raise ValueError(f"{metrics_file}: metrics file missing")
        metrics_paths = [metrics_file]
    else:
        # one file per job attempt (metrics.<job>.<restart>.jsonl), oldest first so a later attempt wins a tie
        metrics_paths = sorted(run_dir.glob(METRICS_GLOB), key=lambda path: path.stat().st_mtime)
    val_metrics: dict[str, float] = {}
    val_step = None
    for path in metrics_paths:
        metrics, at = read_val_metrics(path, checkpoint.step)
        if at is not None and (val_step is None or at >= val_step):
            val_metrics, val_step = metrics, at
    try:
        saved = read_config(config) if config else None
    except ValueError as err:
        raise ValueError(f"{config_path}: {err}") from err
    return RunInfo(
        run_name=run_dir.name,
        step=checkpoint.step,
        total_steps=saved.total_training_steps if saved else None,
        base_model=base_model or (base_model_id(saved.model_path) if saved and saved.model_path else None),
        train_files=tuple(Path(f).name for f in saved.train_files) if saved else (),
        val_files=tuple(Path(f).name for f in saved.val_files) if saved else (),
        sampler=_sampler(saved) if saved else None,
        reward=_reward(saved) if saved else None,
        val_metrics=val_metrics,
        val_metrics_step=val_step,
    )


def _sampler(saved: SavedConfig) -> dict[str, Any]:
    if saved.sampler_name is None:
        return {"name": "uniform", "params": {}, "note": "default: no rlif sampler in the config"}
    return {"name": saved.sampler_name, "params": _public(dict(saved.sampler_params)), "seed": saved.sampler_seed}


def _reward(saved: SavedConfig) -> dict[str, Any]:
    if not saved.reward_path:
        return {"function": "verl default (no custom reward function)"}
    return {
        "function": f"{public_path(saved.reward_path)}:{saved.reward_name}",
        "options": _public(dict(saved.reward_kwargs)),
    }


def render_model_card(info: RunInfo, *, repo_id: str) -> str:
    """Render ``README.md``: Hub metadata front matter, then one section per fact."""
    front: dict[str, Any] = {"library_name": "transformers", "tags": ["rlif", "grpo", "verl"]}
    if info.base_model and _REPO_ID.match(info.base_model):
        front["base_model"] = info.base_model
    lines = ["---", yaml.safe_dump(front, sort_keys=True).rstrip(), "---", "", f"# {repo_id}", ""]
    steps = f"{info.step}" + (f" of {info.total_steps}" if info.total_steps else "")
    lines += [
        f"GRPO checkpoint of run `{info.run_name}` at global step {steps}, trained with rlif on verl 0.9.1 and "
        "merged from FSDP shards with verl's model merger.",
        "",
        "| | |",
        "|---|---|",
        f"| base model | {_cell(info.base_model)} |",
        f"| training data | {_cell(', '.join(info.train_files))} |",
        f"| validation data | {_cell(', '.join(info.val_files))} |",
        f"| sampler | {_cell(_json(info.sampler))} |",
        f"| reward | {_cell(_json(info.reward))} |",
        f"| global step | {steps} |",
        "",
        "## Last validation metrics",
        "",
    ]
    if info.val_metrics:
        lines += [f"Logged at step {info.val_metrics_step}.", "", "| metric | value |", "|---|---|"]
        core = sorted(k for k in info.val_metrics if k.startswith("val-core/"))
        shown = core or sorted(info.val_metrics)
        lines += [f"| `{k}` | {info.val_metrics[k]:.4f} |" for k in shown[:MAX_METRICS]]
        if len(shown) > MAX_METRICS:
            lines.append(f"| ({len(shown) - MAX_METRICS} more not shown) | |")
    else:
        lines.append(f"{NOT_RECORDED.capitalize()}: no validation metrics at or before this step.")
    return "\n".join(lines) + "\n"


def _cell(value: str | None) -> str:
    return value.replace("|", "\\|") if value else NOT_RECORDED


def _json(value: Mapping[str, Any] | None) -> str | None:
    return None if value is None else "`" + json.dumps(value, sort_keys=True, default=str) + "`"

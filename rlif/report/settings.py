"""What differs between the runs besides the decision: their settings and what each run's training saw.

Settings come from the matrix (a run named like a matrix run: its entry merged over the defaults and its group) or
from the resolved config verl saved in the run's directory (Hydra's ``.hydra/config.yaml`` or a ``config.yaml``),
flattened to dotted keys; only keys whose values differ are shown. Exposure is the training metrics' ``exposure/...``
keys (prompts, unique prompts, tokens, truncated share per source group), read generically: each key's last logged
value, seeds averaged, plus each source's share of the prompts where the cumulative prompt counts exist.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from rlif.eval.chain import arms
from rlif.report.runs import Run
from rlif.runs.matrix import Matrix

CONFIG_NAMES = (".hydra/config.yaml", "config.yaml")
"""Where a run directory holds verl's resolved config."""

EXPOSURE_PREFIX = "exposure/"
PROMPT_COUNTS = "exposure/cum_prompts/"
"""Cumulative prompts drawn per source group; their shares are the mix the run actually trained on."""


def flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted key -> leaf value of a nested mapping (lists kept whole)."""
    out: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, name + "."))
        else:
            out[name] = value
    return out


def saved_config(run: Run) -> dict[str, Any] | None:
    """The run's saved verl config, found beside its metrics files or one directory up; None when there is none.

    Raises:
        ValueError: the file is not valid YAML (names it).
    """
    directories = dict.fromkeys(d for p in run.sources for d in (p.parent, p.parent.parent))
    for directory in directories:
        for name in CONFIG_NAMES:
            path = directory / name
            if path.is_file():
                try:
                    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
                except yaml.YAMLError as err:
                    raise ValueError(f"{path}: not valid YAML ({err})") from None
                return loaded if isinstance(loaded, dict) else None
    return None


def run_settings(runs: Sequence[Run], matrix: Matrix | None) -> dict[str, tuple[str, dict[str, Any]]]:
    """Run name -> (where its settings came from, its flattened settings), for the runs that have any."""
    out = {}
    for run in runs:
        if matrix is not None and run.name in matrix.names():
            out[run.name] = ("matrix", flatten(matrix.merged_raw(run.name)))
            continue
        config = saved_config(run)
        if config is not None:
            out[run.name] = ("saved config", flatten(config))
    return out


def differing(settings: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The keys whose values are not the same in every run (a key one run lacks differs)."""
    if len(settings) < 2:
        return []
    keys = sorted(set().union(*(set(values) for values in settings.values())))
    missing = object()
    return [k for k in keys if len({repr(values.get(k, missing)) for values in settings.values()}) > 1]


def exposure(runs: Sequence[Run]) -> tuple[list[str], dict[str, dict[str, float]]]:
    """(arms, key -> arm -> value): each ``exposure/`` key's last logged value per arm, seeds averaged, and the
    share of prompts per source as ``exposure/share_of_prompts/<source>``."""
    by_name = {run.name: run for run in runs}
    grouped = arms([run.name for run in runs])
    table: dict[str, dict[str, float]] = {}
    for arm, names in grouped.items():
        lasts: dict[str, list[float]] = {}
        for name in names:
            run = by_name[name]
            logged = run.keys()
            for key in sorted(k for k in logged if k.startswith(EXPOSURE_PREFIX)):
                _, values = run.series(key)
                if values:
                    lasts.setdefault(key, []).append(values[-1])
        for key, values in lasts.items():
            table.setdefault(key, {})[arm] = sum(values) / len(values)
        counts = {k[len(PROMPT_COUNTS) :]: v[arm] for k, v in table.items() if k.startswith(PROMPT_COUNTS) and arm in v}
        total = sum(counts.values())
        for source, count in counts.items():
            if total > 0:
                table.setdefault(f"exposure/share_of_prompts/{source}", {})[arm] = count / total
    shown = [arm for arm in grouped if any(arm in values for values in table.values())]
    return shown, dict(sorted(table.items()))

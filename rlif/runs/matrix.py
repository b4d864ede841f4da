"""The experiment matrix: ``recipe/matrix.yaml`` loaded into run specs (``rlif.runs.spec``).

The YAML has four top-level keys. ``defaults`` holds the group's setup; ``groups`` names shared settings of a family
of runs (a run joins one with ``group: <name>``); each entry of ``runs`` is deep-merged over the defaults, then over
its group, then its own keys (mappings merge key by key, everything else replaces). ``cpu_profile`` holds the tiny
sizes of CPU runs: a run the file declares with ``cpu_mode: true`` gets it before its own keys (so the CPU demo's
run states its own deltas), and a GPU run rebuilt in CPU mode (``Matrix.in_cpu_mode``) gets it last.

A ``from_winner`` link may only name stages of earlier runs and take keys the run leaves to the winner; the matrix
checks that here, and the generator resolves the link (``rlif.recipes.chained``) through ``Matrix.resolved``.

A run or group that declares ``seeds: [1, 2, 3]`` becomes one run per seed, ``<name>_s<seed>`` (``rlif.runs.spec``
``build_runs``); selecting the declared name selects every replicate.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from rlif.runs.spec import TAKE_FORBIDDEN, RunSpec, build_run, build_runs, deep_merge, replicate_raw, set_dotted

SHIPPED_MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"
"""The repository's matrix: its ``defaults:`` section is the only place a run setting's default is written."""


@dataclass(frozen=True)
class Matrix:
    """The loaded matrix.

    Attributes:
        runs: every run, in file order.
        cpu_profile: the raw mapping merged over a run built in CPU mode.
        defaults: the raw defaults mapping (kept so CPU mode can rebuild a run).
        raw_runs: each run's raw mapping by name, its ``group`` key removed (same reason); a replicate's is its
            entry's with the seed applied.
        groups: each group's raw mapping by name.
        group_of: the group each run joins, by run name (absent: none).
    """

    runs: tuple[RunSpec, ...]
    cpu_profile: Mapping[str, Any]
    defaults: Mapping[str, Any]
    raw_runs: Mapping[str, Mapping[str, Any]]
    groups: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    group_of: Mapping[str, str] = field(default_factory=dict)

    def names(self) -> list[str]:
        """Run names in file order."""
        return [run.name for run in self.runs]

    def stages(self) -> list[str]:
        """Stage names in order of first appearance."""
        return list(dict.fromkeys(run.stage for run in self.runs))

    def select(self, names: list[str] | None = None, stages: list[str] | None = None) -> list[RunSpec]:
        """Runs matching any given name (a declared name with ``seeds`` selects its replicates) or stage; every GPU
        run (no CPU-mode run) when neither is given.

        Raises:
            ValueError: a name or stage that is not in the matrix (the message lists the known ones).
        """
        unknown = sorted(set(names or ()) - set(self.names()) - {run.arm for run in self.runs})
        if unknown:
            raise ValueError(f"unknown run(s) {unknown}; known runs: {self.names()}")
        unknown = sorted(set(stages or ()) - set(self.stages()))
        if unknown:
            raise ValueError(f"unknown stage(s) {unknown}; known stages: {self.stages()}")
        if not names and not stages:
            return [r for r in self.runs if not r.cpu_mode]
        wanted = set(names or ())
        return [r for r in self.runs if r.name in wanted or r.arm in wanted or r.stage in (stages or ())]

    def in_cpu_mode(self, run: RunSpec) -> RunSpec:
        """``run`` rebuilt in CPU mode: CPU profile merged over it, name suffixed ``_cpu`` (never a GPU script's).

        A chained run's link is dropped: the CPU variant trains on the demo's model and data whatever wins."""
        if run.cpu_mode:
            return run
        raw = deep_merge(self.merged_raw(run.name), self.cpu_profile)
        raw["cpu_mode"] = True
        raw["name"] = run.name + "_cpu"
        raw.pop("from_winner", None)
        return build_run(raw, where=f"run {run.name!r} (cpu mode)")

    def merged_raw(self, name: str) -> dict[str, Any]:
        """The run's entry merged over the defaults and its group (its settings before any chain link is resolved)."""
        group = self.groups.get(self.group_of.get(name, ""), {})
        merged = deep_merge(deep_merge(self.defaults, group), self.raw_runs[name])
        if "replicate" in merged:  # the seeds were expanded into this run
            merged.pop("seeds", None)
        return merged

    def resolved(self, name: str, raw: Mapping[str, Any], inherited: Mapping[str, Any]) -> RunSpec:
        """Run ``name`` rebuilt from its merged ``raw`` mapping with the winner's ``inherited`` values (dotted
        key -> value) in place; the link is kept on the result so listings can say where the values came from."""
        merged = copy.deepcopy(dict(raw))
        for key, value in inherited.items():
            set_dotted(merged, key, value)
        return build_run(merged, where=f"run {name!r} (settings from the winner: {', '.join(inherited)})")

    def stage_runs(self, stage: str) -> list[RunSpec]:
        """The GPU runs of ``stage`` in file order (the candidates a chain link compares)."""
        return [run for run in self.runs if run.stage == stage and not run.cpu_mode]


def load_matrix(path: Path) -> Matrix:
    """Read and check a matrix file.

    Args:
        path: the YAML file.

    Returns:
        The matrix with every run built.

    Raises:
        ValueError: malformed YAML layout, duplicate or unsafe run names, unknown keys or wrong value types
            (the message names the file, run and key).
    """
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    sections = {"defaults", "groups", "runs", "cpu_profile"}
    if not isinstance(data, dict) or set(data) - sections or "runs" not in data:
        raise ValueError(f"{path}: expected a mapping with keys defaults, groups, runs, cpu_profile")
    defaults = data.get("defaults") or {}
    cpu_profile = data.get("cpu_profile") or {}
    if not isinstance(defaults, dict) or not isinstance(cpu_profile, dict) or not isinstance(data["runs"], list):
        raise ValueError(f"{path}: defaults and cpu_profile must be mappings, runs a list")
    if "from_winner" in defaults or "from_winner" in cpu_profile:
        raise ValueError(f"{path}: from_winner belongs to a run entry, not to defaults or cpu_profile")
    if "seeds" in cpu_profile:
        raise ValueError(f"{path}: seeds belongs to a run entry, a group or defaults, not to cpu_profile")
    groups = _load_groups(data.get("groups") or {}, path)
    runs: list[RunSpec] = []
    raw_runs: dict[str, Mapping[str, Any]] = {}
    group_of: dict[str, str] = {}
    names: set[str] = set()
    # declared names: a name with seeds is no run's own, but no other entry may take it
    for index, written in enumerate(data["runs"]):
        if not isinstance(written, dict) or not isinstance(written.get("name"), str):
            raise ValueError(f"{path}: runs[{index}] must be a mapping with a string 'name'")
        name = written["name"]
        if name in raw_runs:
            raise ValueError(f"{path}: duplicate run name {name!r}")
        entry = dict(written)
        group = entry.pop("group", None)
        if group is not None:
            if group not in groups:
                raise ValueError(f"{path}: run {name!r}: group {group!r} is not one of groups: {sorted(groups)}")
            group_of[name] = group
        merged = deep_merge(defaults, groups.get(group, {}))
        if deep_merge(merged, entry).get("cpu_mode") is True:
            merged = deep_merge(merged, cpu_profile)
        merged = deep_merge(merged, entry)
        built = build_runs(merged, where=f"{path}: run {name!r}")
        for run in built:
            if run.name in raw_runs or (len(built) > 1 and run.name in names):
                raise ValueError(f"{path}: duplicate run name {run.name!r}")
            raw_runs[run.name] = entry if run.replicate is None else replicate_raw(entry, run.replicate.seed)
            if group is not None:
                group_of[run.name] = group
            if run.from_winner is not None:
                check_link(run, entry, runs, where=f"{path}: run {name!r}")
            runs.append(run)
    return Matrix(
        runs=tuple(runs),
        cpu_profile=cpu_profile,
        defaults=defaults,
        raw_runs=raw_runs,
        groups=groups,
        group_of=group_of,
    )


def _load_groups(raw: Any, path: Path) -> dict[str, dict[str, Any]]:
    """The ``groups`` section: group name -> settings shared by the runs that join it.

    A group holds run settings only; what identifies a run or links it to a winner stays in the run's own entry.

    Raises:
        ValueError: ``groups`` or a group is not a mapping, or a group sets a key a group cannot hold (names the
            file, group and key).
    """
    if not isinstance(raw, dict):
        raise ValueError(f"{path}: groups must be a mapping of group name -> settings, got {raw!r}")
    for name, settings in raw.items():
        if not isinstance(settings, dict) or not settings:
            raise ValueError(f"{path}: groups.{name} must be a non-empty mapping of run settings, got {settings!r}")
        forbidden = sorted(set(settings) & (TAKE_FORBIDDEN | {"group"}))
        if forbidden:
            raise ValueError(f"{path}: groups.{name}: {forbidden[0]!r} belongs to a run entry, not to a group")
    return raw


def default_run(path: Path = SHIPPED_MATRIX, **identity: Any) -> RunSpec:
    """A run built from the matrix's ``defaults:`` alone: the defaults as a ``RunSpec``, for code that needs the
    group's setup without naming a run (evaluation of an arbitrary checkpoint, tests that vary one setting).

    Args:
        path: the matrix file.
        identity: values for the keys ``defaults:`` cannot hold or that are usually per run (``name``, ``stage``,
            ``description``, ``train_files``, ...); any other run key replaces the default's value.

    Raises:
        ValueError: the file is not a matrix, or its defaults miss a setting (names the file and the key).
    """
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    defaults = data.get("defaults") if isinstance(data, dict) else None
    if not isinstance(defaults, dict):
        raise ValueError(f"{path}: expected a mapping with a defaults: mapping")
    raw = deep_merge(defaults, {"name": "defaults", "stage": "defaults", "description": "the matrix defaults"})
    return build_run(deep_merge(raw, identity), where=f"{path}: defaults")


def check_link(run: RunSpec, entry: Mapping[str, Any], earlier: Sequence[RunSpec], where: str) -> None:
    """A ``from_winner`` link refers only to stages of earlier GPU runs, other than the run's own stage, and takes
    only keys the run leaves to the winner.

    Raises:
        ValueError: names the file, run and the offending part of ``from_winner``.
    """
    link = run.from_winner
    assert link is not None
    if run.cpu_mode:
        raise ValueError(f"{where}: from_winner: a CPU-mode run cannot take settings from a winner")
    known = list(dict.fromkeys(r.stage for r in earlier if not r.cpu_mode))
    for stage in link.stages:
        if stage == run.stage:
            raise ValueError(f"{where}: from_winner.stage: {stage!r} is the run's own stage; name earlier stages")
        if stage not in known:
            raise ValueError(
                f"{where}: from_winner.stage: no run before this one has stage {stage!r} (earlier stages: {known})"
            )
    own = {".".join(parts) for parts in _dotted_keys(entry)}
    for key in link.take:
        clash = sorted(k for k in own if k == key or k.startswith(key + ".") or key.startswith(k + "."))
        if clash:
            raise ValueError(f"{where}: from_winner.take: {key!r} comes from the winner, but the run sets {clash[0]!r}")


def _dotted_keys(mapping: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """The dotted paths of the values a mapping sets (its leaves; a mapping only groups keys)."""
    keys: list[tuple[str, ...]] = []
    for key, value in mapping.items():
        if isinstance(value, Mapping) and value:
            keys += _dotted_keys(value, (*prefix, key))
        else:
            keys.append((*prefix, key))
    return keys

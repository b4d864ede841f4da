"""Probe files: measured response lengths, truncation, pass rates and decode rate that replace the planner's guesses.

A run's cost is driven by its mean response length, which for a thinking model is unknown until the model has
generated on the run's prompts. A probe job (a short generation pass per source and curriculum interval) writes
one JSON file; ``plan_run(..., probe=load_probe(path))`` then plans on the measured lengths and shows them beside
the assumed ones. docs/run-planning.md describes the format.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlif.runs.timing import Lengths

if TYPE_CHECKING:
    from rlif.runs.spec import RunSpec

PERCENTILES = ("mean", "p50", "p90", "p99")


@dataclass(frozen=True)
class LengthStats:
    """A response-length distribution in tokens.

    Attributes:
        mean: mean length.
        p50: median.
        p90: 90th percentile.
        p99: 99th percentile.
    """

    mean: float
    p50: float
    p90: float
    p99: float


@dataclass(frozen=True)
class ProbeEntry:
    """What the probe measured on one source and curriculum interval.

    Attributes:
        source: the ``data_source`` (``ifeval``, ``logicif``, ``graph/tsp``, ...).
        interval: the curriculum interval (difficulty bin) the prompts came from; ``all`` when not binned.
        n_prompts: prompts generated on.
        prompt_tokens_mean: mean prompt length, chat template included.
        response_tokens: the response-length distribution at the largest cap tried.
        truncation_rate: share of responses longer than each cap tried, keyed by the cap.
        pass_rate: share of responses the reward counts as correct.
        tokens_per_s: output tokens per second per GPU of the generation (all tokens over wall time).
    """

    source: str
    interval: str
    n_prompts: int
    prompt_tokens_mean: float
    response_tokens: LengthStats
    truncation_rate: dict[int, float]
    pass_rate: float
    tokens_per_s: float


@dataclass(frozen=True)
class Probe:
    """A probe file: one model, one thinking mode, the caps tried and one entry per source and interval.

    Attributes:
        path: the file it was read from (for messages).
        model: the model id the probe generated with.
        think: Qwen3 thinking mode on.
        caps: response-length caps the truncation rates are given for; lengths were measured at the largest.
        entries: the measurements.
    """

    path: Path
    model: str
    think: bool
    caps: tuple[int, ...]
    entries: tuple[ProbeEntry, ...]

    def lengths_for(self, run: RunSpec) -> Lengths:
        """Mean prompt and response lengths and decode rate for ``run``, weighted by the prompts of each entry.

        At a run cap below the measured cap the mean response is the measured mean clipped to the cap, an upper
        bound (the safe side).

        Raises:
            ValueError: the probe is for another model or thinking mode, or measured at a cap below the run's.
        """
        if self.model != run.model:
            raise ValueError(f"{self.path}: model: probe is for {self.model}, run {run.name} trains {run.model}")
        if self.think != run.think:
            raise ValueError(f"{self.path}: think: probe has {self.think}, run {run.name} has {run.think}")
        cap = run.train.max_response_length
        if cap > max(self.caps):
            raise ValueError(
                f"{self.path}: caps: lengths measured at {max(self.caps)} tokens, run {run.name} allows {cap}; "
                "probe at the run's cap"
            )
        weights = [e.n_prompts for e in self.entries]
        total = sum(weights)
        prompt = sum(w * e.prompt_tokens_mean for w, e in zip(weights, self.entries, strict=True)) / total
        responses = [min(e.response_tokens.mean, cap) for e in self.entries]
        response = sum(w * r for w, r in zip(weights, responses, strict=True)) / total
        decode_time = sum(w * r / e.tokens_per_s for w, r, e in zip(weights, responses, self.entries, strict=True))
        return Lengths(prompt, response, decode_tokens_per_s=total * response / decode_time, source="measured")


def _number(value: Any, where: str, lo: float = 0.0, hi: float = math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not lo <= value <= hi:
        bound = f"in [{lo:g}, {hi:g}]" if hi < math.inf else f">= {lo:g}"
        raise ValueError(f"{where}: must be a number {bound}, got {value!r}")
    return float(value)


def _field(raw: dict[str, Any], key: str, where: str) -> Any:
    if not isinstance(raw, dict):
        raise ValueError(f"{where}: must be an object, got {raw!r}")
    if key not in raw:
        raise ValueError(f"{where}.{key}: missing" if where else f"{key}: missing")
    return raw[key]


def _entry(raw: Any, caps: tuple[int, ...], where: str) -> ProbeEntry:
    source = _field(raw, "source", where)
    interval = _field(raw, "interval", where)
    for key, value in (("source", source), ("interval", interval)):
        if not isinstance(value, str) or not value:
            raise ValueError(f"{where}.{key}: must be a non-empty string, got {value!r}")
    n = _field(raw, "n_prompts", where)
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"{where}.n_prompts: must be an integer >= 1, got {n!r}")
    lengths_raw = _field(raw, "response_tokens", where)
    stats = LengthStats(*(_number(_field(lengths_raw, k, f"{where}.response_tokens"), f"{where}.response_tokens.{k}")
                          for k in PERCENTILES))  # fmt: skip
    if not stats.p50 <= stats.p90 <= stats.p99:
        raise ValueError(f"{where}.response_tokens: percentiles must not decrease (p50 <= p90 <= p99), got {stats}")
    if stats.p99 > max(caps):
        raise ValueError(f"{where}.response_tokens.p99: {stats.p99:g} exceeds the largest cap {max(caps)}")
    truncation_raw = _field(raw, "truncation_rate", where)
    if not isinstance(truncation_raw, dict) or {str(c) for c in caps} != set(truncation_raw):
        raise ValueError(
            f"{where}.truncation_rate: needs one rate per cap {list(caps)} (keys as strings), got {truncation_raw!r}"
        )
    truncation = {c: _number(truncation_raw[str(c)], f"{where}.truncation_rate.{c}", 0, 1) for c in caps}
    return ProbeEntry(
        source=source,
        interval=interval,
        n_prompts=n,
        prompt_tokens_mean=_number(_field(raw, "prompt_tokens_mean", where), f"{where}.prompt_tokens_mean"),
        response_tokens=stats,
        truncation_rate=truncation,
        pass_rate=_number(_field(raw, "pass_rate", where), f"{where}.pass_rate", 0, 1),
        tokens_per_s=_number(_field(raw, "tokens_per_s", where), f"{where}.tokens_per_s", 1e-9),
    )


def load_probe(path: Path) -> Probe:
    """Read and check a probe file.

    Raises:
        ValueError: the file cannot be read or a field is missing or wrong (one line naming the file and field).
    """
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as err:
        raise ValueError(f"{path}: cannot read the probe file: {err}") from None
    try:
        model = _field(raw, "model", "")
        if not isinstance(model, str) or not model:
            raise ValueError(f"model: must be a non-empty string, got {model!r}")
        think = _field(raw, "think", "")
        if not isinstance(think, bool):
            raise ValueError(f"think: must be true or false, got {think!r}")
        caps_raw = _field(raw, "caps", "")
        if (
            not isinstance(caps_raw, list)
            or not caps_raw
            or not all(isinstance(c, int) and not isinstance(c, bool) and c > 0 for c in caps_raw)
        ):
            raise ValueError(f"caps: must be a non-empty list of positive integers, got {caps_raw!r}")
        caps = tuple(sorted(set(caps_raw)))
        entries_raw = _field(raw, "entries", "")
        if not isinstance(entries_raw, list) or not entries_raw:
            raise ValueError(f"entries: must be a non-empty list, got {entries_raw!r}")
        entries = tuple(_entry(e, caps, f"entries[{i}]") for i, e in enumerate(entries_raw))
    except ValueError as err:
        raise ValueError(f"{path}: {err}") from None
    seen = set()
    for i, entry in enumerate(entries):
        if (entry.source, entry.interval) in seen:
            raise ValueError(f"{path}: entries[{i}]: source {entry.source!r} interval {entry.interval!r} repeats")
        seen.add((entry.source, entry.interval))
    return Probe(Path(path), model, think, caps, entries)

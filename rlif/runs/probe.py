"""Probe files: measured response lengths, truncation, pass rates and decode rate that replace the planner's guesses.

A run's cost is driven by its mean response length, which for a thinking model is unknown until the model has
generated on the run's prompts. A probe job (``rlif.eval.probe``: a short generation pass per source and curriculum
interval) writes one JSON file; ``plan_run(..., probe=load_probe(path))`` then plans on the measured lengths and
shows them beside the assumed ones, and ``probe_warnings`` says where the run's cap truncates too often or where a
curriculum's gate would open at its first check. docs/run-planning.md describes the format.

This module is the one home of the format: it reads it (``load_probe``), builds it from scored responses
(``summarize``) and writes it (``write_probe``), so a file the job writes is always one the planner reads.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rlif.atomic_files import write_text_atomic
from rlif.runs.timing import Lengths

if TYPE_CHECKING:
    from rlif.runs.spec import RunSpec

PERCENTILES = ("mean", "p50", "p90", "p99")

PROBE_DIR = "probe"
PROBE_FILE = "probe.json"
"""A run's probe file lives at ``probe/<run>/probe.json`` under the repository root, beside the responses it was
measured on; generation finds it there without ``--plan-from``."""

ALL_INTERVALS = "all"
"""The interval of a source the run's sampler does not split by difficulty."""

LONG_CAP_FACTOR = 4
"""The probe's longer cap is this many times the run's response cap (at most the model's context less the prompt
cap): Qwen recommends up to 32k tokens for thinking, four times the matrix's 8k cap, so the longer cap shows how
much of the length distribution the run's cap cuts off."""

PROMPTS_PER_INTERVAL = 200
"""Prompts per (source, interval) by default: a pass rate near 0.5 is then known to within ±0.07 (95 %) even when
each prompt's samples all agree (200 effective draws), and to ±0.025 when 8 samples per prompt are independent."""

TRUNCATION_WARN = 0.10
"""Truncation rate at the run's cap above which generation warns: beyond about one response in ten, the reward of
a source mostly teaches "answer shorter" (a truncated response scores as wrong)."""

ROLLOUT_TOP_P = 1.0
ROLLOUT_TOP_K = -1
"""verl 0.9.1's rollout defaults (``trainer/config/rollout/rollout.yaml``: ``top_p: 1``, ``top_k: -1``), which rlif's
runs leave as they are: training samples with these at ``train.temperature``, so the probe does too."""


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
        pass_rate: share of responses the reward counts as correct (its success indicator ``acc``), at the
            largest cap.
        tokens_per_s: output tokens per second per GPU of the generation (all tokens over wall time).
        rows: the source's rows in this interval in the run's training files (0: not given); entries are
            weighted by it when given, since the probe takes as many prompts from a small interval as from a large
            one.
        pass_rate_by_cap: the pass rate at each cap, a response longer than the cap counting as wrong (empty: only
            ``pass_rate`` is known).
        design_effect: variance inflation of the pass rate from responses clustered by prompt
            (``samplers.gate.design_effect`` at the smallest cap; 1 when not given).
    """

    source: str
    interval: str
    n_prompts: int
    prompt_tokens_mean: float
    response_tokens: LengthStats
    truncation_rate: dict[int, float]
    pass_rate: float
    tokens_per_s: float
    rows: int = 0
    pass_rate_by_cap: dict[int, float] = field(default_factory=dict)
    design_effect: float = 1.0

    def pass_rate_at(self, cap: int) -> float:
        """The pass rate at the smallest measured cap of at least ``cap`` (the run's cap when it was probed), else
        the pass rate at the largest cap."""
        known = sorted(c for c in self.pass_rate_by_cap if c >= cap)
        return self.pass_rate_by_cap[known[0]] if known else self.pass_rate


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
        bound (the safe side). Entries weigh by the rows they stand for in the run's data when the file gives them
        (a stratified probe), else by their prompts.

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
        weights = [e.rows or e.n_prompts for e in self.entries]
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
    rows = raw.get("rows", 0)
    if isinstance(rows, bool) or not isinstance(rows, int) or rows < 0:
        raise ValueError(f"{where}.rows: must be an integer >= 0, got {rows!r}")
    by_cap_raw = raw.get("pass_rate_by_cap", {})
    if not isinstance(by_cap_raw, dict) or (by_cap_raw and {str(c) for c in caps} != set(by_cap_raw)):
        raise ValueError(
            f"{where}.pass_rate_by_cap: needs one rate per cap {list(caps)} (keys as strings), got {by_cap_raw!r}"
        )
    by_cap = {c: _number(by_cap_raw[str(c)], f"{where}.pass_rate_by_cap.{c}", 0, 1) for c in caps if by_cap_raw}
    return ProbeEntry(
        source=source,
        interval=interval,
        n_prompts=n,
        prompt_tokens_mean=_number(_field(raw, "prompt_tokens_mean", where), f"{where}.prompt_tokens_mean"),
        response_tokens=stats,
        truncation_rate=truncation,
        pass_rate=_number(_field(raw, "pass_rate", where), f"{where}.pass_rate", 0, 1),
        tokens_per_s=_number(_field(raw, "tokens_per_s", where), f"{where}.tokens_per_s", 1e-9),
        rows=rows,
        pass_rate_by_cap=by_cap,
        design_effect=_number(raw.get("design_effect", 1.0), f"{where}.design_effect", 1.0),
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
    if len({entry.rows > 0 for entry in entries}) > 1:
        first = next(i for i, entry in enumerate(entries) if (entry.rows > 0) != (entries[0].rows > 0))
        raise ValueError(f"{path}: entries[{first}].rows: give rows for every entry or for none (they set the weights)")
    seen = set()
    for i, entry in enumerate(entries):
        if (entry.source, entry.interval) in seen:
            raise ValueError(f"{path}: entries[{i}]: source {entry.source!r} interval {entry.interval!r} repeats")
        seen.add((entry.source, entry.interval))
    return Probe(Path(path), model, think, caps, entries)


def default_probe_path(root: Path, run: RunSpec) -> Path:
    """Where ``run``'s probe job writes its file and generation looks for it: ``probe/<run>/probe.json``."""
    return Path(root) / PROBE_DIR / run.name / PROBE_FILE


def probe_caps(run: RunSpec, max_position: int) -> tuple[int, ...]:
    """The response caps a probe of ``run`` measures: the run's own, and ``LONG_CAP_FACTOR`` times it where the
    model's context (``max_position``, 0: unknown, then no limit) leaves room beside the run's prompt cap."""
    cap = run.train.max_response_length
    longer = LONG_CAP_FACTOR * cap
    if max_position:
        longer = min(longer, max_position - run.train.max_prompt_length)
    return (cap, longer) if longer > cap else (cap,)


@dataclass(frozen=True)
class ProbeSample:
    """One scored probe response, what ``summarize`` aggregates.

    Attributes:
        source: the prompt's ``data_source``.
        interval: its curriculum interval (``ALL_INTERVALS`` for a source the run's sampler does not split).
        prompt_id: the prompt's ``extra_info.item_id`` (responses of one prompt form one group).
        prompt_tokens: prompt length, chat template included.
        response_tokens: response length, generated up to the largest cap.
        stopped_at_cap: generation stopped because it reached its cap (vLLM's ``finish_reason == "length"``).
        success: the reward's success indicator ``acc`` of the response as generated, in [0, 1].
    """

    source: str
    interval: str
    prompt_id: str
    prompt_tokens: int
    response_tokens: int
    stopped_at_cap: bool
    success: float

    def truncated_at(self, cap: int) -> bool:
        """Whether a run with response cap ``cap`` would have cut this response."""
        return self.response_tokens > cap or (self.stopped_at_cap and self.response_tokens >= cap)

    def success_at(self, cap: int) -> float:
        """Success at ``cap``: a cut response counts as wrong (its thinking or its answer is unfinished)."""
        return 0.0 if self.response_tokens > cap else self.success


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The nearest-rank ``q`` quantile of an ascending sequence (never below any share ``q`` of the values)."""
    return float(ordered[max(0, math.ceil(q * len(ordered)) - 1)])


def interval_order(label: str) -> tuple[int, float, str]:
    """Sort key of interval labels: numbers in numeric order, then other labels."""
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def summarize(
    model: str,
    think: bool,
    caps: Sequence[int],
    samples: Iterable[ProbeSample],
    *,
    tokens_per_s: float,
    rows: Mapping[tuple[str, str], int] | None = None,
) -> dict[str, Any]:
    """The probe file's document from scored responses, one entry per (source, interval).

    Args:
        model: the run's model id (what ``lengths_for`` compares with the run).
        think: the thinking mode generated in.
        caps: the caps measured; responses were generated up to the largest.
        samples: every scored response.
        tokens_per_s: output tokens per second per GPU of the whole generation (one rate for every entry: the
            strata were generated together, as a training batch mixes them).
        rows: rows of the run's training files per (source, interval), the entries' weights.

    Returns:
        The document ``write_probe`` writes and ``load_probe`` reads.

    Raises:
        ValueError: no samples, or ``caps`` empty.
    """
    caps = sorted(set(caps))
    if not caps:
        raise ValueError("caps: need at least one response cap")
    strata: dict[tuple[str, str], list[ProbeSample]] = defaultdict(list)
    for sample in samples:
        strata[(sample.source, sample.interval)].append(sample)
    if not strata:
        raise ValueError("no responses to summarize")
    from samplers.gate import design_effect

    entries = []
    for source, interval in sorted(strata, key=lambda key: (key[0], interval_order(key[1]))):
        group = strata[(source, interval)]
        lengths = sorted(sample.response_tokens for sample in group)
        prompts: dict[str, int] = {sample.prompt_id: sample.prompt_tokens for sample in group}
        tallies: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for sample in group:
            tallies[sample.prompt_id][0] += sample.success_at(caps[0])
            tallies[sample.prompt_id][1] += 1
        entry = {
            "source": source,
            "interval": interval,
            "n_prompts": len(prompts),
            "prompt_tokens_mean": round(sum(prompts.values()) / len(prompts), 1),
            "response_tokens": {
                "mean": round(sum(lengths) / len(lengths), 1),
                **{f"p{q}": nearest_rank(lengths, q / 100) for q in (50, 90, 99)},
            },
            "truncation_rate": {str(c): sum(s.truncated_at(c) for s in group) / len(group) for c in caps},
            "pass_rate": sum(s.success_at(caps[-1]) for s in group) / len(group),
            "pass_rate_by_cap": {str(c): sum(s.success_at(c) for s in group) / len(group) for c in caps},
            "design_effect": design_effect(list(tallies.values())),
            "tokens_per_s": round(tokens_per_s, 3),
        }
        if rows is not None:
            entry["rows"] = int(rows.get((source, interval), 0))
        entries.append(entry)
    return {"model": model, "think": think, "caps": caps, "entries": entries}


def write_probe(path: Path, document: Mapping[str, Any]) -> Path:
    """Write a probe document atomically (a planner reading meanwhile sees the old file or the new one) after
    checking it reads back; returns ``path``.

    Raises:
        ValueError: the document is not one ``load_probe`` accepts (nothing is written).
    """
    text = json.dumps(document, indent=1) + "\n"
    check = Path(path).with_name(Path(path).name + ".check")
    check.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_text_atomic(check, text)
        load_probe(check)
    finally:
        check.unlink(missing_ok=True)
    return write_text_atomic(Path(path), text)


def probe_warnings(run: RunSpec, probe: Probe, truncation_threshold: float = TRUNCATION_WARN) -> list[str]:
    """One line per thing the measurements say is wrong with ``run`` before it starts.

    - A source and interval whose truncation rate at the run's response cap exceeds ``truncation_threshold``.
    - A reward-gated curriculum source whose gate would open at its first check: the gate's own statistic
      (``samplers.gate``: the Wilson lower bound at the effective sample size, or the EMA) computed on the measured
      pass rate of the source's first interval, at the responses the gate's window holds at its first check. The
      count assumes every response of each batch came from that interval (the most the window can hold), so the
      bound is the tightest the gate could reach: the warning errs towards warning.

    Raises:
        ValueError: the probe is for another model or thinking mode (``Probe.lengths_for``'s message).
    """
    probe.lengths_for(run)  # refuses another model, thinking mode or a cap above the measured ones
    cap = run.train.max_response_length
    measured = min(c for c in probe.caps if c >= cap)
    at_least = "" if measured == cap else "at least "
    lines = []
    for entry in probe.entries:
        rate = entry.truncation_rate[measured]
        if rate > truncation_threshold:
            lines.append(
                f"{run.name}: {entry.source} interval {entry.interval}: truncation {at_least}{rate:.1%} at the "
                f"{cap}-token response cap exceeds {truncation_threshold:.0%} ({probe.path}); a truncated response "
                "scores as wrong, so the reward mostly teaches shorter responses: raise train.max_response_length or "
                "set train.overlong"
            )
    lines += _gate_warnings(run, probe, cap)
    return lines


def _gate_warnings(run: RunSpec, probe: Probe, cap: int) -> list[str]:
    from samplers.curriculum import RewardCurriculumPolicy
    from samplers.gate import wilson_lower
    from samplers.registry import build_policy

    policy = build_policy(run.sampler.name, run.sampler.params, seed=run.sampler.seed)
    if type(policy) is not RewardCurriculumPolicy:  # the staged curriculum advances on a timer, not a gate
        return []
    first_check = math.ceil(policy.min_updates_per_unlock / policy.check_every) * policy.check_every
    window = min(policy.gate_window, first_check)
    responses = window * run.train.train_batch_size * run.train.rollout_n
    by_source: dict[str, list[ProbeEntry]] = defaultdict(list)
    for entry in probe.entries:
        if entry.interval != ALL_INTERVALS and policy.splits(entry.source):
            by_source[entry.source].append(entry)
    lines = []
    for source, entries in sorted(by_source.items()):
        first = min(entries, key=lambda e: interval_order(e.interval))
        rate = first.pass_rate_at(cap)
        if policy.gate_statistic == "ema":
            value, what = rate, "success EMA"
        else:
            if responses < policy.gate_min_responses:
                continue
            deff = first.design_effect
            value = wilson_lower(rate * responses / deff, responses / deff, policy.gate_confidence)
            what = (
                f"{policy.gate_confidence:.0%} lower bound over up to {responses:,} responses "
                f"(design effect {deff:.2f})"
            )
        if value > policy.threshold:
            lines.append(
                f"{run.name}: {source} interval {first.interval}: measured pass rate {rate:.1%} gives the gate's "
                f"{what} {value:.3f} > threshold {policy.threshold:g} at its first check (update {first_check}), so "
                f"the curriculum opens the next interval at once ({probe.path}); raise sampler.params.threshold or "
                "move easier rows out of the first interval"
            )
    return lines

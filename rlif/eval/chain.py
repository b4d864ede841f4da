"""Ablation chains: a stage takes settings from the winner of an earlier stage, chosen so that it cannot pick noise.

The NP-graph plan is a chain (best data volume, then curriculum vs mixed on it, then the reward variants on that,
then other base models), and so is the IF plan. The choice is a pure function of evaluation results, and a
margin the evaluation cannot resolve decides nothing:

- every candidate is compared at its final step (the run's ``total_training_steps``), never at an intermediate
  or base-model evaluation; a candidate without an evaluation at that step is refused with the steps it has;
- seeds of one run (``<run>_s<N>``) form one arm: per prompt, their values are averaged before comparison;
- the best arm by the criterion (one metric, or a declared weighted sum) is compared with every other arm by a
  paired bootstrap over the prompts both evaluated (``rlif.eval.intervals``); arms whose 95% interval of the
  best's lead includes 0 are tied with it, and the tie goes to the first listed of them, which the matrix orders
  by its stated rule (``tie_rule``). The interval covers prompt sampling only; seed-to-seed variance is covered
  only by averaging seeds, so arms the decision rests on should have several.

Results are read per candidate from ``<eval root>/<run>/<step>/`` (``metrics.json`` and ``samples.jsonl`` of
``python -m rlif.eval``), or, for a run evaluated by benchmarks, from its fast-tier benchmarks' folders
(``rlif.eval.tiers``); every problem is listed at once. A criterion measured only by full-tier benchmarks, or on
test files (rows of ``split`` test), is refused: those results are reported, and choosing on them would make them
part of the selection they are meant to judge.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlif.eval.intervals import LEVEL, composite_difference
from rlif.eval.metrics import lower_is_better
from rlif.eval.outputs import SAMPLES_FILE
from rlif.eval.tiers import FAST, FULL, is_evaluated, tier_records
from rlif.eval.units import Units, metric_units, ratio_of_sums

SEED_NAME = re.compile(r"^(?P<base>.+)_s(?P<seed>\d+)$")
"""A seeded run's name: ``<run>_s<seed>``; its arm is ``<run>``."""


@dataclass(frozen=True)
class Link:
    """One link of a chain: take ``settings`` from the best of ``candidates`` (an earlier stage) by ``metric``.

    Attributes:
        stage: the stage whose runs inherit (for messages).
        from_stage: the earlier stage (for messages).
        candidates: the earlier stage's run names, in the matrix's order (the tie rule's order).
        metric: the criterion in words (a flat key, or the weighted sum).
        settings: names of the settings the winner passes on (the generator copies their values).
        weights: ``(flat key, weight)`` of the criterion; empty: ``metric`` with weight 1.
        tie_rule: the rule, in words, that orders ``candidates`` for ties.
    """

    stage: str
    from_stage: str
    candidates: tuple[str, ...]
    metric: str
    settings: tuple[str, ...] = ()
    weights: tuple[tuple[str, float], ...] = ()
    tie_rule: str = "the first listed candidate"

    @property
    def criterion(self) -> tuple[tuple[str, float], ...]:
        """The weighted metrics; a single lower-is-better metric gets weight -1, so higher always wins."""
        weights = self.weights or ((self.metric, 1.0),)
        if len(weights) == 1 and lower_is_better(weights[0][0]):
            return ((weights[0][0], -abs(weights[0][1])),)
        return weights


@dataclass(frozen=True)
class CandidateResult:
    """One candidate's evaluation at its final step.

    Attributes:
        run: the run.
        step: the step evaluated.
        records: its scored samples of the fast tier (what the chain may select on).
        reported: its full-tier samples (never selected on; read only to say why a criterion is refused).
    """

    run: str
    step: int
    records: Sequence[Mapping[str, Any]]
    reported: Sequence[Mapping[str, Any]] = ()


@dataclass(frozen=True)
class ArmRow:
    """One arm in the decision table.

    Attributes:
        arm: the run (seeds merged under their base name).
        runs: the runs averaged.
        value: the criterion.
        lead: the best arm's lead over this one (None for the best), in criterion units, and its interval.
        tied: whether the interval of the best arm's margin over this one includes 0; true for the best arm itself.
    """

    arm: str
    runs: tuple[str, ...]
    value: float
    lead: tuple[float, float, float] | None
    tied: bool


@dataclass(frozen=True)
class Resolution:
    """The outcome of one link.

    Attributes:
        link: the link resolved.
        winner: the winning run (the first seed's run of the winning arm).
        ranking: every arm with its criterion value, best first.
        margin: the best's lead over the runner-up (None with a single arm).
        inherited: the winner's values of ``link.settings``.
        rows: the decision table, best first.
        step: the steps compared, by run.
    """

    link: Link
    winner: str
    ranking: tuple[tuple[str, float], ...]
    margin: float | None
    inherited: Mapping[str, Any] = field(default_factory=dict)
    rows: tuple[ArmRow, ...] = ()
    step: Mapping[str, int] = field(default_factory=dict)

    @property
    def tied(self) -> tuple[str, ...]:
        """The arms tied with the best, the best included, in the listed order."""
        tied = {row.arm for row in self.rows if row.tied}
        return tuple(arm for arm in arms(self.link.candidates) if arm in tied)

    def explain(self) -> str:
        """One line for the generator's output and script headers: who won, on what, by which rule."""
        link, (best, value) = self.link, self.ranking[0]
        steps = sorted(set(self.step.values()))
        at = f" at step {steps[0]}" if len(steps) == 1 else ""
        arm = _arm_of(self.winner, self.rows)
        head = f"stage {link.stage}: {arm} wins stage {link.from_stage} by {link.metric}{at}"
        if self.margin is None:
            return head + f" = {value:.4f} (the only candidate)"
        if len(self.tied) == 1:
            runner_up, second = self.ranking[1]
            return (
                head
                + f" = {value:.4f}, ahead of {runner_up} ({second:.4f}) by {self.margin:.4f}, outside the "
                + (f"{LEVEL:.0%} paired interval")
            )
        others = ", ".join(a for a in self.tied if a != arm)
        return (
            head + f": a tie within the {LEVEL:.0%} paired interval ({best} leads with {value:.4f} by "
            f"{self.margin:.4f}; tied: {', '.join(self.tied)}), resolved by the rule '{link.tie_rule}': {arm} "
            f"(over {others})"
        )

    def table(self) -> list[str]:
        """The decision table, one line per arm, best first."""
        width = max(len(row.arm) for row in self.rows)
        lines = [f"{'arm':<{width}}  seeds  {'value':>7}  {'lead of best':>12}  {LEVEL:.0%} interval        verdict"]
        for row in self.rows:
            if row.lead is None:
                lead, interval, verdict = "", "", "best"
            else:
                lead = f"{row.lead[0]:+.4f}"
                interval = f"[{row.lead[1]:+.4f}, {row.lead[2]:+.4f}]"
                verdict = "tie" if row.tied else "behind"
            lines.append(
                f"{row.arm:<{width}}  {len(row.runs):>5}  {row.value:>7.4f}  {lead:>12}  {interval:<19}  {verdict}"
            )
        return lines


def _arm_of(run: str, rows: Sequence[ArmRow]) -> str:
    return next(row.arm for row in rows if run in row.runs)


class MissingResultsError(ValueError):
    """Some candidates have no usable result at their final step; the message lists all of them."""


def arms(candidates: Sequence[str]) -> dict[str, list[str]]:
    """Candidates grouped into arms: ``<run>_s<N>`` joins ``<run>``; arms in first-listed order."""
    out: dict[str, list[str]] = {}
    for run in candidates:
        match = SEED_NAME.match(run)
        out.setdefault(match["base"] if match else run, []).append(run)
    return out


def resolve(
    link: Link,
    results: Mapping[str, CandidateResult | str],
    settings_of: Mapping[str, Mapping[str, Any]] | None = None,
    *,
    seed: int = 0,
) -> Resolution:
    """Pick the winner of ``link`` from ``results`` (run -> its final-step result, or why it has none).

    Raises:
        ValueError: the link has no candidates, or the winner lacks one of ``link.settings``.
        MissingResultsError: a candidate has no result at its final step, the candidates' final steps differ, or
            one has no per-prompt values of a criterion metric (all such candidates are listed).
    """
    if not link.candidates:
        raise ValueError(f"stage {link.stage}: stage {link.from_stage} has no runs to choose from")
    problems = [
        f"{run} ({results.get(run, 'not evaluated')})"
        for run in link.candidates
        if not isinstance(results.get(run), CandidateResult)
    ]
    units: dict[str, dict[str, Units]] = {}
    for run in link.candidates:
        result = results.get(run)
        if not isinstance(result, CandidateResult):
            continue
        units[run] = {}
        selectable = [r for r in result.records if r.get("split") != "test"]
        tested = [r for r in result.records if r.get("split") == "test"]
        for key, _ in link.criterion:
            try:
                units[run][key] = metric_units(selectable, key)
            except ValueError:
                if _measures(tested, key):
                    problems.append(f"{run} ({key} is measured on test files: reported, never selected on)")
                elif _measures(result.reported, key):
                    problems.append(f"{run} ({key} is a full-tier metric: reported, never selected on)")
                else:
                    problems.append(f"{run} (no {key} in its samples at step {result.step})")
    steps = {run: r.step for run, r in results.items() if isinstance(r, CandidateResult) and run in link.candidates}
    if not problems and len(set(steps.values())) > 1:
        problems.append("final steps differ: " + ", ".join(f"{run} at {step}" for run, step in steps.items()))
    if problems:
        raise MissingResultsError(
            f"stage {link.stage} cannot choose from stage {link.from_stage} by {link.metric}: "
            f"missing results for {', '.join(problems)}"
        )
    grouped = arms(link.candidates)
    merged = {
        arm: {key: mean_over_seeds([units[r][key] for r in runs]) for key, _ in link.criterion}
        for arm, runs in grouped.items()
    }
    score = {arm: sum(w * ratio_of_sums(merged[arm][key]) for key, w in link.criterion) for arm in grouped}
    order = list(grouped)
    best = max(order, key=lambda arm: (score[arm], -order.index(arm)))
    sign = -1.0 if len(link.criterion) == 1 and link.criterion[0][1] < 0 else 1.0
    value = {arm: sign * score[arm] for arm in grouped}
    rows = []
    for arm in order:
        if arm == best:
            rows.append(ArmRow(arm, tuple(grouped[arm]), value[arm], None, True))
            continue
        components, strata = [], []
        for key, weight in link.criterion:
            shared = sorted(set(merged[best][key]) & set(merged[arm][key]))
            components.append((weight, _pick(merged[best][key], shared), _pick(merged[arm][key], shared)))
            strata.append(tuple(shared))
        iv = composite_difference(components, strata=strata, seed=seed).interval
        rows.append(ArmRow(arm, tuple(grouped[arm]), value[arm], (iv.value, iv.low, iv.high), iv.low <= 0))
    rows.sort(key=lambda row: -score[row.arm])
    tied = [arm for arm in order if next(r for r in rows if r.arm == arm).tied]
    winner_arm = tied[0]
    winner = grouped[winner_arm][0]
    ranking = tuple((row.arm, row.value) for row in rows)
    margin = rows[1].lead[0] if len(rows) > 1 and rows[1].lead else None
    inherited: dict[str, Any] = {}
    if link.settings:
        own = (settings_of or {}).get(winner, {})
        absent = [name for name in link.settings if name not in own]
        if absent:
            raise ValueError(f"stage {link.stage}: the winning run {winner} has no setting {absent[0]!r} to pass on")
        inherited = {name: own[name] for name in link.settings}
    return Resolution(link, winner, ranking, margin, inherited, tuple(rows), steps)


def _measures(records: Sequence[Mapping[str, Any]], key: str) -> bool:
    try:
        metric_units(records, key)
    except ValueError:
        return False
    return bool(records)


def _pick(units: Units, shared: Sequence[str]) -> tuple[list[float], list[float]]:
    return [units[u][0] for u in shared], [units[u][1] for u in shared]


def mean_over_seeds(per_seed: Sequence[Units]) -> Units:
    """Per unit that every seed evaluated, the mean of the seeds' numerators and denominators."""
    shared = set(per_seed[0]).intersection(*per_seed[1:])
    count = len(per_seed)
    return {u: (sum(s[u][0] for s in per_seed) / count, sum(s[u][1] for s in per_seed) / count) for u in sorted(shared)}


def final_results(eval_root: Path, final_steps: Mapping[str, int]) -> dict[str, CandidateResult | str]:
    """Each run's evaluation at its final step, or why there is none (the steps it has, a missing samples file).

    Args:
        eval_root: where ``<run>/<step>/`` (``metrics.json`` and ``samples.jsonl``, or ``benchmarks.json`` and a
            folder per benchmark) are.
        final_steps: run -> its ``total_training_steps``.
    """
    out: dict[str, CandidateResult | str] = {}
    for run, final in final_steps.items():
        directory = Path(eval_root) / run
        steps = sorted(int(p.name) for p in directory.glob("*") if p.is_dir() and p.name.isdigit() and is_evaluated(p))
        if final <= 0:
            out[run] = "total_training_steps is 0: its final step is unknown, set it to compare the run"
        elif final not in steps:
            out[run] = f"no evaluation at its final step {final}; evaluated at {steps}" if steps else "not evaluated"
        else:
            records, missing = tier_records(directory / str(final), FAST)
            if missing:
                named = [name for name in missing if name]
                where = f" ({', '.join(named)})" if named else ""
                out[run] = f"no {SAMPLES_FILE} at step {final}{where}: the per-prompt values an interval needs"
                continue
            reported, _ = tier_records(directory / str(final), FULL)
            out[run] = CandidateResult(run, final, records, reported)
    return out

"""The report's decision tables: per stage, the arms' criterion metrics with intervals and the chain's verdict.

A decision rests on the same computation the generator uses, so the page and the next stage's scripts cannot
disagree: the chain's resolution (``rlif.eval.chain.resolve``, or ``rlif.recipes.chained.stage_decisions`` for a
matrix) gives the ranking, the paired differences and the tie rule; this module adds, per arm and criterion metric,
the value over its seeds (per prompt, seeds averaged: ``rlif.eval.chain.mean_over_seeds``) with the bootstrap
interval over prompts (``rlif.eval.intervals.bootstrap``) and the counts it rests on. The interval covers prompt
sampling of the seed-averaged values; the seeds' own values are listed beside it, since seed-to-seed spread is not in
the interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.eval.chain import (
    CandidateResult,
    Link,
    MissingResultsError,
    Resolution,
    arms,
    final_results,
    mean_over_seeds,
    resolve,
)
from rlif.eval.compare import Evaluated, default_metric
from rlif.eval.intervals import Interval, bootstrap
from rlif.eval.outputs import SAMPLES_FILE
from rlif.eval.tiers import FAST, tier_records
from rlif.eval.units import metric_units, ratio_of_sums, sample_count, truncated_rate
from rlif.report.runs import Run
from rlif.runs.matrix import Matrix


@dataclass(frozen=True)
class MetricCell:
    """One arm's value of one criterion metric.

    Attributes:
        interval: the value over the prompts both seeds evaluated, seeds averaged per prompt, and its interval.
        samples: scored samples behind it, summed over the seeds.
        seeds: each seed's own value (one entry for an unseeded run).
        truncated: share of those samples cut at the generation limit (None where generation did not record it),
            shown beside the value because a criterion met on cut responses is read differently.
    """

    interval: Interval
    samples: int
    seeds: tuple[float, ...]
    truncated: float | None = None


@dataclass(frozen=True)
class DecisionRow:
    """One arm of a stage.

    Attributes:
        arm: the arm (seeds merged under the run's base name).
        runs: its runs.
        cells: criterion metric -> its value.
        difference: this arm minus the best arm on the criterion, with its paired interval (None for the best).
        verdict: ``chosen``, ``tie`` or ``behind``, with the rule when a tie was broken by it.
    """

    arm: str
    runs: tuple[str, ...]
    cells: Mapping[str, MetricCell]
    difference: tuple[float, float, float] | None
    verdict: str


@dataclass(frozen=True)
class StageDecision:
    """A stage's decision table, or why there is none.

    Attributes:
        stage: the stage deciding (the stage whose runs inherit).
        from_stage: the stages compared.
        criterion: the criterion in words.
        metrics: the criterion's metrics (the table's value columns).
        tie_rule: the rule that breaks ties.
        step: the step compared (None when there is no table).
        rows: the arms, best first.
        verdict: the chain's verdict line, or the reason no decision can be made yet.
    """

    stage: str
    from_stage: str
    criterion: str
    metrics: tuple[str, ...]
    tie_rule: str
    step: int | None
    rows: tuple[DecisionRow, ...]
    verdict: str


def decision_of(resolution: Resolution, results: Mapping[str, CandidateResult | str]) -> StageDecision:
    """The table of one resolved link; ``results`` holds each candidate's final-step result (as ``resolve`` got)."""
    link = resolution.link
    grouped = arms(link.candidates)
    winner = next(row.arm for row in resolution.rows if resolution.winner in row.runs)
    keys = tuple(key for key, _ in link.criterion)
    sign = -1.0 if len(link.criterion) == 1 and link.criterion[0][1] < 0 else 1.0
    rows = []
    for row in resolution.rows:
        records = {run: results[run].records for run in grouped[row.arm] if isinstance(results[run], CandidateResult)}
        cells = {}
        for key in keys:
            per_seed = [metric_units(r, key) for r in records.values()]
            merged = mean_over_seeds(per_seed)
            nums = [merged[u][0] for u in merged]
            dens = [merged[u][1] for u in merged]
            seeds = tuple(ratio_of_sums(units) for units in per_seed)
            pooled = [record for r in records.values() for record in r]
            count = sum(sample_count(r, key) for r in records.values())
            cells[key] = MetricCell(bootstrap(nums, dens), count, seeds, truncated_rate(pooled, key))
        difference = None
        if row.lead is not None:
            value, low, high = row.lead
            difference = (-sign * value, *sorted((-sign * low, -sign * high)))
        if row.arm == winner:
            verdict = "chosen" if len(resolution.tied) == 1 else f"chosen by the rule '{link.tie_rule}'"
        else:
            verdict = "tie" if row.tied else "behind"
        rows.append(DecisionRow(row.arm, row.runs, cells, difference, verdict))  # type: ignore[arg-type]
    steps = sorted(set(resolution.step.values()))
    return StageDecision(
        link.stage,
        link.from_stage,
        link.metric,
        keys,
        link.tie_rule,
        steps[0] if len(steps) == 1 else None,
        tuple(rows),
        resolution.explain(),
    )


def refused(stage: str, from_stage: str, criterion: str, tie_rule: str, why: str) -> StageDecision:
    """A stage without a table: ``why`` says what is missing."""
    return StageDecision(stage, from_stage, criterion, (), tie_rule, None, (), why)


def matrix_decisions(matrix: Matrix, eval_root: Path) -> list[StageDecision]:
    """Every chained stage of ``matrix``, decided from the evaluations under ``eval_root`` as the generator would."""
    from rlif.recipes.chained import stage_decisions

    out = []
    for stage, outcome in stage_decisions(matrix, eval_root).items():
        run = next(r for r in matrix.runs if r.stage == stage and r.from_winner is not None)
        link = run.from_winner
        assert link is not None
        if isinstance(outcome, MissingResultsError):
            out.append(refused(stage, " + ".join(link.stages), link.metric, link.tie_rule, str(outcome)))
        else:
            out.append(decision_of(outcome, final_results(eval_root, outcome.step)))
    return out


def runs_decision(runs: Sequence[Run], metric: str | None = None) -> tuple[StageDecision | None, list[str]]:
    """One decision over the runs given, each at its last evaluated step, seeds (``<run>_s<N>``) merged into arms.

    Runs evaluated at no known step (a base model's evaluation) are left out of the table and named in the notes:
    the chain never compares a base-model evaluation with trained ones. Returns (None, notes) when fewer than one
    run remains.
    """
    notes = []
    results: dict[str, CandidateResult | str] = {}
    for run in runs:
        stepped = [e for e in run.evals if e.step is not None]
        if not stepped:
            if run.evals:
                notes.append(f"{run.name}: evaluated at no known step (a base model?), not in the decision table")
            continue
        stepped = [e for e in stepped if e.tier == FAST]
        if not stepped:
            notes.append(f"{run.name}: evaluated on full-tier benchmarks only, which decide nothing")
            continue
        last = stepped[-1]
        records, missing = tier_records(last.step_dir, FAST)
        if missing or not records:
            where = ", ".join(missing) or str(last.path.parent)
            results[run.name] = (
                f"no {SAMPLES_FILE} in {where} at {last.step_dir}: the per-prompt values an interval needs"
            )
            continue
        results[run.name] = CandidateResult(run.name, int(last.step), records)  # type: ignore[arg-type]
    if not results:
        return None, notes
    first = next((r for r in results.values() if isinstance(r, CandidateResult)), None)
    candidates = tuple(results)
    if metric is None and first is not None:
        try:
            metric = default_metric(Evaluated(Path(), {}, first.records))
        except ValueError as err:
            return refused("report", "the runs given", "?", "the first listed run", str(err)), notes
    link = Link("report", "the runs given", candidates, metric or "?", tie_rule="the first listed run")
    try:
        resolution = resolve(link, results)
    except MissingResultsError as err:
        return refused(link.stage, link.from_stage, link.metric, link.tie_rule, str(err)), notes
    return decision_of(resolution, results), notes

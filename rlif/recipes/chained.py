"""Resolving the matrix's ablation chain (``from_winner``) from evaluation results, for the generator.

Every chained run is resolved in file order, so a link can compare runs that were themselves chained: the
candidates of a link are the GPU runs of its stages, their results the newest ``eval/<run>/<step>/metrics.json``
(``rlif.eval.chain.latest_results``), the winner the best by the link's metric (``rlif.eval.chain.resolve``), and
the chained run is rebuilt with the winner's values of the ``take`` keys.

A link whose candidates are not all evaluated cannot be resolved. Then its runs are left out of a default
generation with one note naming the stage, metric and missing results (every other run is written, so the
matrix generates from a fresh checkout), and an explicit selection (``--run``/``--stage``) that includes them is
refused with the same list: a script for a chained run is never written with guessed settings.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlif.eval.chain import Link, MissingResultsError, Resolution, latest_results, resolve
from rlif.runs.matrix import Matrix
from rlif.runs.spec import RunSpec, get_dotted, set_dotted


class ChainRefusedError(ValueError):
    """Selected chained runs cannot be resolved yet; the message has one line per link with its missing results."""


@dataclass
class ChainOutcome:
    """The selection with its chained runs resolved.

    Attributes:
        runs: the runs to generate, in selection order (chained ones rebuilt with the winner's settings).
        resolved: one line per link the selection used: the winner and its margin.
        skipped: one line per link whose runs were left out (default selection only).
        notes: the winner's line of each resolved chained run, by run name (for its script's header).
    """

    runs: list[RunSpec]
    resolved: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)


def resolve_selection(matrix: Matrix, selected: Sequence[RunSpec], eval_root: Path, explicit: bool) -> ChainOutcome:
    """Resolve every chained run of ``matrix`` and return ``selected`` ready to generate.

    Args:
        matrix: the loaded matrix.
        selected: the runs chosen (matrix runs, before site settings).
        eval_root: where evaluation results are (``eval/`` of the repository).
        explicit: the user named runs or stages; unresolvable selected runs are then refused, not skipped.

    Raises:
        ChainRefusedError: ``explicit`` and a selected chained run's link lacks results.
        ValueError: a winner lacks a setting to pass on, or a results file is unreadable (names the file).
    """
    outcomes: dict[tuple[Any, ...], Resolution | MissingResultsError] = {}
    final_raw: dict[str, dict[str, Any]] = {}
    resolved_runs: dict[str, RunSpec] = {}
    link_of: dict[str, tuple[Any, ...]] = {}
    for run in matrix.runs:
        if run.cpu_mode:
            continue
        raw = matrix.merged_raw(run.name)
        link = run.from_winner
        if link is None:
            final_raw[run.name], resolved_runs[run.name] = raw, run
            continue
        key = (run.stage, link.stages, link.metric, link.take)
        link_of[run.name] = key
        if key not in outcomes:
            outcomes[key] = _resolve_link(matrix, run, final_raw, eval_root)
        outcome = outcomes[key]
        if isinstance(outcome, MissingResultsError):
            continue
        resolved_runs[run.name] = matrix.resolved(run.name, raw, outcome.inherited)
        final_raw[run.name] = raw
        for name, value in outcome.inherited.items():
            set_dotted(final_raw[run.name], name, value)

    result = ChainOutcome(runs=[])
    waiting: dict[tuple[Any, ...], list[str]] = {}
    for run in selected:
        key = link_of.get(run.name)
        if key is None:
            result.runs.append(run)
            continue
        outcome = outcomes[key]
        if isinstance(outcome, MissingResultsError):
            waiting.setdefault(key, []).append(run.name)
            continue
        line = outcome.explain()
        if line not in result.resolved:
            result.resolved.append(line)
        result.notes[run.name] = line
        result.runs.append(resolved_runs[run.name])
    if waiting and explicit:
        raise ChainRefusedError("\n".join(f"{outcomes[key]}" for key in waiting))
    for key, names in waiting.items():
        result.skipped.append(f"skipped {', '.join(names)}: {outcomes[key]}")
    return result


def _resolve_link(
    matrix: Matrix, run: RunSpec, final_raw: dict[str, dict[str, Any]], eval_root: Path
) -> Resolution | MissingResultsError:
    """The winner of ``run``'s link, or the error listing what is missing. A candidate that is itself a chained
    run still waiting for results cannot have been trained from this matrix, so it counts as not evaluated."""
    link = run.from_winner
    assert link is not None
    candidates = tuple(c.name for stage in link.stages for c in matrix.stage_runs(stage))
    ready = [name for name in candidates if name in final_raw]
    results = latest_results(eval_root, ready)
    settings_of = {}
    for name in ready:
        values = {}
        for key in link.take:
            found, value = get_dotted(final_raw[name], key)
            if found:
                values[key] = value
        settings_of[name] = values
    chain_link = Link(run.stage, " + ".join(link.stages), candidates, link.metric, link.take)
    try:
        return resolve(chain_link, results, settings_of)
    except MissingResultsError as err:
        return err

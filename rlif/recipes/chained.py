"""Resolving the matrix's ablation chain (``from_winner``) from evaluation results, for the generator.

Every chained run is resolved in file order, so a link can compare runs that were themselves chained: the
candidates of a link are the GPU runs of its stages, their results the evaluation at each run's final step
(``eval/<run>/<total_training_steps>/``, ``rlif.eval.chain.final_results``), the winner the best by the link's
criterion unless the paired interval calls it a tie, which the link's stated rule breaks
(``rlif.eval.chain.resolve``), and the chained run is rebuilt with the winner's values of the ``take`` keys.

A link whose candidates are not all evaluated at their final step cannot be resolved. Then its runs are left out
of a default generation with one note naming the stage, criterion and missing results (every other run is written,
so the matrix generates from a fresh checkout), and an explicit selection (``--run``/``--stage``) that includes
them is refused with the same list: a script for a chained run is never written with guessed settings.

A link with ``sign_off: true`` stops the same way after printing its decision table, until a person runs the
generator with ``--accept <stage>``: that records the table and its SHA-256 in ``recipe/decisions/<stage>.json``
(committed with the stage's scripts); a later generation goes on while the recorded hash matches the table, and
stops again when new results change it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlif.atomic_files import write_text_atomic
from rlif.eval.chain import Link, MissingResultsError, Resolution, final_results, resolve
from rlif.runs.matrix import Matrix
from rlif.runs.spec import RunSpec, get_dotted, set_dotted


class ChainRefusedError(ValueError):
    """Selected chained runs cannot be resolved yet; the message has one line per link with its missing results."""


class SignOffPendingError(MissingResultsError):
    """A link that requires sign-off has a decision table no one has accepted (or new results changed it)."""


def decision_text(resolution: Resolution) -> str:
    """The decision table and the verdict line: what a sign-off accepts and hashes."""
    return "\n".join([*resolution.table(), resolution.explain()]) + "\n"


def decision_hash(resolution: Resolution) -> str:
    """SHA-256 of ``decision_text``."""
    return hashlib.sha256(decision_text(resolution).encode("utf-8")).hexdigest()


def accept_decision(decisions: Path, stage: str, resolution: Resolution) -> Path:
    """Record the accepted decision table of ``stage`` and its hash; return the file."""
    path = decisions / f"{stage}.json"
    document = {"stage": stage, "sha256": decision_hash(resolution), "table": decision_text(resolution).splitlines()}
    write_text_atomic(path, json.dumps(document, indent=1) + "\n")
    return path


def accepted(decisions: Path, stage: str, resolution: Resolution) -> bool:
    """Whether ``recipe/decisions/<stage>.json`` accepts this very table."""
    path = decisions / f"{stage}.json"
    if not path.is_file():
        return False
    try:
        return json.loads(path.read_text(encoding="utf-8")).get("sha256") == decision_hash(resolution)
    except (json.JSONDecodeError, AttributeError):
        return False


@dataclass
class ChainOutcome:
    """The selection with its chained runs resolved.

    Attributes:
        runs: the runs to generate, in selection order (chained ones rebuilt with the winner's settings).
        resolved: per link the selection used, its decision table and the verdict line.
        skipped: one line per link whose runs were left out (default selection only).
        notes: the winner's line of each resolved chained run, by run name (for its script's header).
        inherited: the winner's values (dotted key -> value) each resolved chained run took, by run name (what its
            probe job passes to ``rlif.eval.probe --winner-setting``).
    """

    runs: list[RunSpec]
    resolved: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: dict[str, str] = field(default_factory=dict)
    inherited: dict[str, dict[str, Any]] = field(default_factory=dict)
    accepted: list[Path] = field(default_factory=list)


def resolve_selection(
    matrix: Matrix,
    selected: Sequence[RunSpec],
    eval_root: Path,
    explicit: bool,
    *,
    decisions: Path = Path("recipe/decisions"),
    accept: Sequence[str] = (),
) -> ChainOutcome:
    """Resolve every chained run of ``matrix`` and return ``selected`` ready to generate.

    Args:
        matrix: the loaded matrix.
        selected: the runs chosen (matrix runs, before site settings).
        eval_root: where evaluation results are (``eval/`` of the repository).
        explicit: the user named runs or stages; unresolvable selected runs are then refused, not skipped.
        decisions: where accepted decision tables are recorded.
        accept: stages whose current decision table the user accepts (recorded before generating).

    Raises:
        ChainRefusedError: ``explicit`` and a selected chained run's link lacks results.
        ValueError: a winner lacks a setting to pass on, or a results file is unreadable (names the file).
    """
    pending = lambda stage, found: stage not in accept and not accepted(decisions, stage, found)  # noqa: E731
    outcomes, link_of, resolved_runs = _resolve_links(matrix, eval_root, pending, decisions)

    result = ChainOutcome(runs=[])
    for key, outcome in list(outcomes.items()):
        if isinstance(outcome, Resolution) and key[0] in accept:
            result.accepted.append(accept_decision(decisions, key[0], outcome))
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
        table = "\n".join([*outcome.table(), line])
        if table not in result.resolved:
            result.resolved.append(table)
        result.notes[run.name] = line
        result.inherited[run.name] = dict(outcome.inherited)
        result.runs.append(resolved_runs[run.name])
    if waiting and explicit:
        raise ChainRefusedError("\n".join(f"{outcomes[key]}" for key in waiting))
    for key, names in waiting.items():
        result.skipped.append(f"skipped {', '.join(names)}: {outcomes[key]}")
    return result


def stage_decisions(matrix: Matrix, eval_root: Path) -> dict[str, Resolution | MissingResultsError]:
    """Each chained stage's decision from the results under ``eval_root`` (or why it cannot be made), sign-off
    aside: what the report's decision tables show."""
    outcomes, _, _ = _resolve_links(matrix, eval_root, lambda stage, found: False, Path("recipe/decisions"))
    return {key[0]: outcome for key, outcome in outcomes.items()}


def _resolve_links(
    matrix: Matrix,
    eval_root: Path,
    pending: Callable[[str, Resolution], bool],
    decisions: Path,
) -> tuple[dict[tuple[Any, ...], Resolution | MissingResultsError], dict[str, tuple[Any, ...]], dict[str, RunSpec]]:
    """Every link of the matrix resolved in file order (outcome per link, link per chained run, runs rebuilt with
    their winner's settings); ``pending(stage, resolution)`` says whether a stage still waits for sign-off."""
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
            found = outcomes[key]
            if isinstance(found, Resolution) and link.sign_off and pending(run.stage, found):
                outcomes[key] = SignOffPendingError(
                    f"stage {run.stage} waits for sign-off of its decision table:\n"
                    + decision_text(found)
                    + f"accept it with --accept {run.stage} (recorded in {decisions}/{run.stage}.json)"
                )
        outcome = outcomes[key]
        if isinstance(outcome, MissingResultsError):
            continue
        resolved_runs[run.name] = matrix.resolved(run.name, raw, outcome.inherited)
        final_raw[run.name] = raw
        for name, value in outcome.inherited.items():
            set_dotted(final_raw[run.name], name, value)
    return outcomes, link_of, resolved_runs


def _resolve_link(
    matrix: Matrix, run: RunSpec, final_raw: dict[str, dict[str, Any]], eval_root: Path
) -> Resolution | MissingResultsError:
    """The winner of ``run``'s link, or the error listing what is missing. A candidate that is itself a chained
    run still waiting for results cannot have been trained from this matrix, so it counts as not evaluated."""
    link = run.from_winner
    assert link is not None
    candidates = tuple(c.name for stage in link.stages for c in matrix.stage_runs(stage))
    ready = [name for name in candidates if name in final_raw]
    final_steps = {name: int(get_dotted(final_raw[name], "train.total_training_steps")[1] or 0) for name in ready}
    results = final_results(eval_root, final_steps)
    settings_of = {}
    for name in ready:
        values = {}
        for key in link.take:
            found, value = get_dotted(final_raw[name], key)
            if found:
                values[key] = value
        settings_of[name] = values
    chain_link = Link(
        run.stage, " + ".join(link.stages), candidates, link.metric, link.take, link.weights, link.tie_rule
    )
    try:
        return resolve(chain_link, results, settings_of)
    except MissingResultsError as err:
        return err

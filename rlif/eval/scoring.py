"""Score matched samples offline with the reward entry training uses, one record per sample.

Every sample goes through ``rewards.compute_score``, so an evaluation number and a training reward can never
disagree on what a correct answer is. A family may add details to its samples' records that its metrics need and
the reward's aggregate keys do not carry (``Evaluation.sample_details``: IF's per-instruction verdicts, from the same
function its scorer calls, cross-checked on every sample).

Evaluation defaults differ from training where a family declares it (``Evaluation.options``): IF answers are
checked at any length (``if_max_answer_chars=0``), as the official IFEval/IFBench harnesses check them; training caps
the length to bound the reward's cost. ``--reward-option`` overrides any option.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tqdm import tqdm

from rewards import check_reward_kwargs, compute_score
from rewards.registry import evaluation_options, find_family
from rewards.thinking import split_thinking
from rlif.eval.responses import Sample


def reward_options(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The evaluation's reward options: every family's evaluation defaults updated by ``overrides``, validated.

    Raises:
        ValueError: an option no reward family declares, or a bad value (the router's message).
    """
    options = {**evaluation_options(), **overrides}
    check_reward_kwargs(options)
    return options


def score_samples(samples: Iterable[Sample], options: Mapping[str, Any], *, total: int | None = None) -> Iterator[dict]:
    """Yield one record per sample, in order, with a progress bar on stderr.

    A record holds ``id``, ``data_source``, ``sample``, ``line``, the row's ``split`` where it has one (the chain
    refuses to select on test files), the row's fields its family's metrics read
    (``Evaluation.record_fields`` where present: LogicIF ``difficulty_level`` and ``task_id``, graph ``size``),
    ``response``, the sample's ``extra`` fields (generation's ``finish_reason`` and ``response_tokens``), every score
    key ``compute_score`` returned for the sample's family (keys that do not apply, None, are left out) and the
    family's ``Evaluation.sample_details`` (IF: ``instructions``, one ``{"id", "strict", "loose"}`` per
    instruction), unless the scorer failed on the sample.
    """
    for sample in tqdm(samples, total=total, desc="scoring", unit="sample"):
        yield score_sample(sample, options)


def score_sample(sample: Sample, options: Mapping[str, Any]) -> dict[str, Any]:
    """The record of one sample (see ``score_samples``)."""
    row = sample.row
    scores = compute_score(row.data_source, sample.response, row.ground_truth, dict(row.extra_info), **options)
    record: dict[str, Any] = {
        "id": row.item_id,
        "data_source": row.data_source,
        "sample": sample.sample,
        "line": sample.line,
        **row.groups(),
        **({"split": row.extra_info["split"]} if "split" in row.extra_info else {}),
        "response": sample.response,
        **sample.extra,
        **{key: value for key, value in scores.items() if value is not None},
    }
    family = find_family(row.data_source)
    if family is not None and family.evaluation.sample_details is not None and not scores["reward_error"]:
        response = split_thinking(sample.response)
        params = family.resolve_options(options)
        record.update(family.evaluation.sample_details(response, row.ground_truth, scores, params, where=row.where))
    return record

"""Score matched samples offline with the reward entry training uses, one record per sample.

Every sample goes through ``rewards.compute_score``, so an evaluation number and a training reward can never
disagree on what a correct answer is. IF samples also get their per-instruction verdicts (the same
``verdicts`` function the IF family's scorer calls), which per-instruction accuracy needs and the reward's
aggregate keys do not carry; the two are cross-checked on every sample.

Evaluation defaults differ from training in one option: IF answers are checked at any length
(``if_max_answer_chars=0``), as the official IFEval/IFBench harnesses check them; training caps the length to bound
the reward's cost. ``--reward-option`` overrides any option.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from tqdm import tqdm

from rewards import check_reward_kwargs, compute_score
from rewards.instruction_following.ground_truth import parse_canonical
from rewards.instruction_following.scoring import MAX_ANSWER_CHARS, verdicts
from rewards.registry import find_family
from rewards.thinking import split_thinking
from rlif.eval.responses import Sample

EVAL_REWARD_OPTIONS: Mapping[str, Any] = {"if_max_answer_chars": 0}
"""Reward options an evaluation uses unless the user sets them (see the module docstring)."""


def reward_options(overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The evaluation's reward options: ``EVAL_REWARD_OPTIONS`` updated by ``overrides``, validated.

    Raises:
        ValueError: an option no reward family declares, or a bad value (the router's message).
    """
    options = {**EVAL_REWARD_OPTIONS, **overrides}
    check_reward_kwargs(options)
    return options


def score_samples(samples: Iterable[Sample], options: Mapping[str, Any], *, total: int | None = None) -> Iterator[dict]:
    """Yield one record per sample, in order, with a progress bar on stderr.

    A record holds ``id``, ``data_source``, ``sample``, ``line``, the row's grouping fields (``difficulty_level``,
    ``task_id``, ``size`` where present), ``response``, the sample's ``extra`` fields (generation's
    ``finish_reason`` and ``response_tokens``), every score key ``compute_score`` returned for the sample's family
    (keys that do not apply, None, are left out) and, for IF samples, ``instructions``: one ``{"id", "strict",
    "loose"}`` per instruction.
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
        "response": sample.response,
        **sample.extra,
        **{key: value for key, value in scores.items() if value is not None},
    }
    family = find_family(row.data_source)
    if family is not None and family.name == "if" and not scores["reward_error"]:
        record["instructions"] = _instruction_verdicts(sample, scores, options)
    return record


def _instruction_verdicts(sample: Sample, scores: Mapping[str, Any], options: Mapping[str, Any]) -> list[dict]:
    row = sample.row
    answer = split_thinking(sample.response).answer
    strict, loose = verdicts(answer, row.ground_truth, options.get("if_max_answer_chars", MAX_ANSWER_CHARS))
    if sum(strict) != scores["if_inst_followed_strict"] or sum(loose) != scores["if_inst_followed_loose"]:
        raise RuntimeError(f"{row.where}: per-instruction verdicts disagree with compute_score (a scoring bug)")
    ids = [instruction_id for instruction_id, _ in parse_canonical(row.ground_truth)]
    return [{"id": i, "strict": s, "loose": lo} for i, s, lo in zip(ids, strict, loose, strict=True)]

"""The one reward entry verl calls: route each sample to its task family by ``data_source``.

verl's reward loop calls ``compute_score`` once per sample with keyword arguments and turns every key of the
returned dict into a per-sample column; it takes the key list from the first sample, so every sample must return
the same keys. We return the union of all families' keys, with None where a key does not apply (verl's
validation metrics drop None values).
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Mapping
from typing import Any

from rewards.registry import TaskFamily, families, family_for, find_family, metric_keys, reward_options
from rewards.thinking import split_thinking

logger = logging.getLogger(__name__)

COMMON_KEYS = ("score", "acc", "think_unclosed", "unknown_source", "reward_error")
"""Keys every sample carries: the reward, the family's headline accuracy, and three health flags."""

VERL_INJECTED_KWARGS = frozenset({"reward_router_address", "reward_model_tokenizer"})
"""Keyword arguments verl adds on its own (with a reward model enabled); accepted and ignored."""

_warned_sources: set[str] = set()
_checked_options: set[frozenset] = set()
"""Option sets already validated: a run passes the same options with every sample, so each is checked once."""


def reward_keys() -> tuple[str, ...]:
    """Every key ``compute_score`` returns, common keys first, then each family's keys."""
    return COMMON_KEYS + metric_keys()


def check_reward_kwargs(kwargs: Mapping[str, Any]) -> None:
    """Reject reward options no family declares, and bad values of declared ones.

    Raises:
        ValueError: an option is unknown (the message lists the accepted ones) or its value is invalid.
    """
    accepted = reward_options()
    unknown = sorted(set(kwargs) - set(accepted) - VERL_INJECTED_KWARGS)
    if unknown:
        raise ValueError(f"unknown reward option(s) {unknown}; accepted: {sorted(accepted)}")
    for family in families():
        family.check_params(family.resolve_options(kwargs))


def check_row(data_source: str, ground_truth: str, extra_info: Mapping[str, Any] | None = None) -> None:
    """Build-time check of one data row: its source is known and its ground truth can be scored.

    Raises:
        ValueError: unknown ``data_source`` or unusable ground truth.
    """
    family_for(data_source).check_ground_truth(ground_truth, extra_info)


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str,
    extra_info: Mapping[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, float | None]:
    """Score one response. This is verl's ``reward.custom_reward_function`` entry.

    Args:
        data_source: the row's ``data_source`` (``ifeval``, ``ifbench``, ``iftrain``, ``logicif``, ``graph/<task>``).
        solution_str: the decoded response, thinking included.
        ground_truth: the row's ``reward_model.ground_truth`` (canonical JSON, checked when the data was built).
        extra_info: the row's ``extra_info``.
        **kwargs: reward options from ``reward.custom_reward_function.reward_kwargs`` (see each family's
            ``options``; an option not given takes its declared default) plus verl's own injected arguments,
            which are ignored.

    Returns:
        A dict with the keys of ``reward_keys()``: ``score`` is the reward. An unknown source scores 0 with
        ``unknown_source=1`` (logged once per source); a scorer bug scores the family's ``failure_score`` (its
        lowest reward under the run's options: 0 for IF and LogicIF, the variant's lower bound for graphs, so a
        crash never pays more than a wrong answer) with ``reward_error=1`` and a logged traceback, so a single bad
        sample cannot end a long run but still shows in the step metrics.

    Raises:
        ValueError: a reward option is unknown (a configuration error, raised on the first sample).
    """
    _check_options_once(kwargs)
    result: dict[str, float | None] = dict.fromkeys(reward_keys())
    result.update(unknown_source=0.0, reward_error=0.0)
    response = split_thinking(solution_str if isinstance(solution_str, str) else "")
    result["think_unclosed"] = float(response.think_unclosed)
    family = find_family(data_source)
    if family is None:
        if data_source not in _warned_sources:
            _warned_sources.add(data_source)
            logger.error("rlif reward: unknown data_source %r scores 0 (known: %s)", data_source, _known_prefixes())
        result.update(score=0.0, acc=0.0, unknown_source=1.0)
        return result
    params = family.resolve_options(kwargs)
    try:
        scores = _score_with(family, response, ground_truth, extra_info, params)
    except Exception:  # a scorer bug must not end a long run: it is counted in reward_error and logged instead
        logger.error(
            "rlif reward: %s scorer failed on a %r sample:\n%s", family.name, data_source, traceback.format_exc()
        )
        result.update(score=_failure_score(family, params), acc=0.0, reward_error=1.0)
        return result
    result.update(scores)
    return result


def _check_options_once(kwargs: Mapping[str, Any]) -> None:
    try:
        options = frozenset(kwargs.items())
    except TypeError:  # an unhashable option value: validate it every time
        check_reward_kwargs(kwargs)
        return
    if options not in _checked_options:
        check_reward_kwargs(kwargs)
        _checked_options.add(options)


def _score_with(
    family: TaskFamily,
    response: Any,
    ground_truth: str,
    extra_info: Mapping[str, Any] | None,
    params: Mapping[str, Any],
) -> Mapping[str, float | None]:
    scores = family.score(response, ground_truth, extra_info, **params)
    extra = set(scores) - {"score", "acc", *family.metric_keys}
    if extra or "score" not in scores or "acc" not in scores:
        raise RuntimeError(f"{family.name} scorer broke its key contract: extra {sorted(extra)}, got {sorted(scores)}")
    return scores


def _failure_score(family: TaskFamily, params: Mapping[str, Any]) -> float:
    """The family's crash score (its lowest reward under ``params``); if even that fails, the 0 of old, logged."""
    try:
        return float(family.failure_score(params))
    except Exception:
        logger.error("rlif reward: %s failure_score failed:\n%s", family.name, traceback.format_exc())
        return 0.0


def _known_prefixes() -> str:
    return ", ".join(sorted({p for f in families() for p in f.prefixes}))

"""The one builder of verl rows, for every data set rlif writes (IF and LogicIF mixtures, graph sets, the demo).

A verl 0.9.1 RL row has five columns (``rlif.data.schema.COLUMNS``)::

    data_source   the reward router's key (``iftrain``, ``logicif``, ``graph/tsp``, ``math/gsm8k``, ...)
    prompt        chat messages [{"role", "content"}]
    ability       the task family's declared ``ability`` (``rewards.registry.TaskFamily``)
    reward_model  {"style": "rule", "ground_truth": <the family's canonical JSON string>}
    extra_info    split, index, item_id, difficulty, then the builder's task fields

The ``ability`` comes from the family that serves ``data_source``, so rows of one family carry one value whichever
builder wrote them, and a source no family serves fails here, when the data is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

REWARD_STYLE = "rule"
"""verl's ``reward_model.style`` for rule-based (non-model) rewards, the only kind rlif uses."""


def verl_row(
    data_source: str,
    prompt: str | Sequence[Mapping[str, str]],
    ground_truth: str,
    extra_info: Mapping[str, Any],
) -> dict[str, Any]:
    """One verl row.

    Args:
        data_source: the row's source; a reward family must serve it.
        prompt: the chat messages, or one string that becomes a single user message.
        ground_truth: canonical ground truth (``rewards.normalize_ground_truth`` makes it from any accepted form).
        extra_info: the ``extra_info`` fields, in the order they are written.

    Returns:
        The row as plain Python values.

    Raises:
        ValueError: no reward family serves ``data_source`` (the message lists the known sources).
    """
    from rewards import family_for

    messages = [{"role": "user", "content": prompt}] if isinstance(prompt, str) else [dict(m) for m in prompt]
    return {
        "data_source": data_source,
        "prompt": messages,
        "ability": family_for(data_source).ability,
        "reward_model": {"style": REWARD_STYLE, "ground_truth": ground_truth},
        "extra_info": dict(extra_info),
    }

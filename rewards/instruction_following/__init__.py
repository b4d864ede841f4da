"""Instruction-following rewards: IFEval, open-instruct IFEvalG and IFBench checkers behind one task family.

Importing this package registers every checker (``ifeval``, ``ifevalg``, ``ifbench`` modules) in the instruction
registry and the ``if`` task family (data sources ``ifeval``, ``ifbench``, ``iftrain``) in ``rewards.registry``.
Data builders call ``normalize_ground_truth`` on every row; the router calls the family's scorer.
"""

from collections.abc import Mapping
from typing import Any

from rewards.instruction_following import ifbench, ifeval, ifevalg  # noqa: F401  (register the checkers)
from rewards.instruction_following.evaluation import EVALUATION
from rewards.instruction_following.ground_truth import check_ground_truth, normalize_ground_truth
from rewards.instruction_following.scoring import (
    MAX_ANSWER_CHARS,
    METRIC_KEYS,
    check_if_reward,
    check_max_answer_chars,
    score_instruction_following,
)
from rewards.registry import TaskFamily, register_family


def _check_params(params: Mapping[str, Any]) -> None:
    """Validate the IF reward options of a run (``if_reward``, ``if_max_answer_chars``)."""
    check_if_reward(params["if_reward"])
    check_max_answer_chars(params["if_max_answer_chars"])


IF_FAMILY = register_family(
    TaskFamily(
        name="if",
        prefixes=("ifeval", "ifbench", "iftrain"),
        ability="instruction_following",
        metric_keys=METRIC_KEYS,
        options={"if_reward": "fraction", "if_max_answer_chars": MAX_ANSWER_CHARS},
        score=score_instruction_following,
        normalize_ground_truth=normalize_ground_truth,
        check_ground_truth=check_ground_truth,
        check_params=_check_params,
        evaluation=EVALUATION,
        training_flags=("if_over_length_cap",),
    )
)

__all__ = ["IF_FAMILY", "check_ground_truth", "normalize_ground_truth", "score_instruction_following"]

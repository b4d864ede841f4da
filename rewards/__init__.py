"""Verl-free reward scoring for rlif: instruction following, LogicIF, NP-hard graph tasks and math answers.

``compute_score`` is the single entry verl calls. Importing this package registers every task family, so the
registry's questions (``family_for``, ``family_named``, ``normalize_ground_truth``, ``reward_options``) asked through
it see them all.
"""

from rewards import families as _families  # noqa: F401  (registers the task families)
from rewards.registry import family_for, family_named, normalize_ground_truth, reward_options
from rewards.router import check_reward_kwargs, check_row, compute_score, reward_keys

__all__ = [
    "check_reward_kwargs",
    "check_row",
    "compute_score",
    "family_for",
    "family_named",
    "normalize_ground_truth",
    "reward_keys",
    "reward_options",
]

"""Verl-free reward scoring for rlif: instruction following, LogicIF and NP-hard graph tasks.

``compute_score`` is the single entry verl calls. Importing this package registers every task family.
"""

from rewards import families as _families  # noqa: F401  (registers the task families)
from rewards.router import check_reward_kwargs, check_row, compute_score, reward_keys

__all__ = ["check_reward_kwargs", "check_row", "compute_score", "reward_keys"]

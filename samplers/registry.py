"""Policies by name, so the recipe matrix can name a policy and its parameters.

The registry is one literal table: adding a policy means writing its module (a ``SamplingPolicy`` subclass with a
``name``) and adding one line here. Policy modules never import this one, so there is no import cycle.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rewards.lookup import look_up
from samplers.base import SamplingPolicy
from samplers.curriculum import RewardCurriculumPolicy, StagedCurriculumPolicy
from samplers.learnability_ucb import LearnabilityUcbPolicy
from samplers.source_mix import EmaReweightPolicy, FixedRatioPolicy
from samplers.uniform import UniformPolicy

POLICY_CLASSES: tuple[type[SamplingPolicy], ...] = (
    UniformPolicy,
    FixedRatioPolicy,
    EmaReweightPolicy,
    RewardCurriculumPolicy,
    StagedCurriculumPolicy,
    LearnabilityUcbPolicy,
)
POLICIES: Mapping[str, type[SamplingPolicy]] = {cls.name: cls for cls in POLICY_CLASSES}


def build_policy(name: str, params: Mapping[str, Any] | None = None, seed: int = 0) -> SamplingPolicy:
    """Construct the policy ``name`` with ``params``.

    Raises:
        ValueError: unknown name (the message lists the known ones) or parameters the policy does not take.
    """
    policy = look_up(POLICIES, name, "sampling policy", known=sorted(POLICIES))
    try:
        return policy(seed=seed, **dict(params or {}))
    except TypeError as err:
        raise ValueError(f"sampling policy {name!r}: bad parameters {dict(params or {})}: {err}") from err


def policy_names() -> list[str]:
    """Names of all registered policies."""
    return sorted(POLICIES)

"""Verl-free prompt-sampling policies (see ``samplers.base``); verl adapters live in ``rlif.verl_glue.hooks``."""

from samplers.base import Pool, Record, SamplingPolicy
from samplers.registry import build_policy, policy_names

__all__ = ["Pool", "Record", "SamplingPolicy", "build_policy", "policy_names"]

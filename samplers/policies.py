"""Imports each policy module so it registers itself; the list is the single place policies are named."""

from samplers import curriculum, learnability_ucb, source_mix, uniform  # noqa: F401

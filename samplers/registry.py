"""Policies by name, so the recipe matrix can name a policy and its parameters."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from samplers.base import SamplingPolicy

_POLICIES: dict[str, type[SamplingPolicy]] = {}
P = TypeVar("P", bound=type[SamplingPolicy])


def register_policy(name: str) -> Callable[[P], P]:
    """Class decorator adding a policy under ``name``; a duplicate name raises ``ValueError``."""

    def add(cls: P) -> P:
        if name in _POLICIES:
            raise ValueError(f"sampling policy {name!r} is already registered")
        cls.name = name
        _POLICIES[name] = cls
        return cls

    return add


def build_policy(name: str, params: Mapping[str, Any] | None = None, seed: int = 0) -> SamplingPolicy:
    """Construct the policy ``name`` with ``params``.

    Raises:
        ValueError: unknown name (the message lists the known ones) or parameters the policy does not take.
    """
    import samplers.policies  # noqa: F401  (registers every policy)

    if name not in _POLICIES:
        raise ValueError(f"unknown sampling policy {name!r}; known: {sorted(_POLICIES)}")
    try:
        return _POLICIES[name](seed=seed, **dict(params or {}))
    except TypeError as err:
        raise ValueError(f"sampling policy {name!r}: bad parameters {dict(params or {})}: {err}") from err


def policy_names() -> list[str]:
    """Names of all registered policies."""
    import samplers.policies  # noqa: F401

    return sorted(_POLICIES)

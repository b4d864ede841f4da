"""A problem found in one run's settings: what every check (matrix, planner, verl's config) reports."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One thing wrong with one run.

    Attributes:
        run: the run name.
        key: the config key or matrix field at fault.
        message: what is wrong and what to do.
    """

    run: str
    key: str
    message: str

    def __str__(self) -> str:
        return f"run {self.run}: {self.key}: {self.message}"

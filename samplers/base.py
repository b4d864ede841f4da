"""The interface every prompt-sampling policy implements, with no verl import.

A policy decides, before each prompt is drawn, which *pool* it comes from: a (source, interval) pair, where source
is the row's ``data_source`` and interval is a difficulty bucket the policy assigned when the data was loaded
(always 0 for policies that ignore difficulty). After each training step the policy sees one ``Record`` per
finished response and may change its weights. Everything a policy needs to resume exactly (RNG included) is in
``state_dict()``, made of plain Python values so it round-trips through ``torch.save``/``torch.load`` in verl's
``data.pt``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

Pool = tuple[str, int]
"""(source, interval)."""


@dataclass(frozen=True)
class Record:
    """One scored response of the last training step.

    Attributes:
        source: the row's ``data_source``.
        interval: the interval the policy assigned to the row (0 when it assigns none).
        reward: the scalar reward (``score``) of this response.
        group: the rollout group id (verl's ``uid``): responses to the same prompt share it, which is what
            advantage-based policies need.
        item_id: the row's stable id from ``extra_info.item_id``.
    """

    source: str
    interval: int
    reward: float
    group: str = ""
    item_id: str = ""


class SamplingPolicy(ABC):
    """Chooses the pool of the next training prompt and learns from per-sample rewards.

    Lifecycle: ``assign_intervals`` once per source, then ``set_pools`` once with the non-empty pools, then any
    number of ``draw``/``update`` calls. ``load_state_dict`` may come after ``set_pools`` to resume.
    """

    name: str = ""

    def assign_intervals(self, source: str, difficulties: Sequence[float]) -> list[int]:
        """Bucket a source's rows by difficulty; the default puts every row in interval 0.

        Args:
            source: the ``data_source`` these rows share.
            difficulties: ``extra_info.difficulty`` of each row, in row order.

        Returns:
            The interval of each row, in the same order.
        """
        return [0] * len(difficulties)

    @abstractmethod
    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        """Tell the policy which pools exist and how many rows each holds (only non-empty pools are given)."""

    @abstractmethod
    def draw(self) -> Pool:
        """Return the pool of the next prompt, advancing the policy's own RNG."""

    @abstractmethod
    def update(self, records: Sequence[Record]) -> dict[str, float]:
        """Learn from one training step's scored responses.

        Returns:
            Metrics for the step's log, named ``sampler/...``.
        """

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """Everything needed to continue identically, as plain Python values."""

    @abstractmethod
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""

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
        success: the family's success indicator (the reward's ``acc``: IF prompt-level strict, LogicIF output and
            stats correct, graph optimal), what curriculum gates read; None when the reward returned none. A shaped
            ``reward`` (a format bonus) says nothing about whether the interval is learned.
        exposure: how many times the row had been drawn before this response's prompt (0: first exposure); None
            when unknown.
        response_tokens: the response's generated tokens; None when unknown.
        truncated: whether the response reached the length cap (``data.max_response_length``); None when unknown.
    """

    source: str
    interval: int
    reward: float
    group: str = ""
    item_id: str = ""
    success: float | None = None
    exposure: int | None = None
    response_tokens: int | None = None
    truncated: bool | None = None


class SamplingPolicy(ABC):
    """Chooses the pool of the next training prompt and learns from per-sample rewards.

    Lifecycle: ``assign_intervals`` once per source, then ``set_pools`` once with the non-empty pools, then any
    number of ``draw``/``update`` calls. ``restore`` (or ``load_state_dict``) may come after ``set_pools`` to
    resume; ``checkpoint`` is what to save.
    """

    name: str = ""
    difficulty_field: str = "difficulty"
    """The ``extra_info`` field whose value ``assign_intervals`` receives for the rows of a source it splits."""
    function_field: str | None = None
    """The ``extra_info`` field naming the unit a split keeps whole (LogicIF's ``task_id``: one function's test
    cases), passed to ``assign_intervals`` as ``functions``; None when the policy cuts on rows."""

    def __init__(self) -> None:
        self._fingerprints: dict[str, dict[str, Any]] = {}

    def splits(self, source: str) -> bool:
        """Whether this policy buckets ``source`` by ``difficulty_field`` (the data must then carry the field)."""
        return False

    def assign_intervals(
        self, source: str, difficulties: Sequence[Any], functions: Sequence[Any] | None = None
    ) -> list[int]:
        """Bucket a source's rows and remember the split's fingerprint (what a resume compares).

        Args:
            source: the ``data_source`` these rows share.
            difficulties: ``extra_info.<difficulty_field>`` of each row, in row order (ignored, and may be None,
                for a source the policy does not split).
            functions: ``extra_info.<function_field>`` of each row (None entries for rows without one), or None
                when the policy has no ``function_field``: rows of one function stay in one interval.

        Returns:
            The interval of each row, in the same order.
        """
        from samplers.fingerprint import source_fingerprint

        whole = functions is not None and self.splits(source) and any(f is not None for f in functions)
        if not self.splits(source):
            intervals = [0] * len(difficulties)
        elif whole:
            intervals = self.split(source, difficulties, functions=functions)  # type: ignore[call-arg]
        else:
            intervals = self.split(source, difficulties)
        values = difficulties if self.splits(source) else [0.0] * len(difficulties)
        self._fingerprints[source] = source_fingerprint(values, intervals, cut="function" if whole else "row")
        return intervals

    def split(self, source: str, difficulties: Sequence[Any]) -> list[int]:
        """The intervals of a source the policy splits (``splits(source)`` is true); the default is all 0."""
        return [0] * len(difficulties)

    def group_of(self) -> dict[str, str]:
        """Source -> source group, for policies that weight groups (``groups``); empty when each source stands
        alone. Exposure is reported per group, the unit the policy's shares are set for."""
        groups = getattr(self, "_groups", None)
        return dict(groups.group_of) if groups is not None else {}

    def fingerprint(self) -> dict[str, dict[str, Any]]:
        """Per source: rows, rows and difficulty range per interval, and a digest of the row-to-interval map."""
        return {source: dict(value) for source, value in sorted(self._fingerprints.items())}

    def checkpoint(self) -> dict[str, Any]:
        """What a run saves: the data fingerprint with the learned state, so a resume can tell the data changed."""
        return {"fingerprint": self.fingerprint(), "state": self.state_dict()}

    def restore(self, saved: Mapping[str, Any], on_data_change: str = "error") -> list[str]:
        """Resume from ``checkpoint()``, refusing data that changed unless ``on_data_change`` is ``resplit``.

        Returns:
            One line per changed source (empty when the data is the same).

        Raises:
            ValueError: the data changed and ``on_data_change`` is ``error`` (the message names each source and
                what changed), or ``saved`` is not a checkpoint.
        """
        from samplers.fingerprint import check_data_unchanged

        changed = check_data_unchanged(saved, self.fingerprint(), on_data_change)
        self.load_state_dict(saved["state"], changed=frozenset(changed))
        return [f"{source}: {what}" for source, what in changed.items()]

    @abstractmethod
    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        """Tell the policy which pools exist and how many rows each holds (only non-empty pools are given)."""

    @abstractmethod
    def draw(self) -> Pool:
        """Return the pool of the next prompt, advancing the policy's own RNG."""

    @abstractmethod
    def probabilities(self) -> dict[Pool, float]:
        """The probability of each pool at the next draw (for the pool-size check and the simulation)."""

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
    def load_state_dict(self, state: Mapping[str, Any], changed: frozenset[str] = frozenset()) -> None:
        """Restore what ``state_dict`` returned.

        Args:
            state: the saved state.
            changed: sources whose rows or split changed since the save (``restore`` with ``resplit``): their
                per-pool state starts afresh; everything else is restored exactly. Empty means the same data.
        """


def row_intervals(
    policy: SamplingPolicy,
    sources: Sequence[str],
    extras: Sequence[Mapping[str, Any] | None],
    where: str,
) -> list[int]:
    """Each row's interval under ``policy``: the split the training dataset draws from and the probe job stratifies
    by, so both see the same intervals.

    Sources are split in name order, each with its rows' ``extra_info.<policy.difficulty_field>`` (and
    ``<policy.function_field>`` where the policy keeps functions whole); sources the policy does not split get 0.

    Args:
        policy: the run's sampling policy (``samplers.build_policy``).
        sources: each row's ``data_source``.
        extras: each row's ``extra_info`` (None counts as empty).
        where: the data's name for messages (its files).

    Returns:
        The interval of each row, in row order.

    Raises:
        ValueError: a row of a split source lacks the difficulty field (naming ``where``, row, field and source).
    """
    rows_by_source: dict[str, list[int]] = {}
    for row, source in enumerate(sources):
        rows_by_source.setdefault(source, []).append(row)
    intervals = [0] * len(sources)
    field = policy.difficulty_field
    for source, rows in sorted(rows_by_source.items()):
        difficulties: list[Any] = []
        functions: list[Any] | None = [] if policy.function_field and policy.splits(source) else None
        for row in rows:
            if not policy.splits(source):
                difficulties.append(0.0)
                continue
            extra = extras[row] or {}
            if extra.get(field) is None:
                raise ValueError(f"{where}: row {row} field extra_info.{field} is missing (source {source!r})")
            difficulties.append(extra[field])
            if functions is not None:
                functions.append(extra.get(policy.function_field))
        for row, interval in zip(rows, policy.assign_intervals(source, difficulties, functions), strict=True):
            intervals[row] = int(interval)
    return intervals

"""Reward-gated curriculum over difficulty intervals, composed with a source-weighting rule (stage-2 strategies 3, 4).

Each curriculum source (LogicIF by complexity score; graph tasks by size) is split by ``split_by_difficulty`` into
an easiest initial interval plus N equal-count intervals. Training starts on the initial interval only. The next
interval unlocks when the source's own reward EMA reaches ``threshold``, after at least ``min_updates_per_level``
updates with records of that source at the current level, checked every ``check_every`` updates, at most one
unlock per update. ``gate_on="source"`` (the default, as in the reference) averages all the source's records;
``gate_on="newest"`` averages only the newest unlocked interval's records and restarts that EMA at each unlock.
The simulation (docs/samplers.md) shows why the option exists: with the whole source, the large easy initial
interval keeps the EMA above the threshold, so unlocks come every ``min_updates_per_level`` updates regardless of
how the harder intervals go.

Within a source, unlocked interval i is drawn with weight ``rows_i * interval_decay**(level-i)``:
``interval_decay=1`` draws uniformly over the unlocked rows (strategy 3), ``0.5`` halves each older interval's
weight (strategy 4, "decay"). Sources themselves are weighted by a rule (``fixed`` or ``ema``, see
``samplers.source_weighting``), so "EMA over sources + curriculum within LogicIF" is ``source_weighting="ema"``.

Deviations from the reference ``RewardCurriculumSampler`` (RLIF ``verl_extensions/multi_source_sampler.py``):
- Gating is per source. The reference averages the whole batch's rewards, so IF rewards could unlock LogicIF.
- Several sources may be curriculum-gated, each with its own level (the reference has one ``complexity_source``).
- Recency weights are exact probabilities; the reference approximates ``rows * decay**age`` by repeating each
  interval's indices ``max(1, int(10 * n_unlocked * normalised_weight))`` times.
- No ``final_complexity_percentile``: filter the data instead of hiding rows inside the sampler.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record, SamplingPolicy
from samplers.draw_counts import DrawCounts
from samplers.drawing import WeightedChoice, restore_rng, rng_state
from samplers.intervals import check_interval_shape, matches_sources, split_by_difficulty
from samplers.records import mean_by_source, rewards_by_pool
from samplers.registry import register_policy
from samplers.source_weighting import build_source_rule


class IntervalGate:
    """One curriculum source's unlock state: its intervals, the newest unlocked one, and its own reward EMA.

    Args:
        intervals: the source's non-empty intervals, easiest first.
        rows: rows per interval (same order).
    """

    def __init__(self, intervals: Sequence[int], rows: Sequence[int]) -> None:
        self.intervals = list(intervals)
        self.rows = list(rows)
        self.level = 0
        """Index into ``intervals`` of the newest unlocked interval."""
        self.ema: float | None = None
        self.updates_at_level = 0
        self.unlock_steps: list[int] = []
        """Update number at which each unlock happened (for the simulation's "steps to unlock")."""

    @property
    def newest(self) -> int:
        """The newest unlocked interval."""
        return self.intervals[self.level]

    def interval_choice(self, decay: float) -> WeightedChoice[int]:
        """The distribution over unlocked intervals: ``rows_i * decay**(level - i)``."""
        unlocked = range(self.level + 1)
        return WeightedChoice(
            [self.intervals[i] for i in unlocked], [self.rows[i] * decay ** (self.level - i) for i in unlocked]
        )

    def state(self) -> dict[str, Any]:
        """The gate's learned state as plain values."""
        return {
            "level": self.level,
            "ema": self.ema,
            "updates_at_level": self.updates_at_level,
            "unlock_steps": list(self.unlock_steps),
        }

    def load(self, state: Mapping[str, Any]) -> None:
        """Restore ``state()``.

        Raises:
            ValueError: the saved level does not exist in the current intervals.
        """
        level = int(state["level"])
        if not 0 <= level < len(self.intervals):
            raise ValueError(f"saved curriculum level {level} is outside the {len(self.intervals)} intervals")
        self.level = level
        self.ema = None if state["ema"] is None else float(state["ema"])
        self.updates_at_level = int(state["updates_at_level"])
        self.unlock_steps = [int(step) for step in state["unlock_steps"]]


GATE_ON = ("source", "newest")
"""Which records feed a source's gating EMA."""


@register_policy("reward_curriculum")
class RewardCurriculumPolicy(SamplingPolicy):
    """Reward-gated curriculum within each curriculum source, sources weighted by a fixed or EMA rule.

    Args:
        seed: seed of the policy's RNG.
        curriculum_sources: sources to gate: exact names, or prefixes ending in ``/`` (``graph/``). Other sources
            are always interval 0.
        initial_fraction: share of a curriculum source's rows in the initial interval, in [0, 1).
        num_intervals: equal-count intervals after the initial one.
        threshold: a source's reward EMA must reach this to unlock its next interval.
        gate_alpha: EMA step of the gating reward, in (0, 1].
        min_updates_per_level: updates with records of the source at its current level before it may unlock.
        check_every: test the gates every this many updates (counted from the start).
        interval_decay: weight factor per level of age for older unlocked intervals, in (0, 1]; 1 means none.
        gate_on: ``source`` (all the source's records) or ``newest`` (only the newest unlocked interval's records).
        source_weighting: ``fixed`` or ``ema``: how sources are weighted against each other.
        source_params: parameters of that rule (``weights``; for ``ema`` also ``alpha``, ``temperature``, ``floor``).

    Raises:
        ValueError: a parameter out of range or an unknown source weighting.
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        curriculum_sources: Sequence[str] = ("logicif",),
        initial_fraction: float = 0.3,
        num_intervals: int = 10,
        threshold: float = 0.5,
        gate_alpha: float = 0.1,
        min_updates_per_level: int = 10,
        check_every: int = 3,
        interval_decay: float = 1.0,
        gate_on: str = "source",
        source_weighting: str = "fixed",
        source_params: Mapping[str, Any] | None = None,
    ) -> None:
        check_interval_shape(initial_fraction, num_intervals)
        if isinstance(curriculum_sources, str) or not curriculum_sources:
            raise ValueError(f"curriculum_sources must be a non-empty list of names, got {curriculum_sources!r}")
        if not 0.0 < gate_alpha <= 1.0:
            raise ValueError(f"gate_alpha must be in (0, 1], got {gate_alpha}")
        if min_updates_per_level < 1:
            raise ValueError(f"min_updates_per_level must be >= 1, got {min_updates_per_level}")
        if check_every < 1:
            raise ValueError(f"check_every must be >= 1, got {check_every}")
        if not 0.0 < interval_decay <= 1.0:
            raise ValueError(f"interval_decay must be in (0, 1], got {interval_decay}")
        if gate_on not in GATE_ON:
            raise ValueError(f"gate_on must be one of {GATE_ON}, got {gate_on!r}")
        self.curriculum_sources = [str(source) for source in curriculum_sources]
        self.initial_fraction = float(initial_fraction)
        self.num_intervals = int(num_intervals)
        self.threshold = float(threshold)
        self.gate_alpha = float(gate_alpha)
        self.min_updates_per_level = int(min_updates_per_level)
        self.check_every = int(check_every)
        self.interval_decay = float(interval_decay)
        self.gate_on = gate_on
        self._rule = build_source_rule(source_weighting, source_params)
        self._rng = random.Random(seed)
        self._updates = 0
        self._gates: dict[str, IntervalGate] = {}
        self._draws = DrawCounts([])
        self._source_choice: WeightedChoice[str] | None = None
        self._interval_choice: dict[str, WeightedChoice[int]] = {}

    def assign_intervals(self, source: str, difficulties: Sequence[float]) -> list[int]:
        """Split a curriculum source by difficulty (see ``split_by_difficulty``); other sources are all interval 0."""
        if not matches_sources(source, self.curriculum_sources):
            return [0] * len(difficulties)
        return split_by_difficulty(source, difficulties, self.initial_fraction, self.num_intervals)

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        """Build one gate per curriculum source and start the source rule.

        Raises:
            ValueError: no pools, a non-curriculum source with an interval other than 0, or source weights that do
                not match the sources.
        """
        if not pool_sizes:
            raise ValueError("reward_curriculum policy needs at least one non-empty pool")
        by_source: dict[str, list[tuple[int, int]]] = {}
        for (source, interval), rows in sorted(pool_sizes.items()):
            by_source.setdefault(source, []).append((interval, int(rows)))
        self._gates = {}
        for source, intervals in by_source.items():
            if matches_sources(source, self.curriculum_sources):
                self._gates[source] = IntervalGate([i for i, _ in intervals], [n for _, n in intervals])
            elif [interval for interval, _ in intervals] != [0]:
                raise ValueError(
                    f"source {source!r} is not curriculum-gated, so it must be interval 0 only: {intervals}"
                )
        self._rule.start(sorted(by_source))
        self._draws = DrawCounts(pool_sizes)
        self._updates = 0
        self._interval_choice = {
            source: gate.interval_choice(self.interval_decay) for source, gate in self._gates.items()
        }
        self._refresh_sources()

    def _refresh_sources(self) -> None:
        weights = self._rule.weights()
        self._source_choice = WeightedChoice(list(weights), list(weights.values()))

    def draw(self) -> Pool:
        if self._source_choice is None:
            raise ValueError("reward_curriculum policy: set_pools must come before draw")
        source = self._source_choice.draw(self._rng)
        choice = self._interval_choice.get(source)
        pool = (source, 0 if choice is None else choice.draw(self._rng))
        self._draws.add(pool)
        return pool

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        grouped, ignored = rewards_by_pool(records, self._draws.counts)
        means = mean_by_source(grouped)
        self._updates += 1
        self._rule.observe(means)
        self._refresh_sources()
        check = self._updates % self.check_every == 0
        for source, gate in self._gates.items():
            if self.gate_on == "source":
                mean = means.get(source)
            else:
                newest = grouped.get((source, gate.newest))
                mean = sum(newest) / len(newest) if newest else None
            if mean is not None:
                gate.ema = mean if gate.ema is None else gate.ema + self.gate_alpha * (mean - gate.ema)
                gate.updates_at_level += 1
            if (
                check
                and gate.level + 1 < len(gate.intervals)
                and gate.updates_at_level >= self.min_updates_per_level
                and gate.ema is not None
                and gate.ema >= self.threshold
            ):
                gate.level += 1
                gate.updates_at_level = 0
                if self.gate_on == "newest":
                    gate.ema = None
                gate.unlock_steps.append(self._updates)
                self._interval_choice[source] = gate.interval_choice(self.interval_decay)
        return self._metrics(ignored)

    def _metrics(self, ignored: int) -> dict[str, float]:
        metrics = self._rule.metrics()
        for source, gate in self._gates.items():
            metrics[f"sampler/level/{source}"] = float(gate.newest)
            if gate.ema is not None:
                metrics[f"sampler/gate_ema/{source}"] = gate.ema
            shares = self._interval_choice[source].probabilities()
            for interval in gate.intervals:
                metrics[f"sampler/interval_weight/{source}/{interval}"] = shares.get(interval, 0.0)
        metrics.update(self._draws.metrics())
        metrics["sampler/ignored_records"] = float(ignored)
        return metrics

    def unlock_steps(self) -> dict[str, list[int]]:
        """Update number of each unlock so far, per curriculum source (for analysis and the simulation)."""
        return {source: list(gate.unlock_steps) for source, gate in self._gates.items()}

    def state_dict(self) -> dict[str, Any]:
        return {
            "rng": rng_state(self._rng),
            "draws": self._draws.state(),
            "updates": self._updates,
            "rule": self._rule.state_dict(),
            "gates": {source: gate.state() for source, gate in self._gates.items()},
        }

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore a saved state onto the same pools.

        Raises:
            ValueError: the saved pools, gates or levels do not fit the current data.
        """
        if set(state["gates"]) != set(self._gates):
            raise ValueError(f"saved curriculum gates {sorted(state['gates'])} differ from {sorted(self._gates)}")
        restore_rng(self._rng, state["rng"])
        self._draws.load(state["draws"])
        self._updates = int(state["updates"])
        self._rule.load_state_dict(state["rule"])
        for source, gate in self._gates.items():
            gate.load(state["gates"][source])
            self._interval_choice[source] = gate.interval_choice(self.interval_decay)
        self._refresh_sources()

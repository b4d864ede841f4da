"""Source-mix policies: pick a source group by a weighting rule, ignore difficulty (stage-2 strategies 1 and 2).

``fixed_ratio`` draws groups in a fixed ratio (1:1 by default); ``ema_reweight`` moves mass toward the group whose
reward EMA is lower, with a floor so no group starves. A group is a family of ``data_source`` values
(``samplers.source_groups``; without ``groups`` each source is its own group); within a group a source is drawn in
proportion to its rows. Both put every row in interval 0.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record, SamplingPolicy
from samplers.draw_counts import DrawCounts
from samplers.drawing import WeightedChoice, restore_rng, rng_state
from samplers.records import rewards_by_pool, sums_by_source
from samplers.source_groups import SourceGroups, check_groups
from samplers.source_weighting import EmaSourceWeights, FixedSourceWeights, SourceRule, observe_signal


class SourceMixPolicy(SamplingPolicy):
    """Draws a group with the weights of ``rule``, then a source of it by rows; every pool is ``(source, 0)``.

    Args:
        rule: the group-weighting rule.
        seed: seed of the policy's RNG.
        groups: group name -> member sources (exact names or ``prefix/``); None: each source is a group.
    """

    def __init__(self, rule: SourceRule, seed: int = 0, groups: Mapping[str, Sequence[str]] | None = None) -> None:
        super().__init__()
        self._rule = rule
        self._groups_param = check_groups(groups)
        self._rng = random.Random(seed)
        self._draws = DrawCounts([])
        self._groups: SourceGroups | None = None
        self._choice: WeightedChoice[str] | None = None

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        """Take the sources; every pool must be interval 0, since this policy assigns no intervals.

        Raises:
            ValueError: no pools, a pool with interval other than 0, groups that do not fit the sources, or
                weights that do not match the groups.
        """
        if not pool_sizes:
            raise ValueError(f"{self.name} policy needs at least one non-empty pool")
        bucketed = sorted(pool for pool in pool_sizes if pool[1] != 0)
        if bucketed:
            raise ValueError(f"{self.name} policy ignores difficulty, so every pool must be interval 0; got {bucketed}")
        self._groups = SourceGroups(self._groups_param, {source: rows for (source, _), rows in pool_sizes.items()})
        self._rule.start(self._groups.names)
        self._draws = DrawCounts(pool_sizes)
        self._refresh()

    def _refresh(self) -> None:
        weights = self._rule.weights()
        self._choice = WeightedChoice(list(weights), list(weights.values()))

    def draw(self) -> Pool:
        if self._choice is None or self._groups is None:
            raise ValueError(f"{self.name} policy: set_pools must come before draw")
        group = self._choice.draw(self._rng)
        members = self._groups.choice(group)
        source = members.items[0] if len(members.items) == 1 else members.draw(self._rng)
        pool = (source, 0)
        self._draws.add(pool)
        return pool

    def probabilities(self) -> dict[Pool, float]:
        assert self._groups is not None
        weights = self._rule.weights()
        return {
            (source, 0): weights[group] * share
            for group in self._groups.names
            for source, share in self._groups.shares(group).items()
        }

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        assert self._groups is not None
        grouped, ignored = rewards_by_pool(records, self._draws.counts)
        observe_signal(self._rule, self._groups, records, self._draws.counts, sums_by_source(grouped))
        self._refresh()
        metrics = self._rule.metrics()
        metrics.update(self._draws.metrics())
        metrics["sampler/ignored_records"] = float(ignored)
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {"rng": rng_state(self._rng), "draws": self._draws.state(), "rule": self._rule.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any], changed: frozenset[str] = frozenset()) -> None:
        restore_rng(self._rng, state["rng"])
        self._draws.load(state["draws"], changed)
        self._rule.load_state_dict(state["rule"])
        self._refresh()


class FixedRatioPolicy(SourceMixPolicy):
    """Stage-2 strategy 1: source groups in a fixed ratio.

    Args:
        seed: seed of the policy's RNG.
        weights: relative weight per group; None (the default) is 1:1:...; otherwise it must name every group.
        groups: group name -> member sources; None makes each ``data_source`` its own group.
    """

    name = "fixed_ratio"

    def __init__(
        self,
        *,
        seed: int = 0,
        weights: Mapping[str, float] | None = None,
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        super().__init__(FixedSourceWeights(weights), seed, groups)


class EmaReweightPolicy(SourceMixPolicy):
    """Stage-2 strategy 2: more prompts from the group with the lower reward EMA.

    Args:
        seed: seed of the policy's RNG.
        weights: prior weight per group; None is equal priors.
        alpha: EMA step in (0, 1].
        temperature: softmax temperature over negative EMAs (> 0).
        floor: least probability per group, in [0, 1/n].
        signal: what the EMA averages, ``success`` or ``reward`` (``EmaSourceWeights``).
        groups: group name -> member sources; None makes each ``data_source`` its own group.
    """

    name = "ema_reweight"

    def __init__(
        self,
        *,
        seed: int = 0,
        weights: Mapping[str, float] | None = None,
        alpha: float = 0.1,
        temperature: float = 0.3,
        floor: float = 0.1,
        signal: str = "success",
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        rule = EmaSourceWeights(weights, alpha=alpha, temperature=temperature, floor=floor, signal=signal)
        super().__init__(rule, seed, groups)

"""Source-mix policies: pick a source by a weighting rule, ignore difficulty (stage-2 strategies 1 and 2).

``fixed_ratio`` draws sources in a fixed ratio (1:1 by default); ``ema_reweight`` moves mass toward the source
whose reward EMA is lower, with a floor so no source starves. Both put every row in interval 0.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record, SamplingPolicy
from samplers.draw_counts import DrawCounts
from samplers.drawing import WeightedChoice, restore_rng, rng_state
from samplers.records import mean_by_source, rewards_by_pool
from samplers.registry import register_policy
from samplers.source_weighting import EmaSourceWeights, FixedSourceWeights, SourceRule


class SourceMixPolicy(SamplingPolicy):
    """Draws a source with the weights of ``rule``; every pool is ``(source, 0)``.

    Args:
        rule: the source-weighting rule.
        seed: seed of the policy's RNG.
    """

    def __init__(self, rule: SourceRule, seed: int = 0) -> None:
        self._rule = rule
        self._rng = random.Random(seed)
        self._draws = DrawCounts([])
        self._choice: WeightedChoice[str] | None = None

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        """Take the sources; every pool must be interval 0, since this policy assigns no intervals.

        Raises:
            ValueError: no pools, a pool with interval other than 0, or weights that do not match the sources.
        """
        if not pool_sizes:
            raise ValueError(f"{self.name} policy needs at least one non-empty pool")
        bucketed = sorted(pool for pool in pool_sizes if pool[1] != 0)
        if bucketed:
            raise ValueError(f"{self.name} policy ignores difficulty, so every pool must be interval 0; got {bucketed}")
        self._rule.start(sorted(source for source, _ in pool_sizes))
        self._draws = DrawCounts(pool_sizes)
        self._refresh()

    def _refresh(self) -> None:
        weights = self._rule.weights()
        self._choice = WeightedChoice(list(weights), list(weights.values()))

    def draw(self) -> Pool:
        if self._choice is None:
            raise ValueError(f"{self.name} policy: set_pools must come before draw")
        pool = (self._choice.draw(self._rng), 0)
        self._draws.add(pool)
        return pool

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        grouped, ignored = rewards_by_pool(records, self._draws.counts)
        self._rule.observe(mean_by_source(grouped))
        self._refresh()
        metrics = self._rule.metrics()
        metrics.update(self._draws.metrics())
        metrics["sampler/ignored_records"] = float(ignored)
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {"rng": rng_state(self._rng), "draws": self._draws.state(), "rule": self._rule.state_dict()}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        restore_rng(self._rng, state["rng"])
        self._draws.load(state["draws"])
        self._rule.load_state_dict(state["rule"])
        self._refresh()


@register_policy("fixed_ratio")
class FixedRatioPolicy(SourceMixPolicy):
    """Stage-2 strategy 1: sources in a fixed ratio.

    Args:
        seed: seed of the policy's RNG.
        weights: relative weight per source; None (the default) is 1:1:...; otherwise it must name every source.
    """

    def __init__(self, *, seed: int = 0, weights: Mapping[str, float] | None = None) -> None:
        super().__init__(FixedSourceWeights(weights), seed)


@register_policy("ema_reweight")
class EmaReweightPolicy(SourceMixPolicy):
    """Stage-2 strategy 2: more prompts from the source with the lower reward EMA.

    Args:
        seed: seed of the policy's RNG.
        weights: prior weight per source; None is equal priors.
        alpha: EMA step in (0, 1].
        temperature: softmax temperature over negative EMAs (> 0).
        floor: least probability per source, in [0, 1/n].
    """

    def __init__(
        self,
        *,
        seed: int = 0,
        weights: Mapping[str, float] | None = None,
        alpha: float = 0.1,
        temperature: float = 0.3,
        floor: float = 0.1,
    ) -> None:
        super().__init__(EmaSourceWeights(weights, alpha=alpha, temperature=temperature, floor=floor), seed)

"""Rules that set each source's share of the prompts: a fixed ratio, or EMA reweighting toward weaker sources.

A rule is separate from the policies so that the same rule can weight sources in a plain source mix and in the
reward-gated curriculum (stage 2's "EMA over sources + curriculum within LogicIF" runs). A rule sees the mean
reward of each source once per step and answers with normalised weights.

Deviations from the reference ``MultiSourceSampler`` (RLIF ``verl_extensions/multi_source_sampler.py``): weights
are recomputed every step (the reference every ``update_frequency``=5 batches; the EMA already smooths), and the
anti-starvation bound is a probability ``floor`` per source (``w = floor + (1 - n*floor) * softmax``) instead of a
max/min ratio cap, because a floor states directly what "no source starves" means for any number of sources.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Container, Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record
from samplers.drawing import normalized
from samplers.source_groups import SourceGroups

SIGNALS = ("reward", "success")
"""What a rule compares between groups: each response's scalar reward, or its success indicator."""


class SourceRule(ABC):
    """Turns per-source mean rewards into per-source sampling weights."""

    kind: str = ""
    signal: str = "reward"
    """Which per-response value the rule's means are taken over (``SIGNALS``); a fixed ratio reads none."""
    fallback_records: int = 0
    """Responses of the last step that had no success indicator and counted their reward instead."""

    @abstractmethod
    def start(self, sources: Sequence[str]) -> None:
        """Fix the set of sources (sorted by the caller) and the initial weights.

        Raises:
            ValueError: the configured weights do not match ``sources``, or the rule cannot serve this many sources.
        """

    @abstractmethod
    def weights(self) -> dict[str, float]:
        """Current weights per source, summing to one."""

    @abstractmethod
    def observe(self, mean_rewards: Mapping[str, float]) -> None:
        """Learn from one step's mean reward per source (sources with no records this step are absent)."""

    @abstractmethod
    def metrics(self) -> dict[str, float]:
        """``sampler/...`` metrics of the rule's current state."""

    @abstractmethod
    def state_dict(self) -> dict[str, Any]:
        """The rule's learned state as plain Python values."""

    @abstractmethod
    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned."""


def _prior(weights: Mapping[str, float] | None, sources: Sequence[str]) -> dict[str, float]:
    """The configured weights for exactly ``sources``, normalised; equal weights when none were configured."""
    if weights is None:
        return dict.fromkeys(sources, 1.0 / len(sources))
    missing = sorted(set(sources) - set(weights))
    unknown = sorted(set(weights) - set(sources))
    if missing or unknown:
        raise ValueError(
            f"weights must name exactly the source groups {list(sources)}: missing {missing}, unknown {unknown}"
        )
    return normalized({source: float(weights[source]) for source in sources})


class FixedSourceWeights(SourceRule):
    """Draws sources in a fixed ratio (stage-2 strategy 1 is 1:1).

    Args:
        weights: relative weight per source (need not sum to one); None gives every source the same weight.
    """

    kind = "fixed"

    def __init__(self, weights: Mapping[str, float] | None = None) -> None:
        self._configured = None if weights is None else dict(weights)
        self._weights: dict[str, float] = {}

    def start(self, sources: Sequence[str]) -> None:
        self._weights = _prior(self._configured, sources)

    def weights(self) -> dict[str, float]:
        return dict(self._weights)

    def observe(self, mean_rewards: Mapping[str, float]) -> None:
        """A fixed ratio ignores rewards."""

    def metrics(self) -> dict[str, float]:
        return {f"sampler/weight/{source}": weight for source, weight in self._weights.items()}

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        """Nothing is learned, so nothing is restored."""


class EmaSourceWeights(SourceRule):
    """Draws more from the source whose reward EMA is lower (stage-2 strategy 2).

    Each source's EMA starts at its first observed mean (of the reward or the success indicator, by ``signal``).
    Until every source has one, the prior weights hold (as in the reference, which waits for all sources). Then
    ``w_s = floor + (1 - n*floor) * softmax_s(log(prior_s) - ema_s / temperature)``.

    Args:
        weights: prior weight per source; None gives every source the same prior.
        alpha: EMA step in (0, 1]; higher reacts faster.
        temperature: softmax temperature > 0; lower moves more mass per unit of reward gap.
        floor: least probability of every source, in [0, 1/n] for n sources.
        signal: ``success`` (the default) compares groups on each response's success indicator (the reward's
            ``acc``: every instruction followed for IF, the exact answer for LogicIF), ``reward`` on the scalar
            reward. Rewards of different families sit on different scales (IF's fraction of instructions followed
            against LogicIF's all-or-nothing), so a reward EMA gap is partly a scale gap; success means the same
            in every family. A response without a success indicator counts its reward (``sampler/signal_fallback``
            says how many did).

    Raises:
        ValueError: a parameter out of range.
    """

    kind = "ema"

    def __init__(
        self,
        weights: Mapping[str, float] | None = None,
        alpha: float = 0.1,
        temperature: float = 0.3,
        floor: float = 0.1,
        signal: str = "success",
    ) -> None:
        if signal not in SIGNALS:
            raise ValueError(f"signal must be one of {SIGNALS}, got {signal!r}")
        if not 0.0 < alpha <= 1.0:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if not 0.0 <= floor < 1.0:
            raise ValueError(f"floor must be in [0, 1), got {floor}")
        self._configured = None if weights is None else dict(weights)
        self.alpha = float(alpha)
        self.temperature = float(temperature)
        self.floor = float(floor)
        self.signal = signal
        self._prior: dict[str, float] = {}
        self._ema: dict[str, float] = {}
        self._weights: dict[str, float] = {}

    def start(self, sources: Sequence[str]) -> None:
        if self.floor * len(sources) > 1.0:
            raise ValueError(f"floor {self.floor} times {len(sources)} sources exceeds 1")
        self._prior = _prior(self._configured, sources)
        self._ema = {}
        self._weights = dict(self._prior)

    def weights(self) -> dict[str, float]:
        return dict(self._weights)

    def observe(self, mean_rewards: Mapping[str, float]) -> None:
        for source, reward in mean_rewards.items():
            if source not in self._prior:
                continue
            previous = self._ema.get(source)
            self._ema[source] = reward if previous is None else previous + self.alpha * (reward - previous)
        self._weights = self._compute_weights()

    def _compute_weights(self) -> dict[str, float]:
        if len(self._ema) < len(self._prior):
            return dict(self._prior)
        logits = {
            source: (math.log(prior) if prior > 0 else -math.inf) - self._ema[source] / self.temperature
            for source, prior in self._prior.items()
        }
        top = max(logits.values())
        exps = {source: math.exp(logit - top) for source, logit in logits.items()}
        total = sum(exps.values())
        spread = 1.0 - self.floor * len(exps)
        return {source: self.floor + spread * value / total for source, value in exps.items()}

    def metrics(self) -> dict[str, float]:
        metrics = {f"sampler/weight/{source}": weight for source, weight in self._weights.items()}
        metrics.update({f"sampler/ema/{source}": ema for source, ema in self._ema.items()})
        if self.signal == "success":
            metrics["sampler/signal_fallback"] = float(self.fallback_records)
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {"ema": dict(self._ema)}

    def load_state_dict(self, state: Mapping[str, Any]) -> None:
        unknown = sorted(set(state["ema"]) - set(self._prior))
        if unknown:
            raise ValueError(f"saved EMA names sources {unknown} that are not in the data {sorted(self._prior)}")
        self._ema = {source: float(value) for source, value in state["ema"].items()}
        self._weights = self._compute_weights()


def observe_signal(
    rule: SourceRule,
    groups: SourceGroups,
    records: Sequence[Record],
    pools: Container[Pool],
    reward_sums: Mapping[str, tuple[float, int]],
) -> None:
    """Feed ``rule`` one step's mean per group of the value it compares (``rule.signal``).

    Args:
        rule: the group-weighting rule.
        groups: the resolved source groups.
        records: the step's records (success indicators are read from them).
        pools: the pools the policy knows; records of other pools are left out, as for rewards.
        reward_sums: per-source (sum, count) of the step's finite rewards (what ``reward`` compares).
    """
    if rule.signal == "reward":
        rule.observe(groups.means(reward_sums))
        return
    sums: dict[str, tuple[float, int]] = {}
    fallback = 0
    for record in records:
        if (record.source, record.interval) not in pools:
            continue
        success = getattr(record, "success", None)
        if success is None:
            success, fallback = record.reward, fallback + 1
        value = float(success)
        if not math.isfinite(value):
            continue
        total, count = sums.get(record.source, (0.0, 0))
        sums[record.source] = (total + value, count + 1)
    rule.fallback_records = fallback
    rule.observe(groups.means(sums))


SOURCE_RULES: dict[str, type[SourceRule]] = {"fixed": FixedSourceWeights, "ema": EmaSourceWeights}


def build_source_rule(kind: str, params: Mapping[str, Any] | None = None) -> SourceRule:
    """Construct the source-weighting rule ``kind`` (``fixed`` or ``ema``) with ``params``.

    Raises:
        ValueError: unknown kind or parameters the rule does not take.
    """
    if kind not in SOURCE_RULES:
        raise ValueError(f"unknown source weighting {kind!r}; known: {sorted(SOURCE_RULES)}")
    try:
        return SOURCE_RULES[kind](**dict(params or {}))
    except TypeError as err:
        raise ValueError(f"source weighting {kind!r}: bad parameters {dict(params or {})}: {err}") from err

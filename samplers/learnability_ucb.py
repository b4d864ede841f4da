"""Learnability bandit: draw pools whose GRPO advantages are large, plus a UCB bonus for rarely seen pools.

The idea is DUMP's (Wang et al. 2025, "Automated Distribution-Level Curriculum Learning for RL-based LLM
Post-training", arXiv 2504.09710): the mean absolute advantage of a distribution measures how much the policy can
still learn from it. A pool where every response of a prompt gets the same reward (all solved or all failed) gives
zero advantage, and thus no gradient, so its learnability is zero. Each pool's score is

    mean |A| over its recent responses + exploration * sqrt(2 * ln(N + 1) / (n + 1))

with n the responses seen from the pool and N those seen from all pools, and pools are drawn with probability
softmax(score / temperature). These are DUMP's formula and defaults (window 300, exploration 1, temperature 0.1).
Deviation: DUMP's window is the last 300 responses; here it is the last whole steps that hold at least ``window``
responses of the pool, so a step is summarised by one (sum, count) pair instead of one float per response (the
state stays small and an update stays well under a millisecond). With 4096 responses a step, both windows hold
about one step.

Advantages are recomputed here from ``Record.group`` the way verl's GRPO does: (r - group mean) / (group std + 1e-6)
with the unbiased std, or r - mean when ``normalize_by_std`` is false (Dr. GRPO). Deviation: a group of one
response (or a record without a group id) is skipped, since it has no contrast; verl would give it advantage r.

With ``groups`` (``samplers.source_groups``), each source group gets a stated share of the prompts
(``group_weights``, 1:1 by default) and the bandit runs within each group: its pools compete by softmax, and the
bonus counts only the group's responses. Without ``groups`` every pool competes with every other, as in DUMP, so a
family's share follows how many pools it has (LogicIF's difficulty intervals against IF's one pool) rather than a
ratio anyone chose.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from samplers.base import Pool, Record, SamplingPolicy
from samplers.diagnostics import check_patterns_match
from samplers.draw_counts import DrawCounts
from samplers.drawing import WeightedChoice, restore_rng, rng_state
from samplers.intervals import check_interval_shape, matches_sources, split_by_difficulty
from samplers.source_groups import SourceGroups, check_groups
from samplers.source_weighting import FixedSourceWeights

GRPO_EPSILON = 1e-6
"""verl's ``compute_grpo_outcome_advantage`` default epsilon in the std denominator."""


def grpo_abs_advantages(records: Sequence[Record], normalize_by_std: bool = True) -> dict[Pool, tuple[float, int]]:
    """Sum and count of |GRPO advantage| over each pool's responses in one step.

    Vectorised with numpy over all groups at once: a Python loop per group over a step's 512 prompts would spend
    most of the step's overhead budget (docs/samplers.md, "Overhead").

    Args:
        records: one step's scored responses; responses to one prompt share ``group`` (and so share a pool; the
            group's first record names it).
        normalize_by_std: divide by the group's (unbiased) std plus 1e-6, as GRPO does; False gives r - mean.

    Returns:
        Per pool: (sum of |advantage|, number of responses). Groups of one response, records with an empty group
        id and groups with a non-finite reward are skipped.
    """
    group_index: dict[str, int] = {}
    pool_index: dict[Pool, int] = {}
    pool_of_group: list[int] = []
    member_group: list[int] = []
    rewards: list[float] = []
    for record in records:
        if not record.group:
            continue
        index = group_index.get(record.group)
        if index is None:
            index = group_index[record.group] = len(pool_of_group)
            pool_of_group.append(pool_index.setdefault((record.source, record.interval), len(pool_index)))
        member_group.append(index)
        rewards.append(record.reward)
    if not rewards:
        return {}
    groups = len(pool_of_group)
    member = np.asarray(member_group, dtype=np.intp)
    reward = np.asarray(rewards, dtype=np.float64)
    size = np.bincount(member, minlength=groups).astype(np.float64)
    with np.errstate(invalid="ignore"):
        deviation = reward - (np.bincount(member, reward, groups) / size)[member]
        abs_sum = np.bincount(member, np.abs(deviation), groups)
        if normalize_by_std:
            squares = np.bincount(member, deviation * deviation, groups)
            abs_sum = abs_sum / (np.sqrt(squares / np.maximum(size - 1.0, 1.0)) + GRPO_EPSILON)
    kept = (size >= 2) & np.isfinite(abs_sum)
    group_pool = np.asarray(pool_of_group, dtype=np.intp)[kept]
    pool_sums = np.bincount(group_pool, abs_sum[kept], len(pool_index))
    pool_counts = np.bincount(group_pool, size[kept], len(pool_index))
    return {
        pool: (float(pool_sums[index]), int(pool_counts[index]))
        for pool, index in pool_index.items()
        if pool_counts[index] > 0
    }


class LearnabilityUcbPolicy(SamplingPolicy):
    """Draws (source, interval) pools by softmax over mean |advantage| plus a UCB exploration bonus.

    Args:
        seed: seed of the policy's RNG.
        difficulty_sources: sources split into difficulty intervals (exact names or ``prefix/``); others are one
            pool each.
        initial_fraction: share of a split source's rows in interval 0, in [0, 1) (0 leaves it empty).
        num_intervals: equal-count intervals after the initial one.
        exploration: weight of the UCB bonus (>= 0).
        temperature: softmax temperature over scores (> 0).
        window: least responses per pool in the sliding mean of |advantage| (>= 1); whole steps are kept.
        normalize_by_std: GRPO's std normalisation of advantages (False for Dr. GRPO).
        groups: group name -> member sources (exact names or ``prefix/``); None: one bandit over all pools.
        group_weights: share of prompts per group (relative; needs ``groups``); None is 1:1:...

    Raises:
        ValueError: a parameter out of range.
    """

    name = "learnability_ucb"

    def __init__(
        self,
        *,
        seed: int = 0,
        difficulty_sources: Sequence[str] = ("logicif",),
        initial_fraction: float = 0.0,
        num_intervals: int = 4,
        exploration: float = 1.0,
        temperature: float = 0.1,
        window: int = 300,
        normalize_by_std: bool = True,
        groups: Mapping[str, Sequence[str]] | None = None,
        group_weights: Mapping[str, float] | None = None,
    ) -> None:
        super().__init__()
        if group_weights is not None and groups is None:
            raise ValueError("group_weights needs groups (the source groups the weights are for)")
        check_interval_shape(initial_fraction, num_intervals)
        if isinstance(difficulty_sources, str):
            raise ValueError(f"difficulty_sources must be a list of names, got {difficulty_sources!r}")
        if not exploration >= 0.0:
            raise ValueError(f"exploration must be >= 0, got {exploration}")
        if not temperature > 0.0:
            raise ValueError(f"temperature must be > 0, got {temperature}")
        if window < 1:
            raise ValueError(f"window must be >= 1, got {window}")
        self.difficulty_sources = [str(source) for source in difficulty_sources]
        self.initial_fraction = float(initial_fraction)
        self.num_intervals = int(num_intervals)
        self.exploration = float(exploration)
        self.temperature = float(temperature)
        self.window = int(window)
        self.normalize_by_std = bool(normalize_by_std)
        self._groups_param = check_groups(groups)
        self._group_rule = FixedSourceWeights(group_weights)
        self._group_pools: dict[str, list[Pool]] = {}
        """Pools of each group (one group ``""`` holding every pool without ``groups``)."""
        self._group_share: dict[str, float] = {}
        self._rng = random.Random(seed)
        self._draws = DrawCounts([])
        self._recent: dict[Pool, list[list[float]]] = {}
        """Per pool, one [sum of |advantage|, responses] pair per recent step, oldest first."""
        self._seen: dict[Pool, int] = {}
        self._choice: WeightedChoice[Pool] | None = None

    def splits(self, source: str) -> bool:
        return matches_sources(source, self.difficulty_sources)

    def split(self, source: str, difficulties: Sequence[Any]) -> list[int]:
        """Split a difficulty source into intervals (see ``split_by_difficulty``)."""
        return split_by_difficulty(source, difficulties, self.initial_fraction, self.num_intervals)

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        if not pool_sizes:
            raise ValueError("learnability_ucb policy needs at least one non-empty pool")
        check_patterns_match("learnability_ucb difficulty_sources", self.difficulty_sources, [s for s, _ in pool_sizes])
        pools = sorted(pool_sizes)
        if self._groups_param is None:
            self._group_pools, self._group_share = {"": pools}, {"": 1.0}
        else:
            rows: dict[str, int] = {}
            for (source, _), size in pool_sizes.items():
                rows[source] = rows.get(source, 0) + int(size)
            groups = SourceGroups(self._groups_param, rows)
            self._group_rule.start(groups.names)
            self._group_share = self._group_rule.weights()
            self._group_pools = {name: [p for p in pools if groups.group_of[p[0]] == name] for name in groups.names}
        self._draws = DrawCounts(pools)
        self._recent = {pool: [] for pool in pools}
        self._seen = dict.fromkeys(pools, 0)
        self._refresh()

    def scores(self) -> dict[Pool, float]:
        """Each pool's UCB score: mean |advantage| in the window plus the exploration bonus (whose N counts the
        responses of the pool's group)."""
        scores: dict[Pool, float] = {}
        for pools in self._group_pools.values():
            total_log = 2.0 * math.log(sum(self._seen[pool] for pool in pools) + 1)
            for pool in pools:
                bonus = self.exploration * math.sqrt(total_log / (self._seen[pool] + 1))
                scores[pool] = self._learnability(pool) + bonus
        return scores

    def _learnability(self, pool: Pool) -> float:
        """Mean |advantage| over the pool's window (0 before any response, as in DUMP)."""
        count = sum(n for _, n in self._recent[pool])
        return sum(total for total, _ in self._recent[pool]) / count if count else 0.0

    def _refresh(self) -> WeightedChoice[Pool]:
        """Rebuild the draw distribution from the current scores and return it: within each group a softmax over
        its pools' scores, times the group's share."""
        scores = self.scores()
        weights: dict[Pool, float] = {}
        for group, pools in self._group_pools.items():
            top = max(scores[p] for p in pools)
            exps = [math.exp((scores[p] - top) / self.temperature) for p in pools]
            scale = 1.0 if len(self._group_pools) == 1 else self._group_share[group] / sum(exps)
            weights.update({pool: scale * value for pool, value in zip(pools, exps, strict=True)})
        pools = sorted(weights)
        self._choice = WeightedChoice(pools, [weights[p] for p in pools])
        return self._choice

    def draw(self) -> Pool:
        if self._choice is None:
            raise ValueError("learnability_ucb policy: set_pools must come before draw")
        pool = self._choice.draw(self._rng)
        self._draws.add(pool)
        return pool

    def probabilities(self) -> dict[Pool, float]:
        assert self._choice is not None
        return self._choice.probabilities()

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        ignored = 0
        for pool, (total, count) in grpo_abs_advantages(records, self.normalize_by_std).items():
            recent = self._recent.get(pool)
            if recent is None:
                ignored += count
                continue
            recent.append([total, count])
            held = sum(n for _, n in recent)
            while held - recent[0][1] >= self.window:
                held -= recent.pop(0)[1]
            self._seen[pool] += count
        shares = self._refresh().probabilities()
        metrics: dict[str, float] = {}
        for (source, interval), share in shares.items():
            metrics[f"sampler/pool_weight/{source}/{interval}"] = share
            metrics[f"sampler/weight/{source}"] = metrics.get(f"sampler/weight/{source}", 0.0) + share
        for source, interval in self._recent:
            if self._seen[(source, interval)]:
                metrics[f"sampler/abs_advantage/{source}/{interval}"] = self._learnability((source, interval))
        if len(self._group_pools) > 1:
            metrics.update({f"sampler/group_weight/{group}": share for group, share in self._group_share.items()})
        metrics.update(self._draws.metrics())
        metrics["sampler/ignored_records"] = float(ignored)
        return metrics

    def state_dict(self) -> dict[str, Any]:
        return {
            "rng": rng_state(self._rng),
            "draws": self._draws.state(),
            "recent": [
                [source, interval, [list(c) for c in chunks]] for (source, interval), chunks in self._recent.items()
            ],
            "seen": [[source, interval, n] for (source, interval), n in self._seen.items()],
        }

    def load_state_dict(self, state: Mapping[str, Any], changed: frozenset[str] = frozenset()) -> None:
        """Restore a saved state onto the same pools; pools of ``changed`` sources start unseen.

        Raises:
            ValueError: the saved pools of an unchanged source differ from the current ones.
        """
        self._draws.load(state["draws"], changed)
        recent = {(str(s), int(i)): [[float(t), int(n)] for t, n in chunks] for s, i, chunks in state["recent"]}
        seen = {(str(s), int(i)): int(n) for s, i, n in state["seen"]}
        kept = {pool for pool in self._recent if pool[0] not in changed}
        if {pool for pool in recent if pool[0] not in changed} != kept or {
            pool for pool in seen if pool[0] not in changed
        } != kept:
            raise ValueError(f"saved learnability state is for pools {sorted(recent)}, not {sorted(self._recent)}")
        restore_rng(self._rng, state["rng"])
        self._recent = {pool: recent[pool] if pool in kept else [] for pool in self._recent}
        self._seen = {pool: seen[pool] if pool in kept else 0 for pool in self._recent}
        self._refresh()

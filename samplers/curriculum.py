"""Reward-gated curriculum over difficulty intervals, composed with a source-weighting rule (stage-2 strategies 3, 4).

Each curriculum source (LogicIF by complexity score; graph tasks by size) is split into an easiest initial interval
plus N equal-count intervals; when its rows carry ``extra_info.task_id`` (LogicIF: one function, several test cases)
the cut keeps each function whole (``split_functions_by_difficulty``), so one function is never measured in two
intervals. Training starts on the initial interval only.

The gate reads the family's success indicator (``Record.success``, the reward's ``acc``), never the shaped reward:
with a format bonus of 0.5 a formatted (or truncated) wrong answer earns 0.5, which would turn a 0.5 threshold into a
timer. The next interval unlocks when, over the last ``gate_window`` updates since the last unlock, at least
``gate_min_responses`` responses give a one-sided lower confidence bound on the success rate strictly above
``threshold`` (``samplers.gate``: Wilson at the effective sample size of prompt-clustered responses, first-exposure
responses alone when there are enough of them), after at least ``min_updates_per_unlock`` updates, checked every
``check_every`` updates, at most one unlock per update. ``gate_statistic="ema"`` keeps the former point test (an EMA
of success strictly above the threshold), whose knife edge docs/samplers.md shows.

``gate_on="newest"`` (the default) tests only the newest unlocked interval's responses and restarts at each unlock,
so an interval opens when the model has learned the one before it. ``gate_on="source"`` (the reference's reading)
tests all the source's responses; the simulation (docs/samplers.md) shows that the large easy initial interval then
opens every interval on the ``min_updates_per_unlock`` timer however the harder intervals go.

A source's gate keeps ``unlocked``, the index of its newest unlocked interval (0: only the initial one). Within a
source, unlocked interval i is drawn with weight ``rows_i * interval_decay**(unlocked-i)``:
``interval_decay=1`` draws uniformly over the unlocked rows (strategy 3), ``0.5`` halves each older interval's
weight (strategy 4, "decay"). Sources themselves are weighted by a rule (``fixed`` or ``ema``, see
``samplers.source_weighting``), so "EMA over sources + curriculum within LogicIF" is ``source_weighting="ema"``.

Deviations from the reference ``RewardCurriculumSampler`` (RLIF ``verl_extensions/multi_source_sampler.py``):
- Gating is per source, on the newest interval by default, on success rather than reward, on a confidence bound
  rather than an EMA, and strictly above the threshold. The reference averages the whole batch's rewards (so IF
  rewards could unlock LogicIF) and compares an EMA with ``>=``.
- Several sources may be curriculum-gated, each with its own gate (the reference has one ``complexity_source``).
- Recency weights are exact probabilities; the reference approximates ``rows * decay**age`` by repeating each
  interval's indices ``max(1, int(10 * n_unlocked * normalised_weight))`` times.
- No ``final_complexity_percentile``: filter the data instead of hiding rows inside the sampler.
"""

from __future__ import annotations

import logging
import random
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from samplers.base import Pool, Record, SamplingPolicy
from samplers.diagnostics import check_patterns_match
from samplers.draw_counts import DrawCounts
from samplers.drawing import WeightedChoice, restore_rng, rng_state
from samplers.gate import GateEvidence, check_gate_params, evidence, load_window, tally_groups, window_state
from samplers.intervals import (
    check_interval_shape,
    matches_sources,
    split_by_difficulty,
    split_functions_by_difficulty,
)
from samplers.records import rewards_by_pool, sums_by_source
from samplers.source_groups import SourceGroups, check_groups
from samplers.source_weighting import build_source_rule, observe_signal

LOG = logging.getLogger("rlif.samplers")


class IntervalGate:
    """One curriculum source's unlock state: its intervals, the newest unlocked one, and its own reward EMA.

    Args:
        intervals: the source's non-empty intervals, easiest first.
        rows: rows per interval (same order).
    """

    def __init__(self, intervals: Sequence[int], rows: Sequence[int], window: int = 10) -> None:
        self.intervals = list(intervals)
        self.rows = list(rows)
        self.unlocked = 0
        """Index into ``intervals`` of the newest unlocked interval."""
        self.ema: float | None = None
        self.window: deque[list[list[Any]]] = deque(maxlen=window)
        """Per update with gated responses (newest last): ``[successes, responses, first]`` per prompt group."""
        self.updates_since_unlock = 0
        """Updates since the last unlock that fed responses to the gate."""
        self.unlock_steps: list[int] = []
        """Update number at which each unlock happened (for the simulation's "steps to unlock")."""
        self.unlock_evidence: list[list[float]] = []
        """``[update, interval opened, responses, mean success, bound]`` of each unlock."""

    @property
    def newest(self) -> int:
        """The newest unlocked interval."""
        return self.intervals[self.unlocked]

    def interval_choice(self, decay: float) -> WeightedChoice[int]:
        """The distribution over unlocked intervals: ``rows_i * decay**(unlocked - i)``."""
        indices = range(self.unlocked + 1)
        return WeightedChoice(
            [self.intervals[i] for i in indices], [self.rows[i] * decay ** (self.unlocked - i) for i in indices]
        )

    def state(self) -> dict[str, Any]:
        """The gate's learned state as plain values."""
        return {
            "unlocked": self.unlocked,
            "ema": self.ema,
            "window": window_state(self.window),
            "updates_since_unlock": self.updates_since_unlock,
            "unlock_steps": list(self.unlock_steps),
            "unlock_evidence": [list(entry) for entry in self.unlock_evidence],
        }

    def load(self, state: Mapping[str, Any], resplit: bool = False) -> None:
        """Restore ``state()``; with ``resplit`` (the source's data changed) keep only ``unlocked``, capped at the
        newest interval the new split has, and restart the EMA and the update count.

        States saved under the former keys ``level`` and ``updates_at_level`` load too; a state saved before the
        window existed loads with an empty window (the gate collects its evidence again).

        Raises:
            ValueError: the saved index does not exist in the current intervals (and ``resplit`` is off).
        """
        unlocked = int(state["unlocked"] if "unlocked" in state else state["level"])
        self.unlock_evidence = [[float(v) for v in entry] for entry in state.get("unlock_evidence", [])]
        self.window.clear()
        if resplit:
            self.unlocked = min(max(unlocked, 0), len(self.intervals) - 1)
            self.ema = None
            self.updates_since_unlock = 0
            self.unlock_steps = [int(step) for step in state["unlock_steps"]]
            return
        if not 0 <= unlocked < len(self.intervals):
            raise ValueError(
                f"saved newest unlocked interval index {unlocked} is outside the {len(self.intervals)} intervals"
            )
        self.unlocked = unlocked
        self.ema = None if state["ema"] is None else float(state["ema"])
        self.updates_since_unlock = int(
            state["updates_since_unlock"] if "updates_since_unlock" in state else state["updates_at_level"]
        )
        self.unlock_steps = [int(step) for step in state["unlock_steps"]]
        self.window.extend(load_window(state.get("window", [])))


GATE_ON = ("source", "newest")
"""Which records feed a source's gate."""

GATE_STATISTICS = ("bound", "ema")
"""What the gate tests: the lower confidence bound over a window (default), or the former success EMA."""


class RewardCurriculumPolicy(SamplingPolicy):
    """Reward-gated curriculum within each curriculum source, sources weighted by a fixed or EMA rule.

    Args:
        seed: seed of the policy's RNG.
        curriculum_sources: sources to gate: exact names, or prefixes ending in ``/`` (``graph/``). Other sources
            are always interval 0.
        initial_fraction: share of a curriculum source's rows in the initial interval, in [0, 1).
        num_intervals: equal-count intervals after the initial one.
        threshold: the gate's success statistic (the lower bound, or the EMA) must be strictly above this to unlock
            the next interval.
        gate_alpha: EMA step of the success EMA, in (0, 1] (``gate_statistic="ema"`` only).
        min_updates_per_unlock: updates with records of the source since its last unlock before it may unlock
            the next interval.
        gate_statistic: ``bound`` (a one-sided lower confidence bound over the window) or ``ema``.
        gate_window: updates (with gated responses) the bound looks back over.
        gate_min_responses: responses the window must hold before the bound may open the gate.
        gate_confidence: one-sided confidence level of the bound, in (0.5, 1).
        function_field: ``extra_info`` field whose rows are kept in one interval (``task_id``); rows without it
            (graph rows) are cut one by one; None cuts every source on rows.
        check_every: test the gates every this many updates (counted from the start).
        interval_decay: weight factor per newer unlocked interval for older unlocked intervals, in (0, 1]; 1 means
            none.
        gate_on: ``newest`` (only the newest unlocked interval's records, restarted at each unlock) or ``source``
            (all the source's records, the reference's reading).
        source_weighting: ``fixed`` or ``ema``: how source groups are weighted against each other.
        source_params: parameters of that rule (``weights``; for ``ema`` also ``alpha``, ``temperature``, ``floor``,
            ``signal``).
        groups: group name -> member sources (``samplers.source_groups``); None makes each source its own group.

    Raises:
        ValueError: a parameter out of range or an unknown source weighting.
    """

    name = "reward_curriculum"

    def __init__(
        self,
        *,
        seed: int = 0,
        curriculum_sources: Sequence[str] = ("logicif",),
        initial_fraction: float = 0.3,
        num_intervals: int = 10,
        threshold: float = 0.5,
        gate_alpha: float = 0.1,
        min_updates_per_unlock: int = 10,
        check_every: int = 3,
        interval_decay: float = 1.0,
        gate_on: str = "newest",
        gate_statistic: str = "bound",
        gate_window: int = 10,
        gate_min_responses: int = 200,
        gate_confidence: float = 0.95,
        function_field: str | None = "task_id",
        source_weighting: str = "fixed",
        source_params: Mapping[str, Any] | None = None,
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        super().__init__()
        check_interval_shape(initial_fraction, num_intervals)
        check_gate_params(
            {"gate_window": gate_window, "gate_min_responses": gate_min_responses, "gate_confidence": gate_confidence}
        )
        if gate_statistic not in GATE_STATISTICS:
            raise ValueError(f"gate_statistic must be one of {GATE_STATISTICS}, got {gate_statistic!r}")
        if isinstance(curriculum_sources, str) or not curriculum_sources:
            raise ValueError(f"curriculum_sources must be a non-empty list of names, got {curriculum_sources!r}")
        if not 0.0 < gate_alpha <= 1.0:
            raise ValueError(f"gate_alpha must be in (0, 1], got {gate_alpha}")
        if min_updates_per_unlock < 1:
            raise ValueError(f"min_updates_per_unlock must be >= 1, got {min_updates_per_unlock}")
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
        self.min_updates_per_unlock = int(min_updates_per_unlock)
        self.check_every = int(check_every)
        self.interval_decay = float(interval_decay)
        self.gate_on = gate_on
        self.gate_statistic = gate_statistic
        self.gate_window = int(gate_window)
        self.gate_min_responses = int(gate_min_responses)
        self.gate_confidence = float(gate_confidence)
        self.function_field = str(function_field) if function_field else None
        self._rule = build_source_rule(source_weighting, source_params)
        self._groups_param = check_groups(groups)
        self._groups: SourceGroups | None = None
        self._rng = random.Random(seed)
        self._updates = 0
        self._gates: dict[str, IntervalGate] = {}
        self._draws = DrawCounts([])
        self._source_choice: WeightedChoice[str] | None = None
        self._interval_choice: dict[str, WeightedChoice[int]] = {}

    def splits(self, source: str) -> bool:
        return matches_sources(source, self.curriculum_sources)

    def split(self, source: str, difficulties: Sequence[Any], functions: Sequence[Any] | None = None) -> list[int]:
        """Split a curriculum source by difficulty, keeping each function's rows together when ``functions`` is
        given (see ``split_functions_by_difficulty``)."""
        if functions is not None:
            return split_functions_by_difficulty(
                source, difficulties, functions, self.initial_fraction, self.num_intervals
            )
        return split_by_difficulty(source, difficulties, self.initial_fraction, self.num_intervals)

    def set_pools(self, pool_sizes: Mapping[Pool, int]) -> None:
        """Build one gate per curriculum source and start the source rule.

        Raises:
            ValueError: no pools, a curriculum source entry that matches no data_source, a non-curriculum source
                with an interval other than 0, groups that do not fit the sources, or weights that do not match the
                groups.
        """
        if not pool_sizes:
            raise ValueError(f"{self.name} policy needs at least one non-empty pool")
        sources = sorted({source for source, _ in pool_sizes})
        check_patterns_match(f"{self.name} curriculum_sources", self.curriculum_sources, sources)
        by_source: dict[str, list[tuple[int, int]]] = {}
        for (source, interval), rows in sorted(pool_sizes.items()):
            by_source.setdefault(source, []).append((interval, int(rows)))
        self._gates = {}
        for source, intervals in by_source.items():
            if matches_sources(source, self.curriculum_sources):
                self._gates[source] = IntervalGate(
                    [i for i, _ in intervals], [n for _, n in intervals], window=self.gate_window
                )
            elif [interval for interval, _ in intervals] != [0]:
                raise ValueError(
                    f"source {source!r} is not curriculum-gated, so it must be interval 0 only: {intervals}"
                )
        self._groups = SourceGroups(
            self._groups_param, {source: sum(rows for _, rows in intervals) for source, intervals in by_source.items()}
        )
        self._rule.start(self._groups.names)
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
        if self._source_choice is None or self._groups is None:
            raise ValueError(f"{self.name} policy: set_pools must come before draw")
        group = self._source_choice.draw(self._rng)
        members = self._groups.choice(group)
        source = members.items[0] if len(members.items) == 1 else members.draw(self._rng)
        choice = self._interval_choice.get(source)
        pool = (source, 0 if choice is None else choice.draw(self._rng))
        self._draws.add(pool)
        return pool

    def probabilities(self) -> dict[Pool, float]:
        assert self._groups is not None
        weights = self._rule.weights()
        result: dict[Pool, float] = {}
        for group in self._groups.names:
            for source, share in self._groups.shares(group).items():
                choice = self._interval_choice.get(source)
                inner = {0: 1.0} if choice is None else choice.probabilities()
                for interval, probability in inner.items():
                    result[(source, interval)] = weights[group] * share * probability
        return result

    def update(self, records: Sequence[Record]) -> dict[str, float]:
        assert self._groups is not None
        grouped, ignored = rewards_by_pool(records, self._draws.counts)
        sums = sums_by_source(grouped)
        self._updates += 1
        observe_signal(self._rule, self._groups, records, self._draws.counts, sums)
        self._refresh_sources()
        gated: dict[str, list[Record]] = {source: [] for source in self._gates}
        for record in records:
            gate = self._gates.get(record.source)
            if gate is not None and (self.gate_on == "source" or record.interval == gate.newest):
                gated[record.source].append(record)
        unlocked: dict[str, GateEvidence | None] = {}
        tested: dict[str, GateEvidence | None] = {}
        for source, gate in self._gates.items():
            tallies = tally_groups(gated[source])
            count = sum(tally[1] for tally in tallies)
            if count:
                mean = sum(tally[0] for tally in tallies) / count
                gate.ema = mean if gate.ema is None else gate.ema + self.gate_alpha * (mean - gate.ema)
                gate.window.append(tallies)
                gate.updates_since_unlock += 1
            found = evidence(gate.window, self.gate_min_responses, self.gate_confidence)
            tested[source] = found
            if gate.unlocked + 1 < len(gate.intervals) and self._may_unlock(gate, found):
                gate.unlocked += 1
                gate.updates_since_unlock = 0
                if self.gate_on == "newest":
                    gate.ema = None
                    gate.window.clear()
                gate.unlock_steps.append(self._updates)
                self._interval_choice[source] = gate.interval_choice(self.interval_decay)
                unlocked[source] = found
                self._record_unlock(source, gate, found)
        return self._metrics(grouped, ignored, tested, unlocked)

    def _record_unlock(self, source: str, gate: IntervalGate, found: GateEvidence | None) -> None:
        """Keep and log the evidence an unlock rested on."""
        responses, mean, bound = (found.responses, found.mean, found.bound) if found else (0, 0.0, 0.0)
        gate.unlock_evidence.append([float(self._updates), float(gate.newest), float(responses), mean, bound])
        LOG.info(
            "curriculum %s: interval %d unlocked at update %d (%s gate on %s success: %d responses%s, mean %.3f, "
            "%.0f%% lower bound %.3f, ema %s, threshold %g)",
            source,
            gate.newest,
            self._updates,
            self.gate_statistic,
            self.gate_on,
            responses,
            " first exposure" if found and found.first_only else "",
            mean,
            100 * self.gate_confidence,
            bound,
            "none" if gate.ema is None else f"{gate.ema:.3f}",
            self.threshold,
        )

    def _may_unlock(self, gate: IntervalGate, found: GateEvidence | None) -> bool:
        """The success gate: a check update, enough updates since the last unlock, and the statistic strictly above
        the threshold (the bound with at least ``gate_min_responses`` responses, or the EMA)."""
        if self._updates % self.check_every != 0 or gate.updates_since_unlock < self.min_updates_per_unlock:
            return False
        if self.gate_statistic == "ema":
            return gate.ema is not None and gate.ema > self.threshold
        return found is not None and found.responses >= self.gate_min_responses and found.bound > self.threshold

    def _metrics(
        self,
        grouped: Mapping[Pool, Sequence[float]],
        ignored: int,
        tested: Mapping[str, GateEvidence | None],
        unlocked: Mapping[str, GateEvidence | None],
    ) -> dict[str, float]:
        metrics = self._rule.metrics()
        for source, gate in self._gates.items():
            metrics[f"sampler/newest_interval/{source}"] = float(gate.newest)
            metrics[f"sampler/gate_threshold/{source}"] = self.threshold
            if gate.ema is not None:
                metrics[f"sampler/gate_ema/{source}"] = gate.ema
            found = tested.get(source)
            if found is not None:
                metrics.update(found.metrics(source))
            if source in unlocked:
                metrics[f"sampler/unlocked/{source}"] = float(gate.newest)
                opened = unlocked[source]
                if opened is not None:
                    metrics.update(
                        {k.replace("sampler/gate_", "sampler/unlock_"): v for k, v in opened.metrics(source).items()}
                    )
            shares = self._interval_choice[source].probabilities()
            for interval in gate.intervals:
                metrics[f"sampler/interval_weight/{source}/{interval}"] = shares.get(interval, 0.0)
                rewards = grouped.get((source, interval))
                if rewards:
                    metrics[f"sampler/interval_reward/{source}/{interval}"] = sum(rewards) / len(rewards)
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

    def load_state_dict(self, state: Mapping[str, Any], changed: frozenset[str] = frozenset()) -> None:
        """Restore a saved state onto the same pools; gates of ``changed`` sources keep only their (capped)
        newest unlocked interval.

        Raises:
            ValueError: the saved pools, gates or unlocked intervals do not fit the current data.
        """
        saved_gates = {source for source in state["gates"] if source not in changed}
        current_gates = {source for source in self._gates if source not in changed}
        if saved_gates != current_gates:
            raise ValueError(f"saved curriculum gates {sorted(state['gates'])} differ from {sorted(self._gates)}")
        if self.gate_statistic == "bound" and any("window" not in saved for saved in state["gates"].values()):
            LOG.warning(
                "sampler state saved before the confidence-bound gate: unlocks, draws and weights are restored, and "
                "each gate collects its success window again from this resume"
            )
        restore_rng(self._rng, state["rng"])
        self._draws.load(state["draws"], changed)
        self._updates = int(state["updates"])
        self._rule.load_state_dict(state["rule"])
        for source, gate in self._gates.items():
            if source in state["gates"]:
                gate.load(state["gates"][source], resplit=source in changed)
            self._interval_choice[source] = gate.interval_choice(self.interval_decay)
        self._refresh_sources()


class StagedCurriculumPolicy(RewardCurriculumPolicy):
    """The NPG-Muse staged curriculum: level k of each curriculum source for ``steps_per_level`` updates, then k+1.

    NPG-Muse trains on ``train_level_0`` ... ``train_level_{L-1}`` one after another, a fixed budget each, whatever
    the reward. The graph builder writes those files and stamps every row of ``train_mixed.parquet`` with the same
    ``extra_info.level``, so this policy reads that field (not a split of its own) and reproduces the schedule on
    the mixed file: at update u the level is ``min(u // steps_per_level, L-1)``. Earlier levels are dropped, as in
    the reference, unless ``keep_previous`` is set (then every level reached is drawn by its rows).

    Args:
        seed: seed of the policy's RNG.
        curriculum_sources: sources staged by level (exact names or ``prefix/``; default ``graph/``).
        steps_per_level: updates spent on each level (NPG-Muse: one epoch of the level file).
        keep_previous: keep drawing earlier levels after moving on.
        source_weighting: ``fixed`` or ``ema`` over source groups.
        source_params: parameters of that rule.
        groups: group name -> member sources; None makes each source its own group.

    Raises:
        ValueError: a parameter out of range.
    """

    name = "staged_curriculum"

    difficulty_field = "level"

    def __init__(
        self,
        *,
        seed: int = 0,
        curriculum_sources: Sequence[str] = ("graph/",),
        steps_per_level: int = 70,
        keep_previous: bool = False,
        source_weighting: str = "fixed",
        source_params: Mapping[str, Any] | None = None,
        groups: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        if isinstance(steps_per_level, bool) or not isinstance(steps_per_level, int) or steps_per_level < 1:
            raise ValueError(f"steps_per_level must be an int >= 1, got {steps_per_level!r}")
        super().__init__(
            seed=seed,
            curriculum_sources=curriculum_sources,
            function_field=None,
            source_weighting=source_weighting,
            source_params=source_params,
            groups=groups,
        )
        self.steps_per_level = steps_per_level
        self.keep_previous = bool(keep_previous)
        self.interval_decay = 1.0 if self.keep_previous else 0.0

    def split(self, source: str, difficulties: Sequence[Any], functions: Sequence[Any] | None = None) -> list[int]:
        """Each row's interval is its ``extra_info.level``.

        Raises:
            ValueError: a level that is not an integer >= 0 (naming the source, row and field).
        """
        levels = []
        for row, value in enumerate(difficulties):
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0 or value != int(value):
                raise ValueError(
                    f"source {source!r} row {row}: field extra_info.level must be an integer >= 0, got {value!r} "
                    "(build graph data with python -m rlif.data graph, which writes levels)"
                )
            levels.append(int(value))
        return levels

    def _may_unlock(self, gate: IntervalGate, found: GateEvidence | None) -> bool:
        """A timer by design: the next level starts after ``steps_per_level`` updates per level reached."""
        return self._updates >= (gate.unlocked + 1) * self.steps_per_level

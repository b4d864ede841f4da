"""CPU simulation comparing the sampling policies on a synthetic learner, with plots for docs/samplers.md.

Nothing here is a model: it is a toy that makes each policy's mechanics visible (where the mass goes, when the
curriculum unlocks, what it costs in reward). The learner has a skill per (source, true difficulty bucket);
a prompt of bucket j is solved with probability ``sigmoid(skill - difficulty_j)``. Each step the policy draws
``prompts`` prompts, every prompt gets ``responses`` Bernoulli rewards, and the learner improves where GRPO
would: a group's learning signal is its empirical reward variance ``k(G-k)/G^2`` (all-solved and all-failed groups
teach nothing), and practice on bucket j also moves buckets k of the same source by ``transfer**|j-k|``.

Sources: ``iftrain`` (one bucket, starts near 0.6 success) and ``logicif`` (an easiest 30% bucket plus 10
equal-count buckets of rising difficulty, the hardest near 0), 2,000 rows each unless ``source_rows`` gives a matrix
run's own counts (``rlif.simulate.rows``). The true buckets are fixed by the data; each policy sees only the
intervals its own ``assign_intervals`` gives. Prompts are drawn uniformly within the chosen pool, as the verl
dataset does, and every draw of a row is counted, so a small pool shows as repeated rows. "Held-out reward" is each
source's success probability averaged over its rows, then over sources. Two effects a real model may show are off
unless asked for: forgetting (skill of undrawn buckets decays toward its start) and cross-source interference
(``LearnerConfig``).

``python -m rlif.simulate`` (``rlif.simulate.cli``) runs the built-in strategies, matrix runs or a whole stage.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewards.graph.tasks import TASKS
from samplers.base import Pool, Record
from samplers.intervals import matches_sources, split_by_difficulty
from samplers.registry import build_policy


@dataclass(frozen=True)
class Strategy:
    """A named policy configuration to simulate."""

    label: str
    policy: str
    params: Mapping[str, Any] = field(default_factory=dict)


CURRICULUM = {"threshold": 0.5, "min_updates_per_unlock": 10, "check_every": 3, "gate_alpha": 0.1}
"""The reference curriculum's defaults (RLIF ``RewardCurriculumSampler``), threshold as in its GUIDE.md."""

REFERENCE_GATE = {**CURRICULUM, "gate_on": "source"}
NEWEST_GATE = {**CURRICULUM, "gate_on": "newest"}

STRATEGIES: tuple[Strategy, ...] = (
    Strategy("fixed 1:1", "fixed_ratio"),
    Strategy("EMA", "ema_reweight"),
    Strategy("curriculum (fixed 1:1), gate on source", "reward_curriculum", REFERENCE_GATE),
    Strategy("EMA + curriculum, gate on source", "reward_curriculum", {**REFERENCE_GATE, "source_weighting": "ema"}),
    Strategy(
        "EMA + curriculum + decay 0.5, gate on source",
        "reward_curriculum",
        {**REFERENCE_GATE, "source_weighting": "ema", "interval_decay": 0.5},
    ),
    Strategy("EMA + curriculum, gate on newest", "reward_curriculum", {**NEWEST_GATE, "source_weighting": "ema"}),
    Strategy(
        "EMA + curriculum + decay 0.5, gate on newest",
        "reward_curriculum",
        {**NEWEST_GATE, "source_weighting": "ema", "interval_decay": 0.5},
    ),
    Strategy("learnability UCB", "learnability_ucb", {"num_intervals": 10, "initial_fraction": 0.3}),
)

LEARNERS = ("improving", "frozen")
"""``improving``: skills grow with practice (below). ``frozen``: success 0.9 on the first interval of every source
the policy splits and 0.0 on all its harder intervals (0.6 on other sources), never changing: the case where a
reward gate must open exactly once."""

DATASETS = ("stage2", "graph")
"""``stage2``: iftrain + logicif. ``graph``: the six NP tasks ``graph/<task>``, difficulty = node count, each row
also carrying the graph builder's ``level`` (equal-count parts by difficulty, as ``rlif.data.graph_build``)."""

GRAPH_TASKS = tuple(sorted(TASKS))
"""The graph task registry's ids, sorted: the synthetic data draws them in this order."""
GRAPH_LEVELS = 5
"""``python -m rlif.data graph --levels`` default."""


@dataclass(frozen=True)
class LearnerConfig:
    """The synthetic learner and data.

    Attributes:
        rows: rows per source.
        if_difficulty: logit difficulty of every iftrain prompt.
        logicif_easiest: logit difficulty of the easiest bucket of a bucketed source (LogicIF, each graph task).
        logicif_step: difficulty added per bucket (11 buckets).
        learning_rate: skill gained per step by a full batch of maximally informative groups.
        transfer: share of practice on one bucket that reaches a neighbouring bucket of the same source.
        prompts: prompts per step.
        responses: responses per prompt (the GRPO group size).
        steps: training steps.
        learner: one of ``LEARNERS``.
        data: one of ``DATASETS``.
        source_rows: rows per source, replacing ``rows`` (empty: ``rows`` for each of the data set's sources). A
            source named ``logicif`` or ``graph/<task>`` is split into difficulty buckets, any other is one bucket
            at ``if_difficulty``. Pools this size make repetition visible: a 2,800-row interval drawn from at 256
            LogicIF prompts per update repeats rows within tens of updates.
        difficulties: each row's ``extra_info.difficulty`` per source, read from a real training file (empty:
            synthetic, uniform on 0-100 for LogicIF, node counts 5-40 for graph tasks).
        forgetting: per update, every (source, bucket) with no prompt drawn in that update moves this share of
            the way from its skill back to its start (0: off). A bucket that is drawn keeps what it has.
        interference: per update, every bucket of every other source moves by this factor times the skill gain
            practice put directly on a source's buckets (before transfer): negative, practice on LogicIF costs IF
            skill; positive, it helps (0: off).
        response_tokens: mean response length per source, for the tokens-generated figures (empty: not counted).
    """

    rows: int = 2000
    if_difficulty: float = -0.4
    logicif_easiest: float = -1.0
    logicif_step: float = 0.6
    learning_rate: float = 0.12
    transfer: float = 0.6
    prompts: int = 64
    responses: int = 8
    steps: int = 300
    learner: str = "improving"
    data: str = "stage2"
    source_rows: Mapping[str, int] = field(default_factory=dict)
    difficulties: Mapping[str, Sequence[float]] = field(default_factory=dict)
    forgetting: float = 0.0
    interference: float = 0.0
    response_tokens: Mapping[str, float] = field(default_factory=dict)


LOGICIF_BUCKETS = 11
FROZEN_FIRST, FROZEN_HARDER, FROZEN_OTHER = 0.9, 0.0, 0.6


@dataclass
class RunResult:
    """One strategy's trajectory under one seed.

    ``unlock_steps`` are 1-based update numbers (of ``logicif``; ``unlocks`` has every curriculum source);
    ``policy_metrics[i]`` is what ``policy.update`` returned at update ``i + 1`` (weights, gate EMAs, newest unlocked
    intervals), and ``interval_success[i]`` the learner's true success probability on each split source's pools
    after update i. Exposure: ``prompts_by_source[s][i]`` prompts of source s at update i + 1, ``row_draws[s][r]``
    how often row r of s was drawn in the whole run, ``row_bucket[s][r]`` its true difficulty bucket;
    ``final_success`` the improving learner's success per source and bucket after the last update, ``groups`` the
    run's source groups over the simulated sources.
    """

    heldout: list[float] = field(default_factory=list)
    heldout_by_source: dict[str, list[float]] = field(default_factory=dict)
    batch_reward: list[float] = field(default_factory=list)
    logicif_share: list[float] = field(default_factory=list)
    logicif_newest_interval: list[float] = field(default_factory=list)
    final_bucket_success: list[float] = field(default_factory=list)
    unlock_steps: list[int] = field(default_factory=list)
    unlocks: dict[str, list[int]] = field(default_factory=dict)
    policy_metrics: list[dict[str, float]] = field(default_factory=list)
    interval_success: list[dict[Pool, float]] = field(default_factory=list)
    prompts_by_source: dict[str, list[int]] = field(default_factory=dict)
    row_draws: dict[str, list[int]] = field(default_factory=dict)
    row_bucket: dict[str, list[int]] = field(default_factory=dict)
    final_success: dict[str, list[float]] = field(default_factory=dict)
    tokens_by_source: dict[str, float] = field(default_factory=dict)
    groups: dict[str, list[str]] = field(default_factory=dict)
    responses: int = 0


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


@dataclass(frozen=True)
class _Rows:
    """One source's synthetic rows: difficulty score, graph-builder level, and true bucket of each row."""

    difficulty: list[float]
    level: list[int]
    bucket: list[int]
    bucket_logits: list[float]


def _equal_levels(difficulty: Sequence[float], levels: int) -> list[int]:
    """``rlif.data.graph_build.assign_levels``'s rule: rank by (difficulty, position), cut into equal parts."""
    order = sorted(range(len(difficulty)), key=lambda row: (difficulty[row], row))
    result = [0] * len(difficulty)
    for rank, row in enumerate(order):
        result[row] = rank * levels // len(difficulty)
    return result


def _dataset(config: LearnerConfig, data_rng: random.Random) -> dict[str, _Rows]:
    """The synthetic training set: per source its rows, levels and true difficulty buckets."""
    bucketed = [config.logicif_easiest + config.logicif_step * b for b in range(LOGICIF_BUCKETS)]

    def bucketed_source(name: str, scores: list[float]) -> _Rows:
        buckets = split_by_difficulty(name, scores, 0.3, LOGICIF_BUCKETS - 1)
        return _Rows(scores, _equal_levels(scores, GRAPH_LEVELS), buckets, bucketed)

    if config.data not in DATASETS:
        raise ValueError(f"data must be one of {DATASETS}, got {config.data!r}")
    default = ("iftrain", "logicif") if config.data == "stage2" else tuple(f"graph/{task}" for task in GRAPH_TASKS)
    sizes = dict(config.source_rows) or dict.fromkeys(default, config.rows)
    data = {}
    for source, count in sizes.items():
        if count <= 0:
            continue
        if not is_bucketed(source):
            data[source] = _Rows([0.0] * count, [0] * count, [0] * count, [config.if_difficulty])
            continue
        scores = config.difficulties.get(source)
        if scores is None or len(scores) != count:
            if source.startswith("graph/"):
                scores = [float(data_rng.randint(5, 40)) for _ in range(count)]
            else:
                scores = [data_rng.uniform(0.0, 100.0) for _ in range(count)]
        data[source] = bucketed_source(source, [float(value) for value in scores])
    if not data:
        raise ValueError(f"no source has rows: {sizes}")
    return data


def is_bucketed(source: str) -> bool:
    """Whether the synthetic learner gives ``source`` difficulty buckets (LogicIF, the graph tasks) or one bucket."""
    return source == "logicif" or source.startswith("graph/")


def simulate(strategy: Strategy, config: LearnerConfig, seed: int) -> RunResult:
    """Train the synthetic learner with ``strategy`` for ``config.steps`` steps.

    Args:
        strategy: the policy to use.
        config: learner and data.
        seed: seeds the data, the learner's rewards and the policy.

    Returns:
        The per-step trajectory, the final state and what the run was exposed to (draws per row, prompts per
        source).

    Raises:
        ValueError: an unknown learner or data set, or a policy that rejects its parameters or the data.
    """
    if config.learner not in LEARNERS:
        raise ValueError(f"learner must be one of {LEARNERS}, got {config.learner!r}")
    data = _dataset(config, random.Random(seed))
    skill = {source: [0.0] * len(rows.bucket_logits) for source, rows in data.items()}
    rows_per_bucket = {
        source: [rows.bucket.count(b) for b in range(len(rows.bucket_logits))] for source, rows in data.items()
    }

    policy = build_policy(strategy.policy, strategy.params, seed=seed)
    members: dict[Pool, list[int]] = {}
    for source, rows in data.items():
        values = rows.level if policy.difficulty_field == "level" else rows.difficulty
        for row, interval in enumerate(policy.assign_intervals(source, values)):
            members.setdefault((source, interval), []).append(row)
    policy.set_pools({pool: len(rows) for pool, rows in members.items()})
    first_interval = {source: min(i for s, i in members if s == source) for source in data}
    split_pools = sorted(pool for pool in members if policy.splits(pool[0]))
    pool_histogram = {}
    for pool in split_pools:
        buckets = [data[pool[0]].bucket[row] for row in members[pool]]
        pool_histogram[pool] = [buckets.count(b) for b in range(len(data[pool[0]].bucket_logits))]

    def success(source: str, interval: int, bucket: int) -> float:
        if config.learner == "frozen":
            if not policy.splits(source):
                return FROZEN_OTHER
            return FROZEN_FIRST if interval == first_interval[source] else FROZEN_HARDER
        return _sigmoid(skill[source][bucket] - data[source].bucket_logits[bucket])

    rng = random.Random(seed + 1)
    result = RunResult(
        heldout_by_source={source: [] for source in data},
        prompts_by_source={source: [] for source in data},
        row_draws={source: [0] * len(rows.bucket) for source, rows in data.items()},
        row_bucket={source: list(rows.bucket) for source, rows in data.items()},
        groups=_resolve_groups(strategy.params.get("groups"), data),
        responses=config.responses,
    )
    for _step in range(config.steps):
        records: list[Record] = []
        practice = {source: [0.0] * len(rows.bucket_logits) for source, rows in data.items()}
        drawn = {source: [0] * len(rows.bucket_logits) for source, rows in data.items()}
        for prompt in range(config.prompts):
            source, interval = policy.draw()
            row = rng.choice(members[(source, interval)])
            bucket = data[source].bucket[row]
            exposure = result.row_draws[source][row]
            result.row_draws[source][row] += 1
            drawn[source][bucket] += 1
            chance = success(source, interval, bucket)
            solved = sum(rng.random() < chance for _ in range(config.responses))
            rewards = [1.0] * solved + [0.0] * (config.responses - solved)
            records += [
                Record(source, interval, reward, group=str(prompt), success=reward, exposure=exposure)
                for reward in rewards
            ]
            practice[source][bucket] += solved * (config.responses - solved) / config.responses**2
        if config.learner == "improving":
            _learn(skill, practice, drawn, config)
        metrics = policy.update(records)
        result.policy_metrics.append(dict(metrics))
        result.batch_reward.append(statistics.fmean(r.reward for r in records))
        for source, counts in drawn.items():
            result.prompts_by_source[source].append(sum(counts))
        result.logicif_share.append(sum(drawn.get("logicif", [0])) / config.prompts)
        result.logicif_newest_interval.append(metrics.get("sampler/newest_interval/logicif", math.nan))
        result.interval_success.append(
            {
                pool: sum(count * success(pool[0], pool[1], b) for b, count in enumerate(pool_histogram[pool]) if count)
                / len(members[pool])
                for pool in split_pools
            }
        )
        by_source = {
            source: sum(
                rows * success(source, -1, b) if config.learner == "improving" else 0.0
                for b, rows in enumerate(rows_per_bucket[source])
            )
            / len(data[source].bucket)
            for source in data
        }
        for source, value in by_source.items():
            result.heldout_by_source[source].append(value)
        result.heldout.append(statistics.fmean(by_source.values()))
    if config.learner == "improving":
        result.final_success = {
            source: [success(source, -1, b) for b in range(len(rows.bucket_logits))] for source, rows in data.items()
        }
    if "logicif" in data:
        result.final_bucket_success = [success("logicif", -1, b) for b in range(LOGICIF_BUCKETS)]
    result.tokens_by_source = {
        source: sum(result.prompts_by_source[source]) * config.responses * config.response_tokens[source]
        for source in data
        if source in config.response_tokens
    }
    unlocks = getattr(policy, "unlock_steps", None)
    if unlocks is not None:
        result.unlocks = unlocks()
        result.unlock_steps = result.unlocks.get("logicif", [])
    return result


def _learn(
    skill: dict[str, list[float]],
    practice: Mapping[str, Sequence[float]],
    drawn: Mapping[str, Sequence[int]],
    config: LearnerConfig,
) -> None:
    """One update of the improving learner: gains from mixed groups spread by ``transfer`` within a source, then
    interference across sources and forgetting of the buckets no prompt came from (``LearnerConfig``)."""
    direct = dict.fromkeys(skill, 0.0)
    for source, amounts in practice.items():
        for j, amount in enumerate(amounts):
            if amount:
                gain = config.learning_rate * amount / config.prompts * 4.0  # 4 = 1 / max variance 0.25
                direct[source] += gain
                for k in range(len(amounts)):
                    skill[source][k] += gain * config.transfer ** abs(j - k)
    if config.interference:
        for source, gain in direct.items():
            for other, values in skill.items():
                if other != source and gain:
                    values[:] = [value + config.interference * gain for value in values]
    if config.forgetting:
        for source, counts in drawn.items():
            for bucket, count in enumerate(counts):
                if not count:
                    skill[source][bucket] -= config.forgetting * skill[source][bucket]  # start skill is 0


def _resolve_groups(groups: Any, data: Mapping[str, Any]) -> dict[str, list[str]]:
    """The run's source groups over the simulated sources (the ``groups`` parameter; each source alone without
    it); groups with no simulated source are left out, sources in no group form their own."""
    resolved: dict[str, list[str]] = {}
    for name, patterns in dict(groups or {}).items():
        listed = [source for source in data if matches_sources(source, patterns)]
        if listed:
            resolved[str(name)] = listed
    grouped = {source for listed in resolved.values() for source in listed}
    for source in data:
        if source not in grouped:
            resolved[source] = [source]
    return resolved


def mean_curve(curves: Sequence[Sequence[float]]) -> list[float]:
    """The mean over seeds at each update."""
    return [statistics.fmean(values) for values in zip(*curves, strict=True)]


def smooth(curve: Sequence[float], half: int = 4) -> list[float]:
    """A centred moving average over ``2 * half + 1`` updates (shorter at the ends), for plots only."""
    return [statistics.fmean(curve[max(0, i - half) : i + half + 1]) for i in range(len(curve))]


def spread(values: Sequence[float], digits: int = 3) -> str:
    """``mean ± sd`` over seeds (the sd over seeds; ``± 0`` for one seed); ``-`` when there is no value."""
    values = [v for v in values if not math.isnan(v)]
    if not values:
        return "-"
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    if digits == 0:
        return f"{statistics.fmean(values):,.0f} ± {sd:,.0f}"
    return f"{statistics.fmean(values):.{digits}f} ± {sd:.{digits}f}"


def summarize(results: Mapping[str, Sequence[RunResult]], last: int = 20) -> str:
    """A markdown table: final held-out reward (overall, per source), LogicIF share, unlock steps (mean over the
    seeds that reached each unlock) and the newest unlocked LogicIF interval at the end (its range over seeds).

    Args:
        results: runs per strategy label.
        last: the "final" values average the last ``last`` steps.

    Returns:
        The table as markdown.
    """
    lines = [
        "| strategy | held-out reward | iftrain | logicif | hardest 3 logicif buckets | logicif share | "
        "steps to unlocks 1, 2, 5, 10 (runs reaching it) | newest logicif interval at the end |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for label, runs in results.items():

        def final(curves: Sequence[Sequence[float]]) -> str:
            return spread([statistics.fmean(curve[-last:]) for curve in curves])

        hardest = [statistics.fmean(run.final_bucket_success[-3:]) for run in runs]
        unlocks = final_unlocked = "-"
        if any(run.unlock_steps for run in runs):
            finals = [len(run.unlock_steps) for run in runs]
            final_unlocked = f"{min(finals)}" if min(finals) == max(finals) else f"{min(finals)}-{max(finals)}"
            cells = []
            for unlock in (1, 2, 5, 10):
                reached = [run.unlock_steps[unlock - 1] for run in runs if len(run.unlock_steps) >= unlock]
                cells.append(
                    f"{statistics.fmean(reached):.0f} ({len(reached)}/{len(runs)})" if reached else f"- (0/{len(runs)})"
                )
            unlocks = ", ".join(cells)
        lines.append(
            f"| {label} | {final([r.heldout for r in runs])} | {final([r.heldout_by_source['iftrain'] for r in runs])} "
            f"| {final([r.heldout_by_source['logicif'] for r in runs])} | {statistics.fmean(hardest):.3f} "
            f"| {final([r.logicif_share for r in runs])} | {unlocks} | {final_unlocked} |"
        )
    return "\n".join(lines)


def plot(results: Mapping[str, Sequence[RunResult]], out: Path) -> list[Path]:
    """Write the comparison plots (mean over seeds) as PNGs under ``out``.

    Returns:
        The files written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out.mkdir(parents=True, exist_ok=True)
    written = []
    panels = [
        ("reward.png", "held-out reward (mean over sources)", lambda r: r.heldout, False),
        ("reward_logicif.png", "held-out LogicIF reward", lambda r: r.heldout_by_source["logicif"], False),
        ("batch_reward.png", "training batch reward (smoothed)", lambda r: r.batch_reward, True),
        ("share_logicif.png", "share of prompts drawn from LogicIF (smoothed)", lambda r: r.logicif_share, True),
    ]
    for name, title, pick, smoothed in panels:
        fig, ax = plt.subplots(figsize=(7, 4))
        for label, runs in results.items():
            curve = mean_curve([pick(run) for run in runs])
            ax.plot(smooth(curve) if smoothed else curve, label=label)
        ax.set_xlabel("step")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(out / name, dpi=110)
        plt.close(fig)
        written.append(out / name)

    fig, ax = plt.subplots(figsize=(7, 4))
    styles = iter(["-", "--", ":", "-."] * len(results))  # identical curves stay visible on top of each other
    for label, runs in results.items():
        if any(run.unlock_steps for run in runs):
            ax.plot(mean_curve([run.logicif_newest_interval for run in runs]), next(styles), label=label, linewidth=2)
    ax.set_xlabel("step")
    ax.set_ylabel("newest unlocked LogicIF interval")
    ax.set_title("curriculum unlocks (mean over seeds)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "unlocks.png", dpi=110)
    plt.close(fig)
    written.append(out / "unlocks.png")

    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(results)
    for index, (label, runs) in enumerate(results.items()):
        success = mean_curve([run.final_bucket_success for run in runs])
        ax.bar([b + index * width for b in range(LOGICIF_BUCKETS)], success, width=width, label=label)
    ax.set_xlabel("true LogicIF bucket (0 = easiest 30%)")
    ax.set_ylabel("final success probability")
    ax.set_title("final LogicIF skill by difficulty")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "final_logicif_by_bucket.png", dpi=110)
    plt.close(fig)
    written.append(out / "final_logicif_by_bucket.png")
    return written


def run_all(config: LearnerConfig, seeds: Sequence[int]) -> dict[str, list[RunResult]]:
    """Every strategy in ``STRATEGIES`` under every seed."""
    return {strategy.label: [simulate(strategy, config, seed) for seed in seeds] for strategy in STRATEGIES}


def unlock_timeline(label: str, runs: Sequence[RunResult]) -> str:
    """One line per seed: the update at which each interval of each curriculum source unlocked."""
    lines = []
    for seed, run in enumerate(runs):
        parts = []
        for source, steps in sorted(run.unlocks.items()):
            parts.append(f"{source}: " + (", ".join(f"{k + 1}@{step}" for k, step in enumerate(steps)) or "none"))
        lines.append(f"{label} seed {seed}: " + ("; ".join(parts) if parts else "no curriculum"))
    return "\n".join(lines)


def final_interval_success(label: str, runs: Sequence[RunResult]) -> str:
    """The learner's true success on each interval after the last update, mean over seeds and over the split
    sources sharing the interval number (the six graph tasks): what the run leaves behind, unlocked or not."""
    by_interval: dict[int, list[float]] = {}
    for run in runs:
        if run.interval_success:
            for (_source, interval), value in run.interval_success[-1].items():
                by_interval.setdefault(interval, []).append(value)
    if not by_interval:
        return f"{label} final success per interval: no split source"
    cells = ", ".join(f"{interval}: {statistics.fmean(values):.2f}" for interval, values in sorted(by_interval.items()))
    return f"{label} final success per interval: {cells}"


def interval_reward_span(label: str, runs: Sequence[RunResult], width: int = 10) -> str:
    """Each interval's observed step reward (``sampler/interval_reward``) over its first and its last ``width``
    updates with records, mean over seeds and over the sources sharing the interval number: where an interval
    stood when it was opened, and where it ended."""
    first: dict[int, list[float]] = {}
    last: dict[int, list[float]] = {}
    prefix = "sampler/interval_reward/"
    for run in runs:
        names = sorted({key for metrics in run.policy_metrics for key in metrics if key.startswith(prefix)})
        for name in names:
            observed = [metrics[name] for metrics in run.policy_metrics if name in metrics]
            interval = int(name.rsplit("/", 1)[1])
            first.setdefault(interval, []).append(statistics.fmean(observed[:width]))
            last.setdefault(interval, []).append(statistics.fmean(observed[-width:]))
    if not first:
        return f"{label} step reward per interval: none logged"
    cells = ", ".join(
        f"{interval}: {statistics.fmean(first[interval]):.2f} -> {statistics.fmean(last[interval]):.2f}"
        for interval in sorted(first)
    )
    return f"{label} step reward per interval, first -> last {width} updates with records: {cells}"


def plot_run(label: str, runs: Sequence[RunResult], threshold: float | None, path: Path) -> Path:
    """One figure for a simulated run: group weights, newest unlocked interval, reward per interval (seed 0).

    The reward panel shows each unlocked interval's observed step reward (``sampler/interval_reward``, smoothed),
    averaged over curriculum sources that share the interval number (the six graph tasks), with the threshold.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    run = runs[0]
    metrics = run.policy_metrics
    steps = range(1, len(metrics) + 1)

    def series(prefix: str) -> dict[str, list[float]]:
        names = sorted({key for m in metrics for key in m if key.startswith(prefix)})
        return {name[len(prefix) :]: [m.get(name, math.nan) for m in metrics] for name in names}

    # groups and sources that behave alike (the six graph tasks) draw identical curves: line styles keep them visible
    styles = ("-", "--", ":", "-.")
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    weights = series("sampler/weight/")
    for index, (name, curve) in enumerate(weights.items()):
        axes[0].plot(steps, curve, styles[index % len(styles)], label=name)
    highest = max((v for curve in weights.values() for v in curve if not math.isnan(v)), default=1.0)
    axes[0].set_ylim(0.0, min(1.0, 1.2 * highest))  # from 0, so a constant 1/6 reads as 1/6, not as noise
    axes[0].set_ylabel("source-group weight")
    for index, (name, curve) in enumerate(series("sampler/newest_interval/").items()):
        axes[1].step(steps, curve, styles[index % len(styles)], where="post", label=name)
    axes[1].yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
    axes[1].set_ylabel("newest unlocked interval")
    by_interval: dict[str, list[list[float]]] = {}
    for name, curve in series("sampler/interval_reward/").items():
        by_interval.setdefault(name.rsplit("/", 1)[1], []).append(curve)
    # one colour per interval from easy (dark) to hard (light): matplotlib's cycle repeats after 10 colours
    shades, hardest = plt.get_cmap("viridis"), max([1, *(int(k) for k in by_interval)])
    for interval, curves in sorted(by_interval.items(), key=lambda item: int(item[0])):
        mean = [
            statistics.fmean(v for v in values if not math.isnan(v))
            if any(not math.isnan(v) for v in values)
            else math.nan
            for values in zip(*curves, strict=True)
        ]
        smoothed = []
        for index in range(len(mean)):
            window = [v for v in mean[max(0, index - 4) : index + 5] if not math.isnan(v)]
            smoothed.append(statistics.fmean(window) if window and not math.isnan(mean[index]) else math.nan)
        axes[2].plot(steps, smoothed, color=shades(0.9 * int(interval) / hardest), label=f"interval {interval}")
    if threshold is not None:
        axes[2].axhline(threshold, color="black", linestyle="--", linewidth=1, label="threshold")
    axes[2].set_ylabel("step reward per interval")
    axes[2].set_xlabel("update")
    for ax in axes:
        ax.grid(alpha=0.3)
        if ax.get_legend_handles_labels()[0]:  # a run without curriculum has no unlock or interval curves
            ax.legend(fontsize=7, ncol=3)
    fig.suptitle(label, fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def parse_param(text: str) -> tuple[str, Any]:
    """``KEY=VALUE`` from the command line, the value read as YAML (``0.5`` a float, ``source`` a string).

    Raises:
        ValueError: no ``=`` or an empty key.
    """
    import yaml

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ValueError(f"--param {text!r}: expected KEY=VALUE, e.g. gate_on=source")
    return key.strip(), yaml.safe_load(value)

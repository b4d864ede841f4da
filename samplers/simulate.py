"""CPU simulation comparing the sampling policies on a synthetic learner, with plots for docs/samplers.md.

Nothing here is a model: it is a toy that makes each policy's mechanics visible (where the mass goes, when the
curriculum unlocks, what it costs in reward). The learner has a skill per (source, true difficulty bucket);
a prompt of bucket j is solved with probability ``sigmoid(skill - difficulty_j)``. Each step the policy draws
``prompts`` prompts, every prompt gets ``responses`` Bernoulli rewards, and the learner improves where GRPO
would: a group's learning signal is its empirical reward variance ``k(G-k)/G^2`` (all-solved and all-failed groups
teach nothing), and practice on bucket j also moves buckets k of the same source by ``transfer**|j-k|``.

Sources: ``iftrain`` (one bucket, starts near 0.6 success) and ``logicif`` (an easiest 30% bucket plus 10
equal-count buckets of rising difficulty, the hardest near 0). The true buckets are fixed by the data; each
policy sees only the intervals its own ``assign_intervals`` gives. Prompts are drawn uniformly within the chosen
pool, as the verl dataset does. "Held-out reward" is each source's success probability averaged over its rows,
then over sources.

Run: ``python -m samplers.simulate --out docs/samplers`` (needs matplotlib; about a minute on one core).
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from samplers.base import Pool, Record
from samplers.intervals import split_by_difficulty
from samplers.registry import build_policy


@dataclass(frozen=True)
class Strategy:
    """A named policy configuration to simulate."""

    label: str
    policy: str
    params: Mapping[str, Any] = field(default_factory=dict)


CURRICULUM = {"threshold": 0.5, "min_updates_per_level": 10, "check_every": 3, "gate_alpha": 0.1}
"""The reference curriculum's defaults (RLIF ``RewardCurriculumSampler``), threshold as in its GUIDE.md."""

STRATEGIES: tuple[Strategy, ...] = (
    Strategy("fixed 1:1", "fixed_ratio"),
    Strategy("EMA", "ema_reweight"),
    Strategy("curriculum (fixed 1:1)", "reward_curriculum", CURRICULUM),
    Strategy("EMA + curriculum", "reward_curriculum", {**CURRICULUM, "source_weighting": "ema"}),
    Strategy(
        "EMA + curriculum + decay 0.5",
        "reward_curriculum",
        {**CURRICULUM, "source_weighting": "ema", "interval_decay": 0.5},
    ),
    Strategy(
        "EMA + curriculum, gate on newest",
        "reward_curriculum",
        {**CURRICULUM, "source_weighting": "ema", "gate_on": "newest"},
    ),
    Strategy("learnability UCB", "learnability_ucb", {"num_intervals": 10, "initial_fraction": 0.3}),
)


@dataclass(frozen=True)
class LearnerConfig:
    """The synthetic learner and data.

    Attributes:
        rows: rows per source.
        if_difficulty: logit difficulty of every iftrain prompt.
        logicif_easiest: logit difficulty of LogicIF's easiest bucket.
        logicif_step: difficulty added per LogicIF bucket (11 buckets).
        learning_rate: skill gained per step by a full batch of maximally informative groups.
        transfer: share of practice on one bucket that reaches a neighbouring bucket of the same source.
        prompts: prompts per step.
        responses: responses per prompt (the GRPO group size).
        steps: training steps.
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


LOGICIF_BUCKETS = 11


@dataclass
class RunResult:
    """One strategy's trajectory under one seed.

    ``unlock_steps`` are 1-based update numbers; ``policy_metrics[i]`` is what ``policy.update`` returned at
    update ``i + 1`` (source weights, gate EMAs, levels), so a test can check each unlock against its gate.
    """

    heldout: list[float] = field(default_factory=list)
    heldout_by_source: dict[str, list[float]] = field(default_factory=dict)
    batch_reward: list[float] = field(default_factory=list)
    logicif_share: list[float] = field(default_factory=list)
    logicif_level: list[float] = field(default_factory=list)
    final_bucket_success: list[float] = field(default_factory=list)
    unlock_steps: list[int] = field(default_factory=list)
    policy_metrics: list[dict[str, float]] = field(default_factory=list)


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def _true_buckets(config: LearnerConfig, data_rng: random.Random) -> dict[str, tuple[list[float], list[int]]]:
    """Per source: row difficulties (complexity-like scores) and each row's true bucket."""
    logicif = [data_rng.uniform(0.0, 100.0) for _ in range(config.rows)]
    return {
        "iftrain": ([0.0] * config.rows, [0] * config.rows),
        "logicif": (logicif, split_by_difficulty("logicif", logicif, 0.3, LOGICIF_BUCKETS - 1)),
    }


def simulate(strategy: Strategy, config: LearnerConfig, seed: int) -> RunResult:
    """Train the synthetic learner with ``strategy`` for ``config.steps`` steps.

    Args:
        strategy: the policy to use.
        config: learner and data.
        seed: seeds the data, the learner's rewards and the policy.

    Returns:
        The per-step trajectory and the final state.
    """
    data = _true_buckets(config, random.Random(seed))
    difficulty = {
        "iftrain": [config.if_difficulty],
        "logicif": [config.logicif_easiest + config.logicif_step * b for b in range(LOGICIF_BUCKETS)],
    }
    skill = {source: [0.0] * len(levels) for source, levels in difficulty.items()}
    rows_per_bucket = {
        source: [buckets.count(b) for b in range(len(difficulty[source]))] for source, (_, buckets) in data.items()
    }

    policy = build_policy(strategy.policy, strategy.params, seed=seed)
    members: dict[Pool, list[int]] = {}
    for source, (scores, buckets) in data.items():
        for interval, bucket in zip(policy.assign_intervals(source, scores), buckets, strict=True):
            members.setdefault((source, interval), []).append(bucket)
    policy.set_pools({pool: len(rows) for pool, rows in members.items()})

    rng = random.Random(seed + 1)
    result = RunResult(heldout_by_source={source: [] for source in difficulty})
    for _step in range(config.steps):
        records: list[Record] = []
        practice = {source: [0.0] * len(levels) for source, levels in difficulty.items()}
        logicif_prompts = 0
        for prompt in range(config.prompts):
            source, interval = policy.draw()
            bucket = rng.choice(members[(source, interval)])
            success = _sigmoid(skill[source][bucket] - difficulty[source][bucket])
            solved = sum(rng.random() < success for _ in range(config.responses))
            rewards = [1.0] * solved + [0.0] * (config.responses - solved)
            records += [Record(source, interval, reward, group=str(prompt)) for reward in rewards]
            practice[source][bucket] += solved * (config.responses - solved) / config.responses**2
            logicif_prompts += source == "logicif"
        for source, amounts in practice.items():
            for j, amount in enumerate(amounts):
                if amount:
                    gain = config.learning_rate * amount / config.prompts * 4.0  # 4 = 1 / max variance 0.25
                    for k in range(len(amounts)):
                        skill[source][k] += gain * config.transfer ** abs(j - k)
        metrics = policy.update(records)
        result.policy_metrics.append(dict(metrics))
        result.batch_reward.append(statistics.fmean(r.reward for r in records))
        result.logicif_share.append(logicif_prompts / config.prompts)
        result.logicif_level.append(metrics.get("sampler/level/logicif", math.nan))
        by_source = {
            source: sum(
                rows * _sigmoid(skill[source][b] - difficulty[source][b])
                for b, rows in enumerate(rows_per_bucket[source])
            )
            / config.rows
            for source in difficulty
        }
        for source, value in by_source.items():
            result.heldout_by_source[source].append(value)
        result.heldout.append(statistics.fmean(by_source.values()))
    result.final_bucket_success = [
        _sigmoid(skill["logicif"][b] - difficulty["logicif"][b]) for b in range(LOGICIF_BUCKETS)
    ]
    unlocks = getattr(policy, "unlock_steps", None)
    if unlocks is not None:
        result.unlock_steps = unlocks().get("logicif", [])
    return result


def _mean_curve(curves: Sequence[Sequence[float]]) -> list[float]:
    return [statistics.fmean(values) for values in zip(*curves, strict=True)]


def summarize(results: Mapping[str, Sequence[RunResult]], last: int = 20) -> str:
    """A markdown table: final held-out reward (overall, per source), LogicIF share, unlock steps, mean over seeds.

    Args:
        results: runs per strategy label.
        last: the "final" values average the last ``last`` steps.

    Returns:
        The table as markdown.
    """
    lines = [
        "| strategy | held-out reward | iftrain | logicif | hardest 3 logicif buckets | logicif share | "
        "steps to unlocks 1, 2, 5, 10 |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, runs in results.items():

        def final(curves: Sequence[Sequence[float]]) -> str:
            values = [statistics.fmean(curve[-last:]) for curve in curves]
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            return f"{statistics.fmean(values):.3f} ± {spread:.3f}"

        hardest = [statistics.fmean(run.final_bucket_success[-3:]) for run in runs]
        unlocks = "-"
        if any(run.unlock_steps for run in runs):
            cells = []
            for level in (1, 2, 5, 10):
                reached = [run.unlock_steps[level - 1] for run in runs if len(run.unlock_steps) >= level]
                cells.append(
                    f"{statistics.fmean(reached):.0f} ({len(reached)}/{len(runs)})" if reached else f"- (0/{len(runs)})"
                )
            unlocks = ", ".join(cells)
        lines.append(
            f"| {label} | {final([r.heldout for r in runs])} | {final([r.heldout_by_source['iftrain'] for r in runs])} "
            f"| {final([r.heldout_by_source['logicif'] for r in runs])} | {statistics.fmean(hardest):.3f} "
            f"| {final([r.logicif_share for r in runs])} | {unlocks} |"
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

    def smooth(curve: Sequence[float], width: int = 9) -> list[float]:
        half = width // 2
        return [statistics.fmean(curve[max(0, i - half) : i + half + 1]) for i in range(len(curve))]

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
            curve = _mean_curve([pick(run) for run in runs])
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
            ax.plot(_mean_curve([run.logicif_level for run in runs]), next(styles), label=label, linewidth=2)
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
        success = _mean_curve([run.final_bucket_success for run in runs])
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


def main(argv: Sequence[str] | None = None) -> int:
    """Parse arguments, simulate every strategy, write plots and print the summary table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True, help="folder for the PNG plots")
    parser.add_argument("--steps", type=int, default=LearnerConfig.steps)
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0..N-1")
    args = parser.parse_args(argv)
    if args.steps < 1 or args.seeds < 1:
        parser.error("--steps and --seeds must be >= 1")
    results = run_all(LearnerConfig(steps=args.steps), range(args.seeds))
    for path in plot(results, args.out):
        print(f"wrote {path}")
    print(summarize(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())

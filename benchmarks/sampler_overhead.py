"""Per-step cost of each sampling policy: 512 draws plus one update with 4096 records (512 prompts x 8 responses).

The policy runs inside verl's data path once per prompt and once per step, so its cost must stay negligible next to
a training step (the target is <= 2 ms per step). The pools mimic a stage-2 run: ``iftrain`` as one pool and
``logicif`` in an initial interval plus 10 intervals. Rewards are fixed pseudo-random 0/1 values so every policy
sees the same records. Results go to ``benchmarks/sampler_overhead.md``.

Run from the repository root: ``python3 -m benchmarks.sampler_overhead`` (about ten seconds).
"""

from __future__ import annotations

import platform
import random
import statistics
import sys
import time
from pathlib import Path

from samplers import Record, SamplingPolicy, build_policy

PROMPTS = 512
RESPONSES_PER_PROMPT = 8
REPEATS = 200
TARGET_MS = 2.0
RESULTS = Path(__file__).with_name("sampler_overhead.md")

CONFIGS: list[tuple[str, str, dict]] = [
    ("uniform", "uniform", {}),
    ("fixed_ratio 1:1", "fixed_ratio", {}),
    ("ema_reweight", "ema_reweight", {}),
    ("reward_curriculum (ema, decay 0.5)", "reward_curriculum", {"source_weighting": "ema", "interval_decay": 0.5}),
    ("learnability_ucb", "learnability_ucb", {}),
]


def _prepared(name: str, params: dict) -> SamplingPolicy:
    """A policy with stage-2-like pools: 8000 iftrain rows and 8000 logicif rows with spread difficulties."""
    policy = build_policy(name, params, seed=0)
    sizes: dict[tuple[str, int], int] = {}
    for source in ("iftrain", "logicif"):
        difficulties = [float(i) for i in range(8000)]
        for interval in policy.assign_intervals(source, difficulties):
            sizes[(source, interval)] = sizes.get((source, interval), 0) + 1
    policy.set_pools(sizes)
    return policy


def _records(policy: SamplingPolicy, rng: random.Random) -> list[Record]:
    """One step's records: PROMPTS draws, each answered RESPONSES_PER_PROMPT times with a 0/1 reward."""
    records = []
    for prompt in range(PROMPTS):
        source, interval = policy.draw()
        for _ in range(RESPONSES_PER_PROMPT):
            records.append(Record(source, interval, float(rng.random() < 0.5), group=f"g{prompt}", item_id=str(prompt)))
    return records


def measure(name: str, params: dict) -> tuple[list[float], list[float]]:
    """Milliseconds of PROMPTS draws, and of one update, for each of REPEATS steps."""
    policy = _prepared(name, params)
    records = _records(policy, random.Random(1))
    draws, updates = [], []
    for _ in range(REPEATS):
        start = time.perf_counter()
        for _ in range(PROMPTS):
            policy.draw()
        middle = time.perf_counter()
        policy.update(records)
        end = time.perf_counter()
        draws.append((middle - start) * 1e3)
        updates.append((end - middle) * 1e3)
    return draws, updates


def main() -> int:
    rows = []
    for label, name, params in CONFIGS:
        draws, updates = measure(name, params)
        steps = [d + u for d, u in zip(draws, updates, strict=True)]
        median = statistics.median(steps)
        p90 = sorted(steps)[int(0.9 * len(steps))]
        rows.append((label, median, p90, statistics.median(draws) * 1e3 / PROMPTS, statistics.median(updates)))
        print(f"{label}: median {median:.3f} ms, p90 {p90:.3f} ms")
    lines = [
        "# Sampler overhead",
        "",
        f"Written by `benchmarks/sampler_overhead.py`: {PROMPTS} draws plus one update with "
        f"{PROMPTS * RESPONSES_PER_PROMPT} records per step, {REPEATS} steps per policy, one process.",
        f"Python {platform.python_version()} on {platform.machine()}; a shared, loaded 2-core machine, so compare "
        f"rows with each other rather than across machines; p90 shows other jobs' interference. "
        f"Target: <= {TARGET_MS} ms per step.",
        "",
        "| policy | median ms/step | p90 ms/step | median us/draw | median ms/update | within target (median) |",
        "|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {label} | {median:.3f} | {p90:.3f} | {draw_us:.2f} | {update_ms:.3f} | {median <= TARGET_MS} |"
        for label, median, p90, draw_us, update_ms in rows
    ]
    RESULTS.write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS}")
    return 0 if all(row[1] <= TARGET_MS for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

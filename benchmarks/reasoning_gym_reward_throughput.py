"""Throughput of the ``reasoning_gym`` family on one CPU core: samples scored per second, per task.

    python -m benchmarks.reasoning_gym_reward_throughput --out benchmarks/reasoning_gym_reward_throughput.md

Rows of each task at levels 0-3 (8 per level, rlif's builder), each scored through ``rewards.compute_score`` (the
router, thinking split, answer extraction and the task's scorer) with a mix of answers: right, wrong, the oracle in
a longer answer, and no answer span. Single process, after one warm-up pass (reasoning-gym's import and the
scorer's one-item dataset are outside the timing).
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

REPEATS = 50


def main(argv: list[str] | None = None) -> int:
    """Time every task and write a Markdown table."""
    import json

    from rewards import compute_score
    from rewards.reasoning_gym_tasks import TASKS
    from rlif.data.reasoning_gym_build import build_rows

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("benchmarks/reasoning_gym_reward_throughput.md"))
    args = parser.parse_args(argv)
    lines = [
        "# reasoning_gym reward throughput (one CPU core)",
        "",
        f"`python -m benchmarks.reasoning_gym_reward_throughput`; {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, reasoning-gym 0.1.25. Levels 0-3, 8 rows each, 4 answers per row "
        f"(right, wrong, oracle inside a longer answer, no answer span), {REPEATS} passes.",
        "",
        "| task | samples | samples/s per core | µs per sample |",
        "|---|---|---|---|",
    ]
    for task in TASKS:
        rows = build_rows([task], 8, [0, 1, 2, 3], seed=5)
        cases = []
        for row in rows:
            answer = json.loads(row["reward_model"]["ground_truth"])["entry"]["answer"]
            truth = row["reward_model"]["ground_truth"]
            for response in (
                f"<answer>{answer}</answer>",
                "<answer>wrong</answer>",
                f"<answer>It is {answer}.</answer>",
                answer,
            ):
                cases.append((row["data_source"], f"Reasoning first.\n{response}", truth))
        for case in cases:
            compute_score(*case)
        start = time.perf_counter()
        for _ in range(REPEATS):
            for case in cases:
                compute_score(*case)
        elapsed = time.perf_counter() - start
        samples = REPEATS * len(cases)
        lines.append(f"| {task} | {samples} | {samples / elapsed:,.0f} | {1e6 * elapsed / samples:.1f} |")
        print(lines[-1])
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Build throughput per task and size: seconds per solved item (generation + prompt + exact optimum), one core.

Run from the repository root: ``python3 benchmarks/graph_build.py [--items 20]``. Writes
``benchmarks/graph_build.md``. Items are the builder's own (``rlif.graphs.items.make_item``), so the numbers
predict ``python -m rlif.data.graph_build``: divide by the worker count for a multi-core or Ray build.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from pathlib import Path

from rlif.graphs.items import SIZES, make_item
from rlif.graphs.tasks import TASKS

RESULTS = Path(__file__).with_suffix(".md")


def main(argv: list[str] | None = None) -> int:
    """Time ``--items`` items per task and size and write the results file."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--items", type=int, default=20, help="items per task and size")
    parser.add_argument("--seed", type=int, default=12345)
    args = parser.parse_args(argv)
    lines = [
        "# Graph data build throughput (written by benchmarks/graph_build.py)",
        "",
        f"Python {platform.python_version()}; one process on a shared 2-core VM; CPU seconds per item "
        f"(`time.process_time`), {args.items} items per row, seed {args.seed}. "
        f"Command: `python3 benchmarks/graph_build.py --items {args.items} --seed {args.seed}`.",
        "",
        "| task | size | mean nodes | mean CPU s/item | median | max | items/CPU-s |",
        "|---|---|---|---|---|---|---|",
    ]
    for task in TASKS:
        for size in SIZES:
            seconds, nodes = [], []
            for index in range(args.items):
                start = time.process_time()
                item = make_item(task, size, args.seed, index)
                seconds.append(time.process_time() - start)
                nodes.append(item.instance.n)
            mean = statistics.mean(seconds)
            lines.append(
                f"| {task} | {size} | {statistics.mean(nodes):.1f} | {mean:.4f} | {statistics.median(seconds):.4f} | "
                f"{max(seconds):.3f} | {1 / mean:.1f} |"
            )
            print(lines[-1], flush=True)
    RESULTS.write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How many LogicIF responses one CPU core scores per second, on responses shaped like real rollouts.

GRPO scores every rollout of every step on CPU (e.g. 512 prompts x 16 samples = 8,192 responses per step), so
the reward must stay far below the generation time. This script builds seeded synthetic responses that look like
LogicIF rollouts: a 1-8 KB step-by-step trace full of Python dict reprs, sets and code blocks (braces the answer
search must skip) ending in the ``{"output": ..., "stats": {...}}`` answer, half of them after a 30 KB
``<think>`` section. They go through the full reward entry ``rewards.compute_score`` (thinking split, routing,
answer search, comparison). Hostile inputs (1 MB of ``{``, deep nesting, huge numbers) are timed separately
against the 50 ms per-response limit.

The numbers are CPU time of this one process (``time.process_time``), i.e. per core; compare ratios within one
run, not across machines. Results go to ``logicif_reward_throughput.md`` next to this script.

Usage::

    python3 -m benchmarks.logicif_reward_throughput [--responses 2000] [--seed 0] [--output PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from rewards import compute_score
from rewards.logicif import normalize_ground_truth

DEFAULT_OUTPUT = Path(__file__).with_name("logicif_reward_throughput.md")
THINK_CHARS = 30_000
HOSTILE_LIMIT_MS = 50.0


def _expected(rng: random.Random) -> tuple[object, dict[str, object]]:
    """A LogicIF-like expected answer: an int, a list, a nested list or a string, with 2-5 counters."""
    kind = rng.randrange(4)
    if kind == 0:
        output: object = rng.randint(-(10**6), 10**6)
    elif kind == 1:
        output = [rng.randint(0, 100) for _ in range(rng.randint(1, 30))]
    elif kind == 2:
        output = [rng.randint(0, 9), [rng.randint(0, 50) for _ in range(rng.randint(1, 12))]]
    else:
        output = "".join(rng.choice("abcdef") for _ in range(rng.randint(1, 20)))
    names = rng.sample(["swaps", "comparisons", "visits", "used_rope", "merges", "skips", "max_depth"], 5)
    stats = {
        name: (rng.random() < 0.5) if name == "used_rope" else rng.randint(0, 500)
        for name in names[: rng.randint(2, 5)]
    }
    return output, stats


def _trace(rng: random.Random, target_chars: int) -> str:
    """Step-by-step prose with the brace-heavy noise real traces contain."""
    lines = []
    size = 0
    step = 0
    while size < target_chars:
        step += 1
        choice = rng.randrange(5)
        if choice == 0:
            line = f"Step {step}: i = {rng.randint(0, 99)}, state = {{'left': {rng.randint(0, 9)}, 'seen': {{1, 2}}}}"
        elif choice == 1:
            line = f"```python\nfor k, v in d.items():\n    acc[k] = {{v: k for v in range({rng.randint(1, 9)})}}\n```"
        elif choice == 2:
            line = f"Compare arr[{rng.randint(0, 9)}] > arr[{rng.randint(0, 9)}]: {rng.random() < 0.5} -> swaps += 1"
        elif choice == 3:
            line = f'Intermediate: {{"i": {step}, "acc": [{rng.randint(0, 9)}, {rng.randint(0, 9)}]}}'
        else:
            line = "Now we continue with the next element of the list and update the counters accordingly."
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _answer(rng: random.Random, output: object, stats: dict[str, object]) -> str:
    """The final JSON, right about half the time, otherwise with one output or stats mistake."""
    output_given, stats_given = output, dict(stats)
    roll = rng.random()
    if roll < 0.25:
        output_given = [output] if not isinstance(output, list) else output[:-1]
    elif roll < 0.5:
        key = rng.choice(sorted(stats_given))
        stats_given[key] = 1 if isinstance(stats_given[key], bool) else int(stats_given[key]) + 1  # type: ignore[call-overload]
    indent = 2 if rng.random() < 0.5 else None
    return f"Final answer:\n```json\n{json.dumps({'output': output_given, 'stats': stats_given}, indent=indent)}\n```"


def build_responses(count: int, seed: int) -> list[tuple[str, str]]:
    """``count`` (response, canonical ground truth) pairs, half with a 30 KB thinking section."""
    rng = random.Random(seed)
    pairs = []
    for index in range(count):
        output, stats = _expected(rng)
        ground_truth = normalize_ground_truth(
            {"task_id": f"bench_{index}", "code_output": {"output": output, "stats": stats}}, where=f"bench row {index}"
        )
        body = _trace(rng, rng.randint(1_000, 8_000)) + "\n" + _answer(rng, output, stats)
        if index % 2:
            body = f"<think>\n{_trace(rng, THINK_CHARS)}\n</think>\n\n{body}"
        pairs.append((body, ground_truth))
    return pairs


def _cpu_seconds(work: Callable[[], object], repeats: int = 3) -> float:
    """Best CPU time of ``repeats`` runs (the machine is shared; the minimum is the least disturbed run)."""
    best = math.inf
    for _ in range(repeats):
        gc.collect()
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def _hostile_inputs() -> dict[str, str]:
    right = '{"output": 1, "stats": {}}'
    return {
        "1 MB of `{`": "{" * 1_000_000,
        "200k-deep nested objects": '{"a":' * 200_000 + "1" + "}" * 200_000,
        "1M-deep list in an answer": '{"output": ' + "[" * 500_000 + "]" * 500_000 + ', "stats": {}}',
        "1M-digit integer": '{"output": ' + "9" * 1_000_000 + ', "stats": {}}',
        '1 MB of `"`': '"' * 1_000_000,
        "answer + 200k `{x}`": right + " {x}" * 200_000,
        "1 MB prose + answer": "x" * 1_000_000 + right,
        "1 MB unicode": "é漢🙂\x00" * 250_000,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--responses", type=int, default=2000, help="number of synthetic responses (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args()
    if args.responses < 2:
        raise ValueError(f"--responses must be at least 2, got {args.responses}")

    pairs = build_responses(args.responses, args.seed)
    thinking = [pair for index, pair in enumerate(pairs) if index % 2]
    plain = [pair for index, pair in enumerate(pairs) if not index % 2]
    for response, ground_truth in pairs[:50]:  # warm the ground-truth cache and the allocator
        compute_score("logicif", response, ground_truth, None)

    results = {}
    for name, subset in (("all", pairs), ("answer only (1-8 KB)", plain), ("with 30 KB thinking", thinking)):
        seconds = _cpu_seconds(lambda subset=subset: [compute_score("logicif", r, g, None) for r, g in subset])
        results[name] = (len(subset), seconds)
    partial_seconds = _cpu_seconds(
        lambda: [compute_score("logicif", r, g, None, logicif_partial_credit=True) for r, g in pairs]
    )
    mean_reward = statistics.fmean(compute_score("logicif", r, g, None)["score"] for r, g in pairs)  # type: ignore[misc]

    hostile = {}
    for name, text in _hostile_inputs().items():
        times = []
        for _ in range(3):
            start = time.process_time()
            compute_score("logicif", text, pairs[0][1], None)
            times.append((time.process_time() - start) * 1000)
        hostile[name] = (len(text), min(times), max(times))

    mean_chars = statistics.fmean(len(r) for r, _ in pairs)
    lines = [
        "# LogicIF reward throughput",
        "",
        f"Written by `python3 -m benchmarks.logicif_reward_throughput --responses {args.responses} --seed {args.seed}`"
        f" on {time.strftime('%Y-%m-%d')}: Python {platform.python_version()}, {platform.machine()},"
        f" {os.cpu_count()} logical CPUs (shared, loaded machine). One process, best CPU time of 3 runs, full"
        " `rewards.compute_score`.",
        "",
        f"Synthetic responses: 1-8 KB traces with brace noise and a final JSON answer, every second one after a"
        f" {THINK_CHARS // 1000} KB `<think>` section; mean length {mean_chars / 1000:.1f} KB; mean binary reward"
        f" {mean_reward:.2f}.",
        "",
        "| responses | count | CPU s | responses/s per core | ms/response |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (count, seconds) in results.items():
        lines.append(f"| {name} | {count} | {seconds:.3f} | {count / seconds:,.0f} | {seconds / count * 1000:.3f} |")
    count = len(pairs)
    lines.append(
        f"| all, partial credit | {count} | {partial_seconds:.3f} | {count / partial_seconds:,.0f} |"
        f" {partial_seconds / count * 1000:.3f} |"
    )
    lines += [
        "",
        f"Hostile inputs (CPU time, best and worst of 3; limit {HOSTILE_LIMIT_MS:.0f} ms per response):",
        "",
        "| input | chars | best ms | worst ms |",
        "|---|---:|---:|---:|",
    ]
    lines += [f"| {name} | {chars:,} | {best:.2f} | {worst:.2f} |" for name, (chars, best, worst) in hostile.items()]
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

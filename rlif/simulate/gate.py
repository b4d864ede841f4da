"""When does a curriculum gate open for a learner that never improves? The gate's false-open and open times.

A frozen learner solves the initial interval at ``initial_success`` and every harder interval at ``success``, with
prompt-level spread (each row's success rate drawn from a Beta of that mean and concentration ``concentration``:
some functions are always solved, others never, as in LogicIF). Interval 1 opening is then the starting competence
on interval 0; interval 2 opening means the gate read noise (``success`` below the threshold) or a rate that is
above it. Only the responses the gate reads are generated: per update, the newest interval gets a binomial share
of the curriculum source's prompts (its draw probability), each prompt's row is drawn from the interval's rows (so
repeated rows are not first exposures), and each prompt gets ``responses`` responses.

``python -m rlif.simulate.gate`` prints the unlock updates per seed at 0.45, 0.48, 0.52 and 0.6 for the bound gate and
the former EMA gate, at the matrix's stage-2 shape (512 prompts x 8 responses, LogicIF share 0.5, 10 intervals).
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from samplers import Record, build_policy

STAGE2 = {"prompts": 512, "responses": 8, "share": 0.5, "rows": 40000}
"""The matrix's stage-2 batch shape: prompts per update, responses per prompt, LogicIF's share, LogicIF rows."""


def frozen_unlocks(
    success: float,
    seed: int,
    *,
    updates: int = 500,
    params: Mapping[str, Any] | None = None,
    initial_success: float = 0.9,
    concentration: float = 4.0,
    shape: Mapping[str, Any] = STAGE2,
) -> list[int]:
    """Unlock updates of LogicIF's curriculum for a frozen learner.

    Args:
        success: the learner's mean success on every interval after the initial one.
        seed: seed of the policy, the rows and the outcomes.
        updates: updates to simulate.
        params: ``reward_curriculum`` parameters (defaults: the policy's own, 10 intervals).
        initial_success: mean success on the initial interval.
        concentration: Beta concentration of per-row success (smaller: more spread between rows).
        shape: prompts, responses, LogicIF share and LogicIF rows per update.

    Returns:
        The update number of each unlock, in order.
    """
    rng = random.Random(seed)
    policy = build_policy("reward_curriculum", {"num_intervals": 10, **(params or {})}, seed=seed)
    rows = int(shape["rows"])
    intervals = policy.assign_intervals("logicif", [float(i) for i in range(rows)])
    members: dict[int, list[int]] = {}
    for row, interval in enumerate(intervals):
        members.setdefault(interval, []).append(row)
    policy.set_pools({("logicif", interval): len(listed) for interval, listed in members.items()})
    row_rate: dict[int, float] = {}
    draws = [0] * rows
    prompts = round(int(shape["prompts"]) * float(shape["share"]))
    for _update in range(updates):
        newest = max(interval for (_, interval), p in policy.probabilities().items() if p > 0)
        share = policy.probabilities()[("logicif", newest)]
        drawn = sum(rng.random() < share for _ in range(prompts))
        records = []
        for prompt in range(drawn):
            row = rng.choice(members[newest])
            if row not in row_rate:
                mean = initial_success if newest == 0 else success
                row_rate[row] = rng.betavariate(mean * concentration, (1 - mean) * concentration)
            exposure = draws[row]
            draws[row] += 1
            for _ in range(int(shape["responses"])):
                solved = float(rng.random() < row_rate[row])
                records.append(Record("logicif", newest, solved, f"{prompt}", str(row), solved, exposure))
        policy.update(records)
    return policy.unlock_steps()["logicif"]


def table(rates: Sequence[float], seeds: int, updates: int, params: Mapping[str, Any] | None = None) -> list[str]:
    """One line per success rate: the unlock updates of each seed (interval 1 first)."""
    lines = []
    for rate in rates:
        runs = [frozen_unlocks(rate, seed, updates=updates, params=params) for seed in range(seeds)]
        opened = sum(len(run) > 1 for run in runs)
        shown = "; ".join(",".join(map(str, run[:4])) + ("..." if len(run) > 4 else "") for run in runs)
        lines.append(f"success {rate:.2f}: interval 2+ opened in {opened}/{seeds} seeds | unlocks per seed: {shown}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    """Print the gate table for the bound gate and the former EMA gate."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--updates", type=int, default=500)
    parser.add_argument("--rates", type=float, nargs="+", default=[0.45, 0.48, 0.52, 0.6])
    args = parser.parse_args(argv)
    for label, params in (
        ("bound gate (defaults)", {}),
        ("former EMA gate", {"gate_statistic": "ema", "min_updates_per_unlock": 12}),
    ):
        print(f"{label}, threshold 0.5, {args.updates} updates, stage-2 shape {STAGE2}:")
        for line in table(args.rates, args.seeds, args.updates, params):
            print("  " + line)
    return 0


if __name__ == "__main__":
    sys.exit(main())

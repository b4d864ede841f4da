"""The CPU demo's judged run with a judge that gives no verdict for about a third of its requests: samples without a
verdict leave verl 0.9.1's real V1 loop before advantages (rlif's replay buffer, ``drop_no_verdict``).

The judge is the demo's stand-in (``rlif.demo_judge.StandInJudge``) answering a garbage body, which the judge
family's client reads as no verdict, for each request whose stand-in probability is below 0.35 (about a third: the
probabilities spread evenly over [0.05, 0.95)); the client retries once and gets the same garbage. A sample with two
soft constraints lacks a verdict when either request does. The demo then runs as ``python -m rlif.cpu_demo --judge``
would (2 steps, a resume for the 3rd) and prints its tables, the judge table with the buffer's drops included.

Run: ``PYTHONPATH=. python benchmarks/cpu_demo_no_verdict.py WORKDIR`` (about 10 minutes on 2 cores); the result is
benchmarks/cpu_demo_no_verdict.md.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from rlif.cpu_demo import DemoJudge, run_demo
from rlif.demo_judge import StandInJudge, stand_in_probability

NO_VERDICT_BELOW = 0.35
"""Requests whose stand-in probability is below this get a garbage reply."""


class FlakyStandIn(StandInJudge):
    """The stand-in judge, answering garbage (no verdict) to the requests below ``NO_VERDICT_BELOW``."""

    def reply(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """A garbage body or the stand-in's answer."""
        if stand_in_probability(body.get("messages")) < NO_VERDICT_BELOW:
            return 200, b"<html>garbage"
        return super().reply(body)


def main(argv: list[str]) -> int:
    """Run the judged demo in ``argv[0]`` against the flaky stand-in."""
    if len(argv) != 1:
        print("usage: python benchmarks/cpu_demo_no_verdict.py WORKDIR", file=sys.stderr)
        return 2
    with FlakyStandIn() as judge:
        code = run_demo(Path(argv[0]), judge=DemoJudge(url=judge.url, model=judge.model))
        print(f"judge requests: {judge.requests}")
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

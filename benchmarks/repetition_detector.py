"""Loop detection: ``rewards.graph.repetition`` against ``string-repetition`` 0.1.0 (the detector NPG-Muse calls).

Texts are 24,000 characters of real model prose (IFBench sample responses from ``shared/data``, joined in a seeded
order) with loops planted from sentences of that prose:

* ``end``: a loop of 5-12 copies that runs to the end of the text, cut mid-copy (a response that hit max length);
* ``middle``: the same kind of loop followed by at least 4,000 characters of normal text;
* ``prose``: no loop planted (a detection is a false positive unless the prose itself loops).

Times are process CPU time (the machine is shared); rlif's is the best of 3 calls, the reference's one call.
Both detectors use min_length/min_period 20 and min_repeats 5. The reference is called exactly as NPG-Muse calls it
(``StringRepetitionDetector(min_length=20, min_repeats=5).detect_string(text, parallel=True)``); it needs
``pip install string-repetition==0.1.0`` (benchmark only, not a runtime dependency).

Usage, from the repository root::

    python3 -m benchmarks.repetition_detector [--cases 6]

Results go to ``benchmarks/repetition_detector.md``.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import re
import statistics
import sys
import time
from pathlib import Path

from rewards.graph.repetition import has_repetition

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = REPO_ROOT.parent / "shared" / "data" / "ifbench_sample_responses.jsonl"
RESULTS = REPO_ROOT / "benchmarks" / "repetition_detector.md"
LENGTH = 24_000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=6, help="texts per kind (the reference takes 0.3-3 s each)")
    args = parser.parse_args()
    from string_repetition import StringRepetitionDetector  # benchmark-only dependency

    reference = StringRepetitionDetector(min_length=20, min_repeats=5)
    responses = [json.loads(line)["response"] for line in SAMPLES.read_text().splitlines()]
    rng = random.Random(2026)
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", "\n".join(responses)) if 20 <= len(s) <= 200]
    has_repetition(responses[0] * 2)  # warm-up: numpy and the cached power tables
    rows = []
    for kind in ("end", "middle", "prose"):
        for _ in range(args.cases):
            text = _make_text(kind, responses, sentences, rng)
            ours, ours_s = min(_timed(lambda t=text: has_repetition(t)) for _ in range(3))
            theirs, theirs_s = _timed(lambda t=text: reference.detect_string(t, parallel=True).has_repetition)
            rows.append({"kind": kind, "ours": ours, "ours_s": ours_s, "ref": theirs, "ref_s": theirs_s})
    report = _report(rows, args.cases)
    RESULTS.write_text(report)
    print(report)
    print(f"written to {RESULTS}")
    return 0


def _make_text(kind: str, responses: list[str], sentences: list[str], rng: random.Random) -> str:
    order = responses[:]
    rng.shuffle(order)
    prose = "\n\n".join(order)[:LENGTH]
    if kind == "prose":
        return prose
    unit = rng.choice(sentences) + " "
    copies = rng.randint(5, 12)
    loop = unit * copies
    if kind == "end":
        cut = rng.randint(1, len(unit) - 1)  # stop mid-copy, as a max-length truncation does
        body = prose[: LENGTH - len(loop) - cut]
        return body + loop + unit[:cut]
    at = rng.randint(2_000, LENGTH - len(loop) - 4_000)
    return (prose[:at] + loop + prose[at:])[:LENGTH]


def _timed(fn) -> tuple[bool, float]:
    """Result and CPU seconds of the process (steadier than wall time on a shared machine)."""
    start = time.process_time()
    value = fn()
    return bool(value), time.process_time() - start


def _report(rows: list[dict], cases: int) -> str:
    def kind_rows(kind: str) -> list[dict]:
        return [r for r in rows if r["kind"] == kind]

    lines = [
        "# Loop detector: rlif vs string-repetition 0.1.0",
        "",
        f"Written by `benchmarks/repetition_detector.py` ({cases} texts per kind, {LENGTH:,} characters each, real",
        "IFBench sample prose with loops planted from its own sentences; min length 20, min repeats 5).",
        f"Machine: {platform.machine()}, Python {sys.version.split()[0]}, single process, one run; times are process",
        "CPU time (rlif: best of 3 calls; string-repetition: one call).",
        "",
        "| texts | rlif detections | string-repetition detections | rlif median CPU ms "
        "| string-repetition median CPU ms |",
        "|---|---|---|---|---|",
    ]
    for kind, label in (("end", "loop at the end"), ("middle", "loop in the middle"), ("prose", "no loop (prose)")):
        group = kind_rows(kind)
        lines.append(
            f"| {label} | {sum(r['ours'] for r in group)}/{len(group)} | {sum(r['ref'] for r in group)}/{len(group)} "
            f"| {statistics.median(r['ours_s'] for r in group) * 1e3:.2f} "
            f"| {statistics.median(r['ref_s'] for r in group) * 1e3:.1f} |"
        )
    ours_total = sum(r["ours_s"] for r in rows)
    ref_total = sum(r["ref_s"] for r in rows)
    lines += [
        "",
        f"Total CPU time: rlif {ours_total * 1e3:.1f} ms, string-repetition {ref_total:.2f} s; "
        f"speed ratio {ref_total / ours_total:.0f}x. Worst rlif time {max(r['ours_s'] for r in rows) * 1e3:.2f} ms.",
        "",
        "Recall counts detections of planted loops; on prose, any detection is a false positive.",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

"""The Qwen2.5-Math harness's own verdicts on crafted answers, for the agreement test of rlif's math families.

Not run in CI: it imports the harness (QwenLM/Qwen2.5-Math ``evaluation/``), which needs sympy 1.12, antlr4 4.11.1,
its bundled latex2sympy, regex and word2number, so it runs in a separate environment::

    git -C Qwen2.5-Math archive a45202b evaluation | tar -x -C /tmp/qwen_math   # or copy evaluation/
    python -m venv /tmp/qwen_venv && /tmp/qwen_venv/bin/pip install sympy==1.12 antlr4-python3-runtime==4.11.1 \\
        numpy regex word2number && /tmp/qwen_venv/bin/pip install -e /tmp/qwen_math/evaluation/latex2sympy
    /tmp/qwen_venv/bin/python benchmarks/math_agreement.py --harness /tmp/qwen_math/evaluation \\
        --out tests/rewards/data/math_agreement.json

For each benchmark it takes the first rows of the harness's ``data/<name>/test.jsonl`` (MATH-500 and AIME 2025,
which the harness lacks, get a few rows written here in their published shape), writes answers of every kind the
graders treat differently (boxed, "the answer is", last number only, near numbers, percentages, units, tuples,
letters with and without triggers, unfinished thinking) and records what the harness concludes: its gold, the
prediction it extracts and its verdict, exactly as ``math_eval.py`` and ``evaluate.py`` chain ``extract_answer``,
``strip_string``, the letter fallback and ``math_equal``. tests/rewards/test_math_agreement.py then scores the
same answers with rlif and requires every difference to be a documented deviation.
"""

from __future__ import annotations

import argparse
import json
import re
import signal
import subprocess
import sys
from pathlib import Path

HARNESS_COMMIT = "a45202b"
ROWS_PER_SET = 3
QWEN_SETS = (
    "aime24",
    "amc23",
    "gsm8k",
    "minerva_math",
    "gaokao2023en",
    "gaokao2024_mix",
    "college_math",
    "cmath",
    "svamp",
    "asdiv",
    "mawps",
    "sat_math",
    "aqua",
    "mmlu_stem",
)
CHOICE_SETS = ("sat_math", "aqua", "mmlu_stem")
MATH500_ROWS = (
    {"problem": "Convert the point $(0,3)$ to polar coordinates.", "answer": "\\left( 3, \\frac{\\pi}{2} \\right)"},
    {"problem": "Compute $\\frac{14}{3}$ as a fraction.", "answer": "\\frac{14}{3}"},
    {"problem": "Write the sum in terms of $p$ and $q$.", "answer": "p - q"},
    {"problem": "Which student has the greatest average speed?", "answer": "\\text{Evelyn}"},
    {"problem": "Find $z$.", "answer": "6 - 5i"},
)
AIME25_ROWS = ({"problem": "Find the sum.", "answer": "70"}, {"problem": "Find the area.", "answer": "588"})


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def free_answers(gold: str) -> list[tuple[str, str]]:
    """Crafted free-form answers for a gold answer, each with a short label."""
    out = [
        ("boxed", f"We compute step by step. So the answer is $\\boxed{{{gold}}}$."),
        ("boxed_wrong", "We compute step by step. So the answer is $\\boxed{17}$."),
        ("answer_is", f"Working it out, the answer is {gold}."),
        ("last_box_wins", f"First $\\boxed{{17}}$, but correcting the error gives $\\boxed{{{gold}}}$."),
        ("empty", ""),
        ("unfinished_thinking", f"<think>Let me try. Maybe {gold}, maybe 3. I think it is {gold}"),
        ("think_then_boxed", f"<think>It could be 17.</think>\n\nThe answer is $\\boxed{{{gold}}}$."),
        ("units", f"The answer is $\\boxed{{{gold} \\text{{ cm}}}}$."),
    ]
    if _is_number(gold):
        value = float(gold)
        out += [
            ("last_number", f"Adding the parts gives 3 + 4 and in the end we get {gold}"),
            ("near_1e-5", f"$\\boxed{{{value * (1 + 1e-5):.10g}}}$"),
            ("near_1e-3", f"$\\boxed{{{value * (1 + 1e-3) + 1e-3:.10g}}}$"),
            ("times_100", f"$\\boxed{{{value * 100:g}}}$"),
            ("percent", f"$\\boxed{{{gold}\\%}}$"),
            ("trailing_zero", f"$\\boxed{{{gold}.0}}$" if "." not in gold else f"$\\boxed{{{gold}0}}$"),
            ("thousands", f"$\\boxed{{{value * 1000:,.0f}}}$"),
            ("fraction", f"$\\boxed{{\\frac{{{value * 2:g}}}{{2}}}}$"),
        ]
    return out


def choice_answers(gold: str) -> list[tuple[str, str]]:
    """Crafted multiple-choice answers for a one-letter gold, each with a short label."""
    wrong = "B" if gold != "B" else "C"
    return [
        ("answer_is", f"Checking each option, the answer is ({gold})."),
        ("boxed", f"So the correct option is $\\boxed{{{gold}}}$."),
        ("boxed_text", f"So the correct option is $\\boxed{{\\text{{{gold}}}}}$."),
        ("answer_is_wrong", f"Checking each option, the answer is {wrong}."),
        ("no_trigger_last_letter", f"Option {wrong} fails, so I pick {gold}."),
        ("no_trigger_later_letter", f"I pick {gold}. Option {wrong} fails."),
        ("lowercase", f"the answer is ({gold.lower()})"),
        ("two_triggers", f"The answer is {gold}.\n\nWait, maybe the answer is {wrong}."),
        ("answer_is_a_word", f"The answer is a bit subtle, but option {gold} holds."),
        ("choice_is", f"My choice is {gold}"),
        ("option_text_only", "The value is forty-two, the second option's text."),
        ("empty", ""),
        ("think_then_answer", f"<think>the answer is {wrong}</think>\n\nThe answer is {gold}."),
        ("unfinished_thinking", f"<think>the answer is {gold}"),
        ("boxed_then_trigger", f"$\\boxed{{{wrong}}}$ is tempting, but the answer is {gold}."),
    ]


def written_gold(benchmark: str, row: dict, harness_gold: str) -> str:
    """The gold as the benchmark's file writes it (before the harness's ``strip_string``), to craft answers from:
    the harness's cleaned gold can be broken LaTeX (``\\leq x`` becomes ``\\lex``)."""
    if benchmark == "gsm8k":
        return row["answer"].rpartition("####")[2].strip().replace(",", "")
    field = {"svamp": "Answer", "mawps": "target"}.get(benchmark, "answer")
    if benchmark == "minerva_math" or field not in row:
        return harness_gold
    value = row[field]
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    text = str(value).replace("$", "").strip()
    return re.sub(r"\(.*?\)", "", text).strip() if benchmark == "asdiv" else text


def _harness_verdict(harness: dict, data_name: str, example: dict, response: str) -> dict:
    """Run the harness's chain on one answer: gold, extracted prediction, verdict."""
    _, gold = harness["parse_ground_truth"](dict(example), data_name)
    pred = harness["extract_answer"](response, data_name)
    pred = harness["strip_string"](pred, skip_unit=data_name in harness["STRIP_EXCEPTIONS"])
    # math_eval.py's letter fallback, as it runs after extraction
    if gold in ["A", "B", "C", "D", "E"] and pred not in ["A", "B", "C", "D", "E"]:
        pred = harness["choice_answer_clean"](response)
    elif all(c in "ABCDE" for c in gold) and not all(c in "ABCDE" for c in pred):
        pred = "".join(c for c in pred if c in "ABCDE")
    signal.alarm(10)
    try:
        correct = bool(harness["math_equal"](pred, gold))
    except TimeoutError:
        correct = False
    finally:
        signal.alarm(0)
    return {"gold": str(gold), "pred": str(pred), "correct": correct}


def _on_alarm(signum: int, frame: object) -> None:
    raise TimeoutError


def main(argv: list[str] | None = None) -> int:
    """Write the crafted answers and the harness's verdicts on them."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--harness", type=Path, required=True, help="the harness's evaluation/ folder")
    parser.add_argument("--data", type=Path, help="its data/ folder (default: <harness>/data)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sys.path.insert(0, str(args.harness))
    import grader  # the harness's modules, importable only from its folder
    import parser as harness_parser

    harness = {
        "parse_ground_truth": harness_parser.parse_ground_truth,
        "extract_answer": harness_parser.extract_answer,
        "strip_string": harness_parser.strip_string,
        "STRIP_EXCEPTIONS": harness_parser.STRIP_EXCEPTIONS,
        "choice_answer_clean": harness_parser.choice_answer_clean,
        "math_equal": grader.math_equal,
    }
    signal.signal(signal.SIGALRM, _on_alarm)
    data = args.data or args.harness / "data"
    jobs: list[tuple[str, str, dict]] = []
    for name in QWEN_SETS:
        lines = (data / name / "test.jsonl").read_text(encoding="utf-8").splitlines()
        jobs += [(name, name, json.loads(line)) for line in lines[:ROWS_PER_SET]]
        if name == "gaokao2024_mix":  # its first rows are choice questions; add free-form ones
            free = [json.loads(line) for line in lines if not json.loads(line)["choice_answer"]]
            jobs += [(name, name, row) for row in free[:ROWS_PER_SET]]
    jobs += [("math500", "math", {**row, "solution": f"\\boxed{{{row['answer']}}}"}) for row in MATH500_ROWS]
    jobs += [("aime25", "aime24", dict(row)) for row in AIME25_ROWS]
    cases = []
    for benchmark, data_name, row in jobs:
        _, gold = harness["parse_ground_truth"](dict(row), data_name)
        letters = gold in ["A", "B", "C", "D", "E"]
        crafted = choice_answers(gold) if letters else free_answers(written_gold(benchmark, row, str(gold)))
        source_row = {k: v for k, v in row.items() if k != "solution" or benchmark == "minerva_math"}
        for label, response in crafted:
            cases.append(
                {
                    "id": f"{benchmark}:{len([c for c in cases if c['benchmark'] == benchmark])}:{label}",
                    "benchmark": benchmark,
                    "row": source_row,
                    "response": response,
                    "harness": _harness_verdict(harness, data_name, row, response),
                }
            )
    versions = subprocess.run(
        [sys.executable, "-m", "pip", "freeze"], capture_output=True, text=True, check=False
    ).stdout.split()
    out = {
        "harness": f"QwenLM/Qwen2.5-Math evaluation/ at {HARNESS_COMMIT}",
        "environment": sorted(v for v in versions if v.split("=")[0].lower() in {"sympy", "antlr4-python3-runtime"}),
        "cases": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {len(cases)} cases to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""reasoning-gym's own scores of crafted answers, for the agreement test of rlif's ``reasoning_gym`` family.

    python -m benchmarks.reasoning_gym_agreement --out tests/rewards/data/reasoning_gym_agreement.json

For each supported task it takes one item per level (levels 0 and 2, seed 7, from rlif's builder), writes answers
of every kind the scorers treat differently (right, with reasoning around it, several answer spans, whitespace and
case variants, wrong, the oracle inside a longer answer, malformed tags, an empty span, no span at all, and for
string_insertion the right and wrong strings as literal character lists) and records reasoning-gym's score: its
training's ``extract_answer`` on the text after the thinking section, then ``get_score_answer_fn(task)(answer,
entry)`` (reasoning-gym's full path, ``eval`` included: the answers are the ones written here). Cases marked
``deviation`` are the documented differences (docs/reasoning-gym.md): they record both scores and stay out of the
agreement count. tests/rewards/test_reasoning_gym.py scores every case with rlif and requires equality.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

LEVELS = (0, 2)
SEED = 7


def crafted(task: str, answer: str) -> list[tuple[str, str]]:
    """(kind, response) pairs for an item whose oracle answer is ``answer``."""
    wrong = answer[:-1] + ("X" if not answer.endswith("X") else "Y") if answer else "X"
    cases = [
        ("right", f"<answer>{answer}</answer>"),
        ("right_with_reasoning", f"Step by step, the result follows.\n<answer>{answer}</answer>\nDone."),
        ("right_padded", f"<answer>\n{answer}\n</answer>"),
        ("right_spaces", f"<answer>   {answer}   </answer>"),
        ("right_after_thinking", f"<think>Let me work it out.</think>\n<answer>{answer}</answer>"),
        ("right_last_of_two", f"<answer>{wrong}</answer> on reflection <answer>{answer}</answer>"),
        ("wrong_last_of_two", f"<answer>{answer}</answer> on reflection <answer>{wrong}</answer>"),
        ("wrong", f"<answer>{wrong}</answer>"),
        ("upper_case", f"<answer>{answer.upper()}</answer>"),
        ("oracle_in_longer", f"<answer>The answer is {answer}.</answer>"),
        ("oracle_with_unit", f"<answer>{answer} steps</answer>"),
        ("malformed_unclosed", f"<answer>{answer}"),
        ("malformed_reversed", f"</answer>{answer}<answer>"),
        ("malformed_other_tag", f"<final>{answer}</final>"),
        ("empty_span", "<answer></answer>"),
        ("no_span", answer),
        ("no_span_prose", f"The answer is {answer}."),
        ("empty_response", ""),
        ("unclosed_thinking", f"<think>It is <answer>{answer}</answer> probably"),
    ]
    if task == "string_insertion":
        cases += [
            ("char_list", f"<answer>{list(answer)!r}</answer>"),
            ("char_tuple", f"<answer>{tuple(answer)!r}</answer>"),
            ("char_list_wrong", f"<answer>{list(wrong)!r}</answer>"),
            ("string_literal", f"<answer>{answer!r}</answer>"),
            ("not_a_literal", "<answer>[A, B]</answer>"),
            ("number_list", "<answer>[1, 2]</answer>"),
        ]
    return cases


DEVIATIONS = (
    ("eval_expression", "string_insertion", lambda a: f"<answer>list({a!r})</answer>"),
    ("eval_expression_concat", "string_insertion", lambda a: f"<answer>{a[:2]!r} + {a[2:]!r}</answer>"),
    ("span_only_in_thinking", None, lambda a: f"<think>It is <answer>{a}</answer>.</think> I am sure."),
)
"""(kind, task or None for every task, response maker) of the documented deviations."""


def oracle_score(task: str, response: str, entry: dict[str, Any], *, whole: bool = False) -> float:
    """reasoning-gym's score of ``response``: ``extract_answer`` after the thinking (on the whole response when
    ``whole``, as its training reads a completion), then the task's scorer."""
    from reasoning_gym import get_score_answer_fn
    from reasoning_gym.utils import extract_answer

    if whole:
        return float(get_score_answer_fn(task)(extract_answer(response), entry))
    close = response.rfind("</think>")
    if close >= 0:
        response = response[close + len("</think>") :]
    elif "<think>" in response:
        return 0.0
    return float(get_score_answer_fn(task)(extract_answer(response), entry))


def main(argv: list[str] | None = None) -> int:
    """Write the cases with reasoning-gym's scores and print the count per task."""
    from rewards.reasoning_gym_tasks import TASKS
    from rlif.data.reasoning_gym_build import level_items

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=Path("tests/rewards/data/reasoning_gym_agreement.json"))
    args = parser.parse_args(argv)
    items: dict[str, list[dict[str, Any]]] = {}
    cases = []
    for task in TASKS:
        items[task] = [json.loads(json.dumps(level_items(task, level, 1, SEED)[0])) for level in LEVELS]
        for k, entry in enumerate(items[task]):
            for kind, response in crafted(task, entry["answer"]):
                score = oracle_score(task, response, entry)
                cases.append({"task": task, "item": k, "kind": kind, "response": response, "oracle": score})
            for kind, only, make in DEVIATIONS:
                if only in (None, task):
                    response = make(entry["answer"])
                    score = oracle_score(task, response, entry, whole=True)
                    case = {"task": task, "item": k, "kind": kind, "response": response, "oracle": score}
                    cases.append({**case, "deviation": True})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    payload = {"reasoning_gym": "0.1.25", "levels": list(LEVELS), "seed": SEED, "items": items, "cases": cases}
    args.out.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n")
    counts = Counter(c["task"] for c in cases if not c.get("deviation"))
    agreed = sum(counts.values())
    print(f"{args.out}: {agreed} agreement cases {dict(counts)}, {len(cases) - agreed} deviation cases")
    return 0


if __name__ == "__main__":
    sys.exit(main())

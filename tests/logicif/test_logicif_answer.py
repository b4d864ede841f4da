"""Answer extraction: which JSON object counts as the answer, and what never breaks the search."""

from __future__ import annotations

import time

import pytest

from rewards.logicif.answer import ScanBudget, _may_be_enclosed, decode_strict_json, find_answer

ANSWER = '{"output": 20, "stats": {"used_rope": true, "rope_units": 5}}'


def test_finds_the_answer_after_a_trace_with_python_dicts_and_code() -> None:
    text = (
        "Step 1: state = {'i': 0, 'seen': {1, 2}}\n```python\nd = {k: v for k, v in x}\n```\n"
        f"So the result is:\n```json\n{ANSWER}\n```\n"
    )
    found = find_answer(text)
    assert found is not None
    assert (found.output, found.stats) == (20, {"used_rope": True, "rope_units": 5})
    assert text[found.start : found.end] == ANSWER


@pytest.mark.parametrize(
    ("text", "output"),
    [
        # the last keyed object wins over an earlier one
        ('{"output": 1, "stats": {}} then corrected: {"output": 2, "stats": {}}', 2),
        # an unrelated trailing object is skipped, not taken as the answer
        ('{"output": 3, "stats": {}}\nConfidence: {"level": "high"}', 3),
        # an answer wrapped in another object or list still counts
        ('{"final": {"output": 4, "stats": {}}}', 4),
        ('[{"output": 5, "stats": {}}]', 5),
        # a keyed object nested in a keyed object: the outer one ends last and wins
        ('{"output": {"output": 0, "stats": {}}, "stats": {"k": 1}}', {"output": 0, "stats": {}}),
        # extra keys are allowed, whitespace and newlines too
        ('{\n  "explanation": "x",\n  "output": [1, [2, 3]],\n  "stats": {"a": 1}\n}', [1, [2, 3]]),
        # a later invalid object does not hide an earlier valid answer
        ('{"output": 6, "stats": {}} and {"output": 7, "stats": {oops}}', 6),
        # braces inside strings do not confuse the decoder
        ('{"output": "a}b{c", "stats": {"s": "{"}}', "a}b{c"),
    ],
)
def test_which_object_is_the_answer(text: str, output: object) -> None:
    found = find_answer(text)
    assert found is not None
    assert found.output == output


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no json here",
        '{"output": 1}',  # no stats
        '{"stats": {}}',  # no output
        '["output", "stats"]',
        "{'output': 1, 'stats': {}}",  # a Python dict repr is not JSON
        '{"output": NaN, "stats": {}}',
        '{"output": Infinity, "stats": {}}',
        '{"output": 1, "stats": {"a": -Infinity}}',
        '{"output": ' + "9" * 4301 + ', "stats": {}}',
        '{"output": 1, "stats": {}',  # unclosed
        "{" * 10_000,
    ],
)
def test_no_answer(text: str) -> None:
    assert find_answer(text) is None


def test_longest_allowed_integer_is_accepted() -> None:
    found = find_answer('{"output": ' + "9" * 4300 + ', "stats": {}}')
    assert found is not None
    assert found.output == int("9" * 4300)


def test_answer_longer_than_the_window_is_not_found() -> None:
    budget = ScanBudget(max_object_chars=100)
    short = '{"output": [1, 2], "stats": {}}'
    long = '{"output": [' + ", ".join(["1"] * 100) + '], "stats": {}}'
    assert find_answer(short, budget) is not None
    assert find_answer(long, budget) is None


def test_attempt_budget_limits_how_far_back_the_search_goes() -> None:
    text = ANSWER + " {x}" * 50
    assert find_answer(text, ScanBudget(max_attempts=60)) is not None
    assert find_answer(text, ScanBudget(max_attempts=40)) is None


@pytest.mark.parametrize(
    "text",
    [
        "{" * 1_000_000,
        '{"a":' * 200_000 + "1" + "}" * 200_000,
        '{"output":' * 200_000 + "1" + ',"stats":{}}' * 200_000,
        '{"output": 1, "stats": {}, "x": ' + "[" * 300_000 + "]" * 300_000 + "}",
        '{"output": "' + '{\\"x' * 200_000 + '"',
        '{"a":{"a":' * 100_000,
        '{"output": ' + "9" * 1_000_000 + ', "stats": {}}',
    ],
    ids=["braces", "nested", "nested-keyed", "deep-list", "string", "unclosed", "huge-int"],
)
def test_hostile_megabyte_inputs_finish_fast(text: str) -> None:
    start = time.process_time()
    find_answer(text)
    assert time.process_time() - start < 0.25  # CPU time; generous for a loaded machine


def test_non_string_input_has_no_answer() -> None:
    assert find_answer(None) is None  # type: ignore[arg-type]


@pytest.mark.parametrize("field", ["max_attempts", "max_decoded_chars", "max_object_chars"])
@pytest.mark.parametrize("value", [0, -1, True, 1.5])
def test_budget_rejects_non_positive_integers(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=field):
        ScanBudget(**{field: value})  # type: ignore[arg-type]


def test_decode_strict_json() -> None:
    assert decode_strict_json(' {"a": [1, 2.5, true, null]}\n') == {"a": [1, 2.5, True, None]}
    for bad in ["NaN", '{"a": Infinity}', "1 2", "", "[" * 100_000, "9" * 5000]:
        with pytest.raises(ValueError):
            decode_strict_json(bad)


@pytest.mark.parametrize("cut", range(4000, 4100))
def test_answers_longer_than_the_first_window_are_found_wherever_it_cuts(cut: int) -> None:
    # Padding moves every token type (string, escape, number, literal, structure) across the 4096-char mark.
    head = '{"output": "' + "x" * (cut - 12) + '", "stats": {"ok": true, "n": -12.5e3, "s": "\\u00e9", "z": null}, '
    text = head + '"tail": ["' + "y" * 5000 + '", false]}'
    found = find_answer(text)
    assert found is not None
    assert found.stats == {"ok": True, "n": -12500.0, "s": "é", "z": None}


@pytest.mark.parametrize(
    ("before", "enclosable"),
    [("```json\n", False), ("text ", False), ("", False), ('{"a": ', True), ("[ \n", True), ("[1,\t", True)],
)
def test_search_stops_once_nothing_can_enclose_the_answer(before: str, enclosable: bool) -> None:
    assert _may_be_enclosed(before + ANSWER, len(before)) is enclosable

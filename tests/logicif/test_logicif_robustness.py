"""Model output never breaks the LogicIF reward: any text scores in [0, 1], quickly, without raising."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rewards import compute_score
from rewards.logicif import normalize_ground_truth

GT = normalize_ground_truth(
    {"task_id": "t", "code_output": {"output": [3, [1, 2]], "stats": {"swaps": 2, "sorted": True}}}, where="test"
)
RIGHT = '{"output": [3, [1, 2]], "stats": {"swaps": 2, "sorted": true}}'
TIME_LIMIT_S = 0.05
MARGIN = 4  # CPU time on a loaded 2-core CI machine

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)
fragments = st.sampled_from(
    ["{", "}", "[", "]", '"', "\\", ":", ",", "<think>", "</think>", '"output"', '"stats"', "NaN", "1e999", " "]
)


def _check(response: str, partial: bool = False) -> dict[str, float | None]:
    start = time.process_time()
    result = compute_score("logicif", response, GT, None, logicif_partial_credit=partial)
    elapsed = time.process_time() - start
    assert elapsed < TIME_LIMIT_S * MARGIN, f"{elapsed * 1000:.1f} ms for a {len(response)}-char response"
    assert result["reward_error"] == 0.0
    assert 0.0 <= result["score"] <= 1.0  # type: ignore[operator]
    assert result["acc"] in (0.0, 1.0)
    return result


@SETTINGS
@given(st.text(), st.booleans())
def test_any_unicode_text(text: str, partial: bool) -> None:
    _check(text, partial)


@SETTINGS
@given(st.lists(fragments | st.text(max_size=5), max_size=200), st.booleans())
def test_bracket_and_quote_soup(parts: list[str], partial: bool) -> None:
    _check("".join(parts), partial)


@SETTINGS
@given(json_values, json_values, st.text(max_size=50), st.booleans())
def test_arbitrary_answer_objects(output: object, stats: object, prefix: str, partial: bool) -> None:
    answer = json.dumps({"output": output, "stats": stats})  # may contain NaN/Infinity, which must not parse
    result = _check(prefix + answer, partial)
    if result["logicif_parsed"] == 0.0:
        assert "NaN" in answer or "Infinity" in answer or "<think>" in prefix or "</think>" in answer


@SETTINGS
@given(st.text(max_size=200), st.text(max_size=200))
def test_right_answer_survives_surrounding_text_without_braces_or_think_tags(before: str, after: str) -> None:
    def clean(text: str) -> str:
        return text.replace("{", "").replace("<think>", "").replace("</think>", "")

    result = _check(clean(before) + RIGHT + clean(after))
    assert result["score"] == 1.0


@pytest.mark.parametrize(
    "response",
    [
        "",
        " \n\t",
        "{" * 100_000,
        "{" * 1_000_000,
        "}" * 1_000_000,
        "[" * 1_000_000,
        '{"a":' * 200_000 + "1" + "}" * 200_000,
        '{"output": ' + "[" * 500_000 + "]" * 500_000 + ', "stats": {}}',
        '{"output": ' + "9" * 1_000_000 + ', "stats": {}}',
        '{"output": 1e99999, "stats": {"swaps": -1e99999}}',
        '"' * 1_000_000,
        "\\" * 1_000_000,
        "é漢🙂\x00" * 250_000,
        "<think>" + "x" * 1_000_000 + "</think>" + RIGHT,
        "<think>" + "{" * 1_000_000,
        RIGHT + " {x}" * 200_000,
        "x" * 1_000_000 + RIGHT,
    ],
    ids=lambda r: f"{len(r)}:{r[:12]!r}",
)
def test_hostile_and_megabyte_responses(response: str) -> None:
    result = _check(response)
    assert result["score"] == float(response.startswith("<think>x") or response.startswith("xxxx"))

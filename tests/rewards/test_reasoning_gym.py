"""The ``reasoning_gym`` family: agreement with reasoning-gym's own scorers, answer extraction, the success
indicator, ground-truth checks, metrics, and the row builder's levels."""

from __future__ import annotations

import importlib.util
import json
from collections import Counter
from pathlib import Path

import pytest

from rewards import check_row, compute_score, normalize_ground_truth
from rewards import reasoning_gym_tasks as rg
from rewards.reasoning_gym_tasks import TASKS

AGREEMENT = json.loads((Path(__file__).parent / "data" / "reasoning_gym_agreement.json").read_text())
CASES = AGREEMENT["cases"]
HAS_REASONING_GYM = importlib.util.find_spec("reasoning_gym") is not None
needs_reasoning_gym = pytest.mark.skipif(not HAS_REASONING_GYM, reason="reasoning-gym is not installed")


def _truth(task: str, item: int) -> str:
    entry = AGREEMENT["items"][task][item]
    return normalize_ground_truth(rg.PREFIX + task, {"task": task, "entry": entry}, where="test")


def _rlif(case: dict) -> float:
    return compute_score(rg.PREFIX + case["task"], case["response"], _truth(case["task"], case["item"]))["score"]


def test_the_agreement_set_covers_every_task_with_every_kind_of_answer() -> None:
    kinds = {task: {c["kind"] for c in CASES if c["task"] == task and not c.get("deviation")} for task in TASKS}
    for task in TASKS:
        assert {"right", "wrong", "malformed_unclosed", "no_span", "empty_span"} <= kinds[task], task
    scores = Counter((c["task"], c["oracle"] == 1.0) for c in CASES if not c.get("deviation"))
    for task in TASKS:
        assert scores[(task, True)] and scores[(task, False)], task
    assert any(0.0 < c["oracle"] < 1.0 for c in CASES if c["task"] == "string_insertion")


@needs_reasoning_gym
@pytest.mark.parametrize("case", [c for c in CASES if not c.get("deviation")], ids=lambda c: f"{c['task']}-{c['kind']}")
def test_rlif_scores_equal_reasoning_gym_on_every_agreement_case(case: dict) -> None:
    assert _rlif(case) == case["oracle"]


@needs_reasoning_gym
def test_the_stored_scores_are_reasoning_gyms_own() -> None:
    from benchmarks.reasoning_gym_agreement import oracle_score

    for case in CASES:
        entry = AGREEMENT["items"][case["task"]][case["item"]]
        whole = bool(case.get("deviation"))
        assert oracle_score(case["task"], case["response"], entry, whole=whole) == case["oracle"], case["kind"]


@pytest.mark.parametrize("case", [c for c in CASES if c.get("deviation")], ids=lambda c: f"{c['task']}-{c['kind']}")
def test_documented_deviations_differ_only_as_documented(case: dict) -> None:
    # reasoning-gym pays for these; rlif does not: eval() of an expression, an answer span only inside the thinking.
    assert case["oracle"] > 0.0
    if not HAS_REASONING_GYM and case["task"] != "string_insertion":
        pytest.skip("needs reasoning-gym's scorer")
    assert _rlif(case) == 0.0


def test_string_insertion_never_evaluates_the_answer(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w')"
    assert rg.score_string_insertion(code, {"answer": "ABC"}) == 0.0
    assert rg.score_string_insertion("[" * 100_000, {"answer": "ABC"}) == 0.0
    assert not marker.exists()
    assert rg.score_string_insertion("['A', 'B', 'C']", {"answer": "ABC"}) == rg.STRING_INSERTION_LIST_CREDIT


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("<answer>x</answer>", "x"),
        ("<answer> x </answer>", "x"),
        ("<answer>a</answer><answer>b</answer>", "b"),
        ("<answer>\nmulti\nline\n</answer>", "multi\nline"),
        ("<answer></answer>", ""),
        ("<answer>x", None),
        ("", None),
    ],
)
def test_extract_answer_takes_the_last_span(text: str, answer: str | None) -> None:
    assert rg.extract_answer(text) == answer


def test_acc_is_a_full_score_and_partial_credit_is_flagged() -> None:
    truth = normalize_ground_truth(
        "reasoning_gym/maze", {"task": "maze", "entry": {"question": "q", "answer": "8"}}, where="t"
    )
    if not HAS_REASONING_GYM:
        pytest.skip("needs reasoning-gym's scorer")
    full = compute_score("reasoning_gym/maze", "<answer>8</answer>", truth)
    partial = compute_score("reasoning_gym/maze", "<answer>8 steps</answer>", truth)
    missing = compute_score("reasoning_gym/maze", "8", truth)
    assert (full["score"], full["acc"], full["reasoning_gym_partial"]) == (1.0, 1.0, 0.0)
    assert 0.0 < partial["score"] < 1.0 and partial["acc"] == 0.0 and partial["reasoning_gym_partial"] == 1.0
    assert (missing["score"], missing["acc"], missing["reasoning_gym_answered"]) == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("truth", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", "must be an object"),
        ({"task": "maze"}, "exactly the keys"),
        ({"task": "chess", "entry": {"answer": "1"}}, "must be one of"),
        ({"task": "maze", "entry": {"answer": 8}}, "string 'answer'"),
        ({"task": "maze", "entry": {"answer": "8"}, "level": 1}, "exactly the keys"),
    ],
)
def test_bad_ground_truth_fails_when_the_data_is_built(truth: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        normalize_ground_truth("reasoning_gym/maze", truth, where="row 3")
    raw = truth if isinstance(truth, str) else json.dumps(truth)
    with pytest.raises(ValueError):
        check_row("reasoning_gym/maze", raw)


def test_metrics_and_level_grouping() -> None:
    records = [
        {"acc": 1.0, "score": 1.0, "reasoning_gym_answered": 1.0, "reasoning_gym_partial": 0.0, "level": 0},
        {"acc": 0.0, "score": 0.5, "reasoning_gym_answered": 1.0, "reasoning_gym_partial": 1.0, "level": 1},
        {"acc": 0.0, "score": 0.0, "reasoning_gym_answered": 0.0, "reasoning_gym_partial": 0.0, "level": 1},
        {"acc": 0.0, "score": 0.0, "reasoning_gym_answered": 1.0, "reasoning_gym_partial": 0.0, "level": 1},
    ]
    assert rg.reasoning_gym_metrics(records) == {
        "accuracy": 0.25,
        "mean_score": 0.375,
        "answered_rate": 0.75,
        "partial_rate": 0.25,
    }
    assert rg.EVALUATION.headline == "accuracy"
    assert [g.field for g in rg.EVALUATION.groupings] == ["level"]


@needs_reasoning_gym
def test_builder_rows_carry_task_entry_and_level_and_refuse_unknown_levels() -> None:
    from rlif.data.reasoning_gym_build import build_rows, level_count

    rows = build_rows(["maze", "string_insertion"], 2, [0, 2], seed=3)
    assert len(rows) == 8
    assert [r["extra_info"]["level"] for r in rows] == [0, 0, 2, 2] * 2
    assert all(r["extra_info"]["difficulty"] == r["extra_info"]["level"] for r in rows)
    for row in rows:
        truth = json.loads(row["reward_model"]["ground_truth"])
        assert row["data_source"] == rg.PREFIX + truth["task"] == rg.PREFIX + row["extra_info"]["task"]
        assert "<answer>" in row["prompt"][0]["content"]
        right = compute_score(
            row["data_source"], f"<answer>{truth['entry']['answer']}</answer>", row["reward_model"]["ground_truth"]
        )
        assert right["acc"] == 1.0
    again = build_rows(["maze", "string_insertion"], 2, [0, 2], seed=3)
    assert again == rows
    assert level_count("maze") == 4
    with pytest.raises(ValueError, match="outside its curriculum"):
        build_rows(["maze"], 1, [4])
    with pytest.raises(ValueError, match="unknown reasoning-gym task"):
        build_rows(["chess"], 1, [0])


@needs_reasoning_gym
def test_the_demo_data_can_take_a_reasoning_gym_source() -> None:
    from rlif.demo_assets import demo_rows

    plain = demo_rows("train")
    rows = demo_rows("train", ("family_relationships",))
    added = [r for r in rows if r["data_source"] == "reasoning_gym/family_relationships"]
    assert len(rows) == len(plain) + len(added) and len(added) == 4
    assert not any(r["data_source"].startswith(rg.PREFIX) for r in plain)
    for row in added:
        truth = row["reward_model"]["ground_truth"]
        answer = json.loads(truth)["entry"]["answer"]
        assert compute_score(row["data_source"], f"<answer>{answer}</answer>", truth)["acc"] == 1.0
        assert "<answer>" in row["prompt"][0]["content"]

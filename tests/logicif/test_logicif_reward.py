"""LogicIF family: ground-truth normalisation, the scorer's metrics and options, and its registration."""

from __future__ import annotations

import json

import pytest

from rewards import check_row, compute_score, reward_keys
from rewards.logicif import METRIC_KEYS, check_ground_truth, normalize_ground_truth, score, score_answer
from rewards.registry import family_for
from rewards.thinking import split_thinking

ROW = {
    "task_id": "CODEFORCES_883A",
    "test_case_id": 0,
    "input": [10, 2, 4, 3],
    "function": "def f(*a):\n    return 20, {}\n",
    "output_format": "int",
    "code_output": {"output": 20, "stats": {"used_rope": True, "rope_units": 5, "direct_torches": 0}},
}
GT = normalize_ground_truth(ROW, where="mini.jsonl row 0 field code_output")
RIGHT = '{"output": 20, "stats": {"used_rope": true, "rope_units": 5, "direct_torches": 0}}'


def test_row_and_rlif_forms_normalise_to_the_same_canonical_json() -> None:
    rlif_form = {"task_id": "CODEFORCES_883A", "code_output": ROW["code_output"]}
    as_string = json.dumps({**rlif_form, "test_case_id": 0, "code_output": json.dumps(ROW["code_output"])})
    assert normalize_ground_truth(as_string, where="w") == GT
    assert json.loads(GT) == {"task_id": "CODEFORCES_883A", "test_case_id": 0, "code_output": ROW["code_output"]}
    assert normalize_ground_truth(rlif_form, where="w") == json.dumps(
        {"code_output": ROW["code_output"], "task_id": "CODEFORCES_883A"}, sort_keys=True, separators=(",", ":")
    )
    # idempotent, and tuples become lists as in the model's JSON
    assert normalize_ground_truth(GT, where="w") == GT
    tupled = normalize_ground_truth({"code_output": {"output": (3, [1, 2]), "stats": {}}}, where="w")
    assert json.loads(tupled)["code_output"]["output"] == [3, [1, 2]]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("not json", "ground truth is not valid JSON"),
        ("[1, 2]", "ground truth must be a JSON object"),
        ({"task_id": "t"}, "no code_output field"),
        ({"code_output": "[1]"}, "code_output must be a JSON object"),
        ({"code_output": {"stats": {}}}, "code_output has no 'output'"),
        ({"code_output": {"output": 1}}, "code_output has no 'stats'"),
        ({"code_output": {"output": 1, "stats": [1]}}, "stats must be an object, got list"),
        ({"code_output": {"output": 1, "stats": None}}, "stats must be an object, got NoneType"),
        ({"code_output": {"output": float("nan"), "stats": {}}}, "non-finite number"),
        ({"code_output": {"output": 1, "stats": {"a": float("inf")}}}, r"code_output.stats.a holds a non-finite"),
        ('{"code_output": {"output": NaN, "stats": {}}}', "not valid JSON"),
        ({"code_output": {"output": {1: 2}, "stats": {}}}, "non-string key"),
        ({"code_output": {"output": {1, 2}, "stats": {}}}, "holds a set"),
        ({"code_output": {"output": 1, "stats": {}}, "task_id": ""}, "task_id must be a non-empty string"),
        ({"code_output": {"output": 1, "stats": {}}, "task_id": 7}, "task_id must be a non-empty string"),
        ({"code_output": {"output": 1, "stats": {}}, "test_case_id": -1}, "test_case_id"),
        ({"code_output": {"output": 1, "stats": {}}, "test_case_id": "0"}, "test_case_id"),
        ({"code_output": {"output": 1, "stats": {}}, "test_case_id": True}, "test_case_id"),
    ],
)
def test_unusable_ground_truth_names_where(raw: object, message: str) -> None:
    with pytest.raises(ValueError, match=r"^f.jsonl row 4 field code_output: .*" + message):
        normalize_ground_truth(raw, where="f.jsonl row 4 field code_output")  # type: ignore[arg-type]


def test_too_deep_ground_truth_is_refused() -> None:
    deep: object = 1
    for _ in range(100):
        deep = [deep]
    with pytest.raises(ValueError, match="nests deeper than 64"):
        normalize_ground_truth({"code_output": {"output": deep, "stats": {}}}, where="w")


def test_numpy_values_from_parquet_rows_become_json() -> None:
    np = pytest.importorskip("numpy")
    row = {"test_case_id": np.int64(2), "code_output": {"output": np.array([1, 2]), "stats": {"c": np.int64(3)}}}
    assert json.loads(normalize_ground_truth(row, where="w")) == {
        "test_case_id": 2,
        "code_output": {"output": [1, 2], "stats": {"c": 3}},
    }


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        (f"Tracing...\n{RIGHT}", (1.0, 1, 1, 1, 1)),
        (f'<think>long trace {{"output": 0}}</think>\nAnswer: {RIGHT}', (1.0, 1, 1, 1, 1)),
        (RIGHT.replace("20", "21"), (0.0, 0, 1, 0, 1)),
        (RIGHT.replace("true", "1"), (0.0, 1, 0, 0, 1)),  # bool is not int
        (RIGHT.replace('"used_rope": true, ', ""), (0.0, 1, 0, 0, 1)),  # missing stats key
        (RIGHT.replace("}}", ', "extra": 1}}'), (0.0, 1, 0, 0, 1)),  # extra stats key
        (RIGHT.replace("20", "20.0"), (1.0, 1, 1, 1, 1)),
        ("The answer is 20.", (0.0, 0, 0, 0, 0)),
        ("", (0.0, 0, 0, 0, 0)),
        (f"<think>{RIGHT}", (0.0, 0, 0, 0, 0)),  # unclosed thinking: no answer
        (f"<think>x</think>{RIGHT}<think>more", (0.0, 0, 0, 0, 0)),
        (f"{RIGHT} <think>", (0.0, 0, 0, 0, 0)),
    ],
)
def test_scores_and_metrics(response: str, expected: tuple[float, int, int, int, int]) -> None:
    result = compute_score("logicif", response, GT, {"complexity_score": 12.0, "difficulty": 12.0})
    got = (
        result["score"],
        result["logicif_output"],
        result["logicif_stats"],
        result["logicif_both"],
        result["logicif_parsed"],
    )
    assert got == expected
    assert result["acc"] == result["logicif_both"]
    assert result["reward_error"] == 0.0
    assert set(result) == set(reward_keys())


@pytest.mark.parametrize(
    ("response", "partial"),
    [
        (RIGHT, 1.0),
        (RIGHT.replace("20", "21"), 0.5),
        (RIGHT.replace("true", "1"), 0.5 + 0.5 * 2 / 3),
        (RIGHT.replace("20", "21").replace("5", "6").replace("true", "false"), 0.5 * 1 / 3),
        (RIGHT.replace("}}", ', "extra": 1}}'), 0.5 + 0.5 * 3 / 4),
        ('{"output": 20, "stats": [5]}', 0.5),
        ("nothing", 0.0),
    ],
)
def test_partial_credit(response: str, partial: float) -> None:
    result = compute_score("logicif", response, GT, None, logicif_partial_credit=True)
    assert result["score"] == pytest.approx(partial)
    assert 0.0 <= result["score"] <= 1.0
    assert compute_score("logicif", response, GT, None, logicif_partial_credit=False)["score"] == float(partial == 1)


def test_official_python_equality_accepts_true_as_one() -> None:
    answer = RIGHT.replace("true", "1")
    assert score_answer(answer, GT)["score"] == 0.0
    assert score_answer(answer, GT, equality="python")["score"] == 1.0
    with pytest.raises(ValueError, match="equality"):
        score_answer(answer, GT, equality="loose")


def test_bad_options_and_ground_truth_raise_from_the_scorer() -> None:
    response = split_thinking(RIGHT)
    with pytest.raises(ValueError, match="logicif_partial_credit must be true or false"):
        score(response, GT, None, logicif_partial_credit="yes")
    with pytest.raises(ValueError, match="logicif_partial_credit"):
        score(split_thinking("<think>"), GT, None, logicif_partial_credit=1)
    with pytest.raises(ValueError, match="canonical JSON string"):
        score(response, {"code_output": {}}, None)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="no code_output"):
        score(split_thinking("<think>"), "{}", None)


def test_router_counts_a_bad_ground_truth_as_a_reward_error_not_a_crash() -> None:
    result = compute_score("logicif", RIGHT, '{"code_output": {"output": 1}}', None)
    assert (result["score"], result["reward_error"]) == (0.0, 1.0)


def test_family_registration_matches_the_contract() -> None:
    family = family_for("logicif")
    assert family.name == "logicif"
    assert family.prefixes == ("logicif",)
    assert family.metric_keys == METRIC_KEYS == ("logicif_output", "logicif_stats", "logicif_both", "logicif_parsed")
    assert family.ability == "logic_instruction_following"
    assert dict(family.options) == {"logicif_partial_credit": False}
    assert family.score is score
    assert family.normalize_ground_truth is normalize_ground_truth
    assert family.check_ground_truth is check_ground_truth


def test_build_time_check() -> None:
    check_row("logicif", GT, {"complexity_score": 54.5, "difficulty": 54.5, "difficulty_level": "hard"})
    check_row("logicif", GT, None)
    with pytest.raises(ValueError, match="code_output has no 'stats'"):
        check_row("logicif", '{"code_output": {"output": 1}}', None)
    for bad in (float("nan"), "12", True, None):
        with pytest.raises(ValueError, match="extra_info field difficulty"):
            check_ground_truth(GT, {"difficulty": bad})

"""WeightedChoice, RNG state round-trips and difficulty intervals."""

from __future__ import annotations

import json
import random
from collections import Counter

import pytest

from samplers.drawing import WeightedChoice, normalized, restore_rng, rng_state
from samplers.intervals import matches_sources, split_by_difficulty


def test_weighted_choice_follows_weights() -> None:
    choice = WeightedChoice(["a", "b", "c"], [1.0, 3.0, 0.0])
    rng = random.Random(0)
    counts = Counter(choice.draw(rng) for _ in range(20000))
    assert counts["c"] == 0
    assert abs(counts["b"] / 20000 - 0.75) < 0.02
    assert choice.probabilities() == pytest.approx({"a": 0.25, "b": 0.75, "c": 0.0})


@pytest.mark.parametrize(
    ("items", "weights"),
    [([], []), (["a"], [1.0, 2.0]), (["a"], [-1.0]), (["a"], [float("nan")]), (["a", "b"], [0.0, 0.0])],
)
def test_weighted_choice_rejects_bad_weights(items: list[str], weights: list[float]) -> None:
    with pytest.raises(ValueError):
        WeightedChoice(items, weights)


def test_normalized() -> None:
    assert normalized({"x": 1.0, "y": 3.0}) == {"x": 0.25, "y": 0.75}
    with pytest.raises(ValueError, match="sum to zero"):
        normalized({"x": 0.0})


def test_rng_state_round_trips_through_json() -> None:
    rng = random.Random(7)
    rng.random()
    state = json.loads(json.dumps(rng_state(rng)))
    expected = [rng.random() for _ in range(5)]
    other = random.Random(0)
    restore_rng(other, state)
    assert [other.random() for _ in range(5)] == expected
    with pytest.raises(ValueError, match="3 parts"):
        restore_rng(other, [1, 2])


def test_split_matches_reference_cut_points() -> None:
    # 20 rows, 30% initial -> 6 rows; the other 14 split at int(k*14/4) = 3, 7, 10, 14.
    difficulties = [float(d) for d in reversed(range(20))]  # row r has difficulty 19 - r
    intervals = split_by_difficulty("logicif", difficulties, 0.3, 4)
    by_difficulty = [intervals[19 - d] for d in range(20)]
    assert by_difficulty == [0] * 6 + [1] * 3 + [2] * 4 + [3] * 3 + [4] * 4


def test_split_is_monotone_in_difficulty_and_equal_count() -> None:
    rng = random.Random(3)
    difficulties = [rng.uniform(0, 50) for _ in range(1000)]
    intervals = split_by_difficulty("graph/tsp", difficulties, 0.2, 8)
    counts = Counter(intervals)
    assert counts[0] == 200
    assert {counts[k] for k in range(1, 9)} == {100}
    order = sorted(range(1000), key=lambda r: difficulties[r])
    assert [intervals[r] for r in order] == sorted(intervals)


def test_split_with_no_initial_share_and_few_rows() -> None:
    assert split_by_difficulty("s", [3.0, 1.0, 2.0], 0.0, 3) == [3, 1, 2]
    assert split_by_difficulty("s", [], 0.3, 10) == []


@pytest.mark.parametrize("bad", [None, "7", float("nan"), float("inf"), True])
def test_split_rejects_bad_difficulty_naming_row_and_field(bad: object) -> None:
    with pytest.raises(ValueError, match=r"source 'logicif' row 1: field extra_info.difficulty"):
        split_by_difficulty("logicif", [1.0, bad, 2.0], 0.3, 2)  # type: ignore[list-item]


@pytest.mark.parametrize(("fraction", "n"), [(-0.1, 2), (1.0, 2), (0.3, 0), (0.3, 2.5)])
def test_split_rejects_bad_shape(fraction: float, n: int) -> None:
    with pytest.raises(ValueError):
        split_by_difficulty("s", [1.0], fraction, n)


def test_matches_sources_exact_and_prefix() -> None:
    assert matches_sources("logicif", ["logicif"])
    assert not matches_sources("logicif2", ["logicif"])
    assert matches_sources("graph/tsp", ["graph/"])
    assert not matches_sources("graphs", ["graph/"])

"""The confidence-bound gate: the bound itself, the gate's behaviour for a frozen learner at the matrix's stage-2
shape, success (not shaped reward) as its input, whole-function intervals, exposure accounting, old states."""

from __future__ import annotations

import logging
import random

import pytest
from samplers_testkit import prepare

from samplers import Record, build_policy
from samplers.exposure import ExposureLedger, row_draw_metrics
from samplers.gate import design_effect, evidence, tally_groups, wilson_lower
from samplers.intervals import split_functions_by_difficulty

OPEN_BY = 24
"""At success 0.6 (threshold 0.5) every seed opens interval 2 within this many updates of interval 1's unlock."""


def test_wilson_bound_matches_the_textbook_value() -> None:
    # 60/100 at one-sided 95%: Wilson lower bound 0.5178 (z = 1.645)
    assert wilson_lower(60, 100, 0.95) == pytest.approx(0.5178, abs=1e-3)
    assert wilson_lower(0, 10, 0.95) == 0.0
    assert wilson_lower(5, 0, 0.95) == 0.0


def test_design_effect_grows_when_prompts_are_all_or_nothing() -> None:
    mixed = [[4.0, 8]] * 50  # every prompt half solved: no clustering
    split = [[8.0, 8]] * 25 + [[0.0, 8]] * 25  # half the prompts always solved, half never
    assert design_effect(mixed) == 1.0
    assert design_effect(split) == pytest.approx(8.0, rel=0.05)


def test_first_exposure_bound_must_agree_when_there_are_enough() -> None:
    window = [[[8.0, 8, False]] * 30 + [[2.0, 8, True]] * 30]  # repeats all solved, first exposures mostly not
    found = evidence(window, min_responses=200, confidence=0.95)
    assert found is not None and found.first_only and found.bound < 0.5 < found.mean
    few = evidence(window, min_responses=1000, confidence=0.95)
    assert few is not None and not few.first_only and few.bound > 0.5


def test_tally_reads_success_and_skips_records_without_it() -> None:
    records = [Record("g", 1, 1.0, "a", success=0.0, exposure=0), Record("g", 1, 0.5, "a", success=1.0)]
    records.append(Record("g", 1, 1.0, "b"))  # no success indicator: not evidence
    assert tally_groups(records) == [[1.0, 2, True]]


def test_graph_curriculum_gates_on_optimality_not_the_format_bonus() -> None:
    """binary_format: a formatted wrong answer scores 0.5 + 0 = 0.5, a right one 1.5; acc is 1 only when optimal."""
    policy = prepare(
        "reward_curriculum",
        {"curriculum_sources": ["graph/"], "num_intervals": 2, "gate_min_responses": 50, "check_every": 1},
        rows={"graph/tsp": 100},
    )
    rng = random.Random(0)
    for update in range(30):
        records = []
        for prompt in range(20):
            for _ in range(8):
                optimal = rng.random() < 0.3
                records.append(Record("graph/tsp", 0, 0.5 + optimal, f"{update}-{prompt}", success=float(optimal)))
        metrics = policy.update(records)
    assert metrics["sampler/newest_interval/graph/tsp"] == 0.0  # shaped mean ~0.8 > 0.5, optimality 0.3 < 0.5
    assert metrics["sampler/gate_mean/graph/tsp"] == pytest.approx(0.3, abs=0.05)


def test_unlock_logs_its_evidence(caplog: pytest.LogCaptureFixture) -> None:
    policy = prepare("reward_curriculum", {"num_intervals": 4, "gate_min_responses": 50, "check_every": 1})
    records = [Record("logicif", 0, 1.0, f"p{p}", success=1.0, exposure=0) for p in range(40) for _ in range(4)]
    with caplog.at_level(logging.INFO, logger="rlif.samplers"):
        for _ in range(10):
            metrics = policy.update(records)
    assert metrics["sampler/unlocked/logicif"] == 1.0
    assert metrics["sampler/unlock_responses/logicif"] >= 50 and metrics["sampler/unlock_bound/logicif"] > 0.5
    assert "interval 1 unlocked at update 10" in caplog.text and "lower bound" in caplog.text
    evidence_row = policy.state_dict()["gates"]["logicif"]["unlock_evidence"][0]
    assert evidence_row[:3] == [10.0, 1.0, 1600.0]


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(20))
def test_frozen_learner_below_the_threshold_rarely_opens(seed: int) -> None:
    """Stage-2 shape (512 x 8, LogicIF share 0.5, 10 intervals), harder intervals at 0.48: interval 1 opens on the
    initial interval's competence, interval 2 never in these 20 seeds over 500 updates (the bound allows 1)."""
    from rlif.simulate.gate import frozen_unlocks

    assert len(frozen_unlocks(0.48, seed, updates=500)) == 1


@pytest.mark.parametrize("seed", range(20))
def test_frozen_learner_above_the_threshold_opens_quickly(seed: int) -> None:
    from rlif.simulate.gate import frozen_unlocks

    unlocks = frozen_unlocks(0.6, seed, updates=40)
    assert len(unlocks) >= 2 and unlocks[1] - unlocks[0] <= OPEN_BY


def test_intervals_keep_a_functions_cases_together() -> None:
    # 30 functions of 1-6 cases each; difficulty per function, cases in shuffled row order
    rng = random.Random(0)
    functions, difficulties = [], []
    for function in range(30):
        for _ in range(rng.randint(1, 6)):
            functions.append(f"f{function}")
            difficulties.append(float(function % 7))
    order = list(range(len(functions)))
    rng.shuffle(order)
    functions = [functions[i] for i in order]
    difficulties = [difficulties[i] for i in order]
    intervals = split_functions_by_difficulty("logicif", difficulties, functions, 0.3, 4)
    by_function: dict[str, set[int]] = {}
    for function, interval in zip(functions, intervals, strict=True):
        by_function.setdefault(function, set()).add(interval)
    assert all(len(found) == 1 for found in by_function.values())
    assert set(intervals) == {0, 1, 2, 3, 4}
    for low, high in zip(range(5), range(1, 5), strict=False):  # harder intervals hold harder functions
        assert max(d for d, i in zip(difficulties, intervals, strict=True) if i == low) <= min(
            d for d, i in zip(difficulties, intervals, strict=True) if i == high
        )


def test_policy_cuts_on_functions_when_rows_name_them() -> None:
    policy = build_policy("reward_curriculum", {"num_intervals": 3})
    functions = [f"f{i // 4}" for i in range(40)]  # 10 functions x 4 cases, one difficulty per function
    intervals = policy.assign_intervals("logicif", [float(i // 4) for i in range(40)], functions)
    assert all(len({intervals[i] for i in range(f * 4, f * 4 + 4)}) == 1 for f in range(10))
    assert policy.fingerprint()["logicif"]["cut"] == "function"
    graph = build_policy("reward_curriculum", {"curriculum_sources": ["graph/"], "num_intervals": 3})
    graph.assign_intervals("graph/tsp", [float(i) for i in range(40)], [None] * 40)
    assert graph.fingerprint()["graph/tsp"]["cut"] == "row"


def test_a_state_saved_before_function_cuts_is_refused_in_one_line() -> None:
    saved = build_policy("reward_curriculum", {"num_intervals": 3})
    saved.assign_intervals("logicif", [float(i // 4) for i in range(40)])  # the row cut (the former behaviour)
    saved.set_pools({("logicif", i): 1 for i in range(4)})
    checkpoint = saved.checkpoint()
    del checkpoint["fingerprint"]["logicif"]["cut"]  # as an older rlif wrote it
    current = build_policy("reward_curriculum", {"num_intervals": 3})
    current.assign_intervals("logicif", [float(i // 4) for i in range(40)], [f"f{i // 4}" for i in range(40)])
    with pytest.raises(ValueError, match="cut on rows when saved and are cut on functions now") as raised:
        current.restore(checkpoint)
    assert "\n" not in str(raised.value)


def test_a_gate_state_without_a_window_loads(caplog: pytest.LogCaptureFixture) -> None:
    policy = prepare("reward_curriculum", {"num_intervals": 4})
    state = policy.state_dict()
    for gate in state["gates"].values():
        del gate["window"], gate["unlock_evidence"]
    restored = prepare("reward_curriculum", {"num_intervals": 4})
    with caplog.at_level(logging.WARNING, logger="rlif.samplers"):
        restored.load_state_dict(state)
    assert "saved before the confidence-bound gate" in caplog.text


def test_exposure_ledger_counts_prompts_tokens_truncation_and_first_draws() -> None:
    ledger = ExposureLedger({"iftrain": "IF", "ifeval": "IF", "logicif": "LogicIF"}, {("logicif", 2): 3})
    records = [
        Record("iftrain", 0, 1.0, "a", exposure=0, response_tokens=100, truncated=False),
        Record("iftrain", 0, 1.0, "a", exposure=0, response_tokens=50, truncated=False),
        Record("ifeval", 0, 1.0, "b", exposure=2, response_tokens=10, truncated=False),
        Record("logicif", 1, 0.0, "c", exposure=0, response_tokens=8192, truncated=True),
        Record("logicif", 1, 0.0, "c", exposure=0, response_tokens=20, truncated=False),
    ]
    metrics = ledger.observe(records)
    assert metrics["exposure/prompt_share/IF"] == pytest.approx(2 / 3)
    assert metrics["exposure/prompts/logicif"] == 1.0
    assert metrics["exposure/tokens/iftrain"] == 150.0 and metrics["exposure/cum_tokens/logicif"] == 8212.0
    assert metrics["exposure/truncated_share/logicif/1"] == 0.5
    assert metrics["exposure/first_exposure_share/ifeval"] == 0.0
    assert metrics["exposure/overlong_dropped/logicif/2"] == 3.0
    again = ledger.observe(records[:3])
    assert again["exposure/cum_prompt_share/IF"] == pytest.approx(4 / 5)
    restored = ExposureLedger()
    restored.load(ledger.state())
    assert restored.cumulative()["exposure/cum_tokens/iftrain"] == 300.0
    rows = row_draw_metrics([0, 2, 1, 0], [("logicif", 0), ("logicif", 0), ("logicif", 1), ("iftrain", 0)])
    assert rows["exposure/unique_prompts/logicif"] == 2.0 and rows["exposure/draws_per_row/logicif/0"] == 1.0
    assert rows["exposure/max_draws_per_row/logicif/0"] == 2.0

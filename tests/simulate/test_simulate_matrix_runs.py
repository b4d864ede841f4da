"""The stage-2 curriculum runs of recipe/matrix.yaml, simulated with their own policy, parameters and batch shape:
a gate that opens exactly once for a frozen learner, and never while the newest interval is at or below 0.5."""

from __future__ import annotations

from pathlib import Path

import pytest

from rlif.runs.matrix import load_matrix
from rlif.simulate import main, run_config, simulate, unlock_timeline

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"
CURRICULUM_RUNS = (
    "stage2_qwen17b_think_ema_rewardCurriculum_s1",
    "stage2_qwen17b_think_ema_rewardCurriculum_decay_s1",
    "stage2_qwen17b_think_1v1_rewardCurriculum_s1",
    "stage2_qwen17b_think_1v1_rewardCurriculum_decay_s1",
)


@pytest.fixture(scope="module")
def runs() -> dict:
    return {run.name: run for run in load_matrix(MATRIX).runs}


@pytest.mark.parametrize("name", CURRICULUM_RUNS)
def test_stage2_curriculum_runs_gate_on_the_newest_interval_strictly(runs: dict, name: str) -> None:
    params = runs[name].sampler.params
    assert runs[name].sampler.name == "reward_curriculum"
    assert params["gate_on"] == "newest" and params["threshold"] == 0.5
    assert params["groups"] == {"IF": ["iftrain", "ifeval", "ifbench"], "LogicIF": ["logicif"]}


@pytest.mark.parametrize("name", CURRICULUM_RUNS)
def test_initial_interval_at_0_9_and_harder_at_0_unlocks_exactly_the_first_harder_interval(
    runs: dict, name: str
) -> None:
    strategy, config = run_config(runs[name], "frozen", steps=120)
    result = simulate(strategy, config, seed=0)
    assert result.unlocks == {"logicif": [12]}, unlock_timeline(name, [result])
    assert result.policy_metrics[-1]["sampler/newest_interval/logicif"] == 1.0


@pytest.mark.parametrize("name", CURRICULUM_RUNS)
def test_the_reference_whole_source_gate_is_a_timer_on_the_same_learner(runs: dict, name: str) -> None:
    strategy, config = run_config(runs[name], "frozen", steps=60)
    reference = type(strategy)(strategy.label, strategy.policy, {**strategy.params, "gate_on": "source"})
    assert len(simulate(reference, config, seed=0).unlocks["logicif"]) >= 2


@pytest.mark.parametrize("name", CURRICULUM_RUNS)
def test_improving_learner_never_unlocks_while_the_newest_interval_is_at_or_below_half(runs: dict, name: str) -> None:
    strategy, config = run_config(runs[name], "improving", steps=250)
    result = simulate(strategy, config, seed=0)
    unlocks = result.unlocks["logicif"]
    assert len(unlocks) >= 3, unlock_timeline(name, [result])
    for unlocked, step in enumerate(unlocks):
        # the interval that was newest when the gate opened, on the learner's true success after that update
        newest = int(result.policy_metrics[step - 2]["sampler/newest_interval/logicif"]) if step > 1 else 0
        assert newest == unlocked
        assert result.interval_success[step - 1][("logicif", newest)] > 0.5, (step, newest)
        assert result.policy_metrics[step - 1]["sampler/newest_interval/logicif"] == newest + 1


def test_a_run_simulated_with_the_reference_gate_by_param_keeps_its_own_plot(tmp_path: Path, capsys) -> None:
    """``--param gate_on=source`` on the same run and learner: a timer, in a file beside the run's own plot."""
    name = CURRICULUM_RUNS[0]
    common = ["--run", name, "--learner", "frozen", "--steps", "30", "--seeds", "1", "--out", str(tmp_path)]
    assert main(common) == 0
    assert main([*common, "--param", "gate_on=source"]) == 0
    printed = capsys.readouterr().out
    assert f"{name} [frozen] seed 0: logicif: 1@12\n" in printed
    assert f"{name}_gate_on-source [frozen] seed 0: logicif: 1@12, 2@24\n" in printed
    # what each interval scored when opened and at the end, and the learner's true success left behind
    assert f"{name} [frozen] step reward per interval, first -> last 10 updates with records: 0: 0.9" in printed
    assert f"{name} [frozen] final success per interval: 0: 0.90, 1: 0.00, 2: 0.00, 3: 0.00," in printed
    assert f"{name}_gate_on-source [frozen] step reward per interval" in printed
    assert ", 1: 0.00 -> 0.00, 2: 0.00 -> 0.00\n" in printed
    assert (tmp_path / f"{name}_frozen.png").is_file()
    assert (tmp_path / f"{name}_frozen_gate_on-source.png").is_file()


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ("gate_on", "--param 'gate_on': expected KEY=VALUE, e.g. gate_on=source"),
        ("gate_alpha=2", "gate_alpha"),
    ],
)
def test_a_bad_param_is_a_one_line_usage_error(tmp_path: Path, capsys, param: str, message: str) -> None:
    argv = ["--run", CURRICULUM_RUNS[0], "--steps", "1", "--seeds", "1", "--param", param, "--out", str(tmp_path)]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["graph_qwen17b_think_curriculum", "graph_qwen17b_think_staged"])
def test_chained_graph_curriculum_runs_simulate_on_graph_data(runs: dict, name: str) -> None:
    """These runs take their data from the winning volume run, so their own entry names no graph file."""
    strategy, config = run_config(runs[name], "frozen", steps=24)
    assert config.data == "graph"
    result = simulate(strategy, config, seed=0)
    assert set(result.unlocks) == {f"graph/{task}" for task in ("ged", "mcp", "mcs", "mis", "mvc", "tsp")}

"""The ablation chain through the generator: winners from synthetic eval/<run>/<step>/ evaluations, the decision
table, ties inside the paired interval, sign-off, skipped and refused stages while results are missing, and
from_winner syntax errors."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest
from run_matrices import with_shipped_defaults
from synthetic_evals import graph_records, write_evaluation

from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT
from rlif.runs.shapes import BUILTIN_CONFIGS

V45, V60, V90 = (f"graph_qwen17b_think_6np{v}_binary" for v in (45000, 60000, 90000))
CURRICULUM, STAGED = "graph_qwen17b_think_curriculum", "graph_qwen17b_think_staged"
REWARDS = [
    "graph_qwen17b_think_binary_format",
    "graph_qwen17b_think_binary_format_repeat",
    "graph_qwen17b_think_ratio_quality_format_repeat",
    "graph_qwen17b_think_complicated",
]
RECOMPARE = ["graph_qwen17b_think_recompare_mixed", "graph_qwen17b_think_recompare_staged"]
COMMON = ["--skip-verl-check", "--skip-preflight"]
GRAPH_MODELS = {
    "RLIF_GRAPH_MODEL": "Qwen/Qwen3-8B",
    "RLIF_GRAPH_MODEL_QWEN3_8B": "Qwen/Qwen3-8B",
    "RLIF_GRAPH_MODEL_QWEN25_7B_1M": "Qwen/Qwen2.5-7B-Instruct-1M",
    "RLIF_GRAPH_MODEL_LLAMA31_8B": "meta-llama/Llama-3.1-8B-Instruct",
    "RLIF_GRAPH_MODEL_G1_7B": "PKU-ML/G1-7B",
}
"""Each graph ``model_setting`` and the architecture of the group's SFT checkpoint it names. The chain resolves on
run names, before the settings fill the models in."""


@pytest.fixture(autouse=True)
def graph_models(monkeypatch, tmp_path):
    """The group's SFT checkpoints as folders holding only their config.json; the Qwen3-8B arm a Hub id."""
    for key, architecture in GRAPH_MODELS.items():
        if key == "RLIF_GRAPH_MODEL_QWEN3_8B":
            monkeypatch.setenv(key, architecture)
            continue
        folder = tmp_path / "ckpt" / key.lower()
        folder.mkdir(parents=True)
        (folder / "config.json").write_text(json.dumps(BUILTIN_CONFIGS[architecture]), encoding="utf-8")
        monkeypatch.setenv(key, str(folder))


def write_result(root: Path, run: str, step: int, value: float, seed: int = 0) -> None:
    write_evaluation(root / run / str(step), graph_records(value, seed=seed + zlib.crc32(run.encode())))


def generate(tmp_path: Path, eval_root: Path, *selection: str) -> tuple[int, Path]:
    out = tmp_path / "out"
    code = main([*selection, *COMMON, "--out", str(out), "--eval-root", str(eval_root)])
    return code, out


def test_the_best_volume_feeds_the_sampling_stage(tmp_path, capsys):
    eval_root = tmp_path / "eval"
    write_result(eval_root, V45, 500, 0.31)
    write_result(eval_root, V60, 100, 0.60)  # an intermediate step of the 60000 run is better ...
    write_result(eval_root, V60, 500, 0.45)  # ... but its final step counts
    write_result(eval_root, V90, 500, 0.33)
    code, out = generate(tmp_path, eval_root, "--stage", "graph_sampling")
    assert code == 0
    text = capsys.readouterr().out
    print(text)
    line = next(line for line in text.splitlines() if line.startswith("chain: stage graph_sampling: "))[7:]
    assert line.startswith(
        f"stage graph_sampling: {V60} wins stage graph_volume by graph/optimal_rate at step 500 = 0.4"
    )
    assert "outside the 95% paired interval" in line
    assert "chain: arm" in text and "behind" in text
    for name in (CURRICULUM, STAGED):
        script = (out / f"{name}.sh").read_text(encoding="utf-8")
        assert f"# Settings from the ablation chain: {line}\n" in script
        assert "\nTRAIN_DATA=(verl_data/graph/6np_60000/train_mixed.parquet)\n" in script
        assert "6np_45000/train_mixed" not in script
        assert (out / "eval" / f"{name}.sh").is_file()
    assert sorted(p.name for p in out.glob("*.sh")) == [f"{CURRICULUM}.sh", f"{STAGED}.sh"]


def test_a_within_noise_margin_goes_to_the_stated_rule(tmp_path, capsys):
    eval_root = tmp_path / "eval"
    write_result(eval_root, V45, 500, 0.350)
    write_result(eval_root, V60, 500, 0.352)
    write_result(eval_root, V90, 500, 0.358)
    code, out = generate(tmp_path, eval_root, "--stage", "graph_sampling")
    assert code == 0
    text = capsys.readouterr().out
    print(text)
    assert "a tie within the 95% paired interval" in text
    assert f"resolved by the rule 'smaller volume': {V45}" in text
    assert "6np_45000/train_mixed.parquet" in (out / f"{CURRICULUM}.sh").read_text(encoding="utf-8")


def test_a_base_model_step_is_refused(tmp_path, capsys):
    eval_root = tmp_path / "eval"
    write_result(eval_root, V45, 500, 0.350)
    write_result(eval_root, V60, 500, 0.349)
    write_result(eval_root, V90, 0, 0.360)
    code, _ = generate(tmp_path, eval_root, "--stage", "graph_sampling")
    assert code == 1
    assert f"{V90} (no evaluation at its final step 500; evaluated at [0])" in capsys.readouterr().out


def test_a_sign_off_stage_waits_for_accept(tmp_path, capsys):
    matrix = tmp_path / "recipe" / "m.yaml"
    matrix.parent.mkdir()
    matrix.write_text(
        with_shipped_defaults(
            BASE + "  - {name: b, stage: s1, description: d, train_files: [y.parquet]}\n"
            "  - name: c\n    stage: s2\n    description: d\n"
            "    from_winner: {stage: s1, metric: graph/optimal_rate, take: [train_files], sign_off: true}\n"
        ),
        encoding="utf-8",
    )
    eval_root = tmp_path / "eval"
    write_result(eval_root, "a", 500, 0.30)
    write_result(eval_root, "b", 500, 0.45)
    args = ["--matrix", str(matrix), *COMMON, "--out", str(tmp_path / "o"), "--eval-root", str(eval_root)]
    assert main([*args, "--run", "c"]) == 1
    text = capsys.readouterr().out
    assert "stage s2 waits for sign-off of its decision table" in text and "--accept s2" in text
    assert main([*args, "--run", "c", "--accept", "s2"]) == 0
    record = json.loads((tmp_path / "recipe" / "decisions" / "s2.json").read_text(encoding="utf-8"))
    assert len(record["sha256"]) == 64 and any("b wins stage s1" in line for line in record["table"])
    assert main([*args, "--run", "c"]) == 0  # accepted and unchanged
    write_result(eval_root, "a", 500, 0.60)  # new results change the table: it waits again
    assert main([*args, "--run", "c"]) == 1


def test_missing_results_refuse_a_named_stage(tmp_path, capsys):
    eval_root = tmp_path / "eval"
    write_result(eval_root, V45, 500, 0.31)
    (eval_root / V90 / "500").mkdir(parents=True)
    (eval_root / V90 / "500" / "metrics.json").write_text('{"metrics": {"graph/feasible_rate": 0.8}}', "utf-8")
    code, out = generate(tmp_path, eval_root, "--stage", "graph_sampling")
    assert code == 1 and not out.exists()
    text = capsys.readouterr().out
    assert (
        "error: stage graph_sampling cannot choose from stage graph_volume by graph/optimal_rate: missing results "
        f"for {V60} (not evaluated), {V90} (no samples.jsonl at step 500: the per-prompt values an interval "
        "needs)\n"
    ) in text
    assert "evaluate those runs first" in text


def test_a_later_stage_lists_the_unresolved_runs_before_it(tmp_path, capsys):
    eval_root = tmp_path / "eval"
    for run, value in ((V45, 0.3), (V60, 0.4), (V90, 0.2)):
        write_result(eval_root, run, 500, value)
    code, _ = generate(tmp_path, eval_root, "--run", REWARDS[0])
    assert code == 1
    assert (
        "error: stage graph_reward cannot choose from stage graph_volume + graph_sampling by graph/optimal_rate: "
        f"missing results for {CURRICULUM} (not evaluated), {STAGED} (not evaluated)"
    ) in capsys.readouterr().out


def test_default_generation_skips_waiting_stages_and_writes_the_rest(tmp_path, capsys):
    code, out = generate(tmp_path, tmp_path / "no-results")
    assert code == 0
    text = capsys.readouterr().out
    skipped = [line for line in text.splitlines() if line.startswith("chain: skipped ")]
    assert len(skipped) == 4  # graph_sampling, graph_reward, graph_recompare, graph_base: one line each
    assert skipped[0].startswith(f"chain: skipped {CURRICULUM}, {STAGED}: stage graph_sampling cannot choose")
    written = {p.stem for p in out.glob("*.sh")}
    assert {V45, V60, V90, "slurm_qwen8b_think_if80000_grpo"} <= written
    assert not written & {CURRICULUM, STAGED, *REWARDS, *RECOMPARE, "graph_qwen8b_think_best"}


def test_the_whole_chain_resolves_in_order(tmp_path, capsys):
    eval_root = tmp_path / "eval"
    for run, value in ((V45, 0.30), (V60, 0.40), (V90, 0.20), (CURRICULUM, 0.50), (STAGED, 0.41)):
        write_result(eval_root, run, 500, value)
    for run, value in zip(REWARDS, (0.44, 0.62, 0.43, 0.40), strict=True):
        write_result(eval_root, run, 500, value)
    code, out = generate(tmp_path, eval_root, "--stage", "graph_recompare")
    assert code == 0
    recompare = (out / RECOMPARE[1]).with_suffix(".sh").read_text(encoding="utf-8")
    # the best reward and data, each arm's own sampler
    assert "graph_reward=binary_format_repeat" in recompare and "rlif_sampler.name=staged_curriculum" in recompare
    mixed = (out / RECOMPARE[0]).with_suffix(".sh").read_text(encoding="utf-8")
    assert "graph_reward=binary_format_repeat" in mixed and "rlif_sampler.name=reward_curriculum" not in mixed
    for run, value in zip(RECOMPARE, (0.45, 0.47), strict=True):
        write_result(eval_root, run, 500, value)
    code, out = generate(tmp_path, eval_root, "--stage", "graph_base")
    assert code == 1  # graph_base waits for sign-off
    assert "stage graph_base waits for sign-off" in capsys.readouterr().out
    decisions = tmp_path / "decisions"
    code, out = generate(
        tmp_path, eval_root, "--stage", "graph_base", "--accept", "graph_base", "--decisions", str(decisions)
    )
    assert code == 0 and (decisions / "graph_base.json").is_file()
    text = capsys.readouterr().out
    assert (
        f"chain: stage graph_base: {REWARDS[1]} wins stage graph_volume + graph_sampling + graph_reward + "
        "graph_recompare"
    ) in text
    script = (out / "graph_qwen8b_think_best.sh").read_text(encoding="utf-8")
    # the winner's data (the 60000 volume through the curriculum run), sampler and reward
    assert "6np_60000/train_mixed.parquet" in script
    assert "+data.rlif_sampler.name=reward_curriculum" in script
    assert "+reward.custom_reward_function.reward_kwargs.graph_reward=binary_format_repeat" in script
    assert "reward.reward_manager.name=remote" in script
    # each base starts from its own setting's checkpoint (a path) or Hub id (the instruct variant)
    assert "\nhub_model Qwen/Qwen3-8B\n" in script
    g1 = (out / "graph_g1_7b_best.sh").read_text(encoding="utf-8")
    assert f"{tmp_path}/ckpt/rlif_graph_model_g1_7b" in g1 and "PKU-ML/G1-7B" not in g1
    assert "6np_60000/train_mixed.parquet" in g1


def test_chain_runs_wait_for_their_model_setting(tmp_path, capsys, monkeypatch):
    """Unset, a plain generation leaves the graph runs out (one line per setting) and writes the rest; naming a
    graph stage stops on that line."""
    for key in GRAPH_MODELS:
        monkeypatch.delenv(key)
    code, out = generate(tmp_path, tmp_path / "no-results")
    assert code == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line.startswith("model: skipped: RLIF_GRAPH_MODEL is not set")]
    assert len(lines) == 1 and V45 in lines[0] and "graph_sft6np_smoke_mixed" in lines[0]
    written = {p.stem for p in out.glob("*.sh")}
    assert "slurm_qwen8b_think_if80000_grpo" in written and not any(n.startswith("graph_") for n in written)
    code, _ = generate(tmp_path, tmp_path / "no-results", "--stage", "graph_volume")
    assert code == 1 and "error: RLIF_GRAPH_MODEL is not set" in capsys.readouterr().out


# ---- syntax --------------------------------------------------------------------------------------------------------

BASE = "defaults: {train_files: [x.parquet]}\nruns:\n  - {name: a, stage: s1, description: d}\n"


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (  # a sibling of the taken key is the run's own
            "from_winner: {stage: s1, metric: m/acc, take: [reward.kwargs.graph_reward]}\n"
            "    reward: {manager: remote}",
            "",
        ),
        (
            "from_winner: {stage: s1, metric: m/acc}",
            "from_winner: missing key(s) ['take']; expected stage, metric, take",
        ),
        (
            "from_winner: {stage: s1, metric: m/acc, take: [train_files], by: max}",
            "from_winner: unknown key(s) ['by']",
        ),
        ("from_winner: {stage: s9, metric: m/acc, take: [train_files]}", "no run before this one has stage 's9'"),
        ("from_winner: {stage: s2, metric: m/acc, take: [train_files]}", "'s2' is the run's own stage"),
        ("from_winner: {stage: [], metric: m/acc, take: [train_files]}", "from_winner.stage must be a stage name"),
        ("from_winner: {stage: s1, metric: 3, take: [train_files]}", "from_winner.metric must be a flat metric key"),
        ("from_winner: {stage: s1, metric: m/acc, take: []}", "from_winner.take must be a non-empty list"),
        ("from_winner: {stage: s1, metric: m/acc, take: [data]}", "from_winner.take: 'data' is not a run setting"),
        ("from_winner: {stage: s1, metric: m/acc, take: [train.lrr]}", "'lrr' is not one of"),
        ("from_winner: {stage: s1, metric: m/acc, take: [name]}", "'name' identifies a run and cannot be taken"),
        (
            "from_winner: {stage: s1, metric: m/acc, take: [train]}\n    train: {lr: 0.1}",
            "from_winner.take: 'train' comes from the winner, but the run sets 'train.lr'",
        ),
        (
            "from_winner: {stage: s1, metric: m/acc, take: [reward.kwargs.graph_reward]}\n"
            "    reward: {kwargs: {graph_reward: binary}}",
            "'reward.kwargs.graph_reward' comes from the winner, but the run sets 'reward.kwargs.graph_reward'",
        ),
        ("from_winner: {stage: s1, metric: m/acc, take: [sampler]}\n    cpu_mode: true", "a CPU-mode run cannot"),
    ],
)
def test_link_syntax_errors_name_the_run_and_key(tmp_path, capsys, entry, message):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        with_shipped_defaults(BASE + f"  - name: b\n    stage: s2\n    description: d\n    {entry}\n"), encoding="utf-8"
    )
    if not message:
        assert main(["--matrix", str(matrix), "--list"]) == 0
        return
    assert main(["--matrix", str(matrix), "--list"]) == 2
    text = capsys.readouterr().out
    assert f"{matrix}: run 'b': " in text.replace("\n", "") and message in text.replace("\n", "")


def test_from_winner_belongs_to_runs(tmp_path, capsys):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        with_shipped_defaults(
            "defaults: {train_files: [x.parquet], from_winner: {stage: s, metric: m, take: [lr]}}\n"
            "runs:\n  - {name: a, stage: s1, description: d}\n",
        ),
        encoding="utf-8",
    )
    assert main(["--matrix", str(matrix), "--list"]) == 2
    assert "from_winner belongs to a run entry, not to defaults or cpu_profile" in capsys.readouterr().out


def test_a_winner_without_the_setting_is_an_error(tmp_path, capsys):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        with_shipped_defaults(
            BASE + "  - name: b\n    stage: s2\n    description: d\n"
            "    from_winner: {stage: s1, metric: graph/optimal_rate, take: [reward.kwargs.graph_reward]}\n",
        ),
        encoding="utf-8",
    )
    eval_root = tmp_path / "eval"
    write_result(eval_root, "a", 500, 0.5)
    code = main(["--matrix", str(matrix), *COMMON, "--out", str(tmp_path / "o"), "--eval-root", str(eval_root)])
    assert code == 1
    assert "error: stage s2: the winning run a has no setting 'reward.kwargs.graph_reward' to pass on" in (
        capsys.readouterr().out
    )


def test_no_graph_script_is_committed():
    """Chained scripts wait for results, and every graph run holds a checkpoint path of one machine."""
    committed = {p.name for p in (REPO_ROOT / "recipe" / "rlif").rglob("graph_*.sh")}
    assert committed == set()
    assert (REPO_ROOT / "recipe" / "rlif" / "slurm_qwen8b_think_if80000_grpo.sh").exists()

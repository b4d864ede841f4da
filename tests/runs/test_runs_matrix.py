"""The shipped matrix declares the group's runs with the group's defaults, and bad matrices fail at load time."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from run_matrices import with_shipped_defaults

from rlif.runs import spec as m
from rlif.runs.matrix import SHIPPED_MATRIX, default_run, load_matrix

REPO_ROOT = Path(__file__).resolve().parents[2]

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(MATRIX)


def by_stage(matrix, stage):
    return [run for run in matrix.runs if run.stage == stage]


def test_defaults_are_the_groups_setup(matrix):
    run = next(r for r in matrix.runs if r.name == "slurm_qwen8b_think_if80000_grpo")
    t = run.train
    assert (t.total_epochs, t.total_training_steps, t.lr, t.train_batch_size) == (10, 500, 1e-6, 512)
    assert (t.max_prompt_length, t.max_response_length, t.rollout_n) == (2048, 8192, 8)
    # memory-safe: checkpointing, token-budgeted micro-batches sized by the planner, no tokens x vocab logits
    assert (t.gradient_checkpointing, t.dynamic_batch, t.fused_kernels, t.entropy_chunking) == (True, True, True, True)
    assert (t.actor_token_budget, t.log_prob_token_budget, t.ref_token_budget) == (0, 0, 0)
    assert t.trainer == "v1_sync"
    assert (t.use_kl_loss, t.kl_loss_coef, t.kl_loss_type) == (True, 0.001, "low_var_kl")
    assert run.train_files == ("verl_data/if80000_logicif0.parquet",)
    assert run.val_files == ("verl_data/ifbench_300_ifeval_541_logicif_749.parquet",)
    assert (run.slurm.nodes, run.slurm.gpus_per_node) == (1, 8)


def test_stage1_is_two_models_by_think_by_data(matrix):
    runs = by_stage(matrix, "stage1")
    combos = {(r.model, r.think, r.train_files[0]) for r in runs}
    assert len(runs) == 8 and len(combos) == 8
    assert {r.model for r in runs} == {"Qwen/Qwen3-8B", "Qwen/Qwen3-1.7B"}
    assert {r.train_files[0] for r in runs} == {
        "verl_data/if80000_logicif0.parquet",
        "verl_data/if0_logicif80000.parquet",
    }


def test_stage2_names_and_policies(matrix):
    runs = {r.arm: r for r in by_stage(matrix, "stage2") if r.replicate and r.replicate.seed == 1}
    assert set(runs) == {
        "stage2_qwen17b_think_1v1",
        "stage2_qwen17b_think_ema",
        "stage2_qwen17b_think_ema_rewardCurriculum",
        "stage2_qwen17b_think_ema_rewardCurriculum_decay",
        "stage2_qwen17b_think_1v1_rewardCurriculum",
        "stage2_qwen17b_think_1v1_rewardCurriculum_decay",
        "stage2_qwen17b_think_fixed068",
        "stage2_qwen17b_think_learnabilityUcb",
        "stage2_qwen17b_think_1v1_dapo",
    }
    assert all(r.model == "Qwen/Qwen3-1.7B" and r.think for r in runs.values())
    assert runs["stage2_qwen17b_think_ema_rewardCurriculum_decay"].sampler.params["interval_decay"] == 0.5
    assert "interval_decay" not in runs["stage2_qwen17b_think_ema_rewardCurriculum"].sampler.params
    for arm in ("stage2_qwen17b_think_1v1_rewardCurriculum", "stage2_qwen17b_think_1v1_rewardCurriculum_decay"):
        assert (
            runs[arm].sampler.params["source_weighting"] == "fixed" and "source_params" not in runs[arm].sampler.params
        )
    ema = [r for r in runs.values() if "ema" in r.name]
    assert all(
        {"alpha", "temperature", "floor", "signal"} <= set(r.sampler.params.get("source_params", r.sampler.params))
        for r in ema
    )
    assert runs["stage2_qwen17b_think_1v1_dapo"].train.drop_tied_groups
    assert sum(r.train.drop_tied_groups for r in runs.values()) == 1


def test_graph_ablations_are_a_chain_volume_sampling_reward_recompare_base(matrix):
    """Volume -> mixed vs curriculum at the best volume -> reward variants on the best so far -> mixed vs curriculum
    again under the best reward -> base models."""
    volume = by_stage(matrix, "graph_volume")
    assert {r.train_files[0] for r in volume} == {
        f"verl_data/graph/6np_{v}/train_mixed.parquet" for v in (45000, 60000, 90000)
    }
    assert all(r.reward.kwargs["graph_reward"] == "binary" and r.from_winner is None for r in volume)
    stages = ("graph_sampling", "graph_reward", "graph_recompare", "graph_base")
    sampling, reward, recompare, base = (by_stage(matrix, s) for s in stages)
    assert [r.sampler.name for r in recompare] == ["uniform", "staged_curriculum"]  # mixed listed first: the tie rule
    assert {r.sampler.name for r in sampling} == {"reward_curriculum", "staged_curriculum"}
    assert {r.reward.kwargs["graph_reward"] for r in reward} == {
        "binary_format",
        "binary_format_repeat",
        "ratio_quality_format_repeat",
        "complicated",
    }
    assert len({r.model for r in base}) == 4
    metric = "graph/optimal_rate"
    for runs, stages, take in (
        (sampling, ("graph_volume",), ("train_files",)),
        (reward, ("graph_volume", "graph_sampling"), ("train_files", "sampler")),
        (recompare, ("graph_volume", "graph_sampling", "graph_reward"), ("train_files", "reward")),
        (
            base,
            ("graph_volume", "graph_sampling", "graph_reward", "graph_recompare"),
            ("train_files", "sampler", "reward"),
        ),
    ):
        assert all(r.from_winner.stages == stages for r in runs), runs[0].name
        assert all((r.from_winner.metric, r.from_winner.take) == (metric, take) for r in runs), runs[0].name
        assert all(r.from_winner.tie_rule.startswith("smaller volume") for r in runs), runs[0].name


def test_smoke_run_and_default_selection(matrix):
    (smoke,) = by_stage(matrix, "smoke")
    assert smoke.name == "slurm_qwen06b_think_if1000_logicif1000_grpo"
    assert smoke.model == "Qwen/Qwen3-0.6B" and smoke.think
    selected = matrix.select()
    assert smoke in selected and not any(r.cpu_mode for r in selected)
    assert [r.stage for r in matrix.select(stages=["cpu"])] == ["cpu"]


def test_cpu_mode_variant_gets_profile_and_suffix(matrix):
    cpu = matrix.in_cpu_mode(by_stage(matrix, "smoke")[0])
    assert cpu.name.endswith("_cpu") and cpu.cpu_mode
    assert cpu.train.total_training_steps == 4 and cpu.train.save_freq == 1 and cpu.slurm.nodes == 2


def test_gpu_runs_checkpoint_often_with_bounded_disk(matrix):
    """verl 0.9.1's V1 trainer has no pre-time-limit save: save_freq alone bounds what a requeue redoes. Runs that
    leave it to the planner redo at most max_lost_hours at the slow end of the step time (or save every step)."""
    from rlif.runs.planner import plan_run

    for run in matrix.select():
        assert 1 <= run.train.max_ckpt_to_keep <= 3, run.name
        if run.cpu_mode or run.train.save_freq != 0:
            assert 1 <= run.train.save_freq <= 25, run.name
            continue
        plan = plan_run(run, REPO_ROOT)
        assert plan.save_freq >= 1, run.name
        bare = plan.slow.seconds - plan.slow.parts["checkpoint (amortised)"]
        assert plan.save_freq == 1 or plan.save_freq * bare <= run.train.max_lost_hours * 3600, run.name


def test_cpu_run_description_states_its_step_count(matrix):
    (cpu,) = by_stage(matrix, "cpu")
    words = {2: "Two", 3: "Three", 4: "Four", 5: "Five", 6: "Six"}
    assert cpu.description.startswith(f"{words[cpu.train.total_training_steps]}-step GRPO"), cpu.description


def test_unknown_selection_lists_known(matrix):
    with pytest.raises(ValueError, match="known stages"):
        matrix.select(stages=["stage9"])
    with pytest.raises(ValueError, match="known runs"):
        matrix.select(names=["nope"])


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("{name: a, stage: s, description: d, train: {lrr: 1.0}}", r"run 'a'.*unknown key.*train\.lrr"),
        (
            "{name: a, stage: s, description: d, train: {trainer_mode: sync}}",
            r"run 'a'.*train\.trainer_mode is now train\.trainer: v1_sync, v1_colocate_async or legacy",
        ),
        (
            "{name: a, stage: s, description: d, train: {ref_offload: true}}",
            r"run 'a'.*train\.ref_offload was removed; nothing replaces it: verl 0\.9\.1 streams every forward-only",
        ),
        ("{name: a, stage: s, description: d, train: {rollout_n: eight}}", r"run 'a'.*train\.rollout_n must be int"),
        ("{name: a, stage: s, description: d, think: 'yes'}", r"think must be true or false"),
        ("{name: a b, stage: s, description: d}", r"name 'a b' must match"),
        ("{name: a, description: d}", r"missing required key 'stage'"),
        ("{name: a, stage: s, description: d, train_files: []}", r"train_files is empty"),
    ],
)
def test_bad_entries_name_run_and_key(tmp_path, entry, message):
    path = tmp_path / "m.yaml"
    path.write_text(
        with_shipped_defaults(f"defaults: {{train_files: [x.parquet]}}\nruns:\n  - {entry}\n"), encoding="utf-8"
    )
    with pytest.raises(ValueError, match=message):
        load_matrix(path)


def test_duplicate_run_names(tmp_path):
    path = tmp_path / "m.yaml"
    entry = "{name: a, stage: s, description: d, train_files: [x.parquet]}"
    path.write_text(with_shipped_defaults(f"runs:\n  - {entry}\n  - {entry}\n"), encoding="utf-8")
    with pytest.raises(ValueError, match="duplicate run name 'a'"):
        load_matrix(path)


def test_graph_runs_share_the_graph_group(matrix):
    graph_runs = [r for r in matrix.runs if r.stage.startswith("graph_")]
    assert len(graph_runs) == 17
    assert all(matrix.group_of[r.name] == "graph" for r in graph_runs)
    for run in graph_runs:
        build = "6np_756" if run.stage == "graph_smoke" else "6np_45000"  # the smoke pair needs only its own build
        assert run.val_files == (
            f"verl_data/graph/{build}/val_easy.parquet",
            f"verl_data/graph/{build}/val_hard.parquet",
        ), run.name
        assert (run.train.max_prompt_length, run.train.sequence_parallel) == (5120, "auto"), run.name
        assert run.plan.mean_prompt_tokens == 2048, run.name
        # the group's keys merge under the run's own: only the reward variant changes, the manager stays remote
        assert (run.reward.manager, run.reward.num_workers) == ("remote", 16), run.name
    rewards = {r.name: r.reward.kwargs["graph_reward"] for r in graph_runs if r.stage == "graph_reward"}
    assert sorted(rewards.values()) == [
        "binary_format",
        "binary_format_repeat",
        "complicated",
        "ratio_quality_format_repeat",
    ]
    models = {r.name: r.model for r in graph_runs if r.stage == "graph_base"}
    assert models["graph_qwen8b_think_best"] == "Qwen/Qwen3-8B"  # a run's own key beats its group's
    # the group sits between the defaults and the run: untouched keys still come from the defaults
    assert all(r.train.lr == 1e-6 and r.train.rollout_n == 8 for r in graph_runs)


def test_cpu_mode_keeps_the_group(matrix):
    cpu = matrix.in_cpu_mode(next(r for r in matrix.runs if r.name == "graph_qwen17b_think_6np45000_binary"))
    assert cpu.reward.manager == "remote" and cpu.reward.num_workers == 1  # group, then the CPU profile over it
    assert cpu.val_files[0].endswith("val_easy.parquet")


@pytest.mark.parametrize(
    ("groups", "group", "message"),
    [
        ("{g: {train: {lr: 2.0e-6}}}", "h", r"run 'a': group 'h' is not one of groups: \['g'\]"),
        ("[g]", "g", r"groups must be a mapping of group name -> settings"),
        ("{g: {}}", "g", r"groups\.g must be a non-empty mapping of run settings"),
        ("{g: {stage: s}}", "g", r"groups\.g: 'stage' belongs to a run entry, not to a group"),
        ("{g: {from_winner: {stage: s, metric: m, take: [model]}}}", "g", r"groups\.g: 'from_winner' belongs"),
        ("{g: {train: {lrr: 1.0}}}", "g", r"run 'a'.*unknown key.*train\.lrr"),
    ],
)
def test_bad_groups_name_the_group_and_key(tmp_path, groups, group, message):
    path = tmp_path / "m.yaml"
    entry = f"{{name: a, stage: s, description: d, group: {group}}}"
    path.write_text(
        with_shipped_defaults(f"defaults: {{train_files: [x.parquet]}}\ngroups: {groups}\nruns:\n  - {entry}\n"),
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match=message):
        load_matrix(path)


def test_group_merges_between_defaults_and_run(tmp_path):
    path = tmp_path / "m.yaml"
    path.write_text(
        with_shipped_defaults(
            "defaults: {train_files: [x.parquet], train: {lr: 1.0e-6, rollout_n: 8}}\n"
            "groups: {g: {train: {lr: 2.0e-6, rollout_n: 4}}}\n"
            "runs:\n"
            "  - {name: a, stage: s, description: d, group: g, train: {rollout_n: 16}}\n"
            "  - {name: b, stage: s, description: d}\n",
        ),
        encoding="utf-8",
    )
    matrix = load_matrix(path)
    a, b = matrix.runs
    assert (a.train.lr, a.train.rollout_n) == (2e-6, 16)
    assert (b.train.lr, b.train.rollout_n) == (1e-6, 8)
    assert (matrix.merged_raw("a")["train"]["lr"], matrix.merged_raw("a")["train"]["rollout_n"]) == (2e-6, 16)


def test_every_default_lives_in_the_matrix_yaml():
    """The run specs carry no defaults of their own (only a run's chain link and its replicate record, which the
    matrix sets from ``seeds``, are optional), so the YAML's ``defaults:`` is the one place a default is written."""
    specs = [m.RunSpec, m.TrainSpec, m.RewardSpec, m.SamplerSpec, m.SlurmSpec, m.ValidationSpec, m.SamplingSpec]
    specs += [m.PlanSpec, m.EvalSpec]
    with_default = [
        f"{spec.__name__}.{f.name}"
        for spec in specs
        for f in dataclasses.fields(spec)
        if f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
    ]
    assert with_default == ["RunSpec.from_winner", "RunSpec.replicate"]


@pytest.mark.parametrize("key", ["train.lr", "slurm.account", "sampler.on_data_change", "validation.no_think.top_k"])
def test_a_setting_missing_from_the_defaults_names_the_key_and_file(tmp_path, key):
    data = yaml.safe_load(SHIPPED_MATRIX.read_text(encoding="utf-8"))
    *parents, last = key.split(".")
    node = data["defaults"]
    for part in parents:
        node = node[part]
    del node[last]
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"^{path}: run '[^']+': missing required key '{key}' \(every run setting"):
        load_matrix(path)


def test_default_run_is_the_yaml_defaults(matrix):
    run = default_run(train_files=["x.parquet"])
    assert run.train.max_response_length == matrix.defaults["train"]["max_response_length"]
    assert run.validation.no_think.temperature == matrix.defaults["validation"]["no_think"]["temperature"]
    assert run.slurm.partition == "" and run.sampler.on_data_change == "error"
    assert default_run(train={"lr": 3e-6}).train.lr == 3e-6

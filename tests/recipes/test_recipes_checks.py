"""Static checks catch what verl 0.9.1 composes without complaint, naming run and key; shipped runs pass."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from rlif.recipes.checks import check_run
from rlif.runs.matrix import load_matrix
from rlif.verl_glue.overrides import REWARD_KWARGS, all_overrides, build_overrides, parse_override

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(MATRIX)


@pytest.fixture(scope="module")
def base(matrix):
    return next(r for r in matrix.runs if r.stage == "smoke")


def problems_of(run, extra=()):
    overrides = build_overrides(run) + [parse_override(t) for t in extra]
    return check_run(run, overrides)


def test_every_shipped_run_passes(matrix):
    for run in matrix.runs:
        assert check_run(run, all_overrides(run)) == [], run.name


@pytest.mark.parametrize(
    ("extra", "key", "fragment"),
    [
        (["+data.sampler.class_path=x.Y"], "+data.sampler.class_path", "silently ignore"),
        (
            ["+reward.custom_reward_function.reward_kwargs.if_rewrd=all"],
            "reward_kwargs.if_rewrd",
            "rlif reward options",
        ),
        (["custom_reward_function.path=pkg://x"], "custom_reward_function.path", "legacy reward key"),
        (["reward_model.reward_manager=naive"], "reward_model.reward_manager", "legacy reward key"),
        (["data.dataloader_num_workers=2"], "data.dataloader_num_workers", "must be 0 with PolicySampledDataset"),
        (["trainer.save_freq=7"], "trainer.save_freq", "set more than once"),
    ],
)
def test_override_mistakes(base, extra, key, fragment):
    found = [p for p in problems_of(base, extra) if key in p.key]
    assert found, problems_of(base, extra)
    assert any(fragment in p.message for p in found), found
    assert str(found[0]).startswith(f"run {base.name}: ")


def test_workers_are_only_refused_for_rlif_s_dataset(base):
    """The trainer config sets ``PolicySampledDataset``; a run that swaps the dataset may use workers."""
    extra = ["data.custom_cls.name=MyDataset", "data.dataloader_num_workers=2"]
    assert problems_of(base, extra) == []


def test_allowed_plus_keys_pass(base):
    extra = [
        "+reward.custom_reward_function.reward_kwargs.logicif_partial_credit=true",
        "+data.apply_chat_template_kwargs.reasoning_effort=low",
    ]
    assert problems_of(base, extra) == []


def replace(run, **sections):
    changes = {}
    for section, values in sections.items():
        changes[section] = dataclasses.replace(getattr(run, section), **values)
    return dataclasses.replace(run, **changes)


@pytest.mark.parametrize(
    ("sections", "key"),
    [
        ({"train": {"ppo_mini_batch_size": 100}}, "train.ppo_mini_batch_size"),
        ({"train": {"train_batch_size": 500, "rollout_n": 3, "ppo_mini_batch_size": 100}}, "train.train_batch_size"),
        ({"train": {"micro_batch_per_gpu": 48}}, "train.micro_batch_per_gpu"),
        ({"train": {"sequence_parallel": 3}}, "train.sequence_parallel"),
        ({"train": {"rollout_tp": 3}}, "train.rollout_tp"),
        ({"train": {"rollout_n": 1}}, "train.rollout_n"),
        ({"train": {"save_freq": -2}}, "train.save_freq"),
        ({"train": {"max_lost_hours": 0}}, "train.max_lost_hours"),
        ({"train": {"max_ckpt_to_keep": -1}}, "train.max_ckpt_to_keep"),
        ({"slurm": {"gpus_per_node": 6}}, "train.train_batch_size"),
        ({"slurm": {"time": "5 days"}}, "slurm.time"),
        ({"slurm": {"requeue_signal_seconds": 10}}, "slurm.requeue_signal_seconds"),
        ({"slurm": {"partition": "gpu;rm"}}, "slurm.partition"),
        ({"reward": {"kwargs": {"graph_reward": "binary_fmt"}}}, "reward.kwargs"),
        ({"reward": {"kwargs": {"graph_rewards": "binary"}}}, "reward.kwargs"),
        ({"sampler": {"name": "nope"}}, "sampler"),
        ({"sampler": {"name": "uniform", "params": {"alpha": 0.1}}}, "sampler"),
    ],
)
def test_run_level_mistakes(base, sections, key):
    problems = problems_of(replace(base, **sections))
    assert key in [p.key for p in problems], problems


def test_batches_use_final_trainer_resources(matrix):
    cpu = next(r for r in matrix.runs if r.cpu_mode)
    # the CPU profile trains on 1 rank even though Slurm gives it two nodes: 4 x 2 responses fit one rank
    assert check_run(cpu, all_overrides(cpu)) == []
    assert any(o.key == "trainer.nnodes" and o.value == "1" for o in all_overrides(cpu))


def test_the_run_check_accepts_every_reward_option_the_reward_entry_accepts(base):
    from rewards import check_reward_kwargs, reward_options

    options = reward_options()
    assert set(options) == REWARD_KWARGS and {"if_reward", "logicif_partial_credit", "graph_reward"} <= REWARD_KWARGS
    for option, default in options.items():
        check_reward_kwargs({option: default})
        extra = [f"+reward.custom_reward_function.reward_kwargs.{option}={default}"]
        assert problems_of(base, extra) == [], option


def test_verl_group_filter_is_refused_naming_rlif_s_setting(base):
    found = [p for p in problems_of(base, ["algorithm.filter_groups.enable=true"]) if "filter_groups" in p.key]
    assert found and "train.drop_tied_groups" in found[0].message


def test_drop_tied_groups_turns_on_rlif_s_buffer_filter(matrix):
    dapo = next(run for run in matrix.runs if run.arm == "stage2_qwen17b_think_1v1_dapo")
    texts = {o.text for o in build_overrides(dapo)}
    assert "+trainer.v1.sampler.sampler_kwargs.rlif_drop_tied_groups=true" in texts
    assert "data.gen_batch_size=1" in texts
    assert check_run(dapo, all_overrides(dapo)) == []
    legacy = dataclasses.replace(dapo, train=dataclasses.replace(dapo.train, trainer="legacy"))
    assert any("trainer.v1" in p.key for p in check_run(legacy, build_overrides(legacy)))


def test_a_colocated_reward_model_with_a_reward_reading_policy_is_refused(base):
    reading = replace(base, sampler={"name": "reward_curriculum"})
    problems = problems_of(reading, ["reward.reward_model.enable=true"])
    assert any(p.key == "sampler" and "colocated reward model" in p.message for p in problems)
    fixed = replace(base, sampler={"name": "uniform", "params": {}})
    assert not any("colocated" in p.message for p in problems_of(fixed, ["reward.reward_model.enable=true"]))


def test_the_judge_family_is_refused_by_the_legacy_trainer_and_needs_its_model(base):
    kwargs = {"judge_url": "http://127.0.0.1:8000/v1", "judge_model": "Qwen/Qwen3-8B"}
    legacy = replace(base, reward={"kwargs": kwargs}, train={"trainer": "legacy"})
    assert any(p.key == "train.trainer" and "judge reward family" in p.message for p in problems_of(legacy))
    half = replace(base, reward={"kwargs": {"judge_url": kwargs["judge_url"]}})
    assert any("judge_model" in p.message for p in problems_of(half))
    assert not any("judge" in p.message for p in problems_of(replace(base, reward={"kwargs": kwargs})))


def test_colocate_async_needs_a_rollout_correction(base):
    run = replace(base, train={"trainer": "v1_colocate_async"})
    (problem,) = [p for p in problems_of(run) if p.key == "train.trainer"]
    assert "algorithm.rollout_correction.rollout_is" in problem.message and "\n" not in problem.message
    for extra in (
        ["algorithm.rollout_correction.rollout_is=token"],
        ["algorithm.rollout_correction.rollout_rs=seq_mean_k1", "algorithm.rollout_correction.rollout_rs_threshold=2"],
        ["algorithm.rollout_correction.bypass_mode=true"],
    ):
        assert not [p for p in problems_of(run, extra) if p.key == "train.trainer"], extra
    # the last override of a key wins, as in Hydra: switched on, then off again
    off = ["algorithm.rollout_correction.rollout_is=token", "algorithm.rollout_correction.rollout_is=null"]
    from rlif.recipes.checks import rollout_correction_set

    assert not rollout_correction_set([parse_override(t) for t in off])
    assert not [p for p in problems_of(base) if p.key == "train.trainer"]


def test_overlong_modes_and_the_trainers_that_cannot_apply_them(base):
    assert base.train.overlong == "mask"
    keys = [o.key for o in build_overrides(base)]
    assert "trainer.v1.sampler.sampler_kwargs.rlif_overlong" in keys
    assert "trainer.v1.sampler.sampler_kwargs.rlif_max_response_length" in keys
    legacy = replace(base, train={"trainer": "legacy"})
    (problem,) = [p for p in problems_of(legacy) if p.key == "train.overlong"]
    assert problem.message.startswith("mask needs a V1 trainer")
    assert not [p for p in problems_of(replace(legacy, train={"trainer": "legacy", "overlong": "none"}))]
    assert "train.overlong" in [p.key for p in problems_of(replace(base, train={"overlong": "cut"}))]
    soft = replace(base, train={"overlong": "soft_punish", "overlong_buffer_tokens": base.train.max_response_length})
    assert "train.overlong_buffer_tokens" in [p.key for p in problems_of(soft)]
    soft = replace(base, train={"overlong": "soft_punish"})
    assert problems_of(soft) == []
    assert "trainer.v1.sampler.sampler_kwargs.rlif_overlong_penalty" in [o.key for o in build_overrides(soft)]
    assert not [o for o in build_overrides(replace(base, train={"overlong": "none"})) if "overlong" in o.key]

"""The CPU demo's overrides: the matrix's CPU run with the demo's changes, mapped as the generator maps a run."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
from pathlib import Path

import pytest

from rlif.cpu_demo import (
    EXPERIMENT,
    JUDGE_WEIGHT,
    MATRIX,
    REASONING_GYM_WEIGHT,
    DemoJudge,
    DemoLayout,
    demo_matrix_run,
    demo_overrides,
    demo_run,
    main,
)
from rlif.demo_assets import JUDGE_SOURCE, demo_rows
from rlif.recipes.checks import check_judge
from rlif.runs.matrix import load_matrix
from rlif.verl_glue.overrides import all_overrides, parse_override

LAYOUT = DemoLayout(Path("/demo"))
DEMO_WEIGHTS = {"iftrain": 8, "logicif": 1, "graph/mcp": 1, "graph/mis": 1, "graph/mvc": 1, "graph/tsp": 1}


def cpu_run() -> object:
    """The local-Slurm test's CPU run, which the demo's run differs from only in its stated settings."""
    (run,) = load_matrix(MATRIX).select(names=["cpu_e2e_tiny_grpo"])
    return run


def overrides_by_key(texts: list[str]) -> dict[str, str]:
    parsed = [parse_override(text) for text in texts]
    keys = [o.key for o in parsed]
    assert len(keys) == len(set(keys)), "a key is set twice"
    return {o.key: o.text for o in parsed}


def demo(
    total_steps: int = 2,
    trainer: str = "v1_sync",
    matrix_path: Path = MATRIX,
    judge: DemoJudge | None = None,
    reasoning_gym: tuple[str, ...] = (),
) -> dict[str, str]:
    texts = demo_overrides(
        Path("/m"), Path("/t.parquet"), Path("/v.parquet"), LAYOUT, total_steps, trainer=trainer,
        matrix_path=matrix_path, judge=judge, reasoning_gym=reasoning_gym,
    )  # fmt: skip
    return overrides_by_key(texts)


HAS_REASONING_GYM = importlib.util.find_spec("reasoning_gym") is not None
needs_reasoning_gym = pytest.mark.skipif(not HAS_REASONING_GYM, reason="reasoning-gym is not installed")


JUDGE = DemoJudge(url="http://127.0.0.1:8123/v1")


def test_a_phase_changes_only_its_steps_and_trainer() -> None:
    """(and, on the legacy trainer, which has no replay buffer to apply it in, the overlong handling)"""
    run, ours = demo_matrix_run(), demo_run(total_steps=2, trainer="legacy")
    assert ours.name == EXPERIMENT and ours.train.overlong == "none"
    assert dataclasses.replace(ours, train=run.train) == run
    restored = {"total_training_steps": run.train.total_training_steps, "overlong": run.train.overlong}
    assert dataclasses.replace(ours.train, trainer="v1_sync", **restored) == run.train


def test_the_demo_run_is_the_cpu_run_with_the_settings_its_entry_states() -> None:
    run, ours = cpu_run(), demo_matrix_run()
    demo_train = {"max_prompt_length", "rollout_n", "micro_batch_per_gpu", "log_prob_micro_batch_per_gpu"}
    demo_train |= {"total_training_steps", "save_freq", "max_ckpt_to_keep", "logger"}
    restored = {name: getattr(run.train, name) for name in demo_train}
    assert dataclasses.replace(ours.train, **restored) == run.train
    restored_run = {"name": run.name, "stage": run.stage, "description": run.description, "think": run.think}
    assert dataclasses.replace(ours, train=run.train, sampler=run.sampler, **restored_run) == run
    assert ours.sampler.params == {"weights": DEMO_WEIGHTS}


def test_every_key_not_changed_by_the_demo_is_the_matrix_cpu_run_s() -> None:
    run = {o.key: o.text for o in all_overrides(cpu_run())}  # the last of a repeated key wins, as in Hydra
    ours = demo()
    changed = {
        "data.max_prompt_length",
        "data.apply_chat_template_kwargs.enable_thinking",
        "actor_rollout_ref.rollout.n",
        "actor_rollout_ref.rollout.max_model_len",
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu",
        "actor_rollout_ref.actor.ppo_max_token_len_per_gpu",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu",
        "actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu",
        "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu",
        "actor_rollout_ref.rollout.val_kwargs",
        "trainer.experiment_name",
        "trainer.total_training_steps",
        "trainer.save_freq",
        "trainer.max_actor_ckpt_to_keep",
        "trainer.logger",
    }
    assert not [key for key in run if key not in ours and not key.startswith("data.rlif_sampler.")]
    for key, text in ours.items():
        if key in changed or key.startswith("data.rlif_sampler.") or key not in run:
            continue
        if "${" in run[key]:  # the run's placeholders get the demo's paths
            assert "${" not in text and text.split("=")[0] == run[key].split("=")[0], key
        else:
            assert text == run[key], key


def test_the_demo_s_own_settings() -> None:
    ours = demo(total_steps=3)
    assert ours["trainer.experiment_name"] == "trainer.experiment_name=cpu_demo"
    assert ours["trainer.total_training_steps"] == "trainer.total_training_steps=3"
    assert ours["trainer.save_freq"] == "trainer.save_freq=1"
    assert ours["trainer.logger"] == "trainer.logger=[console,file]"
    assert ours["trainer.default_local_dir"] == f"trainer.default_local_dir={LAYOUT.checkpoints.resolve()}"
    assert ours["data.train_files"] == f"data.train_files=[{Path('/t.parquet').resolve()}]"
    assert ours["actor_rollout_ref.model.path"] == f"actor_rollout_ref.model.path={Path('/m').resolve()}"
    # an added key stays added when a delta replaces its value
    assert ours["data.apply_chat_template_kwargs.enable_thinking"].startswith("+") and ours[
        "data.apply_chat_template_kwargs.enable_thinking"
    ].endswith("=false")
    sampler = {k: v.split("=", 1)[1] for k, v in ours.items() if k.startswith("data.rlif_sampler.")}
    assert json.loads(sampler.pop("data.rlif_sampler.params").strip("'")) == {"weights": DEMO_WEIGHTS}
    assert sampler == {
        "data.rlif_sampler.name": "fixed_ratio",
        "data.rlif_sampler.seed": "0",
        "data.rlif_sampler.on_data_change": "error",
    }
    assert ours["trainer.device"] == "trainer.device=cpu"  # the CPU support's overrides are in


def test_async_mode_uses_the_async_feedback_buffer() -> None:
    ours = demo(trainer="v1_colocate_async")
    assert ours["trainer.v1.trainer_mode"] == "trainer.v1.trainer_mode=colocate_async"
    assert ours["trainer.v1.sampler.custom_sampler.name"].endswith("=AsyncRewardFeedbackReplayBuffer")


def test_legacy_mode_runs_verl_s_legacy_trainer_with_the_feedback_dir() -> None:
    ours = demo(total_steps=3, trainer="legacy")
    assert ours["trainer.use_v1"] == "trainer.use_v1=false"
    assert ours["data.rlif_sampler.feedback_dir"] == f"+data.rlif_sampler.feedback_dir={LAYOUT.checkpoints.resolve()}"
    assert not any(key.startswith("trainer.v1.") for key in ours)
    v1 = demo(total_steps=3)
    legacy_only = {"trainer.use_v1", "data.rlif_sampler.feedback_dir"}
    v1_only = {"trainer.v1.trainer_mode", "trainer.v1.sampler.custom_sampler.name"}
    v1_only |= {k for k in v1 if k.startswith("trainer.v1.sampler.sampler_kwargs.rlif_")}  # overlong handling
    assert {k: v for k, v in ours.items() if k not in legacy_only} == {k: v for k, v in v1.items() if k not in v1_only}


def test_the_learning_rate_follows_the_matrix(tmp_path: Path) -> None:
    text = MATRIX.read_text(encoding="utf-8")
    assert "\n    lr: 1.0e-6\n" in text
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(text.replace("\n    lr: 1.0e-6\n", "\n    lr: 3.0e-6\n", 1), encoding="utf-8")
    assert demo(matrix_path=matrix)["actor_rollout_ref.actor.optim.lr"] == "actor_rollout_ref.actor.optim.lr=3e-06"


def test_a_matrix_without_the_demo_run_is_refused(tmp_path: Path) -> None:
    text = MATRIX.read_text(encoding="utf-8")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(text.replace("  - name: cpu_demo\n", "  - name: cpu_demo_renamed\n"), encoding="utf-8")
    with pytest.raises(ValueError, match=r"matrix.yaml: the CPU demo trains the matrix run 'cpu_demo', which is miss"):
        demo_run(2, matrix_path=matrix)


@pytest.mark.parametrize(("total_steps", "trainer"), [(2, "v1_sync"), (3, "v1_sync"), (2, "v1_colocate_async")])
def test_a_judged_demo_adds_its_source_s_weight_and_the_judge_and_nothing_else(total_steps: int, trainer: str) -> None:
    plain, judged = demo(total_steps, trainer), demo(total_steps, trainer, judge=JUDGE)
    kwargs = "reward.custom_reward_function.reward_kwargs."
    assert {key for key in {*plain, *judged} if plain.get(key) != judged.get(key)} == {
        "data.rlif_sampler.params",
        kwargs + "judge_url",
        kwargs + "judge_model",
    }
    params = json.loads(judged["data.rlif_sampler.params"].split("=", 1)[1].strip("'"))
    assert params == {"weights": {**DEMO_WEIGHTS, JUDGE_SOURCE: JUDGE_WEIGHT}}
    assert judged[kwargs + "judge_url"] == f"+{kwargs}judge_url=http://127.0.0.1:8123/v1"
    assert judged[kwargs + "judge_model"] == f"+{kwargs}judge_model=rlif-stand-in-judge"
    run = demo_run(total_steps, trainer, judge=JUDGE)
    assert check_judge(run, all_overrides(run)) == []  # the generator's judge checks pass


def demo_draws(reasoning_gym: tuple[str, ...] = ()) -> list[set[str]]:
    """The sources the judged demo's sampler draws at each of its 3 steps (4 prompts a step), with the rows of
    ``reasoning_gym`` tasks in the data and the sampler's seed and weights as its overrides carry them."""
    from samplers.registry import build_policy

    ours = demo(judge=JUDGE, reasoning_gym=reasoning_gym)
    name = ours["data.rlif_sampler.name"].split("=", 1)[1]
    params = json.loads(ours["data.rlif_sampler.params"].split("=", 1)[1].strip("'"))
    seed = int(ours["data.rlif_sampler.seed"].split("=", 1)[1])
    policy = build_policy(name, params, seed=seed)
    rows: dict[tuple[str, int], int] = {}
    for row in demo_rows("train", reasoning_gym, judge=True):
        rows[(row["data_source"], 0)] = rows.get((row["data_source"], 0), 0) + 1
    policy.set_pools(rows)
    return [{policy.draw()[0] for _ in range(4)} for _step in range(3)]


def test_the_sampler_draws_the_judged_and_the_if_source_at_every_demo_step() -> None:
    """The demo's draws follow the sampler's seed: with the judged source at ``JUDGE_WEIGHT`` both it and the IF
    source (whose length-cap flag the slow demo test reads) are in every batch of 4 prompts of the 3 steps."""
    for step, drawn in enumerate(demo_draws(), start=1):
        assert {JUDGE_SOURCE, "iftrain"} <= drawn, step


V1_PHASES = [(2, "v1_sync"), (3, "v1_sync"), (2, "v1_colocate_async")]


@needs_reasoning_gym
@pytest.mark.parametrize("task", ["family_relationships", "base_conversion"])
def test_the_sampler_draws_a_reasoning_gym_and_the_judged_source_in_both_phases(task: str) -> None:
    """With one reasoning-gym task beside the judged source (the slow demo test's run), the sampler draws both at
    step 1 (phase 1) and step 3 (the resumed phase 2), and the IF source at every step."""
    draws = demo_draws((task,))
    source = f"reasoning_gym/{task}"
    assert [source in drawn for drawn in draws] == [True, False, True]
    assert [JUDGE_SOURCE in drawn for drawn in draws] == [True, False, True]
    assert all("iftrain" in drawn for drawn in draws)


@needs_reasoning_gym
@pytest.mark.parametrize(
    ("total_steps", "trainer", "judge"),
    [
        *((steps, trainer, judge) for steps, trainer in V1_PHASES for judge in (None, JUDGE)),
        (3, "legacy", None),  # no replay buffer needed, unlike the judged source
    ],
)
def test_reasoning_gym_tasks_add_only_their_sources_weights(
    total_steps: int, trainer: str, judge: DemoJudge | None
) -> None:
    """Each task adds its source to the sampler's weights, after the judged source and in the order named; no other
    key changes (the reward routes ``reasoning_gym/`` rows with no setting of its own)."""
    tasks = ("family_relationships", "base_conversion")
    before, after = (
        demo(total_steps, trainer, judge=judge),
        demo(total_steps, trainer, judge=judge, reasoning_gym=tasks),
    )
    assert {key for key in {*before, *after} if before.get(key) != after.get(key)} == {"data.rlif_sampler.params"}
    weights = json.loads(after["data.rlif_sampler.params"].split("=", 1)[1].strip("'"))["weights"]
    judged = {JUDGE_SOURCE: JUDGE_WEIGHT} if judge else {}
    added = {f"reasoning_gym/{task}": REASONING_GYM_WEIGHT for task in tasks}
    assert list(weights.items()) == list({**DEMO_WEIGHTS, **judged, **added}.items())


@pytest.mark.parametrize(
    ("tasks", "message"),
    [
        (("chess",), "unknown reasoning-gym task 'chess'; supported: base_conversion, family_relationships, maze"),
        (("maze", "maze"), r"reasoning-gym tasks \['maze', 'maze'\]: name each task once"),
    ],
)
def test_a_demo_refuses_an_unknown_or_repeated_reasoning_gym_task(tasks: tuple[str, ...], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        demo_run(2, reasoning_gym=tasks)
    with pytest.raises(ValueError, match=message):
        demo_rows("train", tasks)


def test_a_judged_demo_is_refused_on_the_legacy_trainer_and_without_a_valid_url() -> None:
    with pytest.raises(ValueError, match="a judged source needs a V1 trainer"):
        demo_run(3, "legacy", judge=JUDGE)
    with pytest.raises(ValueError, match=r"the CPU demo's judge: judge\.url 'ftp://x' is not an http"):
        demo_run(2, judge=DemoJudge(url="ftp://x"))
    with pytest.raises(ValueError, match="the judge has no URL"):
        demo_run(2, judge=DemoJudge())


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--judge-url", "http://h:1/v1", "--judge-model", "m"], "--judge-url and --judge-model go with --judge"),
        (["--judge", "--judge-url", "http://h:1/v1"], "--judge-url and --judge-model go together"),
        (["--judge", "--trainer", "legacy"], "a judged source needs a V1 trainer"),
        (["--judge", "--judge-url", "h:1/v1", "--judge-model", "m"], "judge.url 'h:1/v1' is not an http"),
    ],
)
def test_the_command_line_refuses_a_judge_it_cannot_run(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert message in line


FITTING_TASKS = ["base_conversion", "family_relationships"]
"""The reasoning-gym tasks whose demo prompts fit the demo's 512-token limit (the command line's help names them)."""


@needs_reasoning_gym
def test_the_command_line_prepares_reasoning_gym_sources_at_levels_0_and_1(tmp_path: Path) -> None:
    import pyarrow.parquet as pq

    argv = ["--prepare", str(tmp_path)] + [arg for task in FITTING_TASKS for arg in ("--reasoning-gym", task)]
    assert main(argv) == 0
    rows = pq.read_table(tmp_path / "data" / "train.parquet").to_pylist()
    added = [(row["data_source"], row["extra_info"]["difficulty"]) for row in rows if "/" in row["data_source"]]
    expected = [(f"reasoning_gym/{task}", float(level)) for task in FITTING_TASKS for level in (0, 0, 1, 1)]
    assert [pair for pair in added if pair[0].startswith("reasoning_gym/")] == expected


@needs_reasoning_gym
def test_a_task_whose_prompts_exceed_the_demo_s_limit_is_refused_before_training(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verl's overlong-prompt filter would drop maze's longer prompts (a level of the source lost) and all of
    string_insertion's (a weighed source with no rows): the demo stops first, with one line naming what fits."""
    assert main(["--workdir", str(tmp_path), "--reasoning-gym", "maze"]) == 2
    (line,) = [line for line in capsys.readouterr().err.splitlines() if "error:" in line]
    assert "must fit its 512-token limit (the demo run's train.max_prompt_length" in line
    assert re.search(r"reasoning_gym/maze has prompts of \[\d+(, \d+)*\] tokens", line)
    assert line.endswith(f"the reasoning-gym tasks whose demo prompts fit: {', '.join(FITTING_TASKS)}")
    assert not (tmp_path / "data").exists() and not (tmp_path / "checkpoints").exists()
    with pytest.raises(SystemExit) as exit_info:
        main(["--prepare", str(tmp_path), "--reasoning-gym", "string_insertion"])
    assert exit_info.value.code == 2
    assert "reasoning_gym/string_insertion has prompts of" in capsys.readouterr().err


@needs_reasoning_gym
def test_the_prompt_length_check_agrees_with_verl_s_overlong_filter(tmp_path: Path) -> None:
    """The demo's count of prompt tokens is verl's: its filter keeps exactly the rows the check passes (the data of
    every supported task, the judged rows included), at the demo's limit, at the longest prompt that fits it, and
    one token below (where the thinking switch's template tokens and ``<=`` matter)."""
    pytest.importorskip("verl")
    from glue_testkit import data_config
    from transformers import AutoTokenizer
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from rewards.reasoning_gym_tasks import TASKS
    from rlif.data.files import write_rows_atomic
    from rlif.demo_assets import build_tokenizer, prompt_tokens

    build_tokenizer(tmp_path / "tok")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path / "tok")
    rows = demo_rows("train", TASKS, judge=True)
    train = write_rows_atomic(rows, tmp_path / "train.parquet")
    run = demo_matrix_run()
    lengths = [prompt_tokens(tokenizer, row["prompt"], run.think) for row in rows]
    longest_fitting = max(n for n in lengths if n <= run.train.max_prompt_length)
    for limit in (run.train.max_prompt_length, longest_fitting, longest_fitting - 1):
        extra = {
            "data.max_prompt_length": limit,
            "data.filter_overlong_prompts": True,
            "+data.apply_chat_template_kwargs.enable_thinking": str(run.think).lower(),
        }
        kept = RLHFDataset(
            data_files=[str(train)], tokenizer=tokenizer, config=data_config(train, train, "uniform", **extra)
        )
        fits = [n <= limit for n in lengths]
        assert 0 < sum(fits) < len(rows), limit  # both sides of the limit are checked
        kept_ids = [kept.dataframe[i]["extra_info"]["item_id"] for i in range(len(kept.dataframe))]
        assert kept_ids == [row["extra_info"]["item_id"] for row, fit in zip(rows, fits, strict=True) if fit], limit

"""The memory settings the planner chooses where the matrix says ``auto``: vLLM's share, actor offload, Ulysses SP."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from rlif.recipes.cli import memory_setting_lines, memory_settings_cell
from rlif.recipes.generate import REPO_ROOT
from rlif.runs.choices import (
    MAX_UTILIZATION,
    ROLLOUT_MARGIN,
    resolve,
    sequence_parallel_sizes,
)
from rlif.runs.matrix import default_run
from rlif.runs.memory import RESERVE_GIB
from rlif.runs.planner import plan_run
from rlif.runs.shapes import BUILTIN_SHAPES, GIB


def _run(**train):
    return default_run(name="r", stage="s", description="d", train_files=["x.parquet"], train=train)


def _choices(run):
    return {c.key.removeprefix("train."): c for c in resolve(run).choices}


def test_the_defaults_leave_all_three_to_the_planner():
    t = _run().train
    assert (t.gpu_memory_utilization, t.actor_offload, t.sequence_parallel) == ("auto", "auto", "auto")


def test_qwen3_8b_keeps_its_actor_resident_and_gives_vllm_0_7_by_hand():
    choices = _choices(_run())
    assert (choices["sequence_parallel"].value, choices["actor_offload"].value) == (1, False)
    s = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    resident = 12 * s.params / 8 / GIB  # fp32 weights and AdamW moments, sharded over 8 GPUs: 11.4 GiB
    room = 80 * (1 - ROLLOUT_MARGIN) - resident - RESERVE_GIB  # 58.6 GiB for vLLM
    assert room / 80 == pytest.approx(0.732, abs=1e-3)
    assert choices["gpu_memory_utilization"].value == 0.7  # the highest multiple of 0.05 below 0.732
    assert all(c.auto for c in choices.values())
    assert "the actor's resident 11.4 GiB" in choices["gpu_memory_utilization"].reason
    assert choices["actor_offload"].reason.startswith("not needed: with the actor resident (11.4 GiB per GPU)")


def test_an_offloaded_actor_leaves_vllm_more():
    choices = _choices(_run(actor_offload=True))
    assert not choices["actor_offload"].auto and choices["actor_offload"].reason == "set in the matrix"
    assert choices["gpu_memory_utilization"].value == 0.85  # (76 - 6) / 80 = 0.875


def test_vllm_never_gets_more_than_its_default():
    run = _run(actor_offload=True)
    run = dataclasses.replace(run, slurm=dataclasses.replace(run.slurm, gpu_memory_gb=400))
    choice = _choices(run)["gpu_memory_utilization"]
    assert choice.value == MAX_UTILIZATION and choice.reason.startswith("vLLM's default")


def test_offload_when_the_forward_passes_do_not_fit_with_the_actor_resident():
    run = _run()
    run = dataclasses.replace(run, slurm=dataclasses.replace(run.slurm, gpus_per_node=1, cpus_per_task=16))
    choice = _choices(run)["actor_offload"]
    # one GPU holds all of Qwen3-8B's fp32 weights and Adam: 91.5 GiB before any activation
    assert choice.value is True
    assert "(91.5 GiB per GPU) the old log-prob pass needs" in choice.reason


def test_offload_when_generation_would_have_no_kv_cache():
    """The 24 GB LoRA run: resident fp32 weights (11.5 GiB) leave vLLM 0.2 of the GPU, less than its bf16 weights."""
    run = default_run(
        name="r", stage="s", description="d", train_files=["x.parquet"], model="Qwen/Qwen2.5-3B-Instruct",
        train={"lora_rank": 64, "train_batch_size": 64, "ppo_mini_batch_size": 16, "max_prompt_length": 2048,
               "max_response_length": 2048},
        slurm={"gpus_per_node": 1, "cpus_per_task": 16, "gpu_memory_gb": 24},
    )  # fmt: skip
    choices = _choices(run)
    assert choices["actor_offload"].value is True
    assert "a KV cache of 0 tokens, less than one 4,096-token sequence" in choices["actor_offload"].reason
    assert choices["gpu_memory_utilization"].value == 0.7  # (24 x 0.95 - 6) / 24 = 0.70
    plan = plan_run(run, REPO_ROOT)
    assert plan.problems == () and plan.kv_pool_tokens >= 4096


def test_a_fixed_share_decides_offload_and_is_checked():
    fits = _choices(_run(gpu_memory_utilization=0.6))
    assert fits["actor_offload"].value is False and "at gpu_memory_utilization 0.6" in fits["actor_offload"].reason
    tight = _choices(_run(gpu_memory_utilization=0.8))  # 64 + 11.4 resident + 6 reserve > 80
    assert tight["actor_offload"].value is True and "needs 81.4 GiB, more than 80 GiB" in tight["actor_offload"].reason
    # fixed both ways: the plan reports the overflow and names the knob
    plan = plan_run(_run(gpu_memory_utilization=0.8, actor_offload=False), REPO_ROOT)
    assert dict(plan.problems)["train.gpu_memory_utilization"].startswith("rollout needs 81.4 GiB per GPU")


def test_sequence_parallel_only_when_one_sequence_does_not_fit():
    """Without checkpointing Qwen3-8B keeps every layer's activations: one 10,240-token sequence's update overflows a
    GPU at SP 1 and fits at SP 2."""
    run = _run(gradient_checkpointing=False)
    sp = _choices(run)["sequence_parallel"]
    assert sp.value == 2 and sp.auto
    assert sp.reason.startswith("one 10,240-token sequence's update needs")
    assert "the smallest size that fits (allowed by 32 heads, 8 KV heads and 8 GPUs: [1, 2, 4, 8])" in sp.reason
    plan = plan_run(run, REPO_ROOT)
    assert plan.actor_budget * 2 >= 10240 and plan.problems == ()


def test_sizes_respect_heads_gpus_and_the_mini_batch():
    run = _run()
    assert sequence_parallel_sizes(run, BUILTIN_SHAPES["Qwen/Qwen3-8B"], 8) == [1, 2, 4, 8]
    # Qwen2.5-7B-Instruct-1M: 28 heads, which 8 does not divide
    assert sequence_parallel_sizes(run, BUILTIN_SHAPES["Qwen/Qwen2.5-7B-Instruct-1M"], 8) == [1, 2, 4]
    # a mini-batch of 3 x 2 responses does not split over 8 (SP 1) or 4 (SP 2) data-parallel ranks
    odd = _run(ppo_mini_batch_size=3, rollout_n=2, train_batch_size=3)
    assert sequence_parallel_sizes(odd, BUILTIN_SHAPES["Qwen/Qwen3-8B"], 8) == [4, 8]


def test_a_cpu_mode_run_must_set_them():
    run = dataclasses.replace(_run(), cpu_mode=True)
    with pytest.raises(ValueError, match="auto needs the run planner, which does not plan CPU-mode runs"):
        resolve(run)


def test_auto_or_a_value_of_the_setting_type():
    with pytest.raises(ValueError, match=r"train.gpu_memory_utilization must be float or 'auto', got 'most'"):
        _run(gpu_memory_utilization="most")
    with pytest.raises(ValueError, match=r"train.actor_offload must be bool or 'auto', got 1"):
        _run(actor_offload=1)
    assert _run(sequence_parallel=2).train.sequence_parallel == 2


def test_the_generator_shows_each_setting_and_why():
    runs = [_run(), _run(actor_offload=True)]
    written = [SimpleNamespace(run=run) for run in runs]
    lines = memory_setting_lines(written)  # type: ignore[arg-type]
    assert "train.actor_offload true (set in the matrix): r" in lines
    assert any(line.startswith("train.gpu_memory_utilization 0.7 (planner: the highest multiple") for line in lines)
    assert any(line.startswith("train.sequence_parallel 1 (planner: one 10,240-token") and line.endswith(": r, r")
               for line in lines)  # fmt: skip
    assert memory_settings_cell(plan_run(runs[0], REPO_ROOT)) == "0.7*/no*/1*"  # vLLM/offload/SP, * = planner's
    assert memory_settings_cell(plan_run(runs[1], REPO_ROOT)) == "0.85*/yes/1*"

"""The run planner against hand-computed cases, the whole matrix, and generation refusing runs that do not fit."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import pytest
import yaml

from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT
from rlif.runs.matrix import load_matrix
from rlif.runs.memory import RESERVE_GIB, VLLM_ACTIVATION_GIB
from rlif.runs.planner import plan_run, requeues, slurm_hours, training_rows
from rlif.runs.shapes import BUILTIN_SHAPES, GIB, ModelShape, model_shape

MATRIX = REPO_ROOT / "recipe" / "matrix.yaml"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(MATRIX)


def run_named(matrix, name):
    return next(r for r in matrix.runs if r.name == name)


# Saved bytes per token per layer counted on CPU with saved-tensor hooks (KiB), the data the planner's formula fits.
MEASURED_KIB = {
    "Qwen/Qwen3-0.6B": 71,
    "Qwen/Qwen3-1.7B": 111,
    "Qwen/Qwen3-4B": 167,
    "Qwen/Qwen3-8B": 211,
    "Qwen/Qwen2.5-3B-Instruct": 128,
    "Qwen/Qwen2.5-7B-Instruct": 221,
    "meta-llama/Llama-3.1-8B-Instruct": 197,
}


@pytest.mark.parametrize(("model", "kib"), sorted(MEASURED_KIB.items()))
def test_activation_formula_matches_the_measurements(model, kib):
    estimate = BUILTIN_SHAPES[model].activation_bytes_per_token_layer() / 1024
    assert estimate == pytest.approx(kib, rel=0.03)


@pytest.mark.parametrize(
    ("model", "billions"),
    [
        ("Qwen/Qwen3-0.6B", 0.60),
        ("Qwen/Qwen3-1.7B", 1.72),
        ("Qwen/Qwen3-4B", 4.02),
        ("Qwen/Qwen3-8B", 8.19),
        ("Qwen/Qwen2.5-7B-Instruct-1M", 7.62),
        ("Qwen/Qwen2.5-3B-Instruct", 3.09),
        ("meta-llama/Llama-3.1-8B-Instruct", 8.03),
    ],
)
def test_parameter_counts_match_the_model_cards(model, billions):
    assert BUILTIN_SHAPES[model].params / 1e9 == pytest.approx(billions, abs=0.006)


def test_qwen3_8b_by_hand():
    s = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    # attention 4096*(4096+2*1024) + 4096*4096, MLP 3*4096*12288, norms 2*4096 + q/k norms 2*128
    assert s.layer_params == 4096 * 6144 + 4096 * 4096 + 3 * 4096 * 12288 + 2 * 4096 + 2 * 128
    # 36 layers, separate embedding and lm_head of 151936 x 4096, final norm
    assert s.params == 36 * s.layer_params + 2 * 151936 * 4096 + 4096
    # KV cache: K and V, 36 layers, 8 heads of 128, bf16 = 144 KiB per token; TP 2 splits the heads
    assert s.kv_bytes_per_token(1) == 2 * 36 * 8 * 128 * 2 == 144 * 1024
    assert s.kv_bytes_per_token(2) == 72 * 1024
    # Qwen2.5-7B has 4 KV heads: at TP 8 each GPU still holds one whole head
    assert BUILTIN_SHAPES["Qwen/Qwen2.5-7B-Instruct"].kv_bytes_per_token(8) == 2 * 28 * 1 * 128 * 2


def test_update_pass_by_hand(matrix):
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    run = dataclasses.replace(run, train=dataclasses.replace(run.train, actor_token_budget=20480))
    plan = plan_run(run, REPO_ROOT)
    update = next(p for p in plan.passes if p.name == "actor update")
    s = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    c = update.components_gib
    # fp32 weights 4 + fp32 grads 4 + Adam 8 = 16 bytes per parameter, over 8 GPUs
    assert c["fp32 weights, grads, Adam"] == pytest.approx(s.params * 16 / 8 / GIB)
    # checkpointing: each of 36 layers keeps its bf16 input (2 x 4096 B per token), one layer is recomputed at
    # twice its saved bytes (16*4096 + 3*(4096+2048) + 8*12288 + 6*(4096+1024) B per token)
    per_layer = 16 * 4096 + 3 * 6144 + 8 * 12288 + 6 * 5120
    assert c["activations"] == pytest.approx(20480 * (36 * 2 * 4096 + 2 * per_layer) / GIB)
    # fused kernel backward: 26 B per logit of a 512-token chunk, the lm_head gradient and one chunk's contribution
    # (2 x V x h bf16), the hidden states' gradient (tokens x h bf16)
    assert c["logits"] == pytest.approx((26 * 512 * 151936 + 4 * 151936 * 4096 + 2 * 20480 * 4096) / GIB)
    # two gathered bf16 layers + one bf16 layer gradient, embedding and lm_head with their bf16 gradients
    assert c["gathered layers/embeddings"] == pytest.approx((6 * s.layer_params + 4 * 2 * 151936 * 4096) / GIB)
    assert c["reserve"] == RESERVE_GIB
    assert update.total_gib == pytest.approx(sum(c.values()))
    assert 38 < update.total_gib < 46  # gpu-planning's worked example: 46-52 GiB with unfused logits


def test_rollout_and_kv_pool_by_hand(matrix):
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    fixed = dataclasses.replace(run.train, gpu_memory_utilization=0.6, actor_offload=True)
    plan = plan_run(dataclasses.replace(run, train=fixed), REPO_ROOT)
    s = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    # vLLM gets 0.6 x 80 GiB: bf16 weights, a 2 GiB activation peak, the rest is KV cache at 144 KiB per token
    pool = 0.6 * 80 * GIB - 2 * s.params - VLLM_ACTIVATION_GIB * GIB
    assert plan.kv_pool_tokens == int(pool / (144 * 1024))
    assert plan.kv_pool_tokens >= 21 * 10240  # room for 21 full-length sequences
    rollout = next(p for p in plan.passes if p.name == "rollout")
    # actor offloaded: nothing of it stays on the GPU while vLLM runs
    assert rollout.components_gib["actor weights, Adam (resident)"] == 0.0
    assert rollout.total_gib == pytest.approx(0.6 * 80 + RESERVE_GIB)


def test_without_offload_the_actor_stays_resident(matrix):
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    run = dataclasses.replace(run, train=dataclasses.replace(run.train, actor_offload=False))
    rollout = next(p for p in plan_run(run, REPO_ROOT).passes if p.name == "rollout")
    s = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    # fp32 weights and Adam (12 B/param) after step 1, sharded over 8 GPUs
    assert rollout.components_gib["actor weights, Adam (resident)"] == pytest.approx(12 * s.params / 8 / GIB)


def test_every_matrix_run_fits_80_gib(matrix):
    for run in matrix.runs:
        if run.cpu_mode:
            continue
        plan = plan_run(run, REPO_ROOT)
        assert plan.problems == (), (run.name, plan.problems)
        assert plan.peak.total_gib <= 80
        longest = run.train.max_prompt_length + run.train.max_response_length
        sp = {c.key: c.value for c in plan.choices}["train.sequence_parallel"]
        for budget in (plan.actor_budget, plan.log_prob_budget, plan.ref_budget):
            assert budget * sp >= longest  # verl asserts this on the longest sequence
        assert plan.kv_pool_tokens >= longest


def test_the_graph_runs_need_no_sequence_parallel(matrix):
    """SP 4 bought the graph runs no memory: one 13,312-token sequence's update fits a GPU at SP 1, so the planner
    leaves SP at 1 (no all-to-all per attention layer) and the budgets per GPU stay what they were at SP 4."""
    graph = [r for r in matrix.runs if r.stage.startswith("graph_")]
    assert graph and all(r.train.sequence_parallel == "auto" for r in graph)
    assert "PKU-ML/G1-7B" in {r.model for r in graph}
    for run in graph:
        choice = next(c for c in plan_run(run, REPO_ROOT).choices if c.key == "train.sequence_parallel")
        assert (choice.value, choice.auto) == (1, True), run.name
        assert choice.reason.startswith("one 13,312-token sequence's update needs"), run.name


def test_old_defaults_would_not_fit(matrix):
    """What every script did before: no checkpointing, 16 full-length sequences per micro-batch, full logits."""
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    old = dataclasses.replace(
        run.train,
        sequence_parallel=1,
        actor_offload=True,
        gpu_memory_utilization=0.6,
        gradient_checkpointing=False,
        dynamic_batch=False,
        micro_batch_per_gpu=16,
        log_prob_micro_batch_per_gpu=16,
        fused_kernels=False,
        entropy_chunking=False,
    )
    plan = plan_run(dataclasses.replace(run, train=old), REPO_ROOT)
    update = next(p for p in plan.passes if p.name == "actor update")
    assert update.tokens == 16 * 10240
    # 163,840 tokens: ~7.7 MiB per token of activations (36 layers x (2h + saved)) and 4 B per logit
    assert update.components_gib["logits"] == pytest.approx(163840 * 151936 * 4 / GIB)
    assert update.total_gib > 1000
    keys = [key for key, _ in plan.problems]
    assert "train.actor_token_budget" in keys and "train.log_prob_token_budget" in keys


def test_sequence_parallel_must_divide_the_heads(matrix):
    run = run_named(matrix, "graph_qwen25_7b_instruct_1m_best")
    bad = dataclasses.replace(run, train=dataclasses.replace(run.train, sequence_parallel=8))
    problems = dict(plan_run(bad, REPO_ROOT).problems)
    assert problems["train.sequence_parallel"] == "8 does not divide the 28 attention heads"
    # Qwen3-8B: 32 heads, 8 KV heads, SP 16 > KV heads is allowed when KV heads divide it (verl repeats them)
    run8 = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    shape = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    assert shape.heads % 16 == 0 and 16 % shape.kv_heads == 0
    tp = dataclasses.replace(run8, train=dataclasses.replace(run8.train, rollout_tp=3))
    assert dict(plan_run(tp, REPO_ROOT).problems)["train.rollout_tp"] == "3 does not divide the 32 attention heads"


def test_smoke_run_trains_what_its_data_gives(matrix):
    smoke = run_named(matrix, "slurm_qwen06b_think_if1000_logicif1000_grpo")
    plan = plan_run(smoke, REPO_ROOT)
    # 2000 rows // 512 = 3 steps per epoch, 2 epochs
    assert smoke.train.total_training_steps == 0
    assert (plan.rows, plan.steps, plan.epochs) == (2000, 6, 2.0)


def test_a_step_limit_beyond_the_data_is_refused(matrix):
    smoke = run_named(matrix, "slurm_qwen06b_think_if1000_logicif1000_grpo")
    capped = dataclasses.replace(smoke, train=dataclasses.replace(smoke.train, total_training_steps=500))
    problems = dict(plan_run(capped, REPO_ROOT).problems)
    assert "verl would stop on the epoch limit without a final checkpoint" in problems["train.total_training_steps"]


def test_rows_from_the_parquet_footer_or_the_name(tmp_path):
    import pandas as pd

    pd.DataFrame({"a": range(7)}).to_parquet(tmp_path / "if1000_logicif1000.parquet")
    assert training_rows(("if1000_logicif1000.parquet",), tmp_path) == 7  # the file wins over its name
    assert training_rows(("if40000_logicif40000.parquet", "graph/6np_90000/train_mixed.parquet"), tmp_path) == 170000
    assert training_rows(("mine.parquet",), tmp_path) is None


def test_time_and_requeues(matrix):
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    plan = plan_run(run, REPO_ROOT)
    # training: 6 forwards (3 update, 1 recompute, 1 old log-prob, 1 reference) of 2 FLOPs per parameter per token
    # plus causal attention 2 L heads head_dim E[s^2] per sequence; 512 x 8 sequences of 512 + 4096 tokens, length
    # spread 0.5 of the mean response at the fast end, at 30 % of 989 TFLOPS on 8 GPUs
    shape, sequences, s = plan.shape, 512 * 8, 512 + 4096
    attention = 2 * shape.layers * shape.heads * shape.head_dim * (s**2 + (0.5 * 4096) ** 2) * sequences
    flops = 6 * (2 * shape.params * sequences * s + attention)
    assert plan.fast.parts["training"] == pytest.approx(flops / (8 * 0.3 * 989e12))
    assert plan.slow.parts["training"] > plan.fast.parts["training"] * 0.3 / 0.2  # mfu 0.2 and a wider spread
    assert plan.gpu_hours() == pytest.approx(plan.step_seconds * 500 * 8 / 3600)
    assert plan.gpu_hours_range() == pytest.approx(tuple(x * 500 * 8 / 3600 for x in plan.step_seconds_range))
    expected = max(0, -(-plan.wall_hours() // 120) - 1)
    assert requeues(plan, run.slurm.time) == expected
    assert slurm_hours("5-00:00:00") == 120 and slurm_hours("04:00:00") == 4 and slurm_hours("30") == 0.5


NEMO_RL_TOKENS_PER_S_PER_GPU = 1562
"""NeMo-RL v0.4 (``docs/about/performance-summary.md``): Llama-3.1-8B GRPO on 16 H100s, on-policy, all tokens over
step time over GPUs, at a mean generation of 1,060 tokens."""


@pytest.mark.parametrize("run_name", ["slurm_qwen8b_think_if80000_grpo", "graph_qwen8b_think_best"])
def test_no_more_throughput_than_a_shorter_generation_benchmark(matrix, run_name):
    """Longer generations decode at a lower rate (more KV to read, fewer sequences in the pool, a longer tail), so
    even the fast end of an 8B thinking run (mean response 4,096) must claim fewer tokens/s/GPU than NeMo-RL's
    8B figure at 1,060."""
    plan = plan_run(run_named(matrix, run_name), REPO_ROOT)
    fast, slow = plan.step_seconds_range
    assert plan.expected_tokens_per_step / (plan.world * fast) < NEMO_RL_TOKENS_PER_S_PER_GPU
    assert fast < slow


def test_the_tail_adds_to_the_decode_time(matrix):
    plan = plan_run(run_named(matrix, "slurm_qwen8b_think_if80000_grpo"), REPO_ROOT)
    for end in (plan.fast, plan.slow):
        assert end.parts["generation tail"] > 0 and end.parts["generation decode"] > end.parts["generation tail"]
    # the slow end decodes the whole 8,192-token cap alone; the fast end what lies beyond the 4,096 mean
    assert plan.slow.parts["generation tail"] > 2 * plan.fast.parts["generation tail"]


def test_a_small_kv_pool_runs_the_batch_in_waves(matrix):
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    roomy = plan_run(dataclasses.replace(run, train=dataclasses.replace(run.train, gpu_memory_utilization=0.9)),
                     REPO_ROOT)  # fmt: skip
    tight = plan_run(run, REPO_ROOT)
    assert tight.fast.concurrency < roomy.fast.concurrency and tight.fast.waves > roomy.fast.waves
    assert tight.fast.parts["generation decode"] > roomy.fast.parts["generation decode"]
    # the slow end re-prefills the sequences the pool could not hold at once
    assert tight.slow.parts["generation prefill"] > roomy.slow.parts["generation prefill"]


def test_overheads_follow_their_settings(matrix):
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    every = plan_run(run, REPO_ROOT).save_freq
    run = dataclasses.replace(run, train=dataclasses.replace(run.train, save_freq=every, actor_offload=True))
    base = plan_run(run, REPO_ROOT).slow.parts
    rarer = dataclasses.replace(run.train, save_freq=2 * every, test_freq=2 * run.train.test_freq)
    parts = plan_run(dataclasses.replace(run, train=rarer), REPO_ROOT).slow.parts
    assert parts["checkpoint (amortised)"] == pytest.approx(base["checkpoint (amortised)"] / 2)
    assert parts["validation (amortised)"] < base["validation (amortised)"]
    resident = dataclasses.replace(run.train, actor_offload=False)
    assert (
        plan_run(dataclasses.replace(run, train=resident), REPO_ROOT).slow.parts["offload traffic"]
        < base["offload traffic"]
    )
    never = dataclasses.replace(run.train, save_freq=-1, test_freq=-1)
    parts = plan_run(dataclasses.replace(run, train=never), REPO_ROOT).slow.parts
    assert "checkpoint (amortised)" not in parts and "validation (amortised)" not in parts


def test_auto_save_freq_bounds_the_requeue_loss(matrix):
    """save_freq 0: max(1, floor(max_lost_hours / slow-end step hours)); a number is kept as it is."""
    from rlif.runs.planner import auto_save_freq, checkpoints_on_disk, run_save_freq

    assert auto_save_freq(20 * 60, 1.0) == 3 and auto_save_freq(54 * 60, 1.0) == 1 and auto_save_freq(7200, 1) == 1
    run = run_named(matrix, "slurm_qwen8b_think_if80000_grpo")
    assert run.train.save_freq == 0
    plan = plan_run(run, REPO_ROOT)
    bare = plan.slow.seconds - plan.slow.parts["checkpoint (amortised)"]
    assert plan.save_freq == auto_save_freq(bare, run.train.max_lost_hours) == run_save_freq(run, REPO_ROOT)
    longer = dataclasses.replace(run, train=dataclasses.replace(run.train, max_lost_hours=10.0))
    assert plan_run(longer, REPO_ROOT).save_freq == math.floor(10 * 3600 / bare)
    pinned = dataclasses.replace(run, train=dataclasses.replace(run.train, save_freq=20))
    assert run_save_freq(pinned) == 20 and plan_run(pinned, REPO_ROOT).save_freq == 20
    # verl keeps max_ckpt_to_keep and writes the next before deleting the oldest
    assert checkpoints_on_disk(run, plan.steps, plan.save_freq) == run.train.max_ckpt_to_keep + 1
    keep_all = dataclasses.replace(run, train=dataclasses.replace(run.train, max_ckpt_to_keep=0))
    assert checkpoints_on_disk(keep_all, 500, 20) == 25 and checkpoints_on_disk(keep_all, 510, 20) == 26
    assert checkpoints_on_disk(run, 500, -1) == 0


def test_fused_kernel_temporaries_include_the_lm_head_gradient():
    from rlif.runs.memory import logits_bytes

    shape = BUILTIN_SHAPES["Qwen/Qwen3-8B"]
    update = logits_bytes(shape, 20480, fused=True, backward=True, entropy=False, chunked=True)
    forward = logits_bytes(shape, 20480, fused=True, backward=False, entropy=True, chunked=True)
    lm_head_grad = 2 * 2 * shape.vocab * shape.hidden
    assert update == 26 * 512 * shape.vocab + lm_head_grad + 2 * 20480 * shape.hidden
    assert forward == 14 * 512 * shape.vocab


def test_shape_from_a_local_config_and_the_hub_cache(tmp_path):
    config = {
        "model_type": "qwen3",
        "hidden_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "intermediate_size": 128,
        "vocab_size": 1000,
        "tie_word_embeddings": True,
        "max_position_embeddings": 512,
    }
    local = tmp_path / "model"
    local.mkdir()
    (local / "config.json").write_text(json.dumps(config), encoding="utf-8")
    shape = model_shape(str(local))
    assert (shape.hidden, shape.layers, shape.kv_heads, shape.qk_norm, shape.tied) == (64, 2, 2, True, True)
    snapshot = tmp_path / "hub" / "models--org--tiny" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text(json.dumps({**config, "hidden_size": 128}), encoding="utf-8")
    assert model_shape("org/tiny", hub_cache=tmp_path / "hub").hidden == 128
    # a local config takes precedence over the built-in table
    assert isinstance(model_shape("Qwen/Qwen3-8B", hub_cache=tmp_path / "hub"), ModelShape)


def test_unknown_model_is_a_clear_error(tmp_path):
    with pytest.raises(ValueError, match=r"model org/unknown: no local config.json and not in the planner's table"):
        model_shape("org/unknown", hub_cache=tmp_path)


def _matrix_with(tmp_path: Path, run: dict) -> Path:
    data = yaml.safe_load(MATRIX.read_text(encoding="utf-8"))
    data["runs"] = [run]
    path = tmp_path / "matrix.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_an_oversized_run_fails_generation(tmp_path, capsys):
    path = _matrix_with(
        tmp_path,
        {
            "name": "too_big",
            "stage": "x",
            "description": "8B without checkpointing on 16 full-length sequences per micro-batch",
            "train": {"gradient_checkpointing": False, "dynamic_batch": False, "micro_batch_per_gpu": 16},
        },
    )
    out = tmp_path / "out"
    assert main(["--matrix", str(path), "--skip-verl-check", "--skip-preflight", "--out", str(out)]) == 1
    text = capsys.readouterr().out
    assert "run too_big: train.actor_token_budget: actor update needs" in text
    assert "GiB per GPU, more than 80 GiB; lower train.actor_token_budget" in text
    assert not out.exists()


def test_gpu_memory_is_a_cluster_setting(tmp_path, capsys):
    path = _matrix_with(tmp_path, {"name": "small_gpu", "stage": "x", "description": "8B on 24 GiB cards"})
    env_file = tmp_path / ".env"
    env_file.write_text("RLIF_GPU_MEMORY_GB=24\n", encoding="utf-8")
    args = [
        "--matrix",
        str(path),
        "--skip-verl-check",
        "--skip-preflight",
        "--out",
        str(tmp_path / "out"),
        "--env-file",
        str(env_file),
    ]
    assert main(args) == 1
    assert "actor update needs" in capsys.readouterr().out  # 15 GiB of fp32 states alone, plus the rest
    assert main([*args, "--gpu-memory-gb", "80"]) == 0
    env_file.write_text("RLIF_GPU_MEMORY_GB=eighty\n", encoding="utf-8")
    assert main(args) == 2
    assert "RLIF_GPU_MEMORY_GB='eighty' is not a number of GiB" in capsys.readouterr().out


def test_generated_scripts_train_in_fp32_within_their_plan(matrix):
    """What each committed script passes, composed onto rlif's trainer config as main_ppo composes it."""
    pytest.importorskip("verl")
    from rlif.runs.choices import resolved_run
    from rlif.verl_glue.config import trainer_composer
    from rlif.verl_glue.overrides import build_overrides, runtime_values, substitute

    with trainer_composer() as compose:
        for run in matrix.runs:
            if run.cpu_mode or run.from_winner or run.model_setting:
                # a chained run's script exists once its link is resolved; a model_setting run's is written on
                # the machine that holds its checkpoint (never committed)
                continue
            text = (REPO_ROOT / "recipe" / "rlif" / f"{run.name}.sh").read_text(encoding="utf-8")
            overrides = build_overrides(run)
            assert all(f"    {o.bash_word()}\n" in text for o in overrides), run.name
            values = runtime_values(run, "/repo")
            cfg = compose([substitute(o, values) for o in overrides])
            arr, plan = cfg.actor_rollout_ref, plan_run(run, REPO_ROOT)
            assert arr.actor.fsdp_config.model_dtype == "fp32", run.name
            assert arr.actor.fsdp_config.optimizer_offload == resolved_run(run).train.actor_offload, run.name
            assert arr.rollout.max_model_len == run.train.max_prompt_length + run.train.max_response_length
            assert arr.model.enable_gradient_checkpointing and arr.actor.use_dynamic_bsz, run.name
            assert arr.actor.ppo_max_token_len_per_gpu == plan.actor_budget, run.name
            assert arr.rollout.log_prob_max_token_len_per_gpu == plan.log_prob_budget, run.name
            assert arr.ref.log_prob_max_token_len_per_gpu == plan.ref_budget, run.name
            assert arr.ref.log_prob_micro_batch_size_per_gpu == run.train.log_prob_micro_batch_per_gpu, run.name
            sampling = run.val_sampling
            assert arr.rollout.val_kwargs.temperature == sampling.temperature, run.name
            assert arr.rollout.val_kwargs.top_p == sampling.top_p and arr.rollout.val_kwargs.top_k == sampling.top_k
            assert arr.rollout.val_kwargs.do_sample is True, run.name
    smoke = (REPO_ROOT / "recipe/rlif/slurm_qwen06b_think_if1000_logicif1000_grpo.sh").read_text(encoding="utf-8")
    assert "    trainer.total_training_steps=null\n" in smoke


@pytest.mark.parametrize(
    ("run_name", "passes", "budgets", "cost"),
    [
        (
            "slurm_qwen8b_think_if80000_grpo",
            (73.4, 28.1, 28.1, 45.1),
            (20480, 30720, 30720),
            (26.1, 54.9, 1741, 3662, 3),
        ),
        ("stage2_qwen17b_think_ema_s1", (72.4, 13.6, 13.6, 20.3), (20480, 30720, 30720), (9.5, 19.6, 631, 1304, 1)),
        ("graph_qwen8b_think_best", (73.4, 30.0, 30.0, 49.3), (26624, 39936, 39936), (36.9, 72.0, 2462, 4797, 4)),
    ],
)
def test_figures_quoted_in_the_docs(matrix, run_name, passes, budgets, cost):
    """docs/run-planning.md's table: peak GiB per pass, token budgets, and (minutes per step fast and slow, GPU-hours
    fast and slow, requeues at the slow end)."""
    fast_min, slow_min, fast_h, slow_h, n_requeues = cost
    run = run_named(matrix, run_name)
    plan = plan_run(run, REPO_ROOT)
    assert tuple(round(p.total_gib, 1) for p in plan.passes) == passes
    assert (plan.actor_budget, plan.log_prob_budget, plan.ref_budget) == budgets
    assert tuple(round(x / 60, 1) for x in plan.step_seconds_range) == (fast_min, slow_min)
    assert tuple(round(x) for x in plan.gpu_hours_range()) == (fast_h, slow_h)
    assert requeues(plan, run.slurm.time) == n_requeues

"""End to end on CPU with vLLM's CPU build: the probe entry samples the tiny demo model on a stratified handful of
the demo's training prompts with a run's rollout settings, scores them with rlif's rewards and writes a probe file
that changes the run's plan, as ``generate_train_recipes.py --plan-from`` prints it."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from run_matrices import with_shipped_defaults

from rlif.recipes.generate import REPO_ROOT
from rlif.runs.matrix import load_matrix
from rlif.runs.planner import plan_run
from rlif.runs.probe import load_probe

pytest.importorskip("vllm")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

RUN = "probe_demo"


def test_demo_model_probe_through_vllm_cpu_changes_the_plan(tmp_path: Path) -> None:
    from rlif.demo_assets import prepare

    started = time.monotonic()
    assets = prepare(tmp_path / "demo")
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        with_shipped_defaults(
            f"runs:\n  - name: {RUN}\n    stage: test\n    description: probe on the demo data\n"
            "    model: Qwen/Qwen3-1.7B\n"
            f"    train_files: [{assets.train_file}]\n"
            "    train: {max_response_length: 8, max_prompt_length: 600, rollout_n: 2, train_batch_size: 4,"
            " ppo_mini_batch_size: 4, total_training_steps: 0}\n"
            "    slurm: {gpus_per_node: 1}\n"
            "    sampler: {name: reward_curriculum, params: {curriculum_sources: [logicif], initial_fraction: 0.25,"
            " num_intervals: 3}}\n"
        ),
        encoding="utf-8",
    )
    out = tmp_path / "probe" / RUN
    command = [
        sys.executable, "-m", "rlif.eval.probe", "--matrix", str(matrix), "--run", RUN,
        "--model", str(assets.model_dir), "--out", str(out), "--prompts-per-interval", "1",
        "--engine-arg", "enforce_eager=true", "--engine-arg", "dtype=float32",
    ]  # fmt: skip
    env = {
        **os.environ, "PYTHONPATH": str(REPO_ROOT), "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }  # fmt: skip
    done = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=480, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"[rlif probe] wrote {out / 'probe.json'}" in done.stdout
    assert "engine ready" in done.stderr and "logicif interval 3: 1 of 1 rows" in done.stderr

    probe = load_probe(out / "probe.json")
    assert (probe.model, probe.think, probe.caps) == ("Qwen/Qwen3-1.7B", True, (8, 32))
    keys = {(e.source, e.interval) for e in probe.entries}
    assert {("iftrain", "all"), ("logicif", "0"), ("logicif", "3")} <= keys
    assert all(1 <= e.response_tokens.p99 <= 32 and e.tokens_per_s > 0 for e in probe.entries)
    iftrain = next(e for e in probe.entries if e.source == "iftrain")
    assert iftrain.rows == 6 and iftrain.n_prompts == 1

    run = load_matrix(matrix).select([RUN])[0]
    measured, assumed = plan_run(run, REPO_ROOT, probe=probe), plan_run(run, REPO_ROOT)
    assert measured.lengths.source == "measured" and measured.lengths.response <= 8
    assert measured.expected_tokens_per_step < assumed.expected_tokens_per_step
    assert measured.step_seconds_range != assumed.step_seconds_range

    generator = subprocess.run(
        [sys.executable, str(REPO_ROOT / "generate_train_recipes.py"), "--matrix", str(matrix), "--run", RUN,
         "--dry-run", "--skip-verl-check", "--skip-preflight", "--plan-from", str(out / "probe.json"),
         "--env-file", str(tmp_path / ".env")],
        check=False, env=env, capture_output=True, text=True, timeout=120, cwd=REPO_ROOT,
    )  # fmt: skip
    assert generator.returncode == 0, generator.stdout[-3000:] + generator.stderr[-3000:]
    assert f"plan: {RUN}: measured ({out / 'probe.json'})" in generator.stdout
    assert f"plan: {RUN}: on the assumed lengths:" in generator.stdout
    print(f"probe end to end: {time.monotonic() - started:.0f} s")

"""The command line: list, select, dry run, write, fail with run and key; no verl needed (--skip-verl-check)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rlif.recipes.cli import main

SMOKE = "slurm_qwen06b_think_if1000_logicif1000_grpo"


def test_list(capsys):
    assert main(["--list", "--stage", "stage2"]) == 0
    out = capsys.readouterr().out
    assert "stage2_qwen17b_think_1v1" in out and SMOKE not in out


def test_unknown_stage_is_a_usage_error(capsys):
    assert main(["--list", "--stage", "stage7"]) == 2
    assert "known stages" in capsys.readouterr().out


def test_dry_run_writes_nothing(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["--run", SMOKE, "--dry-run", "--skip-verl-check", "--out", str(out)]) == 0
    assert not out.exists()
    assert "nothing written" in capsys.readouterr().out


def test_write_with_site_settings(tmp_path):
    out = tmp_path / "out"
    env_file = tmp_path / ".env"
    env_file.write_text("SLURM_PARTITION=gpu\nSLURM_ACCOUNT=lab\n", encoding="utf-8")
    args = ["--stage", "smoke", "--skip-verl-check", "--out", str(out), "--env-file", str(env_file)]
    assert main([*args, "--nodes", "2", "--account", "other"]) == 0
    # another node count is another run: its own script, checkpoint directory and wandb run
    assert [p.name for p in out.iterdir()] == [f"{SMOKE}_2n.sh"]
    text = (out / f"{SMOKE}_2n.sh").read_text(encoding="utf-8")
    assert "#SBATCH --partition=gpu\n" in text and "#SBATCH --account=other\n" in text
    assert "#SBATCH --nodes=2\n" in text and "'trainer.nnodes=2'" not in text and "trainer.nnodes=2" in text
    assert f"checkpoints/rlif/{SMOKE}_2n" in text and f"trainer.experiment_name={SMOKE}_2n" in text
    assert os.access(out / f"{SMOKE}_2n.sh", os.X_OK)


def test_same_node_count_keeps_the_run_name(tmp_path):
    out = tmp_path / "out"
    assert main(["--stage", "smoke", "--skip-verl-check", "--out", str(out), "--nodes", "1"]) == 0
    assert [p.name for p in out.iterdir()] == [f"{SMOKE}.sh"]


def test_cpu_mode_flag_writes_a_cpu_variant(tmp_path):
    out = tmp_path / "out"
    assert main(["--run", SMOKE, "--cpu-mode", "--skip-verl-check", "--out", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == [f"{SMOKE}_cpu.sh"]


@pytest.mark.parametrize(
    ("override", "expected"),
    [
        ("+data.sampler.class_path=x", "run bad: +data.sampler.class_path: unknown added key"),
        ("custom_reward_function.path=x", "run bad: custom_reward_function.path: legacy reward key"),
    ],
)
def test_invalid_run_fails_with_run_and_key(tmp_path, capsys, override, expected):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        "defaults: {train_files: [x.parquet]}\n"
        f"runs:\n  - {{name: bad, stage: s, description: d, extra_overrides: ['{override}']}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["--matrix", str(matrix), "--skip-verl-check", "--out", str(out)]) == 1
    assert expected in capsys.readouterr().out
    assert not out.exists()


def test_nodes_override_is_validated(tmp_path, capsys):
    # 512 x 8 responses over 3 x 8 GPUs does not divide: caught before anything is written
    assert main(["--run", SMOKE, "--nodes", "3", "--skip-verl-check", "--out", str(tmp_path)]) == 1
    assert f"run {SMOKE}_3n: train.train_batch_size" in capsys.readouterr().out
    assert list(Path(tmp_path).iterdir()) == []

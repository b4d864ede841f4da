"""The command line: list, select, dry run, write, fail with run and key; no verl needed (--skip-verl-check)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from run_matrices import with_shipped_defaults

from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT

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
    assert main(["--run", SMOKE, "--dry-run", "--skip-verl-check", "--skip-preflight", "--out", str(out)]) == 0
    assert not out.exists()
    assert "nothing written" in capsys.readouterr().out


def test_write_with_site_settings(tmp_path):
    out = tmp_path / "out"
    env_file = tmp_path / ".env"
    env_file.write_text("SLURM_PARTITION=gpu\nSLURM_ACCOUNT=lab\n", encoding="utf-8")
    args = ["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(out), "--env-file", str(env_file)]
    assert main([*args, "--nodes", "2", "--account", "other"]) == 0
    # another node count is another run: its own script, checkpoint directory and wandb run
    assert sorted(p.name for p in out.iterdir()) == ["eval", f"{SMOKE}_2n.sh"]
    assert [p.name for p in (out / "eval").iterdir()] == [f"{SMOKE}_2n.sh"]
    text = (out / f"{SMOKE}_2n.sh").read_text(encoding="utf-8")
    assert "#SBATCH --partition=gpu\n" in text and "#SBATCH --account=other\n" in text
    assert "#SBATCH --nodes=2\n" in text and "'trainer.nnodes=2'" not in text and "trainer.nnodes=2" in text
    assert f"checkpoints/rlif/{SMOKE}_2n" in text and f"trainer.experiment_name={SMOKE}_2n" in text
    assert os.access(out / f"{SMOKE}_2n.sh", os.X_OK)


def test_same_node_count_keeps_the_run_name(tmp_path):
    out = tmp_path / "out"
    assert main(["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(out), "--nodes", "1"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["eval", f"{SMOKE}.sh"]


def test_cpu_mode_flag_writes_a_cpu_variant(tmp_path):
    out = tmp_path / "out"
    assert main(["--run", SMOKE, "--cpu-mode", "--skip-verl-check", "--skip-preflight", "--out", str(out)]) == 0
    assert [p.name for p in out.iterdir()] == [f"{SMOKE}_cpu.sh"]  # the CPU test variant has no evaluation job


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
        with_shipped_defaults(
            "defaults: {train_files: [x.parquet]}\n"
            f"runs:\n  - {{name: bad, stage: s, description: d, extra_overrides: ['{override}']}}\n",
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["--matrix", str(matrix), "--skip-verl-check", "--skip-preflight", "--out", str(out)]) == 1
    assert expected in capsys.readouterr().out
    assert not out.exists()


def test_nodes_override_is_validated(tmp_path, capsys):
    # 512 x 8 responses over 3 x 8 GPUs does not divide: caught before anything is written
    assert main(["--run", SMOKE, "--nodes", "3", "--skip-verl-check", "--skip-preflight", "--out", str(tmp_path)]) == 1
    assert f"run {SMOKE}_3n: train.train_batch_size" in capsys.readouterr().out
    assert list(Path(tmp_path).iterdir()) == []


def test_preflight_refuses_missing_data_and_model(tmp_path, capsys, monkeypatch):
    """On by default: a typo'd data file or a model that is not downloaded fails generation and --dry-run."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        with_shipped_defaults(
            "defaults: {model: Qwen/Qwen3-0.6B, train_files: [verl_data/if1000_logicif100.parquet],"
            " train: {total_training_steps: 0}}\n"
            "runs:\n  - {name: typo, stage: s, description: d}\n",
        ),
        encoding="utf-8",
    )
    out = tmp_path / "out"
    args = ["--matrix", str(matrix), "--skip-verl-check", "--out", str(out), "--env-file", str(tmp_path / ".env")]
    for extra in ([], ["--dry-run"]):
        assert main([*args, *extra]) == 1
        lines = capsys.readouterr().out.splitlines()
        assert f"  - run typo: data: {REPO_ROOT}/verl_data/if1000_logicif100.parquet: no such file (download" in (
            "\n".join(lines)
        )
        model_line = next(line for line in lines if "run typo: model:" in line)
        assert model_line == (
            f"  - run typo: model: model Qwen/Qwen3-0.6B: not in the Hub cache {tmp_path / 'hub'} (HF_HUB_CACHE); "
            f"run `python hf_model_download.py Qwen/Qwen3-0.6B`, which fills {tmp_path / 'hub'}"
        )
        assert lines[-1].startswith(f"preflight: settings read from {tmp_path / '.env'} and the environment; get")
    assert not out.exists()
    assert main([*args, "--skip-preflight"]) == 0
    assert (out / "typo.sh").is_file()


def test_preflight_reads_the_hub_cache_from_dotenv(tmp_path, monkeypatch):
    """HF_CACHE_DIR in .env locates the downloaded model, as it does for the job."""
    from rlif.data.files import write_rows_atomic
    from rlif.demo_assets import demo_rows
    from rlif.recipes.generate import preflight_environment, preflight_problems
    from rlif.runs.matrix import load_matrix

    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HF_CACHE_DIR", raising=False)
    write_rows_atomic(demo_rows("train"), tmp_path / "verl_data" / "if4_logicif4.parquet")
    snapshot = tmp_path / "cache" / "models--Qwen--Qwen3-0.6B" / "snapshots" / ("a" * 40)
    snapshot.mkdir(parents=True)
    (snapshot / "config.json").write_text("{}", encoding="utf-8")
    (snapshot / "model.safetensors").write_bytes(b"x")
    (snapshot / "tokenizer.json").write_text("{}", encoding="utf-8")
    (snapshot / "tokenizer_config.json").write_text('{"chat_template": "{{ messages }}"}', encoding="utf-8")
    env_file = tmp_path / ".env"
    env_file.write_text(f"HF_CACHE_DIR={tmp_path / 'cache'}\n", encoding="utf-8")
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        with_shipped_defaults(
            "defaults: {model: Qwen/Qwen3-0.6B, train_files: [verl_data/if4_logicif4.parquet],"
            " val_files: [verl_data/if4_logicif4.parquet], train: {train_batch_size: 4, ppo_mini_batch_size: 4}}\n"
            "runs:\n  - {name: ok, stage: s, description: d}\n",
        ),
        encoding="utf-8",
    )
    runs = load_matrix(matrix).runs
    assert preflight_problems(runs, preflight_environment(env_file), root=tmp_path) == []
    assert [p.key for p in preflight_problems(runs, preflight_environment(tmp_path / "none"), root=tmp_path)] == [
        "model"
    ]


def test_summary_ends_with_the_stage_s_gpu_hours(tmp_path, capsys):
    args = ["--stage", "stage2", "--dry-run", "--skip-verl-check", "--skip-preflight", "--out", str(tmp_path)]
    assert main(args) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("stage stage2: ")]
    assert len(lines) == 1
    assert lines[0].startswith("stage stage2: 27 runs (9 arms x seeds), ")
    assert lines[0].endswith(" GPU-h by the planner")
    low, high = (float(x.replace(",", "")) for x in lines[0].split(", ")[1].split(" ")[0].split("-"))
    assert 27 * 600 < low < high < 27 * 1400


def test_no_setting_of_env_reaches_a_generated_script(tmp_path):
    out = tmp_path / "out"
    env_file = tmp_path / ".env"
    env_file.write_text("HF_TOKEN=hf_NeverInAScript123\nWANDB_API_KEY=wandbsecret42\nSLURM_PARTITION=gpu\n")
    args = ["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(out), "--env-file", str(env_file)]
    assert main(args) == 0
    for script in out.rglob("*.sh"):
        text = script.read_text(encoding="utf-8")
        assert "hf_NeverInAScript123" not in text and "wandbsecret42" not in text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("WANDB_ENTITY=my team\n", "line 1: WANDB_ENTITY: has a space (bash runs the word after it as a command"),
        ("SLURM_ACCOUNT = lab\n", "line 1: SLURM_ACCOUNT: spaces around '=' (bash then runs a command instead"),
        ("HF_CACHE_DIR=$HOME/hf_cache\n", "line 1: HF_CACHE_DIR: has '$' or '`', which bash expands"),
        ("SLURM_PARTITION=gpu\r\n", "line 1: ends in a carriage return (Windows CRLF line endings)"),
    ],
)
def test_an_env_the_job_would_read_differently_stops_generation(tmp_path, capsys, text, message):
    env_file = tmp_path / ".env"
    env_file.write_bytes(text.encode())
    args = ["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(tmp_path / "o")]
    assert main([*args, "--env-file", str(env_file)]) == 2
    err = capsys.readouterr().out
    assert err.startswith(f"error: {env_file} {message}")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--nodes", "0"], "error: --nodes 0: a run needs at least 1 node"),
        (["--gpu-memory-gb", "nan"], "error: --gpu-memory-gb: GPU memory must be a positive, finite number of GiB"),
        (["--gpu-memory-gb", "inf"], "error: --gpu-memory-gb: GPU memory must be a positive, finite number of GiB"),
    ],
)
def test_impossible_site_options_are_one_line(tmp_path, capsys, option, message):
    args = ["--stage", "smoke", "--skip-verl-check", "--out", str(tmp_path / "o"), "--env-file", str(tmp_path / "x")]
    assert main([*args, *option]) == 2
    out = capsys.readouterr().out
    assert out.startswith(message) and "Traceback" not in out and len(out.strip().splitlines()) == 1


def test_scripts_run_and_log_in_the_checkout_they_were_generated_in(tmp_path):
    """Slurm opens --output before the script runs and creates no directory: the scripts name the checkout
    absolutely (--chdir, --output, RLIF_ROOT), so the submit directory no longer matters; --portable keeps the
    repository's committed form."""
    pinned, portable = tmp_path / "pinned", tmp_path / "portable"
    fast = ["--run", SMOKE, "--skip-verl-check", "--skip-preflight"]
    assert main([*fast, "--out", str(pinned)]) == 0
    assert main([*fast, "--portable", "--out", str(portable)]) == 0
    for path in (pinned / f"{SMOKE}.sh", pinned / "eval" / f"{SMOKE}.sh"):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert f"#SBATCH --chdir={REPO_ROOT}" in lines, path
        assert f"#SBATCH --output={REPO_ROOT}/log/%x-%j.out" in lines, path
        assert f"RLIF_ROOT={REPO_ROOT}" in lines, path
    for path in (portable / f"{SMOKE}.sh", portable / "eval" / f"{SMOKE}.sh"):
        text = path.read_text(encoding="utf-8")
        assert "#SBATCH --output=log/%x-%j.out\n" in text and "--chdir" not in text, path
        assert str(REPO_ROOT) not in text, path
    assert (REPO_ROOT / "log").is_dir()


@pytest.mark.parametrize(
    ("root", "message"),
    [
        ("my rlif", "has characters a job script cannot carry (spaces, commas, %, quotes, non-ASCII...)"),
        ("rlif%j", "has characters a job script cannot carry"),
        ("plain", "is not an rlif checkout (no scripts/slurm_launch.sh)"),
    ],
)
def test_a_root_a_script_cannot_carry_is_one_line(tmp_path, capsys, root, message):
    (tmp_path / root).mkdir()
    args = ["--run", SMOKE, "--skip-verl-check", "--skip-preflight", "--out", str(tmp_path / "o")]
    assert main([*args, "--root", str(tmp_path / root)]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"error: the repository root {tmp_path / root} ") or out.startswith(
        f"error: --root {tmp_path / root} "
    )
    assert message in out and len(out.strip().splitlines()) == 1 and not (tmp_path / "o").exists()

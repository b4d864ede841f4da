"""Evaluation scripts: tensor-parallel choice per model, content, committed copies, the job's step selection and
command line (stub srun/scontrol/python), and --submit chaining evaluation after training (stub sbatch)."""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest
from run_matrices import with_shipped_defaults

from rlif.recipes.cli import main
from rlif.recipes.eval_script import EVAL_SUBDIR, plan_eval, render_eval_script
from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.render import LAUNCHER, make_environment
from rlif.runs.matrix import load_matrix

SMOKE = "slurm_qwen06b_think_if1000_logicif1000_grpo"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")


def with_model(matrix, model: str, gpu_gb: float, **eval_changes):
    run = matrix.select(names=[SMOKE])[0]
    return dataclasses.replace(
        run,
        model=model,
        slurm=dataclasses.replace(run.slurm, gpu_memory_gb=gpu_gb),
        eval=dataclasses.replace(run.eval, **eval_changes),
    )


@pytest.mark.parametrize(
    ("model", "gpu_gb", "tp"),
    [
        # every model of the matrix fits one 80 GB GPU: weights + 8 samples x 10240 tokens of KV + 2 GiB
        ("Qwen/Qwen3-0.6B", 80, 1),
        ("Qwen/Qwen3-1.7B", 80, 1),
        ("Qwen/Qwen3-8B", 80, 1),  # 15.3 + 11.25 + 2 = 28.5 GiB of 72
        ("Qwen/Qwen2.5-7B-Instruct-1M", 80, 1),
        ("meta-llama/Llama-3.1-8B-Instruct", 80, 1),
        ("PKU-ML/G1-7B", 80, 1),
        # Qwen3-8B on 24 GB: 28.5 > 21.6 at TP 1; TP 2 needs 7.65 + 5.6 + 2 = 15.3
        ("Qwen/Qwen3-8B", 24, 2),
        # on 16 GB: TP 2 (15.3) > 14.4; TP 4 needs 3.8 + 2.8 + 2 = 8.6
        ("Qwen/Qwen3-8B", 16, 4),
        # Qwen2.5-7B has 28 heads: TP 8 is impossible, TP 4 fits 10 GB (1.8 + 1.1 + 2 = 4.9 of 9)
        ("Qwen/Qwen2.5-7B-Instruct", 10, 4),
    ],
)
def test_tensor_parallel_is_the_smallest_that_fits(matrix, model, gpu_gb, tp):
    plan = plan_eval(with_model(matrix, model, gpu_gb))
    assert plan.tp == tp
    assert plan.need_gib <= plan.share_gib == pytest.approx(0.9 * gpu_gb)


def test_no_fitting_tensor_parallel_names_every_reason(matrix):
    with pytest.raises(ValueError) as error:
        plan_eval(with_model(matrix, "Qwen/Qwen2.5-7B-Instruct", 4))
    message = str(error.value)
    assert message.startswith("Qwen/Qwen2.5-7B-Instruct does not fit vLLM's 3.6 GiB share of a 4 GiB GPU")
    assert "TP 8 does not divide the 28 attention heads" in message
    assert message.endswith(
        "lower eval.n or eval.max_response_length (a benchmark's n or max_tokens), or raise eval.gpu_memory_utilization"
    )


def test_a_pinned_tensor_parallel_size_is_checked(matrix):
    with pytest.raises(ValueError, match="TP 3 does not divide the 16 attention heads"):
        plan_eval(with_model(matrix, "Qwen/Qwen3-1.7B", 80, tp=3))
    assert plan_eval(with_model(matrix, "Qwen/Qwen3-1.7B", 80, tp=2)).tp == 2


def test_generation_refuses_an_impossible_evaluation(tmp_path, capsys):
    matrix = tmp_path / "m.yaml"
    matrix.write_text(
        with_shipped_defaults(
            "defaults: {train_files: [x.parquet], model: Qwen/Qwen3-8B, eval: {n: 512, max_response_length: 1000000}}\n"
            "runs:\n  - {name: big, stage: s, description: d}\n",
        ),
        encoding="utf-8",
    )
    assert main(["--matrix", str(matrix), "--skip-verl-check", "--skip-preflight", "--out", str(tmp_path / "o")]) == 1
    out = capsys.readouterr().out
    # the plan keeps KV_GROUP (8) of a prompt's samples at full length, not all 512
    assert "run big: eval.tp: Qwen/Qwen3-8B does not fit vLLM's 72.0 GiB share of a 80 GiB GPU for 8 samples" in out
    assert not (tmp_path / "o").exists()


def test_script_content_follows_the_run(matrix):
    run = next(r for r in matrix.runs if r.name == "slurm_qwen8b_nothink_if80000_grpo")
    extra = dataclasses.replace(
        run, eval=dataclasses.replace(run.eval, files=("verl_data/math/aime24.parquet",), benchmarks=())
    )
    text = render_eval_script(extra, make_environment())
    lines = text.splitlines()
    for directive in ("--nodes=1", "--gpus-per-node=1", "--cpus-per-task=16", "--mem=128G", "--time=12:00:00"):
        assert f"#SBATCH {directive}" in lines
    assert f"#SBATCH --job-name={run.name}_eval" in lines and "#SBATCH --requeue" in lines
    assert "#SBATCH --exclusive" not in lines  # one GPU of the node is enough
    assert f"#   sbatch --dependency=afterok:<training job id> recipe/rlif/eval/{run.name}.sh [STEP]" in lines
    assert '    "$RLIF_ROOT/verl_data/ifbench_300_ifeval_541_logicif_749.parquet"' in lines
    assert '    "$RLIF_ROOT/verl_data/math/aime24.parquet"' in lines
    # no-thinking sampling of the matrix's validation settings, n samples, the run's lengths
    for word in ("--n 8", "--temperature 0.7", "--top-p 0.8", "--top-k 20", "--max-tokens 8192"):
        assert f"    {word}" in lines
    assert "    --no-think" in lines and "    --tensor-parallel-size 1" in lines
    assert f"RUN_NAME={run.name}" in lines and "RUN_PROJECT=rlif" in lines and 'STEP="${1:-}"' in lines
    assert "PREFLIGHT_OPTIONS=(--gpus 1 --gpu-memory-gb 80 --check-versions)" in lines
    assert f"hub_model {run.model}" in lines
    # the steps of the launcher, in order, with the run's data and arguments between them
    steps = [line for line in lines if line in ("eval_start", "eval_preflight", "eval_run")]
    assert steps == ["eval_start", "eval_preflight", "eval_run"]
    assert lines.index("eval_start") < lines.index("EVAL_FILES=(") < lines.index("eval_preflight")
    assert lines.index("eval_preflight") < lines.index("EVAL_ARGS=(") < lines.index("eval_run")
    launcher = (REPO_ROOT / LAUNCHER).read_text(encoding="utf-8").splitlines()
    assert '    OUT_DIR="$RLIF_ROOT/eval/$RUN_NAME/$STEP"' in launcher


def test_graph_scripts_pass_the_reward_options(matrix):
    run = next(r for r in matrix.runs if r.name == "graph_qwen17b_think_6np45000_binary")
    text = render_eval_script(run, make_environment())
    assert "    --reward-option 'graph_reward=\"binary\"'\n" in text
    assert "    --think\n" in text and "    --temperature 0.6\n" in text


def test_committed_eval_scripts_match_the_matrix(matrix):
    env = make_environment()
    out = REPO_ROOT / "recipe" / "rlif" / EVAL_SUBDIR
    committed = {p.stem: p.read_text(encoding="utf-8") for p in out.glob("*.sh")}
    # chained runs wait for results; a model_setting run's scripts hold a path of one machine (never committed)
    expected = {
        r.name: render_eval_script(r, env) for r in matrix.select() if r.from_winner is None and not r.model_setting
    }
    assert set(committed) == set(expected), "regenerate: python generate_train_recipes.py --portable --skip-preflight"
    assert not [name for name, text in expected.items() if committed[name] != text], "stale: regenerate with --portable"
    assert all(os.access(out / f"{name}.sh", os.X_OK) for name in committed)


# ---- the job itself, with stub commands ------------------------------------------------------------------------

STUB_PYTHON = """#!/bin/bash
printf 'python %s\\n' "$*" >> "$STUB_LOG"
if [[ "$2" == rlif.preflight ]]; then echo /hub/qwen3-0.6b-snapshot; fi
"""
STUB_SRUN = """#!/bin/bash
printf 'srun %s\\n' "$*" >> "$STUB_LOG"
while [[ $# -gt 0 && "$1" == -* ]]; do shift; done
exec "$@"
"""


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


@pytest.fixture
def job(tmp_path, matrix):
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy(REPO_ROOT / LAUNCHER, root / LAUNCHER)
    script = root / "eval.sh"
    script.write_text(render_eval_script(matrix.select(names=[SMOKE])[0], make_environment()), encoding="utf-8")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    _executable(bin_dir / "python", STUB_PYTHON)
    _executable(bin_dir / "srun", STUB_SRUN)
    _executable(bin_dir / "scontrol", "#!/bin/bash\necho n1\n")
    log = tmp_path / "stub.log"

    def run(*args: str) -> tuple[subprocess.CompletedProcess, str]:
        env = {
            "PATH": f"{bin_dir}:{os.environ['PATH']}",
            "HOME": str(tmp_path),
            "STUB_LOG": str(log),
            "SLURM_SUBMIT_DIR": str(root),
            "SLURM_JOB_ID": "77",
            "SLURM_JOB_NODELIST": "n1",
            "RLIF_PYTHON": str(bin_dir / "python"),
        }
        command = ["bash", str(script), *args]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
        text = log.read_text(encoding="utf-8") if log.exists() else ""
        log.unlink(missing_ok=True)
        return proc, text

    return root, run


def test_the_job_evaluates_the_newest_complete_checkpoint(job):
    root, run = job
    ckpt = root / "checkpoints" / "rlif" / SMOKE
    proc, log = run()
    assert proc.returncode == 2 and "has no complete checkpoint" in proc.stderr and log == ""
    (ckpt / "global_step_4" / "actor").mkdir(parents=True)
    (ckpt / "global_step_6" / "actor").mkdir(parents=True)
    (ckpt / "latest_checkpointed_iteration.txt").write_text("4\n", encoding="utf-8")  # step 6 is still being saved
    proc, log = run()
    assert proc.returncode == 0, proc.stderr
    preflight, evaluate = [line for line in log.splitlines() if line.startswith("python ")]
    assert "-m rlif.preflight job --model Qwen/Qwen3-0.6B --data " in preflight
    assert f"--checkpoint-dir {root}/eval/{SMOKE}/4 --gpus 1 --gpu-memory-gb 80 --check-versions" in preflight
    assert evaluate.startswith(
        f"python -m rlif.eval generate --model {ckpt}/global_step_4 --eval-file {root}/verl_data/"
    )
    assert f"--out {root}/eval/{SMOKE}/4 --n 8 --temperature 0.6 --top-p 0.95 --top-k 20 " in evaluate
    assert (root / "eval" / SMOKE / "4").is_dir()
    assert f"{SMOKE}: evaluating step 4, job 77" in proc.stdout


def test_the_job_takes_a_step_or_the_initial_model(job):
    root, run = job
    (root / "checkpoints" / "rlif" / SMOKE / "global_step_2" / "actor").mkdir(parents=True)
    proc, log = run("0")
    assert proc.returncode == 0, proc.stderr
    assert "python -m rlif.eval generate --model /hub/qwen3-0.6b-snapshot " in log
    assert f"--out {root}/eval/{SMOKE}/0 " in log
    proc, log = run("3")
    assert proc.returncode == 2 and "srun" not in log
    assert f"error: no checkpoint {root}/checkpoints/rlif/{SMOKE}/global_step_3/actor (saved: global_step_2)" in (
        proc.stderr
    )
    proc, _ = run("last")
    assert proc.returncode == 2 and "error: the step to evaluate must be a number, got 'last'" in proc.stderr


# ---- --submit: training, then its evaluation held with afterok ---------------------------------------------------


def _stub_sbatch(tmp_path: Path, monkeypatch, fail_on: str = "") -> Path:
    bin_dir = tmp_path / "sbin"
    bin_dir.mkdir()
    log = tmp_path / "sbatch.log"
    _executable(
        bin_dir / "sbatch",
        f"""#!/bin/bash
printf '%s\\n' "$*" >> {log}
if [[ -n "{fail_on}" && "$*" == *{fail_on}* ]]; then echo "sbatch: error: Invalid partition" >&2; exit 1; fi
n=$(wc -l < {log})
echo "$((1000 + n));cluster1"
""",
    )
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log


def test_submit_chains_evaluation_after_training(tmp_path, monkeypatch, capsys):
    log = _stub_sbatch(tmp_path, monkeypatch)
    out = tmp_path / "out"
    args = ["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(out), "--submit"]
    assert main(args) == 0
    assert log.read_text(encoding="utf-8").splitlines() == [
        f"--parsable {out}/{SMOKE}.sh",
        f"--parsable --dependency=afterok:1001 {out}/eval/{SMOKE}.sh",
    ]
    assert f"{SMOKE}: training job 1001, evaluation job 1002 after it (afterok)" in capsys.readouterr().out


def test_a_failed_submission_is_reported_and_counted(tmp_path, monkeypatch, capsys):
    log = _stub_sbatch(tmp_path, monkeypatch, fail_on="afterok")
    out = tmp_path / "out"
    args = ["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(out), "--submit"]
    assert main(args) == 1
    assert len(log.read_text(encoding="utf-8").splitlines()) == 2
    text = capsys.readouterr().out
    assert f"{SMOKE}: training job 1001; evaluation not submitted: sbatch: error: Invalid partition" in text


def test_every_eval_script_command_parses_as_the_generation_command(matrix):
    """The words the scripts pass to ``python -m rlif.eval`` are options its parser accepts, with the run's values."""
    import shlex

    from rlif.eval.cli import _parser
    from rlif.recipes.eval_script import eval_command

    for run in matrix.select():
        words = shlex.split(" ".join(eval_command(run, plan_eval(run))))
        args = _parser().parse_args([w.replace("${EVAL_FILES[@]}", "a.parquet") for w in words])
        assert args.command == "generate"
        assert args.n == run.eval.n and args.think == run.think
        assert args.temperature == run.val_sampling.temperature and args.top_k == run.val_sampling.top_k


def test_a_run_already_in_the_queue_is_not_submitted_again(tmp_path, monkeypatch, capsys):
    log = _stub_sbatch(tmp_path, monkeypatch)
    _executable(
        tmp_path / "sbin" / "squeue", '#!/bin/bash\n[[ "$*" == "--me -h -n "*" -o %i %T" ]] && echo "777 RUNNING"\n'
    )
    out = tmp_path / "out"
    args = ["--stage", "smoke", "--skip-verl-check", "--skip-preflight", "--out", str(out), "--submit"]
    assert main(args) == 1
    assert not log.exists() or log.read_text(encoding="utf-8") == ""
    assert (
        f"{SMOKE}: training not submitted: job 777 (RUNNING) of this run is already in the queue and writes its "
        "checkpoints; wait for it, or scancel it and submit again"
    ) in capsys.readouterr().out

"""Rendering: strict templates, quoting, directive order, bash syntax, committed scripts current (shellcheck:
test_recipes_lint.py)."""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess

import jinja2
import pytest

from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.render import LAUNCHER, make_environment, render_script
from rlif.runs.matrix import load_matrix
from rlif.verl_glue.overrides import Override, build_overrides, hydra_value, parse_override

MATRIX = REPO_ROOT / "recipe" / "matrix.yaml"


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(MATRIX)


@pytest.fixture(scope="module")
def scripts(matrix):
    env = make_environment()
    return {run.name: render_script(run, build_overrides(run), env) for run in matrix.runs}


def test_environment_handles_the_jinja_pitfalls(tmp_path):
    (tmp_path / "t.j2").write_text("n=${#nodes[@]} {{ x }}\n{## comment ##}\n", encoding="utf-8")
    env = make_environment(tmp_path)
    assert env.get_template("t.j2").render(x=1) == "n=${#nodes[@]} 1\n"
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("t.j2").render()


def test_directives_come_before_the_first_command(scripts):
    for name, text in scripts.items():
        lines = text.splitlines()
        first_command = next(i for i, line in enumerate(lines[1:], 1) if line and not line.startswith("#"))
        directives = [i for i, line in enumerate(lines) if line.startswith("#SBATCH")]
        assert directives and max(directives) < first_command, name
        assert text.endswith("\n") and lines[0] == "#!/bin/bash"
        assert f"#SBATCH --job-name={name}" in lines
        assert "#SBATCH --requeue" in lines and any(line.startswith("#SBATCH --signal=B:USR1@") for line in lines)


def test_overrides_reach_the_script_verbatim(matrix, scripts):
    run = next(r for r in matrix.runs if r.name == "stage2_qwen17b_think_ema_rewardCurriculum_decay_s1")
    text = scripts[run.name]
    assert """\nSAMPLER_PARAMS='{"curriculum_sources":["logicif"],"threshold":0.5,""" in text
    assert """    "+data.rlif_sampler.params='${SAMPLER_PARAMS}'"\n""" in text
    assert '"trainer.default_local_dir=${CKPT_DIR}"' in text
    assert "+data.apply_chat_template_kwargs.enable_thinking=true" in text
    block = text.split("OVERRIDES=(\n", 1)[1].split("\n)\n", 1)[0]
    assert len(block.splitlines()) == len(build_overrides(run))


def test_gpu_scripts_never_touch_cpu_support(matrix, scripts):
    for run in matrix.runs:
        assert ("cpu_support" in scripts[run.name]) == run.cpu_mode, run.name


def test_bash_syntax(tmp_path, scripts):
    for name, text in scripts.items():
        path = tmp_path / f"{name}.sh"
        path.write_text(text, encoding="utf-8")
        subprocess.run(["bash", "-n", str(path)], check=True)


def test_committed_scripts_match_the_matrix(matrix, scripts):
    """Every GPU run not waiting for the ablation chain (this repository holds no evaluation results) and not
    trained from a per-machine checkpoint path (``model_setting``)."""
    out = REPO_ROOT / "recipe" / "rlif"
    committed = {p.stem: p.read_text(encoding="utf-8") for p in out.glob("*.sh")}
    expected = {
        run.name: scripts[run.name] for run in matrix.select() if run.from_winner is None and not run.model_setting
    }
    assert set(committed) == set(expected), "regenerate: python generate_train_recipes.py --portable"
    stale = [name for name, text in expected.items() if committed[name] != text]
    assert not stale, f"stale scripts (regenerate with --portable): {stale}"


def test_log_directory_ships_with_the_checkout(scripts):
    """Slurm cannot open ``--output=log/%x-%j.out`` without log/: the repository must ship log/.gitkeep."""
    assert all("#SBATCH --output=log/%x-%j.out" in text for text in scripts.values())
    keep = REPO_ROOT / "log" / ".gitkeep"
    assert keep.is_file(), "log/.gitkeep is missing"
    if shutil.which("git") is None or not (REPO_ROOT / ".git").exists():
        return
    # ``--no-index``: judge the ignore rules themselves, whether or not the file is already tracked (exit 1: not
    # ignored, so `git add -A` and a fresh clone carry it).
    ignored = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", "log/.gitkeep"], cwd=REPO_ROOT, capture_output=True, check=False
    )
    assert ignored.returncode == 1, ".gitignore ignores log/.gitkeep: use `log/*` and `!log/.gitkeep`"
    probe = subprocess.run(
        ["git", "check-ignore", "-q", "--no-index", "log/run-1.out"], cwd=REPO_ROOT, capture_output=True, check=False
    )
    assert probe.returncode == 0, "job logs under log/ must stay ignored"


def test_start_line_names_the_wandb_run():
    """The start line prints the attempt's wandb id and group, set before it (``wandb_attempt``; what wandb does with
    them: ``test_recipes_wandb_attempts.py``)."""
    text = (REPO_ROOT / LAUNCHER).read_text(encoding="utf-8")
    start = text.index(
        'restart ${SLURM_RESTART_COUNT:-0} on ${SLURM_JOB_NODELIST}; wandb run $WANDB_RUN_ID (group $WANDB_RUN_GROUP)"'
    )
    assert 0 <= text.index("    wandb_attempt\n") < start
    assert 'export WANDB_RUN_ID="${SLURM_JOB_ID}-${SLURM_RESTART_COUNT:-0}-${RUN_NAME:0:44}"' in text
    assert "WANDB_RESUME=" not in text


def test_scripts_call_the_launcher_steps_in_order(matrix, scripts):
    """Each script sets its run variables, sources the launcher from the submit directory, then calls its steps:
    the data between the job start and Ray, the overrides between Ray and the driver (they name MODEL_PATH, which
    the preflight inside ``ray_start`` resolves)."""
    for run in matrix.runs:
        lines = scripts[run.name].splitlines()
        for line in (f"RUN_NAME={run.name}", f"RUN_PROJECT={run.project}", f"NNODES={run.slurm.nodes}"):
            assert line in lines, (run.name, line)
        assert f"GPUS_PER_NODE={run.slurm.gpus_per_node}" in lines
        assert f"#SBATCH --cpus-per-task={run.slurm.cpus_per_task}" in lines  # the launcher reads Slurm's value
        assert 'RLIF_ROOT="${SLURM_SUBMIT_DIR:-$PWD}"' in lines  # the portable form the repository commits
        assert f'LAUNCHER="$RLIF_ROOT/{LAUNCHER}"' in lines
        order = [
            'source "$LAUNCHER"',
            "job_start",
            "TRAIN_DATA=(",
            "VAL_DATA=(",
            "ray_start",
            "OVERRIDES=(",
            "verl_run",
        ]
        if run.cpu_mode:
            order[2:4] = ['TRAIN_DATA=("$(demo_field train_file)")', 'VAL_DATA=("$(demo_field val_file)")']
        else:
            order.insert(2, f"hub_model {run.model}")
            order[3] = "TRAIN_DATA=(" + " ".join(run.train_files) + ")"
            order[4] = "VAL_DATA=(" + " ".join(run.val_files) + ")"
        positions = [lines.index(line) for line in order]
        assert positions == sorted(positions), run.name
        assert lines[-1] == "verl_run", run.name
        # besides its overrides, a script is its header and a few lines; the whole script stays near 90 lines (a
        # replicate adds three seed keys, dynamic sampling two)
        assert len(lines) - len(build_overrides(run)) <= (63 if run.cpu_mode else 41), run.name
        assert run.cpu_mode or len(lines) <= 100, (run.name, len(lines))


def test_a_run_difference_is_a_script_difference(matrix, scripts):
    """Two runs that differ in one sampler setting differ in their names and that setting only."""
    a, b = scripts["stage2_qwen17b_think_ema_s1"], scripts["stage2_qwen17b_think_1v1_s1"]
    diff = difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
    changed = [line[1:] for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]
    names = [line for line in changed if "stage2_qwen17b_think_" in line]
    assert len(names) == 12  # description, submit and logs, checkpoints, job name, RUN_NAME, experiment_name
    others = sorted(set(changed) - set(names))
    assert others[:2] == ["    +data.rlif_sampler.name=ema_reweight", "    +data.rlif_sampler.name=fixed_ratio"]
    # the sampler params, one JSON line each: EMA's adds its settings to the shared groups
    assert len(others) == 4 and all(line.startswith("SAMPLER_PARAMS='{") for line in others[2:])
    assert sum('"alpha":0.1,"temperature":0.3,"floor":0.1,"signal":"success"' in line for line in others[2:]) == 1


def test_no_dead_pre_timeout_checkpoint_logic(matrix, scripts):
    """verl 0.9.1's V1 trainer never reads the ESI settings; only periodic saves protect a requeued run."""
    for run in matrix.runs:
        keys = {o.key for o in build_overrides(run)}
        assert "trainer.esi_redundant_time" not in keys, run.name
        assert "trainer.max_actor_ckpt_to_keep" in keys and "trainer.save_freq" in keys, run.name
    assert not any("MLP_CURRENT_CAPACITY_BLOCK_EXPIRATION_TIMESTAMP" in text for text in scripts.values())


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (True, "true"),
        (0.0, "0"),
        (1e-6, "1e-06"),
        (8, "8"),
        (["a", "graph/"], "[a,graph/]"),
        (None, "null"),
        ({"temperature": 0.6, "top_k": 20}, "{temperature:0.6,top_k:20}"),
    ],
)
def test_hydra_values(value, text):
    assert hydra_value(value) == text


def test_hydra_value_refuses_what_needs_quoting():
    with pytest.raises(ValueError, match="needs quoting"):
        hydra_value("a b")
    with pytest.raises(ValueError, match="cannot be Hydra dict keys"):
        hydra_value({"graph/tsp": 1})
    with pytest.raises(ValueError, match="cannot express"):
        hydra_value({1, 2})


def test_override_words():
    assert Override("a.b", "${MODEL_PATH}").bash_word() == '"a.b=${MODEL_PATH}"'
    assert parse_override("+x.y=[1,2]").bash_word() == "'+x.y=[1,2]'"
    with pytest.raises(ValueError, match="malformed override"):
        parse_override("x.y")
    assert re.fullmatch(r"'\+a=\$\(rm -rf /\)'", parse_override("+a=$(rm -rf /)").bash_word())

"""Probe jobs (``generate_train_recipes.py --probe``) and planning on a probe file (``--plan-from``, or the file at
its default location): the scripts, the committed copies, the printed measured-vs-assumed plan and the warnings."""

from __future__ import annotations

import copy
import json
import os
import subprocess

import pytest

from rlif.recipes.cli import find_probes, main
from rlif.recipes.generate import REPO_ROOT
from rlif.recipes.probe_script import PROBE_SUBDIR, probe_refusal, render_probe_script
from rlif.recipes.render import make_environment
from rlif.runs.matrix import load_matrix

RUN = "slurm_qwen8b_think_if80000_grpo"

PROBE = {
    "model": "Qwen/Qwen3-8B",
    "think": True,
    "caps": [8192, 32768],
    "entries": [
        {
            "source": "iftrain",
            "interval": "all",
            "n_prompts": 200,
            "rows": 80000,
            "prompt_tokens_mean": 300,
            "response_tokens": {"mean": 2000, "p50": 1800, "p90": 3900, "p99": 12000},
            "truncation_rate": {"8192": 0.12, "32768": 0.0},
            "pass_rate": 0.7,
            "tokens_per_s": 2500,
        }
    ],
}


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")


def write(path, data):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_committed_probe_scripts_match_the_matrix(matrix):
    env = make_environment()
    out = REPO_ROOT / "recipe" / "rlif" / PROBE_SUBDIR
    committed = {p.stem: p.read_text(encoding="utf-8") for p in out.glob("*.sh")}
    # as the evaluation scripts: no chained run (its settings depend on results), no run whose model path comes
    # from .env
    expected = {
        r.name: render_probe_script(r, env)
        for r in matrix.select()
        if r.from_winner is None and not r.model_setting and not probe_refusal(r)
    }
    assert set(committed) == set(expected), "regenerate: python generate_train_recipes.py --probe --skip-preflight"
    assert not [name for name, text in expected.items() if committed[name] != text], "stale: regenerate --probe"
    assert all(os.access(out / f"{name}.sh", os.X_OK) for name in committed)


def test_probe_writes_one_node_job_scripts_that_parse(tmp_path, capsys):
    assert main(["--probe", RUN, "--probe", "stage2_qwen17b_think_1v1", "--out", str(tmp_path), "--env-file",
                 str(tmp_path / ".env"), "--probe-prompts", "300"]) == 0  # fmt: skip
    scripts = sorted(p.name for p in (tmp_path / PROBE_SUBDIR).glob("*.sh"))
    assert scripts == [f"{RUN}.sh", *(f"stage2_qwen17b_think_1v1_s{seed}.sh" for seed in (1, 2, 3))]
    assert not list(tmp_path.glob("*.sh"))  # no training script
    text = (tmp_path / PROBE_SUBDIR / f"{RUN}.sh").read_text(encoding="utf-8")
    assert "#SBATCH --nodes=1\n" in text and "#SBATCH --gpus-per-node=1\n" in text
    assert "    --prompts-per-interval 300\n" in text and "    --max-model-len 34816\n" in text
    assert '    "$RLIF_ROOT/verl_data/if80000_logicif0.parquet"\n' in text and text.rstrip().endswith("probe_run")
    for script in (tmp_path / PROBE_SUBDIR).glob("*.sh"):
        assert subprocess.run(["bash", "-n", str(script)], check=False).returncode == 0
    out = capsys.readouterr().out
    assert f"probe/{RUN}/probe.json" in out and "8192, 32768" in out


def test_probe_dry_run_writes_nothing_and_skips_runs_without_a_probe(tmp_path, capsys, matrix):
    assert main(["--probe", "--stage", "stage2", "--dry-run", "--out", str(tmp_path), "--env-file",
                 str(tmp_path / ".env")]) == 0  # fmt: skip
    assert not list(tmp_path.iterdir())
    assert "dry run, nothing written" in capsys.readouterr().out
    chained = next(r for r in matrix.runs if r.from_winner is not None)  # unresolved: refused by name
    with pytest.raises(ValueError, match=f"{chained.name}: settings from a stage winner .*resolve its chain first"):
        render_probe_script(chained, make_environment())
    assert main(["--probe", "--probe-prompts", "0", "--out", str(tmp_path)]) == 2
    assert "--probe-prompts 0: need at least one prompt per interval" in capsys.readouterr().out


def plan_output(capsys, *extra):
    code = main(["--run", RUN, "--dry-run", "--skip-verl-check", "--skip-preflight", *extra])
    return code, capsys.readouterr().out


def test_plan_from_changes_the_printed_plan_and_shows_both(tmp_path, capsys):
    _, assumed = plan_output(capsys)
    code, measured = plan_output(capsys, "--plan-from", str(write(tmp_path / "p.json", PROBE)))
    assert code == 0
    row = next(line for line in measured.splitlines() if RUN in line and "min" in line)
    assert row not in assumed
    assert (
        f"plan: {RUN}: measured ({tmp_path / 'p.json'}): prompt 300 / response 2,000 tokens, decode 2,500 " in measured
    )
    assert "; assumed: prompt 512 / response 4,096 tokens" in measured
    assert f"plan: {RUN}: on the measured lengths:" in measured and f"plan: {RUN}: on the assumed lengths:" in measured
    warning = next(line for line in measured.splitlines() if line.startswith("warning:"))
    assert (
        f"warning: {RUN}: iftrain interval all: truncation 12.0% at the 8192-token response cap exceeds 10%" in warning
    )
    _, quiet = plan_output(capsys, "--plan-from", str(tmp_path / "p.json"), "--truncation-warn", "0.2")
    assert "warning:" not in quiet


def test_a_probe_of_another_model_is_refused_in_one_line(tmp_path, capsys):
    code, out = plan_output(
        capsys, "--plan-from", str(write(tmp_path / "p.json", {**PROBE, "model": "Qwen/Qwen3-1.7B"}))
    )
    assert code == 1
    lines = [line for line in out.splitlines() if line.startswith("error:")]
    assert lines == [
        f"error: --plan-from: {tmp_path / 'p.json'}: model: probe is for Qwen/Qwen3-1.7B, run {RUN} trains "
        "Qwen/Qwen3-8B"
    ]
    code, out = plan_output(capsys, "--plan-from", str(tmp_path / "missing.json"))
    assert code == 1 and "error: --plan-from: " in out and "missing.json: cannot read the probe file" in out


def test_the_probe_at_its_default_location_is_found(tmp_path, matrix):
    run = matrix.select([RUN])[0]
    other = matrix.select(["stage2_qwen17b_think_1v1"])[0]
    write(tmp_path / "probe" / RUN / "probe.json", PROBE)
    wrong = copy.deepcopy(PROBE)  # an 8B probe beside a 1.7B run: noted, planned on the assumed lengths
    write(tmp_path / "probe" / other.name / "probe.json", wrong)
    probes, errors, notes = find_probes([run, other], None, root=tmp_path)
    assert set(probes) == {RUN} and errors == []
    assert notes == [
        f"probe: {tmp_path / 'probe' / other.name / 'probe.json'}: model: probe is for Qwen/Qwen3-8B, run "
        f"{other.name} trains Qwen/Qwen3-1.7B; {other.name} is planned on the assumed lengths"
    ]

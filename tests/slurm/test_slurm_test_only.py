"""``sbatch --test-only`` on the local two-node cluster accepts every generated script's directives."""

from __future__ import annotations

import pytest

from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT
from rlif.runs.matrix import load_matrix

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    out = tmp_path_factory.mktemp("scripts")
    fast = ["--skip-verl-check", "--skip-preflight"]
    assert main([*fast, "--out", str(out)]) == 0
    assert main(["--stage", "cpu", *fast, "--out", str(out)]) == 0
    assert main(["--stage", "smoke", "--nodes", "2", *fast, "--out", str(out / "two")]) == 0
    assert main(["--stage", "smoke", "--nodes", "4", *fast, "--out", str(out / "four")]) == 0
    (out / "log").mkdir()
    return out


def test_every_script_is_accepted(slurm_cluster, generated):
    scripts = sorted(generated.glob("*.sh")) + sorted((generated / "two").glob("*.sh"))
    matrix = load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")
    # runs whose model comes from a .env setting (the graph runs) are left out while it is unset, as here
    expected = {r.name for r in matrix.runs if r.from_winner is None and not r.cpu_mode and not r.model_setting}
    expected |= {r.name for r in matrix.select(stages=["cpu"])} | {
        f"{r.name}_2n" for r in matrix.select(stages=["smoke"])
    }
    assert {p.stem for p in scripts} == expected
    evaluations = sorted((generated / "eval").glob("*.sh"))
    assert {p.stem for p in evaluations} == {
        r.name for r in matrix.select() if r.from_winner is None and not r.model_setting
    }
    scripts += evaluations
    for script in scripts:
        proc = slurm_cluster.run("sbatch", "--test-only", str(script), check=False)
        assert proc.returncode == 0, f"{script.name}: {proc.stderr}"
        assert "to start at" in proc.stderr


def test_test_only_rejects_what_the_cluster_cannot_give(slurm_cluster, generated):
    (script,) = (generated / "four").glob("*.sh")
    proc = slurm_cluster.run("sbatch", "--test-only", str(script), check=False)
    assert proc.returncode != 0 and "node configuration is not available" in proc.stderr

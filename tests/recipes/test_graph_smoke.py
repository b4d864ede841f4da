"""The graph smoke pair: trained from the checkpoint ``RLIF_GRAPH_MODEL`` names, and what happens without it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rlif.data.graph_build import count_for_volume
from rlif.recipes.cli import main
from rlif.recipes.generate import REPO_ROOT, preflight_problems, resolve_model_settings
from rlif.runs.matrix import load_matrix
from rlif.runs.shapes import BUILTIN_CONFIGS, model_shape

SMOKE = ["graph_sft6np_smoke_mixed", "graph_sft6np_smoke_curriculum"]


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(REPO_ROOT / "recipe" / "matrix.yaml")


@pytest.fixture
def checkpoint(tmp_path: Path) -> Path:
    """A folder with the SFT checkpoint's config.json (Qwen3-8B's shape) and nothing else."""
    folder = tmp_path / "qwen3_sft_6np"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(BUILTIN_CONFIGS["Qwen/Qwen3-8B"]), encoding="utf-8")
    return folder


def test_smoke_pair_is_mixed_and_curriculum_for_five_steps(matrix):
    runs = matrix.select(stages=["graph_smoke"])
    assert [r.name for r in runs] == SMOKE
    assert {r.sampler.name for r in runs} == {"uniform", "reward_curriculum"}
    assert all(r.train.total_training_steps == 5 and r.train.save_freq == 5 for r in runs)
    assert all(r.model_setting == "RLIF_GRAPH_MODEL" for r in runs)
    assert all(f.startswith("verl_data/graph/6np_756/") for r in runs for f in (*r.train_files, *r.val_files))


def test_volume_756_is_the_buildable_one_nearest_750():
    assert count_for_volume(756, 6, 2) == 63
    with pytest.raises(ValueError, match="756"):
        count_for_volume(750, 6, 2)


def test_unset_setting_stops_only_a_graph_smoke_request(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("RLIF_GRAPH_MODEL", raising=False)
    env_file = tmp_path / ".env"
    env_file.write_text("", encoding="utf-8")
    args = ["--env-file", str(env_file), "--dry-run", "--skip-verl-check", "--skip-preflight"]
    assert main([*args, "--stage", "graph_smoke"]) == 1
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "RLIF_GRAPH_MODEL is not set" in lines[0]
    assert main([*args, "--stage", "smoke"]) == 0


def test_plain_generation_leaves_the_pair_out_with_a_line(matrix):
    runs = [r for r in matrix.select() if r.from_winner is None]
    settings = resolve_model_settings(runs, {}, explicit=False)
    assert not {r.name for r in settings.runs} & set(SMOKE)
    graph = [r.name for r in runs if r.model_setting == "RLIF_GRAPH_MODEL"]  # the smoke pair and the chain's start
    assert set(SMOKE) < set(graph) and len(settings.runs) == len(runs) - len(graph)
    assert len(settings.skipped) == 1 and settings.skipped[0].startswith("RLIF_GRAPH_MODEL is not set")


def test_set_path_is_planned_from_its_config_and_preflighted(matrix, checkpoint):
    runs = resolve_model_settings(
        matrix.select(stages=["graph_smoke"]), {"RLIF_GRAPH_MODEL": str(checkpoint)}, explicit=True
    ).runs
    assert [r.model for r in runs] == [str(checkpoint)] * 2
    assert model_shape(str(checkpoint)).params == model_shape("Qwen/Qwen3-8B").params
    problems = [p for p in preflight_problems(runs, {}, REPO_ROOT) if p.key == "model"]
    assert len(problems) == 2 and str(checkpoint) in problems[0].message


def test_a_hub_id_is_the_instruct_variant_and_must_be_in_the_hub_cache(matrix, tmp_path):
    """RLIF_GRAPH_MODEL=Qwen/Qwen3-1.7B: planned from the planner's table, preflighted against the Hub cache."""
    runs = resolve_model_settings(
        matrix.select(stages=["graph_smoke"]), {"RLIF_GRAPH_MODEL": "Qwen/Qwen3-1.7B"}, explicit=True
    ).runs
    assert [r.model for r in runs] == ["Qwen/Qwen3-1.7B"] * 2
    problems = [p for p in preflight_problems(runs, {"HF_HUB_CACHE": str(tmp_path)}, REPO_ROOT) if p.key == "model"]
    assert len(problems) == 2 and "Qwen/Qwen3-1.7B: not in the Hub cache" in problems[0].message

"""The builder: verl row schema, splits, curriculum levels, resumable shards, worker-count independence."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest

import rlif.graphs.build as build_module
from rewards.router import check_row
from rlif.graphs.build import BuildConfig, build, parse_args, ray_cluster_address
from rlif.graphs.exact import solve
from rlif.graphs.instance import parse_ground_truth

TASKS = ("mcp", "tsp", "mcs")
ROW_KEYS = {"data_source", "prompt", "ability", "reward_model", "extra_info"}
INFO_KEYS = {"split", "index", "item_id", "task", "difficulty", "size", "level", "exact_answer"}


def _config(out, **overrides):
    settings = {"tasks": TASKS, "count": 6, "val_per_size": 2, "levels": 3, "shard_size": 4, "workers": 1}
    settings.update(overrides)
    return BuildConfig(out=out, **settings)


def _rows(path):
    return pd.read_parquet(path).to_dict("records")


def _by_id(rows):
    return {r["extra_info"]["item_id"]: r["reward_model"]["ground_truth"] for r in rows}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("graph_build")
    manifest = build(_config(out))
    return out, manifest


def test_files_and_counts(built):
    out, manifest = built
    assert set(manifest["files"]) == {
        "train_mixed.parquet",
        "train_level_0.parquet",
        "train_level_1.parquet",
        "train_level_2.parquet",
        "val_easy.parquet",
        "val_hard.parquet",
    }
    assert manifest["files"]["train_mixed.parquet"] == {"mcp": 12, "mcs": 12, "tsp": 12}
    assert manifest["files"]["val_easy.parquet"] == {"mcp": 2, "mcs": 2, "tsp": 2}
    assert json.loads((out / "manifest.json").read_text()) == manifest


def test_rows_follow_the_schema_and_their_optimum_is_exact(built):
    out, _ = built
    for name in ("train_mixed.parquet", "val_easy.parquet", "val_hard.parquet"):
        rows = _rows(out / name)
        for position, row in enumerate(rows):
            info = row["extra_info"]
            assert set(row) == ROW_KEYS and set(info) == INFO_KEYS
            assert row["data_source"] == f"graph/{info['task']}" and row["ability"] == "graph_reasoning"
            assert [m["role"] for m in row["prompt"]] == ["user"]
            assert row["reward_model"]["style"] == "rule"
            truth = parse_ground_truth(row["reward_model"]["ground_truth"])
            assert truth.task == info["task"] and truth.optimum == info["exact_answer"]
            assert info["difficulty"] == truth.instance.n and info["index"] == position
            assert info["split"] == ("train" if name.startswith("train") else "val")
            assert info["size"] == {"val_easy.parquet": "small", "val_hard.parquet": "large"}.get(name, info["size"])
            check_row(row["data_source"], row["reward_model"]["ground_truth"], info)  # the rewards' own checker
        for row in rows[:6]:
            truth = parse_ground_truth(row["reward_model"]["ground_truth"])
            assert solve(truth.task, truth.instance).optimum == truth.optimum


def test_curriculum_levels_are_equal_size_and_ordered_by_difficulty(built):
    out, manifest = built
    mixed = _rows(out / "train_mixed.parquet")
    assert len({r["extra_info"]["item_id"] for r in mixed}) == len(mixed)
    per_level: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    for level in range(3):
        for row in _rows(out / f"train_level_{level}.parquet"):
            assert row["extra_info"]["level"] == level
            per_level[row["extra_info"]["task"]][level].append(row["extra_info"]["difficulty"])
    for task, levels in per_level.items():
        assert [len(levels[k]) for k in range(3)] == [4, 4, 4]
        assert max(levels[0]) <= min(levels[1]) and max(levels[1]) <= min(levels[2])
        assert manifest["level_difficulty_ranges"][task] == [[min(levels[k]), max(levels[k])] for k in range(3)]


def test_rerun_skips_finished_shards_and_rebuilds_missing_ones(tmp_path, monkeypatch):
    config = _config(tmp_path, tasks=("mcp",), sizes=("small",))
    build(config)
    shards = sorted(config.shard_dir.iterdir())
    before = _rows(tmp_path / "train_mixed.parquet")
    calls = Counter()
    real = build_module.make_item

    def counting(*args):
        calls[args[3]] += 1
        return real(*args)

    monkeypatch.setattr(build_module, "make_item", counting)
    build(config)
    assert not calls
    shards[1].unlink()
    build(config)
    assert sorted(calls) == [4, 5, 6, 7] and all(v == 1 for v in calls.values())
    assert _by_id(_rows(tmp_path / "train_mixed.parquet")) == _by_id(before)
    assert not [p for p in config.shard_dir.iterdir() if p.name.endswith(".tmp")]


def test_validation_set_does_not_depend_on_count_or_workers(tmp_path, built):
    out, _ = built
    other = build(_config(tmp_path, count=2, workers=2))
    assert other["files"]["train_mixed.parquet"] == {"mcp": 4, "mcs": 4, "tsp": 4}
    for name in ("val_easy.parquet", "val_hard.parquet"):
        assert _by_id(_rows(tmp_path / name)) == _by_id(_rows(out / name))
    bigger = _by_id(_rows(out / "train_mixed.parquet"))
    for item_id, truth in _by_id(_rows(tmp_path / "train_mixed.parquet")).items():
        assert bigger[item_id] == truth


def test_cli_and_config_validation(tmp_path):
    config = parse_args(["--out", str(tmp_path), "--tasks", "mcp,ged", "--count", "3", "--ray", "auto"])
    assert config.tasks == ("mcp", "ged") and config.sizes == ("small", "large") and config.ray == "auto"
    with pytest.raises(SystemExit):
        parse_args(["--out", str(tmp_path), "--tasks", "clique", "--count", "3"])
    for bad in (
        {"count": -1},
        {"levels": 0},
        {"ray": "cluster"},
        {"tasks": ("mcp", "mcp")},
        {"count": 0, "val_per_size": 0},
    ):
        with pytest.raises(ValueError):
            _config(tmp_path, **bad)


def test_ray_cluster_address_comes_from_env_or_ray_start_record(tmp_path, monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    assert ray_cluster_address() is None
    (tmp_path / "ray").mkdir()
    (tmp_path / "ray" / "ray_current_cluster").write_text("10.1.2.3:6379\n")
    assert ray_cluster_address() == "10.1.2.3:6379"
    monkeypatch.setenv("RAY_ADDRESS", "ray://head:10001")
    assert ray_cluster_address() == "ray://head:10001"


def test_volume_is_the_total_training_rows_split_evenly(tmp_path: Path) -> None:
    assert parse_args(["--out", str(tmp_path), "--volume", "45000"]).count == 45000 // 12
    assert parse_args(["--out", str(tmp_path), "--volume", "30", "--tasks", "mcp,tsp", "--sizes", "small"]).count == 15
    with pytest.raises(SystemExit):
        parse_args(["--out", str(tmp_path), "--volume", "45001"])
    with pytest.raises(SystemExit):
        parse_args(["--out", str(tmp_path), "--volume", "12", "--count", "1"])


def test_data_cli_forwards_graph_builds(tmp_path: Path) -> None:
    from rlif.data.__main__ import main

    out = tmp_path / "g"
    assert (
        main(
            [
                "graph",
                "--out",
                str(out),
                "--volume",
                "2",
                "--tasks",
                "mcp,tsp",
                "--sizes",
                "small",
                "--val-per-size",
                "1",
                "--levels",
                "1",
                "--workers",
                "1",
            ]
        )
        == 0
    )
    assert (out / "train_mixed.parquet").is_file() and (out / "val_easy.parquet").is_file()

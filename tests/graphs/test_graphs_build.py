"""The builder: verl row schema, splits, curriculum levels, resumable shards, worker-count independence."""

from __future__ import annotations

import json
import logging
import socket
from collections import Counter, defaultdict
from pathlib import Path

import pandas as pd
import pytest

import rlif.data.graph_build as build_module
from rewards.router import check_row
from rlif.data.graph_build import (
    BuildConfig,
    build,
    count_for_volume,
    parse_args,
    ray_cluster_address,
    ray_cluster_reachable,
    resolve_ray_mode,
)
from rlif.graphs.exact import solve
from rlif.graphs.items import SIZES
from rlif.graphs.tasks import TASKS as REGISTRY
from rlif.graphs.truth import parse_ground_truth

TASKS = ("mcp", "tsp", "mcs")
ROW_KEYS = {"data_source", "prompt", "ability", "reward_model", "extra_info"}
INFO_KEYS = {
    "split",
    "index",
    "item_id",
    "task",
    "difficulty",
    "size",
    "level",
    "exact_answer",
    "instance",
    "optimum",
    "witness",
}


def _config(out, **overrides):
    settings = {"tasks": TASKS, "count": 6, "val_per_size": 2, "levels": 3, "shard_size": 4, "workers": 1}
    settings["ray"] = "off"  # hermetic: never reach a Ray cluster this machine may have recorded
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


def test_extra_info_carries_the_instance_and_the_solver_optimum(built):
    """The row contract: ``extra_info`` alone holds the instance (node-link JSON) and its optimum."""
    out, _ = built
    rows = _rows(out / "train_mixed.parquet") + _rows(out / "val_hard.parquet")
    assert {r["extra_info"]["task"] for r in rows} == set(TASKS)
    for row in rows:
        info = row["extra_info"]
        assert isinstance(info["instance"], str)
        assert json.loads(info["instance"]) == json.loads(row["reward_model"]["ground_truth"])["graph"]
        solved = solve(info["task"], parse_ground_truth(row["reward_model"]["ground_truth"]).instance).optimum
        assert info["optimum"] == info["exact_answer"] == solved


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
    assert not [p for p in config.shard_dir.iterdir() if p.name.startswith(".")]


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
    monkeypatch.setenv("RAY_ADDRESS", "auto")  # Ray's "find the current cluster": the ``ray start`` record
    assert ray_cluster_address() == "10.1.2.3:6379"
    monkeypatch.setenv("RAY_ADDRESS", "local")  # Ray's "start a new instance": no cluster to join
    assert ray_cluster_address() is None


@pytest.fixture()
def listening_port():
    """A local TCP port that accepts connections, standing in for a cluster's GCS port (no Ray started)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        yield server.getsockname()[1]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_ray_cluster_reachable_probes_the_port(listening_port):
    assert ray_cluster_reachable(f"127.0.0.1:{listening_port}")
    assert ray_cluster_reachable(f"ray://127.0.0.1:{listening_port}")
    assert not ray_cluster_reachable(f"127.0.0.1:{_closed_port()}", timeout=0.5)
    assert ray_cluster_reachable("some-odd-address")  # unparseable: left for Ray to judge


@pytest.fixture()
def no_cluster(tmp_path, monkeypatch):
    """An environment with no RAY_ADDRESS and an empty Ray temp folder; returns the record path to write."""
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setenv("RAY_TMPDIR", str(tmp_path))
    (tmp_path / "ray").mkdir()
    return tmp_path / "ray" / "ray_current_cluster"


def test_default_mode_detects_a_cluster_and_otherwise_falls_back(no_cluster, listening_port, caplog):
    assert parse_args(["--out", "x", "--count", "1"]).ray == "auto"
    assert BuildConfig(out=Path("x")).ray == "auto"
    with caplog.at_level(logging.INFO, logger="rlif.data.graph_build"):
        assert resolve_ray_mode("auto", 3) == ("off", None)
        assert "no Ray cluster reachable" in caplog.text and "3 local worker process(es)" in caplog.text
        caplog.clear()
        no_cluster.write_text(f"127.0.0.1:{_closed_port()}\n")  # a cluster that died without ``ray stop``
        assert resolve_ray_mode("auto", 3) == ("off", None)
        assert "does not answer" in caplog.text
        caplog.clear()
        no_cluster.write_text(f"127.0.0.1:{listening_port}\n")
        assert resolve_ray_mode("auto", 3) == ("cluster", f"127.0.0.1:{listening_port}")
        assert f"using the Ray cluster at 127.0.0.1:{listening_port}" in caplog.text
        # Explicit modes are taken as given, whatever is recorded.
        assert resolve_ray_mode("off", 3) == ("off", None)
        assert resolve_ray_mode("local", 3) == ("local", None)


def test_build_routes_shards_to_the_detected_cluster_or_local_processes(tmp_path, no_cluster, listening_port):
    calls = []

    def fake_ray(pending, address, workers, done):
        calls.append(address)
        for spec in pending:
            done(spec, build_module.build_shard(spec))

    def one_task(out):
        return _config(out, tasks=("mcp",), sizes=("small",), count=2, val_per_size=1, levels=1, ray="auto")

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(build_module, "_run_ray", fake_ray)
        local = build(one_task(tmp_path / "local"))
        assert calls == []  # nothing recorded: local processes
        no_cluster.write_text(f"127.0.0.1:{listening_port}")
        remote = build(one_task(tmp_path / "remote"))
        assert calls == [f"127.0.0.1:{listening_port}"]
    assert local["files"] == remote["files"]
    assert _by_id(_rows(tmp_path / "local" / "train_mixed.parquet")) == _by_id(
        _rows(tmp_path / "remote" / "train_mixed.parquet")
    )


def test_volume_is_the_total_training_rows_split_evenly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cells = len(REGISTRY) * len(SIZES)
    volume = 1000 * cells
    assert parse_args(["--out", str(tmp_path), "--volume", str(volume)]).count == 1000
    assert parse_args(["--out", str(tmp_path), "--volume", "30", "--tasks", "mcp,tsp", "--sizes", "small"]).count == 15
    with pytest.raises(SystemExit):
        parse_args(["--out", str(tmp_path), "--volume", str(volume + 1)])
    rule = f"tasks x sizes = {len(REGISTRY)} x {len(SIZES)} = {cells}; nearest valid: {volume} or {volume + cells}"
    assert rule in capsys.readouterr().err
    with pytest.raises(SystemExit):
        parse_args(["--out", str(tmp_path), "--volume", str(cells), "--count", "1"])


@pytest.mark.parametrize(
    ("volume", "tasks", "sizes", "nearest"), [(45000, 7, 2, "44996 or 45010"), (5, 6, 2, "12"), (0, 6, 2, "12")]
)
def test_a_volume_that_does_not_split_evenly_names_the_nearest_that_do(
    volume: int, tasks: int, sizes: int, nearest: str
) -> None:
    with pytest.raises(ValueError, match=rf"= {tasks} x {sizes} = {tasks * sizes}; nearest valid: {nearest}$"):
        count_for_volume(volume, tasks, sizes)


def test_data_cli_forwards_graph_builds(tmp_path: Path, no_cluster: Path) -> None:
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

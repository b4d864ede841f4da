"""Mixtures and the eval file: deterministic by seed, deduplicated, free of evaluation prompts; and the CLI."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from data_fixtures import (
    IFBENCH_FILE,
    IFEVAL_FILE,
    head_jsonl,
    if_train_fixture_row,
    logicif_fixture_row,
    write_jsonl,
)

from rlif.data.__main__ import main as data_main
from rlif.data.files import read_source_rows
from rlif.data.mixtures import (
    MixtureSpec,
    PoolReport,
    build_eval_rows,
    build_mixture,
    eval_file_name,
    find_overlap,
    load_rows,
)
from rlif.data.schema import validate_parquet


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("sources")
    return {
        "iftrain": write_jsonl(tmp / "if_train.jsonl", [if_train_fixture_row(i) for i in range(12)]),
        "logicif_train": write_jsonl(
            tmp / "logicif_train.jsonl", [logicif_fixture_row(t, c) for t in range(4) for c in range(3)]
        ),
        "logicif_eval": write_jsonl(
            tmp / "logicif_eval.jsonl", [logicif_fixture_row(t, c) for t in (7, 8) for c in (0, 1)]
        ),
        "ifeval": head_jsonl(IFEVAL_FILE, tmp / "ifeval.jsonl", 6),
        "ifbench": head_jsonl(IFBENCH_FILE, tmp / "ifbench.jsonl", 5),
    }


@pytest.fixture(scope="module")
def pool(sources: dict[str, Path]) -> list[dict[str, Any]]:
    return load_rows([sources["iftrain"], sources["logicif_train"]])


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [r["extra_info"]["item_id"] for r in rows]


def test_spec_names_round_trip() -> None:
    spec = MixtureSpec.from_name("if1000_logicif250.parquet", seed=3)
    assert (spec.if_count, spec.logicif_count, spec.seed, spec.name) == (1000, 250, 3, "if1000_logicif250")
    for bad in ("if10", "logicif5_if3", "ifx_logicif1"):
        with pytest.raises(ValueError, match="not of the form"):
            MixtureSpec.from_name(bad)
    with pytest.raises(ValueError, match="at least one row"):
        MixtureSpec(0, 0)
    with pytest.raises(ValueError, match="if_count must be a non-negative integer"):
        MixtureSpec(-1, 2)


def test_mixture_counts_split_and_index(pool: list[dict[str, Any]]) -> None:
    rows = build_mixture(MixtureSpec(5, 4, seed=0), pool)
    assert sum(r["data_source"] == "iftrain" for r in rows) == 5
    assert sum(r["data_source"] == "logicif" for r in rows) == 4
    assert [r["extra_info"]["index"] for r in rows] == list(range(9))
    assert {r["extra_info"]["split"] for r in rows} == {"train"}
    assert len(set(_ids(rows))) == 9


def test_mixture_is_deterministic_and_order_independent(pool: list[dict[str, Any]]) -> None:
    first = build_mixture(MixtureSpec(6, 5, seed=11), pool)
    again = build_mixture(MixtureSpec(6, 5, seed=11), copy.deepcopy(pool))
    reversed_input = build_mixture(MixtureSpec(6, 5, seed=11), list(reversed(pool)))
    other_seed = build_mixture(MixtureSpec(6, 5, seed=12), pool)
    assert first == again == reversed_input
    assert _ids(first) != _ids(other_seed)


def test_duplicates_are_dropped_and_counted(pool: list[dict[str, Any]]) -> None:
    duplicate = copy.deepcopy(pool[0])
    duplicate["extra_info"]["item_id"] = "iftrain:another-key"
    duplicate["prompt"][0]["content"] = "  " + duplicate["prompt"][0]["content"].replace(" ", "  ")
    report = PoolReport()
    rows = build_mixture(MixtureSpec(12, 0), [*pool, duplicate], report=report)
    assert report.read["if"] == 13
    assert report.duplicates["if"] == 1
    assert len(rows) == 12


def test_eval_overlap_is_removed_by_prompt_and_by_logicif_task(
    pool: list[dict[str, Any]], sources: dict[str, Path]
) -> None:
    eval_rows = build_eval_rows(ifeval=[sources["ifeval"]], logicif=[sources["logicif_eval"]])
    leaked_if = {**copy.deepcopy(eval_rows[0]), "data_source": "iftrain"}
    leaked_if["extra_info"]["item_id"] = "iftrain:leaked"
    same_task = load_rows([write_jsonl(sources["iftrain"].parent / "leak.jsonl", [logicif_fixture_row(7, 9)])])
    train = [*pool, leaked_if, *same_task]
    overlap = find_overlap(train, eval_rows)
    assert overlap.same_prompt == ("iftrain:leaked",)
    assert overlap.same_task == ("logicif:FIXTURE_007:9",)
    report = PoolReport()
    rows = build_mixture(MixtureSpec(12, 12), train, eval_rows=eval_rows, report=report)
    assert report.eval_overlap == {"if": 1, "logicif": 1}
    assert not find_overlap(rows, eval_rows)
    with pytest.raises(ValueError, match=r"asked for 13 if rows but only 12 remain .*1 overlapping"):
        build_mixture(MixtureSpec(13, 0), train, eval_rows=eval_rows)


def test_eval_rows_order_and_name(sources: dict[str, Path]) -> None:
    rows = build_eval_rows(ifbench=[sources["ifbench"]], ifeval=[sources["ifeval"]], logicif=[sources["logicif_eval"]])
    assert [r["data_source"] for r in rows] == ["ifbench"] * 5 + ["ifeval"] * 6 + ["logicif"] * 4
    assert {r["extra_info"]["split"] for r in rows} == {"test"}
    assert eval_file_name(rows) == "ifbench_5_ifeval_6_logicif_4.parquet"
    with pytest.raises(ValueError, match="at least one"):
        build_eval_rows()


def test_cli_builds_validates_and_checks_overlap(
    tmp_path: Path, sources: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "verl_data"
    args = ["eval", "--ifbench", str(sources["ifbench"]), "--ifeval", str(sources["ifeval"])]
    assert data_main([*args, "--logicif", str(sources["logicif_eval"]), "--out-dir", str(out)]) == 0
    eval_file = out / "ifbench_5_ifeval_6_logicif_4.parquet"
    assert validate_parquet(eval_file).rows == 15
    mixture_args = ["mixture", "if4_logicif3", "--seed", "5", "--out-dir", str(out), "--eval-file", str(eval_file)]
    assert data_main([*mixture_args, "--sources", str(sources["iftrain"]), str(sources["logicif_train"])]) == 0
    mixture = out / "if4_logicif3.parquet"
    assert validate_parquet(mixture).sources == {"iftrain": 4, "logicif": 3}
    assert sorted(p.name for p in out.iterdir()) == ["if4_logicif3.parquet", "ifbench_5_ifeval_6_logicif_4.parquet"]
    printed = capsys.readouterr()
    assert "if4_logicif3.parquet" in printed.out and "iftrain=4, logicif=3" in printed.out
    assert "overlap check was SKIPPED" not in printed.err
    assert data_main(["overlap", str(mixture), str(eval_file)]) == 0
    assert data_main(["overlap", str(eval_file), str(eval_file)]) == 1
    assert data_main(["validate", str(mixture), str(eval_file)]) == 0


def test_cli_warns_when_the_overlap_check_is_skipped(
    tmp_path: Path, sources: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["mixture", "if2_logicif1", "--out-dir", str(tmp_path), "--sources", str(sources["iftrain"])]
    assert data_main([*args, str(sources["logicif_train"])]) == 0
    err = capsys.readouterr().err
    assert "warning: no --eval-file given, so the train/eval overlap check was SKIPPED" in err
    assert (tmp_path / "if2_logicif1.parquet").is_file()


def test_cli_reports_data_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = write_jsonl(tmp_path / "bad.jsonl", [if_train_fixture_row(0), {"messages": [], "ground_truth": "[]"}])
    assert data_main(["mixture", "if1_logicif0", "--sources", str(bad), "--out-dir", str(tmp_path)]) == 1
    assert "bad.jsonl: row 1: field messages" in capsys.readouterr().err
    assert not list(tmp_path.glob("*.parquet"))


def test_written_rows_read_back_unchanged(tmp_path: Path, pool: list[dict[str, Any]]) -> None:
    from rlif.data.mixtures import write_mixture

    spec = MixtureSpec(3, 3, seed=1)
    rows = build_mixture(spec, pool)
    back = list(read_source_rows(write_mixture(rows, spec, tmp_path)))
    for written, read in zip(rows, back, strict=True):
        assert read["prompt"] == written["prompt"]
        assert read["reward_model"] == written["reward_model"]
        assert {k: v for k, v in read["extra_info"].items() if v is not None} == written["extra_info"]

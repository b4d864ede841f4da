"""End to end on CPU with vLLM's CPU build: the tiny demo model generates for a few evaluation prompts, the
samples are scored, the metrics written and shown in the comparison report; re-runs skip finished prompts and
regenerate only a prompt whose samples are missing (after a torn write)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from eval_testkit import read_jsonl, verl_file

pytest.importorskip("vllm")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

N = 2


def _evaluate(model: Path, eval_file: Path, out: Path) -> subprocess.CompletedProcess:
    command = [
        sys.executable, "-m", "rlif.eval", "generate", "--model", str(model), "--eval-file", str(eval_file),
        "--out", str(out), "--n", str(N), "--max-tokens", "16", "--chunk-prompts", "2",
        "--engine-arg", "enforce_eager=true", "--engine-arg", "dtype=float32",
    ]  # fmt: skip
    env = {**os.environ, "VLLM_TARGET_DEVICE": "cpu", "VLLM_CPU_KVCACHE_SPACE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(command, check=False, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def test_demo_model_through_vllm_cpu_generate_score_report_resume(tmp_path: Path) -> None:
    from rlif.demo_assets import demo_rows, prepare

    started = time.monotonic()
    assets = prepare(tmp_path / "demo")
    rows = demo_rows("val")
    chosen = [rows[0], rows[1]] + [next(r for r in rows if r["data_source"] == s) for s in ("logicif", "graph/mvc")]
    eval_file = verl_file(tmp_path / "eval.parquet", chosen)
    ids = [row["extra_info"]["item_id"] for row in chosen]
    out = tmp_path / "eval" / "demo" / "0"

    first = _evaluate(assets.model_dir, eval_file, out)
    responses = read_jsonl(out / "responses.jsonl")
    assert sorted((r["id"], r["sample"]) for r in responses) == sorted((i, s) for i in ids for s in range(N))
    assert all(r["finish_reason"] in ("stop", "length") and 1 <= r["response_tokens"] <= 16 for r in responses)
    samples = read_jsonl(out / "samples.jsonl")
    assert [(r["id"], r["sample"]) for r in samples] == [(i, s) for i in ids for s in range(N)]
    assert all({"score", "acc", "response"} <= r.keys() for r in samples)
    assert {"if_prompt_strict", "instructions"} <= samples[0].keys()
    assert any("logicif_both" in r for r in samples) and any("graph_feasible" in r for r in samples)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["sampling"]["think"] is True and metrics["sampling"]["temperature"] == 0.6
    flat = metrics["metrics"]
    for key in ("ifeval/prompt_level_strict_acc", "ifeval/pass@2", "logicif/both_acc", "graph/mvc/feasible_rate"):
        assert key in flat
    assert "| ifeval |" in (out / "metrics.md").read_text()
    assert "engine ready" in first.stderr

    page = tmp_path / "report.html"
    report = subprocess.run(
        [sys.executable, "-m", "rlif.report", f"demo={tmp_path / 'eval' / 'demo'}", "--out", str(page)],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert report.returncode == 0, report.stderr[-3000:]
    html = page.read_text()
    assert "ifeval/pass@2" in html and "graph/mvc/feasible_rate" in html

    before = (out / "responses.jsonl").read_bytes()
    again = _evaluate(assets.model_dir, eval_file, out)
    assert f"{len(ids)} of {len(ids)} prompts already have {N} samples" in again.stderr
    assert "engine ready" not in again.stderr
    assert (out / "responses.jsonl").read_bytes() == before

    kept = [line for line in before.decode().splitlines(keepends=True) if json.loads(line)["id"] != ids[-1]]
    torn = next(line for line in before.decode().splitlines() if json.loads(line)["id"] == ids[-1])[:20]
    (out / "responses.jsonl").write_text("".join(kept) + torn)
    resumed = _evaluate(assets.model_dir, eval_file, out)
    assert f"{len(ids) - 1} of {len(ids)} prompts already have {N} samples" in resumed.stderr
    assert "dropped a torn last line" in resumed.stderr
    after = (out / "responses.jsonl").read_text()
    assert after.startswith("".join(kept))
    assert [json.loads(line)["id"] for line in after.splitlines()[len(kept) :]] == [ids[-1]] * N
    assert len(read_jsonl(out / "samples.jsonl")) == len(ids) * N
    print(f"\nCPU end-to-end evaluation: {time.monotonic() - started:.0f} s wall")

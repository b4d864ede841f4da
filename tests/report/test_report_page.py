"""The comparison report on two synthetic runs: files read as the training scripts and the evaluation write them,
the page opened in headless Chromium with every plot present, the best run per metric marked."""

from __future__ import annotations

import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rlif.report.cli import main
from rlif.report.page import Column, best_of
from rlif.report.runs import load_runs

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
PANELS = ("reward", "sampler-weights", "curriculum", "response-length", "kl", "validation")


def _step_metrics(step: int, strength: float) -> dict[str, float]:
    data = {
        "critic/score/mean": strength * (1 - math.exp(-step / 8)),
        "train/ifeval/reward_mean": strength * 0.9 * (1 - math.exp(-step / 6)),
        "train/logicif/reward_mean": strength * 0.5 * (1 - math.exp(-step / 12)),
        "sampler/weight/ifeval": 0.5 - 0.01 * step * strength,
        "sampler/weight/logicif": 0.5 + 0.01 * step * strength,
        "sampler/newest_interval/logicif": float(step // 5),
        "response_length/mean": 300 + 10 * step,
        "actor/kl_loss": 0.001 * step,
        "actor/ppo_kl": 0.0001 * step,
        "actor/grad_norm": 1.0,
    }
    if step % 10 == 0:
        data["val-core/ifeval/acc/mean@1"] = strength * step / 40
    return data


def _write_run(root: Path, strength: float, eval_metrics: dict[str, float]) -> Path:
    root.mkdir(parents=True)
    first = [{"step": s, "data": _step_metrics(s, strength)} for s in range(1, 16)]
    # A requeued attempt resumes from the step-10 checkpoint and logs steps 11-20 again.
    second = [{"step": s, "data": _step_metrics(s, strength)} for s in range(11, 21)]
    second[4]["data"]["critic/score/mean"] = 0.123  # step 15, as re-logged by the second attempt
    (root / "metrics.4242.0.jsonl").write_text("".join(json.dumps(e) + "\n" for e in first))
    (root / "metrics.4242.1.jsonl").write_text("".join(json.dumps(e) + "\n" for e in second))
    evaluation = root / "eval" / "20"
    evaluation.mkdir(parents=True)
    (evaluation / "metrics.json").write_text(json.dumps({"sources": {}, "metrics": eval_metrics}))
    return root


@pytest.fixture
def two_runs(tmp_path: Path) -> tuple[Path, Path]:
    a = _write_run(
        tmp_path / "fixed_1to1",
        1.0,
        {"ifeval/prompt_level_strict_acc": 0.61, "graph/tsp/hallucination_rate": 0.20, "logicif/pass@1": 0.3},
    )
    b = _write_run(
        tmp_path / "ema_reweighted",
        1.2,
        {"ifeval/prompt_level_strict_acc": 0.66, "graph/tsp/hallucination_rate": 0.25, "logicif/pass@1": 0.3},
    )
    return a, b


def test_runs_merge_requeued_attempts_and_find_their_evaluations(two_runs: tuple[Path, Path]) -> None:
    run = load_runs([str(two_runs[0])])[0]
    assert run.name == "fixed_1to1" and sorted(run.steps) == list(range(1, 21))
    assert run.steps[15]["critic/score/mean"] == 0.123
    assert [(e.step, e.metrics["logicif/pass@1"]) for e in run.evals] == [(20, 0.3)]
    steps, values = run.series("val-core/ifeval/acc/mean@1")
    assert steps == [10, 20] and values == [0.25, 0.5]


def test_a_checkpoint_directory_brings_its_evaluations_from_the_eval_tree(tmp_path: Path) -> None:
    """As the scripts lay them out: metrics in checkpoints/<project>/<run>, results in eval/<run>/<step>."""
    checkpoints = tmp_path / "checkpoints" / "rlif" / "stage2_ema"
    checkpoints.mkdir(parents=True)
    (checkpoints / "metrics.7.0.jsonl").write_text(json.dumps({"step": 1, "data": _step_metrics(1, 1.0)}) + "\n")
    for step, value in ((4, 0.5), (8, 0.7)):
        evaluation = tmp_path / "eval" / "stage2_ema" / str(step)
        evaluation.mkdir(parents=True)
        (evaluation / "metrics.json").write_text(json.dumps({"sources": {}, "metrics": {"logicif/pass@1": value}}))
    run = load_runs([str(checkpoints)], eval_root=tmp_path / "eval")[0]
    assert [(e.step, e.metrics["logicif/pass@1"]) for e in run.evals] == [(4, 0.5), (8, 0.7)]
    assert load_runs([str(checkpoints)], eval_root=tmp_path / "elsewhere")[0].evals == []


def test_page_opens_in_headless_chromium_with_every_plot(
    two_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    out = tmp_path / "site" / "report.html"
    assert main([str(two_runs[0]), f"ema={two_runs[1]}", "--out", str(out)]) == 0
    assert "[rlif report] wrote 6 PNGs" in capsys.readouterr().out
    page = out.read_text(encoding="utf-8")
    assert "<script" not in page and not re.search(r"(src|href)=\"https?:", page)  # nothing fetched at view time
    for panel in PANELS:
        png = out.parent / "report_plots" / f"{panel}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", panel
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install chromium): the page was written but not opened")
    dom = _chromium(["--dump-dom", out.resolve().as_uri()])
    for panel in PANELS:
        figure = re.search(rf'<figure id="plot-{panel}">(.*?)</figure>', dom, re.S)
        assert figure is not None, panel
        assert "<svg" in figure.group(1) and "<path" in figure.group(1), panel
    assert "train/logicif/reward_mean" in dom and "sampler/newest_interval/logicif" in dom and "fixed_1to1" in dom
    best = re.findall(r'<td class="num best">([\d.]+)</td>', dom)
    assert "0.6600" in best and "0.2000" in best  # higher accuracy wins; lower hallucination wins
    assert "ema by 0.05" in dom and "all equal" in dom  # equal values mark no run
    shot = tmp_path / "shot.png"
    _chromium(["--hide-scrollbars", "--window-size=1300,2400", f"--screenshot={shot}", out.resolve().as_uri()])
    assert _distinct_colours(shot) > 50  # rendered charts, not a blank page


def test_best_of_margins_ties_and_direction() -> None:
    columns = [Column("a", {"x/acc": 0.5, "x/missing_rate": 0.1}), Column("b", {"x/acc": 0.7, "x/missing_rate": 0.3})]
    assert best_of("x/acc", columns) == ({1}, "b by 0.2")
    assert best_of("x/missing_rate", columns) == ({0}, "a by 0.2")
    assert best_of("x/only", [Column("a", {"x/only": 1.0}), Column("b", {})]) == (set(), "")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json\n", "line 1: not valid JSON (Expecting value)"),
        ('{"step": 1}\n', 'line 1: expected {"step": <int>, "data": {...}} (verl file logger)'),
        ('{"step": "x", "data": {}}\n', "line 1: field step: must be an integer, got 'x'"),
    ],
)
def test_bad_metrics_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture, content: str, message: str
) -> None:
    (tmp_path / "metrics.1.0.jsonl").write_text(content)
    assert main([str(tmp_path), "--out", str(tmp_path / "r.html")]) == 2
    err = capsys.readouterr().err
    assert err == f"error: {tmp_path / 'metrics.1.0.jsonl'}: {message}\n"
    assert main([str(tmp_path / "nothing"), "--out", str(tmp_path / "r.html")]) == 2
    assert "no such run directory or metrics file" in capsys.readouterr().err
    (tmp_path / "empty").mkdir()
    assert main([str(tmp_path / "empty"), "--out", str(tmp_path / "r.html")]) == 2
    assert "no per-step metrics (metrics*.jsonl) and no evaluation results" in capsys.readouterr().err


def test_two_runs_with_one_name_are_refused(two_runs: tuple[Path, Path], capsys: pytest.CaptureFixture) -> None:
    assert main([f"x={two_runs[0]}", f"x={two_runs[1]}"]) == 2
    assert capsys.readouterr().err == "error: two runs are named 'x': name them with NAME=PATH\n"


def _chromium(args: list[str]) -> str:
    command = [str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def _distinct_colours(path: Path) -> int:
    from matplotlib import image

    pixels = image.imread(path)
    return len({tuple(p) for p in pixels.reshape(-1, pixels.shape[-1])[::37].round(3).tolist()})


def test_curriculum_panel_also_reads_the_metric_under_its_old_name() -> None:
    from rlif.report.plots import PANELS as PLOT_PANELS

    curriculum = next(panel for panel in PLOT_PANELS if panel.slug == "curriculum")
    assert curriculum.selects("sampler/newest_interval/logicif") and curriculum.selects("sampler/level/logicif")
    assert not curriculum.selects("sampler/gate_ema/logicif")


def test_a_torn_last_line_is_skipped_with_a_warning(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    """A writer killed mid-line (a job's time limit) leaves half a record at the end: skipped, named, not fatal."""
    whole = "".join(json.dumps({"step": s, "data": {"critic/score/mean": 0.1 * s}}) + "\n" for s in (1, 2))
    metrics = tmp_path / "metrics.1.0.jsonl"
    metrics.write_text(whole + '{"step": 3, "data": {"critic/sco')
    (run,) = load_runs([str(tmp_path)])
    assert sorted(run.steps) == [1, 2]
    assert capsys.readouterr().err == (
        f"warning: {metrics}: line 3 is cut short (its writer was stopped mid-line); skipped\n"
    )
    metrics.write_text('{"step": 1, "da\n' + whole)  # not the last line: a real error
    with pytest.raises(ValueError, match=r"line 1: "):
        load_runs([str(tmp_path)])


def test_an_evaluation_step_comes_from_its_record_not_from_path_digits(tmp_path: Path) -> None:
    run = tmp_path / "2026" / "runs" / "r"
    (run / "final").mkdir(parents=True)
    (run / "final" / "metrics.json").write_text(json.dumps({"step": 40, "metrics": {"ifeval/acc": 0.5}}))
    (run / "7").mkdir()
    (run / "7" / "metrics.json").write_text(json.dumps({"metrics": {"ifeval/acc": 0.4}}))
    (run / "plain").mkdir()
    (run / "plain" / "metrics.json").write_text(json.dumps({"metrics": {"ifeval/acc": 0.3}}))
    (loaded,) = load_runs([str(run)])
    assert sorted((e.step is None, e.step) for e in loaded.evals) == [(False, 7), (False, 40), (True, None)]

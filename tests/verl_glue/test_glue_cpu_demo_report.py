"""What the CPU demo shows while it runs and at the end, from a recorded run (no verl run needed).

``recorded/`` holds both phases of one ``python -m rlif.cpu_demo`` run on verl 0.9.1: every log line with a progress
marker plus every 25th other line (paths shortened), and the two metrics JSONL files verl's file logger wrote.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from rlif import cpu_demo
from rlif.cpu_demo import judge_summary, parse_progress, read_metrics, summarise

RECORDED = Path(__file__).parent / "recorded"


def statuses(log: Path, total: int) -> list[str]:
    """The distinct progress lines a reader polling the log line by line would show, in order."""
    lines = log.read_text(encoding="utf-8").splitlines(keepends=True)
    shown: list[str] = []
    for end in range(len(lines) + 1):
        line = parse_progress("".join(lines[:end]), total).line(1, 0)
        if not shown or line != shown[-1]:
            shown.append(line)
    return [line.split("] ", 1)[1] for line in shown]


def test_first_phase_reports_every_stage_and_step():
    rollout = "rollout of step {}: vLLM generates, rlif scores, the sampler gets feedback"
    assert statuses(RECORDED / "phase1.log", 2) == [
        "step 0/2 done, waiting for: Ray to start",
        "step 0/2 done, waiting for: verl's config and dataset",
        "step 0/2 done, waiting for: the FSDP actor and reference workers",
        "step 0/2 done, waiting for: the reward workers and the vLLM rollout server",
        "step 0/2 done, waiting for: the vLLM rollout server (CPU build: about a minute)",
        f"step 0/2 done, waiting for: {rollout.format(1)}",
        "step 0/2 done, waiting for: the step-1 checkpoint to be written",
        f"step 1/2 done, waiting for: {rollout.format(2)}",
        "step 1/2 done, waiting for: the step-2 checkpoint to be written",
        "step 2/2 done, waiting for: Ray to shut down",
    ]


def test_resumed_phase_counts_from_the_checkpoint():
    shown = statuses(RECORDED / "phase2.log", 3)
    assert shown[0] == "step 0/3 done, waiting for: Ray to start"
    assert "step 2/3 done, waiting for: the step-3 checkpoint to be written" in shown
    assert shown[-1] == "step 3/3 done, waiting for: Ray to shut down"
    assert not any(line.startswith("step 1/3") for line in shown)


def test_colour_codes_do_not_hide_markers():
    text = "\x1b[36m(TaskRunnerV1 pid=1)\x1b[0m step:1 - train/iftrain/reward_mean:0.5 - x:1\n"
    assert parse_progress(text, 2).done == 1


def test_summary_prints_per_source_rewards_and_sampler_metrics():
    steps = read_metrics(RECORDED / "metrics_phase1.jsonl")
    steps.update(read_metrics(RECORDED / "metrics_phase2.jsonl"))
    lines = summarise(steps)
    assert lines[:6] == [
        "reward per step (mean reward per data source, responses in brackets):",
        "step  score  grad norm  graph/tsp  iftrain",
        "----  -----  ---------  ---------  ---------",
        "1     0.250  1.119      0.00 (4)   0.33 (12)",
        "2     0.250  1.317      0.00 (4)   0.33 (12)",
        "3     0.500  1.066      -          0.50 (16)",
    ]
    assert lines[6] == "sampler after step 3 (weights and cumulative draws per data source):"
    table = {line.split()[0]: line.split()[1:] for line in lines[9:15]}
    assert table["iftrain"] == ["0.615", "10"] and table["graph/tsp"] == ["0.077", "2"]
    assert sum(int(row[1]) for row in table.values()) == 12  # 4 prompts per step, 3 steps
    assert lines[-1] == "other sampler metrics: sampler/ignored_records=0"


def test_summary_shows_the_judged_source_per_step_and_the_buffer_s_no_verdict_metrics():
    judged = {
        "train/judge/demo/reward_mean": 0.3125,
        "train/judge/demo/count": 6.0,
        "train/judge/demo/judge_gated": 0.25,
        "train/judge/demo/judge_no_verdict": 0.125,
        "sampler/no_verdict/rate": 0.125,
        "sampler/no_verdict/dropped_responses": 1.0,
        "sampler/no_verdict/dropped_groups": 0.0,
        "sampler/weight/judge/demo": 0.5,
        "exposure/cum_prompts/judge/demo": 2.0,
    }
    steps = {1: {"train/iftrain/reward_mean": 0.5, "train/iftrain/count": 8.0}, 2: judged}
    assert judge_summary(steps) == [
        "judge per step (share of the source's responses; reward the sampler got, responses in brackets):",
        "step  source      judged  gated  no verdict  sampler reward  buffer no-verdict  dropped",
        "----  ----------  ------  -----  ----------  --------------  -----------------  -------",
        "2     judge/demo  0.62    0.25   0.12        0.312 (6)       0.12               1",
    ]
    lines = summarise(steps)
    assert lines[-4:] == judge_summary(steps)  # last, after the exposure table
    assert lines[-8].startswith("exposure after step 2")
    assert not any(line.startswith("other sampler metrics") for line in lines)  # shown in the judge table instead


def test_summary_shows_a_reasoning_gym_source_as_any_other():
    """Its reward column per step (``-`` where not drawn), its weight and draws, its exposure; no judge table. Its
    numbers are those of the slow demo test's run (steps 1 and 3 drew the source)."""
    source = "reasoning_gym/family_relationships"
    drawn = {f"train/{source}/reward_mean": 0.0, f"train/{source}/count": 4.0}
    drawn[f"train/{source}/reasoning_gym_answered"] = 0.0
    last = {**drawn, f"sampler/weight/{source}": 0.19, f"sampler/draws/{source}/0": 2.0}
    last[f"exposure/cum_prompts/{source}"] = 2.0
    steps = {1: drawn, 2: {"train/iftrain/reward_mean": 0.5, "train/iftrain/count": 16.0}, 3: last}
    lines = summarise(steps)
    assert lines[1].split() == ["step", "score", "grad", "norm", "iftrain", source]
    assert [line.split() for line in lines[3:6]] == [  # step, score, grad norm, iftrain, the source
        ["1", "-", "-", "-", "0.00", "(4)"],
        ["2", "-", "-", "0.50", "(16)", "-"],
        ["3", "-", "-", "-", "0.00", "(4)"],
    ]
    assert lines[6:10] == [
        "sampler after step 3 (weights and cumulative draws per data source):",
        "source                              weight  draws",
        "----------------------------------  ------  -----",
        f"{source}  0.190   2",
    ]
    assert lines[10].startswith("exposure after step 3") and lines[-1].startswith(source)
    assert judge_summary(steps) == []


def test_summary_of_a_run_that_logged_nothing():
    assert summarise({}) == ["no metrics were logged"]


def test_progress_lines_without_a_terminal(tmp_path, capsys):
    """Piped output (a CI log, `| tee`) gets one dated line whenever the stage changes."""
    log = tmp_path / "phase1.log"
    log.write_text("", encoding="utf-8")
    writer = (
        "import sys, time\n"
        "src, dst = sys.argv[1], sys.argv[2]\n"
        "with open(dst, 'a') as out:\n"
        "    for line in open(src):\n"
        "        out.write(line); out.flush()\n"
        "        if 'step:' in line or 'Started a local Ray' in line: time.sleep(0.3)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", writer, str(RECORDED / "phase1.log"), str(log)])
    cpu_demo._show_progress(child, 1, log, time.monotonic(), 2, poll_s=0.05)
    shown = capsys.readouterr().err.splitlines()
    assert shown[0].startswith("phase 1 [") and "step 0/2 done" in shown[0]
    assert any("step 1/2 done, waiting for: rollout of step 2" in line for line in shown)
    assert len(shown) == len(set(shown)) and len(shown) <= 12


@pytest.mark.parametrize("total", [2, 5])
def test_step_count_never_exceeds_what_the_log_shows(total):
    text = (RECORDED / "phase1.log").read_text(encoding="utf-8")
    assert parse_progress(text, total).done == 2

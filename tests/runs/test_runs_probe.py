"""Probe files: the loader's checks, and the planner taking measured lengths and decode rate over assumed ones."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from rlif.recipes.generate import REPO_ROOT
from rlif.runs.matrix import load_matrix
from rlif.runs.planner import plan_run
from rlif.runs.probe import load_probe

RUN = "slurm_qwen8b_think_if80000_grpo"

PROBE = {
    "model": "Qwen/Qwen3-8B",
    "think": True,
    "caps": [4096, 8192],
    "entries": [
        {
            "source": "ifeval",
            "interval": "all",
            "n_prompts": 300,
            "prompt_tokens_mean": 400,
            "response_tokens": {"mean": 2000, "p50": 1700, "p90": 3900, "p99": 7000},
            "truncation_rate": {"4096": 0.08, "8192": 0.0},
            "pass_rate": 0.7,
            "tokens_per_s": 3000,
        },
        {
            "source": "logicif",
            "interval": "2",
            "n_prompts": 100,
            "prompt_tokens_mean": 800,
            "response_tokens": {"mean": 6000, "p50": 6200, "p90": 8192, "p99": 8192},
            "truncation_rate": {"4096": 0.7, "8192": 0.2},
            "pass_rate": 0.3,
            "tokens_per_s": 1500,
        },
    ],
}


@pytest.fixture(scope="module")
def run():
    return next(r for r in load_matrix(REPO_ROOT / "recipe" / "matrix.yaml").runs if r.name == RUN)


def write(tmp_path, data):
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_measured_lengths_replace_the_assumed_ones(tmp_path, run):
    probe = load_probe(write(tmp_path, PROBE))
    assert probe.caps == (4096, 8192) and probe.entries[1].truncation_rate[8192] == 0.2
    measured, assumed = plan_run(run, REPO_ROOT, probe=probe), plan_run(run, REPO_ROOT)
    # weighted by prompts: (300 x 400 + 100 x 800) / 400; (300 x 2000 + 100 x 6000) / 400
    assert (measured.lengths.prompt, measured.lengths.response) == (500, 3000)
    # tokens over time: 1.2M tokens in 300 x 2000 / 3000 + 100 x 6000 / 1500 = 600 s
    assert measured.lengths.decode_tokens_per_s == pytest.approx(2000)
    assert measured.lengths.source == "measured" and measured.assumed.source == "assumed"
    assert (measured.assumed.prompt, measured.assumed.response) == (assumed.lengths.prompt, assumed.lengths.response)
    assert measured.expected_tokens_per_step == 512 * 8 * 3500
    # the measured rate replaces the decode model at both ends: 512 sequences x 3000 tokens per GPU at 2000 tok/s
    assert measured.fast.parts["generation decode"] == pytest.approx(512 * 3000 / 2000)
    assert measured.slow.parts["generation decode"] == measured.fast.parts["generation decode"]


def test_a_run_cap_below_the_probe_clips_the_mean(tmp_path, run):
    probe = load_probe(write(tmp_path, PROBE))
    short = dataclasses.replace(run, train=dataclasses.replace(run.train, max_response_length=4096))
    assert plan_run(short, REPO_ROOT, probe=probe).lengths.response == (300 * 2000 + 100 * 4096) / 400


BAD = [
    (lambda d: d.pop("model"), r"probe.json: model: missing"),
    (lambda d: d.update(caps=[]), r"probe.json: caps: must be a non-empty list"),
    (lambda d: d["entries"][1]["response_tokens"].pop("p90"), r"entries\[1\].response_tokens.p90: missing"),
    (lambda d: d["entries"][0].update(pass_rate=1.5), r"entries\[0\].pass_rate: must be a number in \[0, 1\]"),
    (lambda d: d["entries"][0]["truncation_rate"].pop("4096"), r"entries\[0\].truncation_rate: needs one rate"),
    (lambda d: d["entries"][0]["response_tokens"].update(p50=5000), r"entries\[0\].response_tokens: percentiles"),
    (lambda d: d["entries"][0].update(n_prompts=0), r"entries\[0\].n_prompts: must be an integer >= 1"),
    (lambda d: d["entries"][1].update(source="ifeval", interval="all"), r"entries\[1\]: source 'ifeval' .* repeats"),
]


@pytest.mark.parametrize(("edit", "message"), BAD)
def test_a_bad_probe_file_is_one_clear_line(tmp_path, edit, message):
    data = copy.deepcopy(PROBE)
    edit(data)
    with pytest.raises(ValueError, match=message) as err:
        load_probe(write(tmp_path, data))
    assert "\n" not in str(err.value)


def test_a_probe_for_another_model_or_a_shorter_cap_is_refused(tmp_path, run):
    other = load_probe(write(tmp_path, {**PROBE, "model": "Qwen/Qwen3-1.7B"}))
    with pytest.raises(ValueError, match=r"probe.json: model: probe is for Qwen/Qwen3-1.7B"):
        plan_run(run, REPO_ROOT, probe=other)
    short = copy.deepcopy(PROBE)
    short["caps"] = [4096]
    for entry in short["entries"]:
        entry["truncation_rate"] = {"4096": 0.5}
        entry["response_tokens"] = {"mean": 2000, "p50": 1700, "p90": 3900, "p99": 4096}
    with pytest.raises(ValueError, match=r"caps: lengths measured at 4096 tokens, run .* allows 8192"):
        plan_run(run, REPO_ROOT, probe=load_probe(write(tmp_path, short)))

"""Probe files: the loader's checks, and the planner taking measured lengths and decode rate over assumed ones."""

from __future__ import annotations

import copy
import dataclasses
import json

import pytest

from rlif.recipes.generate import REPO_ROOT
from rlif.runs.matrix import load_matrix
from rlif.runs.planner import plan_run
from rlif.runs.probe import (
    LengthStats,
    ProbeSample,
    load_probe,
    probe_caps,
    probe_warnings,
    summarize,
    write_probe,
)

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


# ---- the probe job's side of the format: aggregation, weights, warnings ------------------------------------------

CURRICULUM = "stage2_qwen17b_think_ema_rewardCurriculum"


@pytest.fixture(scope="module")
def curriculum_run():
    return load_matrix(REPO_ROOT / "recipe" / "matrix.yaml").select([CURRICULUM])[0]


def sample(source, interval, prompt, tokens, success, *, at_cap=False, prompt_tokens=100):
    return ProbeSample(source, interval, prompt, prompt_tokens, tokens, at_cap, success)


def test_summarize_aggregates_per_source_and_interval_and_round_trips(tmp_path):
    samples = [
        # ifeval: 2 prompts x 2 samples; one response of 9000 tokens passes at 16384, is cut at 8192
        sample("ifeval", "all", "a", 1000, 1.0, prompt_tokens=100),
        sample("ifeval", "all", "a", 9000, 1.0, prompt_tokens=100),
        sample("ifeval", "all", "b", 3000, 0.0, prompt_tokens=300),
        sample("ifeval", "all", "b", 16384, 0.0, at_cap=True, prompt_tokens=300),
        # logicif interval 10 sorts after interval 2
        sample("logicif", "10", "c", 500, 1.0),
        sample("logicif", "2", "d", 8192, 1.0),
    ]
    document = summarize("Qwen/Qwen3-8B", True, [16384, 8192], samples, tokens_per_s=1234.5, rows={
        ("ifeval", "all"): 5000, ("logicif", "2"): 300, ("logicif", "10"): 200})  # fmt: skip
    path = write_probe(tmp_path / "probe" / "run" / "probe.json", document)
    probe = load_probe(path)
    assert probe.caps == (8192, 16384)
    assert [(e.source, e.interval) for e in probe.entries] == [("ifeval", "all"), ("logicif", "2"), ("logicif", "10")]
    ifeval = probe.entries[0]
    assert (ifeval.n_prompts, ifeval.prompt_tokens_mean, ifeval.rows) == (2, 200, 5000)
    assert ifeval.response_tokens == LengthStats(mean=7346, p50=3000, p90=16384, p99=16384)
    # > 8192: 9000 and 16384; at 16384 only the one that stopped at its cap
    assert ifeval.truncation_rate == {8192: 0.5, 16384: 0.25}
    assert ifeval.pass_rate == 0.5 and ifeval.pass_rate_by_cap == {8192: 0.25, 16384: 0.5}
    assert ifeval.tokens_per_s == 1234.5
    # prompt a passes 1 of 2 at the run's cap, b 0 of 2: the clustered variance exceeds the binomial one
    assert ifeval.design_effect > 1
    # a response of exactly the cap that stopped by itself fits
    assert probe.entries[1].truncation_rate[8192] == 0.0 and probe.entries[1].pass_rate_by_cap[8192] == 1.0
    assert not list(path.parent.glob("*.check"))


def test_a_document_the_loader_refuses_is_not_written(tmp_path):
    document = summarize("m", True, [8], [sample("s", "all", "a", 4, 1.0)], tokens_per_s=1.0)
    document["entries"][0]["pass_rate"] = 2.0
    with pytest.raises(ValueError, match=r"entries\[0\].pass_rate: must be a number in \[0, 1\]"):
        write_probe(tmp_path / "probe.json", document)
    assert not list(tmp_path.iterdir())


def test_rows_weigh_the_entries_when_given(tmp_path, run):
    data = copy.deepcopy(PROBE)
    data["entries"][0]["rows"], data["entries"][1]["rows"] = 100, 300  # the inverse of the prompt counts
    measured = plan_run(run, REPO_ROOT, probe=load_probe(write(tmp_path, data)))
    assert (measured.lengths.prompt, measured.lengths.response) == (700, 5000)
    data["entries"][1].pop("rows")
    with pytest.raises(ValueError, match=r"entries\[1\].rows: give rows for every entry or for none"):
        load_probe(write(tmp_path, data))


def test_probe_caps_follow_the_run_and_the_model_context(run):
    assert probe_caps(run, 40960) == (8192, 32768)
    assert probe_caps(run, 20000) == (8192, 20000 - run.train.max_prompt_length)
    assert probe_caps(run, 0) == (8192, 32768)
    assert probe_caps(run, 8192 + run.train.max_prompt_length) == (8192,)


def test_truncation_above_the_threshold_warns_one_line_per_entry(tmp_path, run):
    lines = probe_warnings(run, load_probe(write(tmp_path, PROBE)))
    # logicif interval 2 is cut at 8192 in 20 % of its responses; ifeval's 8 % is at the shorter cap, below the run's
    assert lines == [
        f"{RUN}: logicif interval 2: truncation 20.0% at the 8192-token response cap exceeds 10% "
        f"({tmp_path / 'probe.json'}); a truncated response scores as wrong, so the reward mostly teaches shorter "
        "responses: raise train.max_response_length or set train.overlong"
    ]
    assert probe_warnings(run, load_probe(write(tmp_path, PROBE)), truncation_threshold=0.25) == []


def curriculum_probe(tmp_path, first_pass, design_effect=1.0):
    data = copy.deepcopy(PROBE)
    data["model"] = "Qwen/Qwen3-1.7B"
    data["caps"] = [8192, 32768]
    for entry in data["entries"]:
        entry["truncation_rate"] = {"8192": 0.0, "32768": 0.0}
    first = copy.deepcopy(data["entries"][1])
    first.update(interval="0", pass_rate=0.9, pass_rate_by_cap={"8192": first_pass, "32768": 0.9})
    first["design_effect"] = design_effect
    data["entries"].append(first)
    return load_probe(write(tmp_path, data))


def test_a_gate_that_would_open_at_its_first_check_warns(tmp_path, curriculum_run):
    params = curriculum_run.sampler.params
    assert params["curriculum_sources"] == ["logicif"] and params["threshold"] == 0.5
    lines = probe_warnings(curriculum_run, curriculum_probe(tmp_path, first_pass=0.6))
    assert len(lines) == 1
    line = lines[0]
    assert line.startswith(f"{curriculum_run.name}: logicif interval 0: measured pass rate 60.0% gives the gate's 95%")
    assert "> threshold 0.5 at its first check (update 12)" in line  # min_updates 10, checked every 3
    assert probe_warnings(curriculum_run, curriculum_probe(tmp_path, first_pass=0.45)) == []
    # responses clustered by prompt: the same rate carries less evidence, and the bound falls below the threshold
    assert probe_warnings(curriculum_run, curriculum_probe(tmp_path, first_pass=0.51, design_effect=1.0)) != []
    assert probe_warnings(curriculum_run, curriculum_probe(tmp_path, first_pass=0.51, design_effect=400.0)) == []


def test_runs_without_a_reward_gate_get_no_gate_warning(tmp_path, curriculum_run):
    plain = dataclasses.replace(
        curriculum_run, sampler=dataclasses.replace(curriculum_run.sampler, name="uniform", params={})
    )
    assert probe_warnings(plain, curriculum_probe(tmp_path, first_pass=0.99)) == []


def test_warnings_refuse_a_probe_of_another_thinking_mode(tmp_path, run):
    with pytest.raises(ValueError, match=r"probe.json: think: probe has False, run .* has True"):
        probe_warnings(run, load_probe(write(tmp_path, {**PROBE, "think": False})))

"""The probe job's entry (``rlif.eval.probe``): stratification by the run's sampler intervals, rollout sampling,
scoring with the run's rewards, the probe file it writes, resuming, and one-line errors. The engine is a fake here;
``test_eval_probe_vllm.py`` runs vLLM's CPU build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_testkit import verl_file
from run_matrices import with_shipped_defaults

from rlif.demo_assets import demo_rows
from rlif.eval.eval_rows import load_eval_rows
from rlif.eval.generation import Completion
from rlif.eval.probe import build_parser, main, rollout_sampling, run_probe, stratify
from rlif.runs.matrix import load_matrix
from rlif.runs.probe import load_probe

RUN = "probe_demo"


def write_matrix(tmp_path: Path, train_file: Path, sampler: str) -> Path:
    matrix = tmp_path / "matrix.yaml"
    matrix.write_text(
        with_shipped_defaults(
            f"runs:\n  - name: {RUN}\n    stage: test\n    description: probe on the demo data\n"
            "    model: Qwen/Qwen3-1.7B\n"
            f"    train_files: [{train_file}]\n"
            "    train: {max_response_length: 8, max_prompt_length: 1000, rollout_n: 2, temperature: 0.9}\n"
            f"    sampler: {sampler}\n"
        ),
        encoding="utf-8",
    )
    return matrix


CURRICULUM = (
    "{name: reward_curriculum, params: {curriculum_sources: [logicif], initial_fraction: 0.25, num_intervals: 3}}"
)


@pytest.fixture
def demo(tmp_path):
    train = verl_file(tmp_path / "train.parquet", demo_rows("train"))
    return train, write_matrix(tmp_path, train, CURRICULUM)


class FakeEngine:
    """Responses of a length fixed by the prompt's id: some stop early, some reach the longer cap."""

    def __init__(self, sampling):
        self.sampling = sampling
        self.calls = 0

    def generate(self, requests):
        self.calls += 1
        out = []
        for request in requests:
            long = request.row.item_id.endswith(("0", "2"))
            tokens = self.sampling.max_tokens if long else 5
            reason = "length" if long else "stop"
            out.append([Completion("no answer", reason, tokens) for _ in range(request.n)])
        return out


def fake_ids(model, rows, think):
    return {row.item_id: [1] * (len(row.prompt) // 4 + 10) for row in rows}


def probe_args(matrix: Path, out: Path, *extra: str):
    return build_parser().parse_args(["--matrix", str(matrix), "--run", RUN, "--model", "Qwen/Qwen3-1.7B",
                                      "--out", str(out), *extra])  # fmt: skip


def test_strata_are_the_run_samplers_intervals(demo):
    train, matrix = demo
    run = load_matrix(matrix).select([RUN])[0]
    rows = load_eval_rows([train])
    strata = stratify(rows, run, per_interval=1, seed=0, where=str(train))
    keys = [(s.source, s.interval) for s in strata]
    # logicif's 4 rows: 1 in the initial interval, then 3 intervals of one row; every other source whole
    graphs = [(f"graph/{task}", "all") for task in ("mcp", "mis", "mvc", "tsp")]
    logicif = [("logicif", str(interval)) for interval in range(4)]
    assert keys == [*graphs, ("iftrain", "all"), *logicif]
    assert [s.rows for s in strata] == [1, 1, 1, 1, 6, 1, 1, 1, 1]
    assert all(len(s.chosen) == 1 for s in strata)
    # the same seed draws the same prompts; another seed may draw others from the 6 iftrain rows
    again = stratify(rows, run, per_interval=1, seed=0, where=str(train))
    assert [s.chosen for s in again] == [s.chosen for s in strata]
    assert len({stratify(rows, run, 1, seed, str(train))[4].chosen[0].item_id for seed in range(20)}) > 1
    with pytest.raises(ValueError, match="--prompts-per-interval 0"):
        stratify(rows, run, per_interval=0, seed=0, where=str(train))


def test_a_row_without_its_difficulty_is_named(tmp_path, capsys):
    rows = demo_rows("train")
    logicif = next(r for r in rows if r["data_source"] == "logicif")
    logicif["extra_info"] = {k: v for k, v in logicif["extra_info"].items() if k != "difficulty"}
    train = verl_file(tmp_path / "train.parquet", rows)
    matrix = write_matrix(tmp_path, train, CURRICULUM)
    code = main(["--matrix", str(matrix), "--run", RUN, "--model", "m", "--out", str(tmp_path / "o")])
    assert code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {train}: row 6 field extra_info.difficulty is missing (source 'logicif')")
    assert err.count("\n") == 1


def test_rollout_sampling_is_the_runs(demo):
    run = load_matrix(demo[1]).select([RUN])[0]
    sampling = rollout_sampling(run, 32, seed=3)
    assert (sampling.think, sampling.n, sampling.temperature, sampling.top_p, sampling.top_k) == (True, 2, 0.9, 1.0, -1)
    assert sampling.max_tokens == 32


def test_probe_writes_a_file_the_planner_reads_and_resumes(demo, tmp_path, capsys):
    _, matrix = demo
    out = tmp_path / "probe" / RUN
    engines = []

    def factory(model, sampling, token_ids, args):
        engines.append(FakeEngine(sampling))
        return engines[-1]

    path = run_probe(probe_args(matrix, out, "--prompts-per-interval", "3"), factory, fake_ids)
    assert path == out / "probe.json"
    probe = load_probe(path)
    assert (probe.model, probe.think, probe.caps) == ("Qwen/Qwen3-1.7B", True, (8, 32))
    iftrain = next(e for e in probe.entries if e.source == "iftrain")
    assert (iftrain.n_prompts, iftrain.rows) == (3, 6)
    assert engines[0].sampling.max_tokens == 32 and engines[0].sampling.n == 2
    # every long response stopped at the longer cap: truncated at both caps
    long_share = iftrain.truncation_rate[32]
    assert iftrain.truncation_rate[8] == long_share and 0 < long_share < 1
    assert iftrain.response_tokens.p99 == 32
    # a response cut at the run's cap counts as wrong there: the pass rate can only fall with the cap
    assert iftrain.pass_rate_by_cap[8] <= iftrain.pass_rate_by_cap[32] == iftrain.pass_rate
    timing = json.loads((out / "timing.json").read_text())
    assert timing["tokens"] > 0 and timing["gpus"] == 1
    err = capsys.readouterr().err
    assert "iftrain interval all: 3 of 6 rows" in err and "warning: probe_demo: iftrain interval all: truncation" in err

    before = path.read_bytes()
    run_probe(probe_args(matrix, out, "--prompts-per-interval", "3"), factory, fake_ids)
    assert len(engines) == 1  # nothing left to generate: no engine started
    assert "already have 2 samples" in capsys.readouterr().err
    assert json.loads(path.read_bytes())["entries"] == json.loads(before)["entries"]


def test_other_sampling_in_the_same_directory_is_one_line(demo, tmp_path):
    _, matrix = demo
    out = tmp_path / "o"
    factory = lambda model, sampling, ids, args: FakeEngine(sampling)  # noqa: E731
    assert run_probe(probe_args(matrix, out, "--prompts-per-interval", "1"), factory, fake_ids)
    with pytest.raises(ValueError, match=r"generation.json: the responses here were generated with seed=0"):
        run_probe(probe_args(matrix, out, "--prompts-per-interval", "1", "--seed", "5"), factory, fake_ids)


def test_unknown_run_and_missing_file_are_one_line(demo, tmp_path, capsys):
    _, matrix = demo
    assert main(["--matrix", str(matrix), "--run", "nope", "--model", "m", "--out", str(tmp_path / "o")]) == 2
    assert capsys.readouterr().err.startswith("error: unknown run(s) ['nope']")
    assert main(["--matrix", str(tmp_path / "none.yaml"), "--run", RUN, "--model", "m"]) == 2
    assert "none.yaml: file not found" in capsys.readouterr().err

"""Evaluation by generation without vLLM: the sampling each run gets, the resume logic of the responses log, and
the whole ``generate`` command on a fake engine (interrupted, resumed, grown, refused)."""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path

import pytest
from eval_testkit import read_jsonl, verl_file

from rlif.demo_assets import build_tokenizer, demo_rows
from rlif.eval.cli import main
from rlif.eval.eval_rows import EvalRow, load_eval_rows
from rlif.eval.generation import LOCK_FILE, Completion, Request, logged_samples, open_log, pending_requests
from rlif.eval.metrics import lower_is_better
from rlif.eval.model_source import locate_model
from rlif.eval.sampling import choose_sampling, request_seed
from rlif.eval.vllm_engine import prompt_token_ids
from rlif.hub.merge import MergeResult
from rlif.runs.matrix import load_matrix

MATRIX = Path(__file__).resolve().parents[2] / "recipe" / "matrix.yaml"


def _run(name: str):
    return load_matrix(MATRIX).select([name])[0]


# --- sampling ------------------------------------------------------------------------------------------------------


def test_defaults_are_qwen3_model_card_sampling_per_mode() -> None:
    think = choose_sampling()
    assert (think.think, think.temperature, think.top_p, think.top_k, think.n) == (True, 0.6, 0.95, 20, 1)
    no_think = choose_sampling(think=False)
    assert (no_think.temperature, no_think.top_p, no_think.top_k) == (0.7, 0.8, 20)
    assert no_think.origin["think"] == "option" and no_think.origin["temperature"] == "defaults"


def test_a_run_gives_its_mode_validation_sampling_and_length() -> None:
    run = _run("slurm_qwen17b_nothink_if80000_grpo")
    chosen = choose_sampling(run)
    assert chosen.think is False
    assert (chosen.temperature, chosen.top_p, chosen.top_k) == (0.7, 0.8, 20)
    assert chosen.max_tokens == run.train.max_response_length
    assert chosen.origin["temperature"] == f"run {run.name}"
    llama = choose_sampling(_run("graph_llama31_8b_instruct_best"))
    assert (llama.think, llama.temperature, llama.top_p, llama.top_k) == (False, 0.6, 0.9, -1)


def test_explicit_values_win_and_thinking_switches_the_recommendation() -> None:
    run = _run("slurm_qwen17b_nothink_if80000_grpo")
    chosen = choose_sampling(run, think=True, top_k=5, n=4, max_tokens=100)
    assert (chosen.think, chosen.temperature, chosen.top_p, chosen.top_k) == (True, 0.6, 0.95, 5)
    assert (chosen.n, chosen.max_tokens) == (4, 100)
    assert chosen.origin["top_k"] == "option" and chosen.origin["top_p"] == f"run {run.name}"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "--n 0: need at least one sample"),
        ({"max_tokens": 0}, "--max-tokens 0"),
        ({"temperature": -0.1}, "--temperature -0.1: must be >= 0"),
        ({"top_p": 0.0}, "--top-p 0.0: must be in (0, 1]"),
        ({"top_k": -2}, "--top-k -2"),
    ],
)
def test_settings_out_of_range_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        choose_sampling(**kwargs)


def test_request_seed_depends_on_prompt_and_first_sample_only() -> None:
    assert request_seed(0, "ifeval:1", 0) == request_seed(0, "ifeval:1", 0)
    seeds = {request_seed(0, "ifeval:1", 0), request_seed(0, "ifeval:1", 2), request_seed(0, "ifeval:2", 0)}
    assert len(seeds) == 3 and request_seed(1, "ifeval:1", 0) not in seeds
    assert all(0 <= seed < 2**31 for seed in seeds)


# --- the responses log ---------------------------------------------------------------------------------------------


def _line(item_id: str, sample: int, response: str = "x") -> str:
    return json.dumps({"id": item_id, "sample": sample, "response": response}) + "\n"


def _rows(n: int) -> list[EvalRow]:
    return [
        EvalRow(f"r{i}", "ifeval", "p", "{}", {}, f"f: row {i}", ({"role": "user", "content": "p"},)) for i in range(n)
    ]


def test_pending_skips_finished_prompts_and_asks_only_for_missing_samples(tmp_path: Path) -> None:
    log_path = tmp_path / "responses.jsonl"
    log_path.write_text(_line("r0", 0) + _line("r0", 1) + _line("r1", 0))
    requests = pending_requests(_rows(3), open_log(log_path), choose_sampling(n=2))
    assert [(r.row.item_id, r.first_sample, r.n) for r in requests] == [("r1", 1, 1), ("r2", 0, 2)]
    assert requests[0].seed == request_seed(0, "r1", 1)


def test_a_torn_last_line_is_dropped_and_its_prompt_generated_again(tmp_path: Path) -> None:
    log_path = tmp_path / "responses.jsonl"
    whole = _line("r0", 0) + _line("r0", 1)
    log_path.write_text(whole + _line("r1", 0)[:-9])
    log = open_log(log_path)
    assert log.repaired == len(_line("r1", 0)) - 9
    assert log_path.read_text() == whole
    assert [r.row.item_id for r in pending_requests(_rows(2), log, choose_sampling(n=2))] == ["r1"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json\n", "line 2: not valid JSON"),
        ('{"id": "r1", "sample": -1, "response": "x"}\n', "line 2: field sample: must be an integer >= 0"),
        ('{"id": "r1", "sample": 0}\n', "line 2: field response: must be a string"),
        (_line("r0", 0), "line 2: sample 0 of 'r0' repeats line 1"),
    ],
)
def test_a_corrupt_complete_line_stops_with_its_line_named(tmp_path: Path, line: str, message: str) -> None:
    log_path = tmp_path / "responses.jsonl"
    log_path.write_text(_line("r0", 0) + line + _line("r2", 0))
    with pytest.raises(ValueError, match=f"responses.jsonl: {message}"):
        open_log(log_path)


def test_scoring_takes_the_first_n_samples_and_refuses_unfinished_prompts(tmp_path: Path) -> None:
    log_path = tmp_path / "responses.jsonl"
    log_path.write_text(_line("r0", 0, "a") + _line("r0", 1, "b") + _line("r0", 2, "c") + _line("r1", 0))
    log = open_log(log_path)
    samples = logged_samples(_rows(1), log, 2)
    assert [(s.response, s.sample, s.line) for s in samples] == [("a", 0, 1), ("b", 1, 2)]
    with pytest.raises(ValueError, match="'r1' has 1 of its 2 samples: run the generation again"):
        logged_samples(_rows(2), log, 2)


# --- the command on a fake engine ----------------------------------------------------------------------------------


class FakeEngine:
    """Answers every request with numbered texts; can stop (as a preemption would) after some calls."""

    def __init__(self, calls: list[list[tuple[str, int, int]]], stop_after: int | None = None) -> None:
        self.calls = calls
        self.stop_after = stop_after

    def generate(self, requests: Sequence[Request]) -> list[list[Completion]]:
        if self.stop_after is not None and len(self.calls) >= self.stop_after:
            raise KeyboardInterrupt
        self.calls.append([(r.row.item_id, r.first_sample, r.n) for r in requests])
        return [
            [
                Completion(f"answer {r.row.item_id} #{r.first_sample + i}", "length" if i else "stop", 7)
                for i in range(r.n)
            ]
            for r in requests
        ]


def _factory(calls: list, stop_after: int | None = None, seen: list | None = None):
    def make(model: str, sampling, rows, args) -> FakeEngine:
        if seen is not None:
            seen.append((model, sampling, [row.item_id for row in rows]))
        return FakeEngine(calls, stop_after)

    return make


def _never(*_args) -> FakeEngine:
    raise AssertionError("no engine should start when every prompt is done")


@pytest.fixture
def eval_file(tmp_path: Path) -> Path:
    return verl_file(tmp_path / "val.parquet", demo_rows("val"))


def _model_dir(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    (model / "config.json").write_text("{}")
    return model


def test_generate_interrupted_resumes_and_scores_every_sample(tmp_path: Path, eval_file: Path, capsys) -> None:
    out, model = tmp_path / "out", _model_dir(tmp_path)
    argv = ["generate", "--model", str(model), "--eval-file", str(eval_file), "--out", str(out), "--n", "2",
            "--chunk-prompts", "4", "--no-think"]  # fmt: skip
    item_ids = [row.item_id for row in load_eval_rows([eval_file])]
    calls: list = []
    assert main(argv, _factory(calls, stop_after=1)) == 130  # Ctrl-C: "interrupted", no traceback
    assert capsys.readouterr().err.endswith("\ninterrupted\n")
    assert len(read_jsonl(out / "responses.jsonl")) == 8  # the first chunk only, all of it
    seen: list = []
    assert main(argv, _factory(calls, seen=seen)) == 0
    assert seen[0][2] == item_ids[4:]  # the engine is asked only for the prompts not on disk
    assert [ids for call in calls for ids, _, _ in call] == item_ids
    assert seen[0][1].think is False and seen[0][1].temperature == 0.7
    records = read_jsonl(out / "samples.jsonl")
    assert [(r["id"], r["sample"]) for r in records] == [(i, s) for i in item_ids for s in (0, 1)]
    assert records[1]["response"] == f"answer {item_ids[0]} #1" and records[1]["finish_reason"] == "length"
    assert records[0]["response_tokens"] == 7 and "score" in records[0] and "acc" in records[0]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["sampling"]["n"] == 2 and metrics["model"] == str(model.resolve())
    assert metrics["metrics"]["ifeval/truncated_rate"] == 0.5
    assert "ifeval/pass@2" in metrics["metrics"]
    before = (out / "responses.jsonl").read_bytes()
    assert main(argv, _never) == 0
    assert (out / "responses.jsonl").read_bytes() == before
    assert f"{len(item_ids)} of {len(item_ids)} prompts already have 2 samples" in capsys.readouterr().err


def test_a_larger_n_asks_only_for_the_extra_samples(tmp_path: Path, eval_file: Path) -> None:
    out, model = tmp_path / "out", _model_dir(tmp_path)
    argv = ["generate", "--model", str(model), "--eval-file", str(eval_file), "--out", str(out)]
    calls: list = []
    assert main([*argv, "--n", "1"], _factory(calls)) == 0
    assert main([*argv, "--n", "3"], _factory(calls)) == 0
    assert {(first, n) for _, first, n in calls[-1]} == {(1, 2)}
    assert len(read_jsonl(out / "samples.jsonl")) == 3 * len(load_eval_rows([eval_file]))
    assert main([*argv, "--n", "2"], _never) == 0  # fewer: the first two of each prompt are scored
    assert {r["sample"] for r in read_jsonl(out / "samples.jsonl")} == {0, 1}


def test_other_sampling_or_model_in_the_same_directory_is_refused(tmp_path: Path, eval_file: Path, capsys) -> None:
    out, model = tmp_path / "out", _model_dir(tmp_path)
    argv = ["generate", "--model", str(model), "--eval-file", str(eval_file), "--out", str(out)]
    assert main(argv, _factory([])) == 0
    capsys.readouterr()
    assert main([*argv, "--temperature", "0.9"], _never) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"error: {out / 'generation.json'}: the responses here were generated with temperature=0.6, this run asks "
        f"for temperature=0.9; use another --out (or delete {out / 'responses.jsonl'} to start afresh)"
    )
    other = tmp_path / "other_model"
    other.mkdir()
    (other / "config.json").write_text("{}")
    assert main(["generate", "--model", str(other), "--eval-file", str(eval_file), "--out", str(out)], _never) == 2
    assert "generated with model=" in capsys.readouterr().err


def _checkpoint(run_dir: Path, step: int, complete: bool = True) -> Path:
    actor = run_dir / f"global_step_{step}" / "actor"
    (actor / "huggingface").mkdir(parents=True)
    (actor / "fsdp_config.json").write_text(json.dumps({"world_size": 1}))
    (actor / "huggingface" / "config.json").write_text("{}")
    (actor / "huggingface" / "tokenizer.json").write_text("{}")
    if complete:
        # torch.save's archive layout: publishing and evaluation accept only whole archives as shards
        shard = actor / "model_world_size_1_rank_0.pt"
        with zipfile.ZipFile(shard, "w") as archive:
            archive.writestr(f"{shard.stem}/data.pkl", b"\x80\x02}q\x00.")
            archive.writestr(f"{shard.stem}/version", b"3\n")
    return actor


def test_checkpoints_are_located_by_run_step_or_actor_directory(tmp_path: Path) -> None:
    run_dir = tmp_path / "checkpoints" / "rlif" / "my_run"
    _checkpoint(run_dir, 10)
    actor = _checkpoint(run_dir, 20)
    _checkpoint(run_dir, 30, complete=False)
    for name, step in ((run_dir, None), (actor, None), (actor.parent, None), (run_dir, 20)):
        source = locate_model(str(name), step=step)
        assert source.checkpoint is not None and source.checkpoint.step == 20
        assert source.identity == str(actor.parent.resolve())
    assert locate_model(str(run_dir), step=10).checkpoint.step == 10
    with pytest.raises(ValueError, match="global_step_30 is incomplete"):
        locate_model(str(run_dir), step=30)
    with pytest.raises(ValueError, match=r"--step 10: .* is already global_step_20"):
        locate_model(str(actor), step=10)
    assert locate_model("Qwen/Qwen3-1.7B").identity == "Qwen/Qwen3-1.7B"
    with pytest.raises(ValueError, match="--model nowhere/at/all: no such file or directory"):
        locate_model("nowhere/at/all")
    with pytest.raises(ValueError, match=r"no config\.json and no global_step_N checkpoint here"):
        locate_model(str(tmp_path))


def test_a_finished_checkpoint_evaluation_neither_merges_nor_starts_vllm(
    tmp_path: Path, eval_file: Path, monkeypatch
) -> None:
    run_dir = tmp_path / "checkpoints" / "my_run"
    _checkpoint(run_dir, 20)
    monkeypatch.chdir(tmp_path)
    merged: list = []
    monkeypatch.setattr(
        "rlif.eval.model_source.merge_checkpoint",
        lambda c, python, target_dir: merged.append(c) or MergeResult(c.step_dir / "hf_merged", reused=False),
    )
    seen: list = []
    argv = ["generate", "--model", str(run_dir), "--eval-file", str(eval_file)]
    assert main(argv, _factory([], seen=seen)) == 0
    assert seen[0][0] == str(run_dir / "global_step_20" / "hf_merged") and len(merged) == 1
    assert (tmp_path / "eval" / "my_run" / "20" / "metrics.json").is_file()  # the default --out
    assert main(argv, _never) == 0 and len(merged) == 1


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--run", "no_such_run"], "no_such_run"),
        (["--out", "x"], "--eval-file: no evaluation file given"),
        (["--eval-file", "e.parquet"], "--out: needed for model folder"),
        (["--eval-file", "e.parquet", "--out", "o", "--engine-arg", "enforce_eager"], "--engine-arg 'enforce_eager'"),
    ],
)
def test_user_mistakes_end_with_one_line(tmp_path: Path, monkeypatch, capsys, argv: list, message: str) -> None:
    monkeypatch.chdir(tmp_path)
    _model_dir(tmp_path)
    verl_file(tmp_path / "e.parquet", demo_rows("val")[:1])
    assert main(["generate", "--model", "model", "--matrix", str(MATRIX), *argv], _never) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_prompts_are_rendered_as_verl_renders_them(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(tmp_path / "tok")
    row = EvalRow("a", "ifeval", "hi", "{}", {}, "f: row 0", ({"role": "system", "content": "be brief"},
                                                              {"role": "user", "content": "hi"}))  # fmt: skip
    for think in (True, False):
        ids = prompt_token_ids(tokenizer, [row], think)["a"]
        expected = tokenizer.apply_chat_template(
            [dict(m) for m in row.messages], add_generation_prompt=True, enable_thinking=think, tokenize=True
        )
        expected = expected["input_ids"] if hasattr(expected, "keys") else expected
        assert ids == list(expected)
        text = tokenizer.decode(ids)
        assert text.startswith("<|im_start|>system\nbe brief") and text.endswith(
            "<|im_start|>assistant\n" if think else "<think>\n\n</think>\n\n"
        )


def test_a_prompt_longer_than_the_context_is_named_before_vllm_starts(tmp_path: Path, capsys) -> None:
    model = tmp_path / "model"
    build_tokenizer(model)
    (model / "config.json").write_text("{}")
    eval_file = verl_file(tmp_path / "e.parquet", demo_rows("val")[:2])
    argv = ["generate", "--model", str(model), "--eval-file", str(eval_file), "--out", str(tmp_path / "out"),
            "--max-tokens", "16", "--max-model-len", "20"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith(f"error: {eval_file}: row 0: prompt of ") and err.endswith(
        "tokens + --max-tokens 16 exceeds --max-model-len 20"
    )


def test_truncation_is_a_failure_rate_for_the_report() -> None:
    assert lower_is_better("ifeval/truncated_rate") and not lower_is_better("ifeval/pass@1")


def test_a_second_process_cannot_generate_into_the_same_directory(tmp_path: Path, eval_file: Path, capsys) -> None:
    out, model = tmp_path / "out", _model_dir(tmp_path)
    argv = ["generate", "--model", str(model), "--eval-file", str(eval_file), "--out", str(out)]
    out.mkdir()
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(out / LOCK_FILE)], stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "locked"
        assert main(argv, _never) == 2
        assert (
            capsys.readouterr()
            .err.strip()
            .endswith(f"error: {out}: another evaluation is generating into this directory")
        )
    finally:
        holder.kill()
        holder.wait()
    assert main(argv, _factory([])) == 0


HOLD_LOCK = """
import fcntl, sys, time
handle = open(sys.argv[1], "a")
fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
print("locked", flush=True)
time.sleep(60)
"""


def test_invalid_utf8_in_the_responses_log_names_the_file_and_line(tmp_path: Path) -> None:
    log = tmp_path / "responses.jsonl"
    log.write_bytes(b'{"id": "a", "sample": 0, "response": "ok"}\n{"id": "a", "sample": 1, "response": "\xff"}\n')
    with pytest.raises(ValueError) as info:
        open_log(log)
    assert str(info.value) == f"{log}: line 2: not valid UTF-8 (byte 39 of the line)"

"""The ``judge`` family against a loopback OpenAI-compatible server: verdicts from logprobs or parsed text, the
rule gate, the cache, and the failures (slow, garbage, error, closed port) that must end as "no verdict" within the
timeout, never as a zero reward or a crash."""

from __future__ import annotations

import json
import pickle
import threading
import time

import pytest
from judge_server import JudgeServer, closed_port

import rewards
from rewards.judge import normalize_ground_truth, parse_ground_truth
from rewards.judge.client import JudgeSettings, VerdictCache, parse_verdict, probability_from_logprobs, read_reply

HARD = {"instruction_ids": ["punctuation:no_comma"], "kwargs": [{}]}


def _gt(hard=HARD, soft=(("tone", "cheerful"),)) -> str:
    raw = {"prompt": "Write a note to a friend.", "hard": hard, "soft": [{"kind": k, "constraint": c} for k, c in soft]}
    return normalize_ground_truth(raw, where="test")


def _score(response: str, gt: str, url: str, **kw) -> dict:
    options = {"judge_url": url, "judge_model": "judge-test", "judge_timeout_s": 2.0, "judge_cache_size": 0, **kw}
    return rewards.compute_score("judge/demo", response, gt, None, **options)


def test_probability_from_logprobs_folds_case_and_space() -> None:
    import math

    top = [{"token": " yes", "logprob": math.log(0.3)}, {"token": "No", "logprob": math.log(0.1)}, {"token": "x"}]
    assert probability_from_logprobs(top) == pytest.approx(0.75)
    assert probability_from_logprobs([{"token": "Maybe", "logprob": 0.0}]) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes.", 1.0),
        ("no, it does not", 0.0),
        ("Score: 7", 0.7),
        ("score = 3/4", 0.75),
        ("Score: 12", 1.0),
        ("I am unsure", None),
        ("", None),
        (None, None),
        ("Yesterday", None),
    ],
)
def test_parse_verdict(text, expected) -> None:
    assert parse_verdict(text) == (pytest.approx(expected) if expected is not None else None)


def test_read_reply_prefers_logprobs_and_falls_back_to_text() -> None:
    body = {
        "choices": [
            {
                "message": {"content": "No"},
                "logprobs": {"content": [{"top_logprobs": [{"token": "Yes", "logprob": 0.0}]}]},
            }
        ]
    }
    assert read_reply(json.dumps(body).encode(), use_logprobs=True) == 1.0
    assert read_reply(json.dumps(body).encode(), use_logprobs=False) == 0.0
    assert read_reply(b"not json", use_logprobs=True) is None
    assert read_reply(b'{"choices": []}', use_logprobs=True) is None


def test_ground_truth_checks() -> None:
    gt = _gt()
    rewards.check_row("judge/demo", gt)
    assert parse_ground_truth(gt)[2] == (("tone", "cheerful"),)
    with pytest.raises(ValueError, match="kind must be one of"):
        _gt(soft=(("mood", "x"),))
    with pytest.raises(ValueError, match="neither hard nor soft"):
        _gt(hard=None, soft=())
    with pytest.raises(ValueError, match="unknown"):
        _gt(hard={"instruction_ids": ["no:such_id"], "kwargs": [{}]})


def test_logprob_verdict_is_the_reward_and_requests_logprobs() -> None:
    with JudgeServer(mode="logprobs", p_yes=0.8) as server:
        out = _score("Hello friend! What a lovely day.", _gt(), server.url)
    assert out["score"] == pytest.approx(0.8) and out["judge_probability"] == pytest.approx(0.8)
    assert out["judge_no_verdict"] == 0.0 and out["acc"] == 1.0 and out["reward_error"] == 0.0
    assert server.bodies[0]["logprobs"] is True and server.bodies[0]["max_tokens"] == 1
    assert server.bodies[0]["model"] == "judge-test"
    assert "cheerful" in server.bodies[0]["messages"][0]["content"]


def test_parsed_score_without_logprobs() -> None:
    with JudgeServer(mode="text", text="Score: 3") as server:
        out = _score("Hello friend! What a lovely day.", _gt(), server.url)
        assert out["score"] == pytest.approx(0.3) and out["acc"] == 0.0
        off = _score("Hello friend! Truly.", _gt(), server.url, judge_use_logprobs=False)
    assert off["score"] == pytest.approx(0.3)
    assert "logprobs" not in server.bodies[-1]


def test_rule_gate_skips_the_judge() -> None:
    with JudgeServer() as server:
        out = _score("Hello, friend.", _gt(), server.url)  # a comma breaks the hard constraint
    assert server.requests == 0
    assert out["score"] == 0.0 and out["judge_gated"] == 1.0 and out["judge_no_verdict"] == 0.0
    assert out["judge_rule_fraction"] == 0.0


def test_rules_only_row_needs_no_server() -> None:
    out = _score("Hello friend.", _gt(soft=()), "http://127.0.0.1:9/v1")
    assert out["score"] == 1.0 and out["judge_probability"] is None and out["judge_no_verdict"] == 0.0


@pytest.mark.parametrize("mode", ["garbage", "nonsense", "error"])
def test_bad_replies_are_no_verdict_after_bounded_retries(mode: str) -> None:
    with JudgeServer(mode=mode) as server:
        out = _score("Hello friend.", _gt(), server.url, judge_retries=2)
    assert out["judge_no_verdict"] == 1.0 and out["reward_error"] == 0.0 and out["judge_probability"] is None
    assert server.requests == 3


def test_slow_server_is_no_verdict_within_the_timeout() -> None:
    with JudgeServer(delay_s=3.0) as server:
        start = time.monotonic()
        out = _score("Hello friend.", _gt(), server.url, judge_timeout_s=0.5, judge_retries=3)
        elapsed = time.monotonic() - start
    assert out["judge_no_verdict"] == 1.0
    assert elapsed < 0.5 + 0.3


def test_closed_port_is_no_verdict_quickly() -> None:
    start = time.monotonic()
    out = _score("Hello friend.", _gt(), f"http://127.0.0.1:{closed_port()}/v1", judge_timeout_s=1.0)
    assert out["judge_no_verdict"] == 1.0 and out["reward_error"] == 0.0
    assert time.monotonic() - start < 1.3


def test_cache_keys_on_model_prompt_and_response(tmp_path) -> None:
    with JudgeServer(p_yes=0.6) as server:
        kw = {"judge_cache_size": 16, "judge_cache_dir": str(tmp_path)}
        a = _score("Hello friend.", _gt(), server.url, **kw)
        b = _score("Hello friend.", _gt(), server.url, **kw)
        assert server.requests == 1 and a["score"] == b["score"]
        _score("Hello dear friend.", _gt(), server.url, **kw)
        _score("Hello friend.", _gt(), server.url, **{**kw, "judge_model": "other"})
        assert server.requests == 3
    assert any(tmp_path.rglob("*.json"))
    disk = VerdictCache(0, str(tmp_path))
    settings = JudgeSettings(url=server.url, model="judge-test")
    assert len(disk) == 0
    key = next(tmp_path.rglob("*.json")).stem
    assert disk.get(key) is not None and settings.model == "judge-test"


def test_no_verdicts_are_not_cached() -> None:
    with JudgeServer(mode="garbage") as server:
        kw = {"judge_cache_size": 16, "judge_retries": 0}
        _score("Hi friend.", _gt(), server.url, **kw)
        _score("Hi friend.", _gt(), server.url, **kw)
    assert server.requests == 2


def test_bad_options_fail_naming_them() -> None:
    with pytest.raises(ValueError, match="judge_timeout_s"):
        rewards.check_reward_kwargs({"judge_timeout_s": -1})
    with pytest.raises(ValueError, match="judge_url"):
        rewards.check_reward_kwargs({"judge_url": "127.0.0.1:8000", "judge_model": "m"})
    rewards.check_reward_kwargs({})


def test_settings_pickle_and_entry_runs_off_the_main_thread() -> None:
    settings = JudgeSettings(url="http://127.0.0.1:1/v1", model="m")
    assert pickle.loads(pickle.dumps(settings)) == settings
    results = []
    with JudgeServer(p_yes=0.9) as server:
        thread = threading.Thread(target=lambda: results.append(_score("Hello friend.", _gt(), server.url)))
        thread.start()
        thread.join(5)
    assert results and results[0]["score"] == pytest.approx(0.9)


def test_accuracy_rests_on_judged_samples_only() -> None:
    """A sample the judge never answered carries a placeholder 0: the headline leaves it out, as ``mean_score``
    does, and ``no_verdict_rate`` reports it."""
    from rewards.judge import judge_metrics

    records = [
        {"acc": 1.0, "score": 0.9, "judge_no_verdict": 0.0, "judge_probability": 0.9},
        {"acc": 0.0, "score": 0.2, "judge_no_verdict": 0.0, "judge_probability": 0.2},
        {"acc": 0.0, "score": 0.0, "judge_no_verdict": 1.0},
        {"acc": 0.0, "score": 0.0, "judge_no_verdict": 1.0},
    ]
    metrics = judge_metrics(records)
    assert metrics["accuracy"] == pytest.approx(0.5)
    assert metrics["mean_score"] == pytest.approx(0.55)
    assert metrics["no_verdict_rate"] == pytest.approx(0.5)

"""The CPU demo's stand-in judge: deterministic Yes/No answers with logprobs, read by the judge family's own client,
and the demo's judged rows scored through it (gate first, then the stand-in's probability)."""

from __future__ import annotations

import json
import math
import urllib.request

import pytest

import rewards
from rewards.judge import conversation, parse_ground_truth
from rewards.judge.client import JudgeSettings, ask_all
from rlif.demo_assets import JUDGE_SOURCE, demo_rows, judge_items
from rlif.demo_judge import P_YES_RANGE, STAND_IN_MODEL, StandInJudge, chat_reply, stand_in_probability


def _options(url: str) -> dict[str, object]:
    return {"judge_url": url, "judge_model": STAND_IN_MODEL, "judge_timeout_s": 5.0, "judge_cache_size": 0}


def test_the_probability_is_a_fixed_function_of_the_messages_inside_its_range() -> None:
    messages = [[{"role": "user", "content": f"request {i}"}] for i in range(200)]
    values = [stand_in_probability(m) for m in messages]
    assert values == [stand_in_probability(m) for m in messages]
    assert all(P_YES_RANGE[0] <= p < P_YES_RANGE[1] for p in values)
    assert len(set(values)) == len(values)  # different requests, different answers: a GRPO group is not tied
    assert min(values) < 0.5 < max(values)


def test_a_reply_carries_yes_and_no_in_the_first_token_s_logprobs() -> None:
    reply = json.loads(chat_reply("No", 0.3))
    (choice,) = reply["choices"]
    assert choice["message"]["content"] == "No"
    (first,) = choice["logprobs"]["content"]
    assert first["token"] == "No" and first["logprob"] == pytest.approx(math.log(0.7))
    assert {t["token"]: math.exp(t["logprob"]) for t in first["top_logprobs"]} == pytest.approx({"Yes": 0.3, "No": 0.7})
    assert "logprobs" not in json.loads(chat_reply("Yes"))["choices"][0]


def test_the_family_s_client_reads_the_stand_in_s_probability() -> None:
    conversations = [conversation("Say hi.", f"hi {i}", "tone", "friendly") for i in range(6)]
    with StandInJudge() as judge:
        with_logprobs = ask_all(JudgeSettings(url=judge.url, model=STAND_IN_MODEL, timeout_s=5.0), conversations)
        text_only = JudgeSettings(url=judge.url, model=STAND_IN_MODEL, timeout_s=5.0, use_logprobs=False)
        parsed = ask_all(text_only, conversations)
        with urllib.request.urlopen(judge.url + "/models", timeout=5) as response:
            listing = json.loads(response.read())
    expected = [stand_in_probability(c) for c in conversations]
    assert with_logprobs == pytest.approx(expected)
    assert parsed == [1.0 if p >= 0.5 else 0.0 for p in expected]  # the leading Yes/No, as a text-only judge
    assert judge.requests == 12
    assert [entry["id"] for entry in listing["data"]] == [STAND_IN_MODEL]


def test_the_demo_s_judged_rows_are_gated_then_judged_by_the_stand_in() -> None:
    plain = demo_rows("train")
    rows = demo_rows("train", judge=True)
    added = [row for row in rows if row["data_source"] == JUDGE_SOURCE]
    assert len(rows) == len(plain) + len(added) and len(added) == len(judge_items()) == 3
    assert not any(row["data_source"] == JUDGE_SOURCE for row in plain)
    assert {kind for item in judge_items() for kind, _ in _soft(item.raw_ground_truth)} == {"tone", "content", "style"}
    no_comma, words, ungated = (row["reward_model"]["ground_truth"] for row in added)
    answer = "Thank you so much for the ladder neighbour"
    with StandInJudge() as judge:
        gated = rewards.compute_score(JUDGE_SOURCE, "Thanks, neighbour", no_comma, None, **_options(judge.url))
        asked_before = judge.requests
        judged = rewards.compute_score(JUDGE_SOURCE, answer, no_comma, None, **_options(judge.url))
        short = rewards.compute_score(JUDGE_SOURCE, "Rain falls", words, None, **_options(judge.url))
        always = rewards.compute_score(JUDGE_SOURCE, "Taste as you go.", ungated, None, **_options(judge.url))
    assert gated["judge_gated"] == 1.0 and gated["score"] == 0.0 and asked_before == 0  # the rule check gates
    assert short["judge_gated"] == 1.0
    prompt, _, soft = parse_ground_truth(no_comma)
    expected = [stand_in_probability(conversation(prompt, answer, kind, text)) for kind, text in soft]
    assert judged["judge_probability"] == pytest.approx(sum(expected) / len(expected))
    assert judged["score"] == judged["judge_probability"] and judged["judge_no_verdict"] == 0.0
    assert always["judge_gated"] == 0.0 and always["judge_probability"] is not None


def _soft(raw: dict) -> list[tuple[str, str]]:
    return [(entry["kind"], entry["constraint"]) for entry in raw["soft"]]

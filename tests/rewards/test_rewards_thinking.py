"""Which part of a response is graded: ``rewards.thinking.split_thinking``."""

from __future__ import annotations

import pytest

from rewards.thinking import split_thinking


@pytest.mark.parametrize("response", ["", "  answer  ", "\n\nFirst.\n\nSecond.\n", "no tags at all"])
def test_a_response_without_thinking_is_graded_exactly_as_written(response: str) -> None:
    split = split_thinking(response)
    assert split.answer == response
    assert split.raw == response
    assert not split.think_unclosed


def test_the_answer_after_the_last_think_close_is_stripped() -> None:
    split = split_thinking("<think>a</think>x<think>b</think>\n\n  The answer.\n")
    assert split.answer == "The answer."
    assert not split.think_unclosed


@pytest.mark.parametrize("response", ["<think>still thinking", "<think>a</think>draft<think>again"])
def test_an_unclosed_thinking_section_leaves_no_answer(response: str) -> None:
    split = split_thinking(response)
    assert split.answer == ""
    assert split.think_unclosed

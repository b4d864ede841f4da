"""Separate a response's thinking section from its answer.

Qwen3 thinking models write ``<think> ... </think>`` before the answer. Every scorer grades only the answer, so
this is the one place that decides what "the answer" is. verl decodes responses with ``skip_special_tokens=True``;
``<think>``/``</think>`` are ordinary added tokens in Qwen3 and survive decoding.
"""

from __future__ import annotations

from dataclasses import dataclass

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


@dataclass(frozen=True)
class SplitResponse:
    """A response cut into the part that is graded and a flag for an unfinished thinking section.

    Whitespace is a documented choice (docs/instruction-following.md, "Scoring"). A no-think answer is graded as
    written because the official IFEval/IFBench harness checks the raw response and whitespace changes verdicts
    (``nth_paragraph_first_word`` indexes the unfiltered ``"\\n\\n"`` split, so a leading blank line shifts every
    paragraph). The answer after ``</think>`` is stripped, as open-instruct's verifier does for thinking models:
    Qwen3 always writes ``"\\n\\n"`` after ``</think>``, a template habit rather than a choice of the model.

    Attributes:
        raw: the response as the model wrote it (some rewards check its opening, e.g. the graph format bonus).
        answer: text after the last ``</think>``, stripped of surrounding whitespace; or, when the response has no
            thinking section, the whole response exactly as written (not stripped).
        think_unclosed: True when a ``<think>`` was opened and never closed; such a response has no answer
            (``answer`` is empty): IF and LogicIF score 0, the graph family counts it as a missing answer (its
            format-bonus variants still see ``raw``, as NPG-Muse's do).
    """

    raw: str
    answer: str
    think_unclosed: bool


def split_thinking(response: str) -> SplitResponse:
    """Return the graded part of ``response``.

    Rules: text after the last ``</think>``, stripped, is the answer; a ``<think>`` with no ``</think>`` after it
    means the model ran out of tokens while thinking, so there is no answer; a response with neither tag is all
    answer (no-think mode), kept exactly as written so that verdicts equal the official harness's on raw text.

    Args:
        response: the decoded model response (prompt excluded).

    Returns:
        The split response.
    """
    close = response.rfind(THINK_CLOSE)
    if close >= 0:
        # A <think> opened after the last </think> is a second, unfinished thinking section.
        tail = response[close + len(THINK_CLOSE) :]
        if THINK_OPEN in tail:
            return SplitResponse(raw=response, answer="", think_unclosed=True)
        return SplitResponse(raw=response, answer=tail.strip(), think_unclosed=False)
    if THINK_OPEN in response:
        return SplitResponse(raw=response, answer="", think_unclosed=True)
    return SplitResponse(raw=response, answer=response, think_unclosed=False)

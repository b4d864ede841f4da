"""Every IFBench checker is total and fast: any text in, a bool out, no exception, bounded time.

Model output is arbitrary: unicode of every category, empty strings, megabyte-long degenerate loops, text built
from the characters the checkers' regexes and bracket/quote scanners react to. A checker that raises would crash
a reward worker, so these tests feed all of that to all 58 checkers.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import rewards.instruction_following  # noqa: F401  (registers every checker)
from rewards.instruction_following.ground_truth import normalize_ground_truth
from rewards.instruction_following.ifbench import IFBENCH_INSTRUCTION_COUNT
from rewards.instruction_following.registry import get_instruction, instruction_ids
from rewards.instruction_following.scoring import MAX_ANSWER_CHARS, verdicts

PROMPT = "Write a story about a dragon who loves tea."
KWARGS: dict[str, dict] = {
    "count:word_count_range": {"min_words": 5, "max_words": 50},
    "count:unique_word_count": {"N": 5},
    "count:conjunctions": {"small_n": 2},
    "count:person_names": {"N": 2},
    "count:numbers": {"N": 3},
    "count:words_japanese": {"N": 3},
    "count:pronouns": {"N": 5},
    "count:keywords_multiple": {"keyword1": "a", "keyword2": "b", "keyword3": "c", "keyword4": "d", "keyword5": "e"},
    "ratio:stop_words": {"percentage": 40},
    "ratio:overlap": {"reference_text": PROMPT, "percentage": 30},
    "words:repeats": {"small_n": 2},
    "words:keywords_specific_position": {"keyword": "tea", "n": 2, "m": 3},
    "words:words_position": {"keyword": "tea"},
    "sentence:keyword": {"word": "tea", "N": 2},
    "sentence:increment": {"small_n": 2},
    "format:options": {"options": "yes/no/maybe"},
    "format:list": {"sep": "SEPARATOR"},
    "repeat:repeat_change": {"prompt_to_repeat": PROMPT},
    "repeat:repeat_span": {"prompt_to_repeat": PROMPT, "n_start": 3, "n_end": 20},
}
IDS = instruction_ids("ifbench")

# Characters the checkers branch on: brackets, quotes, markup, separators, emoji, CJK, digits, whitespace kinds.
HOSTILE_ALPHABET = [
    *"()[]{}\"'`*-_.,;:!?‽/\\<>|&#@%$^~+=",
    "<i>", "</i>", "<em>", "</em>", "?!", "!?", "...", "\n", "\n\n", "\r\n", "\t", " ", "\u00a0", "\u2028", "\x00",
    "😀", "👍🏽", "❤️", "日本", "です", "١٢٣", "3.5", "1,000", "Question 1.", "A.", "Zimbabwe", "My Answer:",
    "İ", "ß", "ǅ", "e\u0301", "Dr.", "U.S.", "don't", "Emma", "and", "level", "SEPARATOR", "tea", "a. ",
]  # fmt: skip

MEGABYTE = 1_000_000
DEGENERATE_PATTERNS = {
    "prose": "The cat sat on the mat. Did it? Yes! ",
    "newlines": "\n",
    "one_word": "a",
    "opening_brackets": "(",
    "quotes": "\"'",
    "initials": "a. ",
    "csv_quotes": '"x',
    "bullets": "* -\n",
}
# Checkers that run Punkt / Treebank over the whole response. Their cost is nltk's, steep per token
# (docs/ifbench.md), so they are timed on answers up to the reward path's cap (scoring.MAX_ANSWER_CHARS), not on a
# megabyte.
PUNKT_IDS = frozenset(
    {
        "count:pronouns", "custom:sentence_alphabet", "custom:word_reverse", "format:emoji",
        "format:no_bullets_bullets", "format:title_case", "ratio:sentence_balance", "ratio:sentence_type",
        "ratio:sentence_words", "sentence:alliteration_increment", "sentence:increment", "sentence:keyword",
        "words:keywords_specific_position", "words:last_first", "words:start_verb", "words:words_position",
    }
)  # fmt: skip


def _degenerate(name: str, size: int) -> str:
    pattern = DEGENERATE_PATTERNS[name]
    return (pattern * (size // len(pattern) + 1))[:size]


def _check_all(text: str) -> dict[str, bool]:
    return {
        instruction_id: get_instruction(instruction_id).check(text, **KWARGS.get(instruction_id, {}))
        for instruction_id in IDS
    }


def test_all_58_ifbench_ids_are_registered() -> None:
    assert len(IDS) == IFBENCH_INSTRUCTION_COUNT == 58


def test_kwargs_table_gives_every_checker_its_required_kwargs() -> None:
    for instruction_id in IDS:
        assert set(get_instruction(instruction_id).required) == set(KWARGS.get(instruction_id, {}))


@settings(max_examples=25, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=300))
def test_arbitrary_unicode_gives_a_bool(text: str) -> None:
    assert all(isinstance(verdict, bool) for verdict in _check_all(text).values())


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(HOSTILE_ALPHABET), max_size=120).map("".join))
def test_hostile_character_soup_gives_a_bool(text: str) -> None:
    assert all(isinstance(verdict, bool) for verdict in _check_all(text).values())


@pytest.mark.parametrize("text", ["", " ", "\n", "\x00", "\ud800", "*", "?!"])
def test_tiny_inputs_give_a_bool(text: str) -> None:
    assert all(isinstance(verdict, bool) for verdict in _check_all(text).values())


@pytest.mark.parametrize("name", ["prose", "newlines", "opening_brackets", "csv_quotes"])
def test_megabyte_inputs_give_a_bool_quickly(name: str) -> None:
    text = _degenerate(name, MEGABYTE)
    for instruction_id in sorted(set(IDS) - PUNKT_IDS):
        started = time.process_time()
        verdict = get_instruction(instruction_id).check(text, **KWARGS.get(instruction_id, {}))
        elapsed = time.process_time() - started
        assert isinstance(verdict, bool)
        # Linear scans of 1 MB; the limit is generous for a loaded 2-core machine (measured: docs/ifbench.md).
        assert elapsed < 2.0, f"{instruction_id} on {name}: {elapsed:.2f} s of CPU"


@pytest.mark.parametrize("name", sorted(set(DEGENERATE_PATTERNS) - {"initials"}))  # initials: slow test below
def test_degenerate_10kb_inputs_give_a_bool_from_every_checker(name: str) -> None:
    text = _degenerate(name, 10_000)
    started = time.process_time()
    verdicts = _check_all(text)
    elapsed = time.process_time() - started
    assert all(isinstance(verdict, bool) for verdict in verdicts.values())
    assert elapsed < 15.0, f"{name}: {elapsed:.1f} s of CPU for 58 checkers"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(DEGENERATE_PATTERNS))
def test_degenerate_inputs_at_the_answer_cap_give_a_bool(name: str) -> None:
    text = _degenerate(name, MAX_ANSWER_CHARS)
    for instruction_id in sorted(PUNKT_IDS):
        started = time.process_time()
        verdict = get_instruction(instruction_id).check(text, **KWARGS.get(instruction_id, {}))
        elapsed = time.process_time() - started
        assert isinstance(verdict, bool)
        assert elapsed < 10.0, f"{instruction_id} on {name}: {elapsed:.1f} s of CPU"


def test_megabyte_answers_cost_nothing_on_the_reward_path() -> None:
    ground_truth = normalize_ground_truth(
        {"instruction_id_list": IDS, "kwargs": [KWARGS.get(instruction_id, {}) for instruction_id in IDS]},
        where="test",
    )
    started = time.process_time()
    strict, loose = verdicts(_degenerate("initials", MEGABYTE), ground_truth)
    assert time.process_time() - started < 1.0
    assert not any(strict) and not any(loose)


def test_typical_response_costs_well_under_50_ms_per_checker() -> None:
    text = (
        "Tea is a drink made from leaves. It is popular in China, Japan and India! Do you like it? "
        "Emma drinks 3 cups a day; Liam prefers coffee.\n\n* green tea\n - light\n* black tea\n - strong\n"
    ) * 20  # about 4 KB, a typical response
    _check_all(text)  # load nltk, the Punkt tables, emoji and syllapy once
    worst = 0.0
    for instruction_id in IDS:
        started = time.process_time()
        get_instruction(instruction_id).check(text, **KWARGS.get(instruction_id, {}))
        worst = max(worst, time.process_time() - started)
    assert worst < 0.05, f"slowest checker took {worst * 1000:.1f} ms of CPU"

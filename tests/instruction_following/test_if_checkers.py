"""Hand-made pass/fail tables for every IFEval and IFEvalG checker, including the reference quirks we keep."""

from __future__ import annotations

from typing import Any

import pytest

from rewards.instruction_following import ifeval, ifevalg  # noqa: F401  (registers the checkers)
from rewards.instruction_following.registry import get_instruction, instruction_ids

PROSE = "Rivers flow to the sea. They carry water and soil. People live near them."

CASES: list[tuple[str, dict[str, Any], str, bool]] = [
    # change_case
    ("change_case:capital_word_frequency", {"capital_frequency": 2, "capital_relation": "at least"}, "AN OK day", True),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 3, "capital_relation": "at least"},
        "AN OK day",
        False,
    ),
    ("change_case:capital_word_frequency", {"capital_frequency": 3, "capital_relation": "less than"}, "DON'T go", True),
    (
        "change_case:capital_word_frequency",
        {"capital_frequency": 2, "capital_relation": "less than"},
        "DON'T go",
        False,
    ),
    ("change_case:english_capital", {}, PROSE.upper(), True),
    ("change_case:english_capital", {}, PROSE, False),
    ("change_case:english_capital", {}, "ДОБРОЕ УТРО, КАК ВАШИ ДЕЛА СЕГОДНЯ? У НАС ВСЁ ХОРОШО.", False),  # noqa: RUF001
    ("change_case:english_lowercase", {}, PROSE.lower(), True),
    ("change_case:english_lowercase", {}, PROSE, False),
    # combination
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "SAY HI. Hi!", True),
    ("combination:repeat_prompt", {"prompt_to_repeat": "Say hi."}, "Sure. Say hi. Hi!", False),
    ("combination:two_responses", {}, "A one.\n******\nB two.", True),
    ("combination:two_responses", {}, "A one.\n******\nA one.", False),
    ("combination:two_responses", {}, "A\n******\n\n******\nB", False),
    ("combination:two_responses", {}, "******\nA\n******\nB\n******", True),
    # detectable_content
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name], at [address].", True),
    ("detectable_content:number_placeholders", {"num_placeholders": 2}, "Dear [name], at [add\nress].", False),
    ("detectable_content:postscript", {"postscript_marker": "P.S."}, f"{PROSE}\n\np. s. bye", True),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, f"{PROSE}\n\nP.S. bye", False),
    ("detectable_content:postscript", {"postscript_marker": "P.P.S"}, f"{PROSE}\n\nP. P. S bye", True),
    ("detectable_content:postscript", {"postscript_marker": "Note:"}, f"{PROSE}\nNOTE: bye", True),
    # detectable_format
    ("detectable_format:constrained_response", {}, "I think so. My answer is yes.", True),
    ("detectable_format:constrained_response", {}, "My answer is Yes.", False),
    ("detectable_format:json_format", {}, '```json\n{"a": [1, 2]}\n```', True),
    ("detectable_format:json_format", {}, '```\n{"a": NaN}\n```', True),
    ("detectable_format:json_format", {}, 'Here: {"a": 1}', False),
    ("detectable_format:json_format", {}, "[" * 100_000, False),
    (
        "detectable_format:multiple_sections",
        {"num_sections": 2, "section_spliter": "Section"},
        "Section 1\nA\nSection 2\nB",
        True,
    ),
    (
        "detectable_format:multiple_sections",
        {"num_sections": 2, "section_spliter": "SECTION"},
        "Section 1\nA\nSection 2\nB",
        False,
    ),
    ("detectable_format:multiple_sections", {"num_sections": 1, "section_spliter": "Part ("}, "Part ( 1 text", True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "Intro\n* one\n- two", True),
    ("detectable_format:number_bullet_lists", {"num_bullets": 2}, "* one\n** bold\n* two\n---", False),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 2}, "*a* and **b**", True),
    ("detectable_format:number_highlighted_sections", {"num_highlights": 3}, "*a* and * * and *\nb*", False),
    ("detectable_format:title", {}, "<<My Title>>\nText", True),
    ("detectable_format:title", {}, "<< >>\nText <<a\nb>>", False),
    # keywords
    ("keywords:existence", {"keywords": ["river", "Sea"]}, PROSE, True),
    ("keywords:existence", {"keywords": ["river", "ocean"]}, PROSE, False),
    ("keywords:forbidden_words", {"forbidden_words": ["rive", "oceans"]}, PROSE, True),
    ("keywords:forbidden_words", {"forbidden_words": ["SOIL"]}, PROSE, False),
    ("keywords:frequency", {"keyword": "the", "frequency": 1, "relation": "at least"}, PROSE, True),
    ("keywords:frequency", {"keyword": "them", "frequency": 1, "relation": "less than"}, PROSE, False),
    ("keywords:letter_frequency", {"letter": "R", "let_frequency": 5, "let_relation": "at least"}, PROSE, True),
    ("keywords:letter_frequency", {"letter": "z", "let_frequency": 1, "let_relation": "less than"}, PROSE, True),
    ("keywords:letter_frequency", {"letter": "#", "let_frequency": 2, "let_relation": "at least"}, "# a #", True),
    ("keywords:letter_frequency", {"letter": "r", "let_frequency": 3, "let_relation": "less than"}, "RrR", False),
    # language
    (
        "language:response_language",
        {"language": "de"},
        "Das Wetter ist heute sehr schön und wir gehen spazieren.",
        True,
    ),
    ("language:response_language", {"language": "de"}, PROSE, False),
    ("language:response_language", {"language": "de"}, "1234 5678", True),
    # length_constraints
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        'A.\n\n"Then, b.',
        True,
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        "A.\n\nThen b.\n\nC.",
        False,
    ),
    (
        "length_constraints:nth_paragraph_first_word",
        {"num_paragraphs": 2, "nth_paragraph": 2, "first_word": "then"},
        "A.\n\n\n\nThen b.",
        False,
    ),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "A.\n***\nB.", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "***\nA.\n***\nB.\n***", True),
    ("length_constraints:number_paragraphs", {"num_paragraphs": 2}, "A.\n***\n***\nB.", False),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "at least"}, PROSE, True),
    ("length_constraints:number_sentences", {"num_sentences": 3, "relation": "less than"}, PROSE, False),
    ("length_constraints:number_sentences", {"num_sentences": 2, "relation": "less than"}, "Dr. Smith came. Hi", False),
    ("length_constraints:number_words", {"num_words": 14, "relation": "at least"}, PROSE, True),
    ("length_constraints:number_words", {"num_words": 14, "relation": "less than"}, PROSE, False),
    # punctuation, startend
    ("punctuation:no_comma", {}, PROSE, True),
    ("punctuation:no_comma", {}, "a, b", False),
    ("startend:end_checker", {"end_phrase": "Any questions?"}, 'Done. any questions?"', True),
    ("startend:end_checker", {"end_phrase": "Any questions?"}, "Any questions? Bye.", False),
    ("startend:quotation", {}, ' "quoted" ', True),
    ("startend:quotation", {}, '"', False),
    # IFEvalG: copy, new
    ("copy:copy", {"prompt_to_repeat": "Copy me."}, " copy ME.\n", True),
    ("copy:copy", {"prompt_to_repeat": "Copy me."}, "Copy me. Done.", False),
    ("copy:copying_simple", {"prompt_to_repeat": "Copy me."}, "Copy me.", True),
    ("copy:copying_simple", {"prompt_to_repeat": "Copy me."}, "Copy me!", False),
    ("copy:copying_multiple", {"prompt_to_repeat": "Copy me.", "N": 2}, "Copy me.\n******\ncopy me.", True),
    ("copy:copying_multiple", {"prompt_to_repeat": "Copy me.", "N": 3}, "Copy me.\n******\ncopy me.", False),
    ("copy:repeat_phrase", {"phrase": "the big red dog", "small_n": 2}, "the big blue dog and the tiny red dog", True),
    ("copy:repeat_phrase", {"phrase": "the big red dog", "small_n": 2}, "the big red dog and the tiny red dog", False),
    ("new:copy_span_idx", {"prompt_to_repeat": "Hello world", "n_start": 0, "n_end": 5}, "hello", True),
    ("new:copy_span_idx", {"prompt_to_repeat": "Hello world", "n_start": 0, "n_end": 5}, "Hello w", False),
    # count
    ("count:count_increment_word", {"keyword1": "cat", "keyword2": "dog"}, "cat dog Dog", True),
    ("count:count_increment_word", {"keyword1": "cat", "keyword2": "dog"}, "cat cats dog", False),
    ("count:count_unique", {}, "All words differ here.", True),
    ("count:count_unique", {}, "The cat and The dog.", False),
    ("count:counting_composition", {"n_sent": 1, "n_words": 3}, "A b.\n***\nC d.\n***\nE f.", True),
    ("count:counting_composition", {"n_sent": 1, "n_words": 3}, "A b.\n***\nC d.", False),
    ("count:lowercase_counting", {"N": 2}, "ONE two three", True),
    ("count:lowercase_counting", {"N": 2}, "one two three", False),
    # detectable_format (IFEvalG)
    ("detectable_format:bigram_wrapping", {}, "<<a b>> <<c d>> e", True),
    ("detectable_format:bigram_wrapping", {}, "<<a b>> c d", False),
    ("detectable_format:sentence_hyphens", {}, "One.-Two.-Three.", True),
    ("detectable_format:sentence_hyphens", {}, "One. - Two.", False),
    ("detectable_format:square_brackets", {}, "[a] [b.]", True),
    ("detectable_format:square_brackets", {}, "[a] b", False),
    # first_word, last_word
    ("first_word:first_word_sent", {"first_word": "so"}, "So it is. so be it!", True),
    ("first_word:first_word_sent", {"first_word": ["so"]}, "So it is. Then no.", False),
    ("first_word:first_word_answer", {"first_word": "well"}, "Well, ok", False),
    ("first_word:first_word_answer", {"first_word": "well"}, "WELL ok", True),
    ("last_word:last_word_sent", {"last_word": "end"}, "This is the end. The END!", True),
    ("last_word:last_word_sent", {"last_word": "end"}, "This is the end. Not yet.", False),
    ("last_word:last_word_answer", {"last_word": "end"}, "The (end).", True),
    ("last_word:last_word_answer", {"last_word": "end"}, "end now", False),
    # keywords (IFEvalG)
    ("keywords:exclude_word_harder", {"keyword": "cat"}, "The Cat sat; cat.", True),
    ("keywords:exclude_word_harder", {"keyword": "cat"}, "The cat sat.", False),
    ("keywords:keyword_specific_position", {"keyword": "dog", "n": 2, "m": 2}, "A cat. The dog ran.", True),
    ("keywords:keyword_specific_position", {"keyword": "dog", "n": 2, "m": 2}, "A cat. The Dog ran.", False),
    ("keywords:no_adjacent_consecutive", {}, "Big cats run.", False),
    ("keywords:no_adjacent_consecutive", {}, "Big dogs run.", True),
    ("keywords:palindrome", {}, "Wow a kayak", True),
    ("keywords:palindrome", {}, "Wow kayaks", False),
    ("keywords:start_end", {}, "Hello there, hello", True),
    ("keywords:start_end", {}, "Hello there.", False),
    ("keywords:word_count_different_numbers", {"keyword": "go", "frequency": 2, "relation": "at least"}, "Go go", True),
    (
        "keywords:word_count_different_numbers",
        {"keyword": "go", "frequency": 2, "relation": "less than"},
        "Go go",
        False,
    ),
    ("keywords:word_once", {"keyword": "tea"}, "I like tea.", True),
    ("keywords:word_once", {"keyword": "tea"}, "Tea and teapots.", False),
    # letters
    ("letters:letter_counting", {"N": 5, "relation": "less than"}, "abcd 123", True),
    ("letters:letter_counting", {"N": 5, "relation": "at least"}, "abcd 123", False),
    ("letters:letter_counting2", {"letter": "a", "let_frequency": 2, "let_relation": "at least"}, "A cat", True),
    ("letters:letter_counting2", {"letter": "a", "let_frequency": 2, "let_relation": "less than"}, "A cat", False),
    # paragraphs, punctuation
    ("paragraphs:paragraphs", {}, "A.\n***\nB.", True),
    ("paragraphs:paragraphs", {}, "A.\n***\nB.\n***\nC.", False),
    ("paragraphs:paragraphs2", {}, "A.\n\nB.", True),
    ("paragraphs:paragraphs2", {}, "A.\n\n\n\nB.", False),
    ("punctuation:punctuation_dot", {}, "No dots here!", True),
    ("punctuation:punctuation_dot", {}, "A dot.", False),
    ("punctuation:punctuation_exclamation", {}, "Calm.", True),
    ("punctuation:punctuation_exclamation", {}, "Wow!", False),
]


@pytest.mark.parametrize(("instruction_id", "kwargs", "response", "expected"), CASES)
def test_checker_table(instruction_id: str, kwargs: dict[str, Any], response: str, expected: bool) -> None:
    assert get_instruction(instruction_id).check(response, **kwargs) is expected


def test_every_ifeval_and_ifevalg_id_has_a_passing_and_a_failing_case() -> None:
    verdicts: dict[str, set[bool]] = {}
    for instruction_id, _, _, expected in CASES:
        verdicts.setdefault(instruction_id, set()).add(expected)
    ids = instruction_ids("ifeval") + instruction_ids("ifevalg")
    assert len(instruction_ids("ifeval")) == 25
    assert len(instruction_ids("ifevalg")) == 29
    assert {i for i in ids if verdicts.get(i) != {True, False}} == set()


def test_blank_answers_never_raise() -> None:
    for instruction_id, kwargs, _, _ in CASES:
        for text in ("", "   ", "\n\n"):
            assert isinstance(get_instruction(instruction_id).check(text, **kwargs), bool)

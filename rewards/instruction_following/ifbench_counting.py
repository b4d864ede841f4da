"""IFBench ``count:*`` and ``ratio:*`` checkers: how many words, names, numbers or sentence types a response has.

Semantics follow allenai/IFBench ``ifbench/instructions.py`` at db69a6f, including its quirks (listed per checker
and in docs/ifbench.md under "Known reference quirks"), so rlif's rewards and IFBench scores are comparable.
Every checker is total: it returns a bool for any string and never raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from rewards.instruction_following.ifbench_text import (
    NLTK_ENGLISH_STOPWORDS,
    PUNCTUATION_AND_SPACE,
    remove_ascii_punctuation,
)
from rewards.instruction_following.registry import register_instruction
from rewards.instruction_following.text import count_words, split_sentences_punkt, word_tokenize, word_tokens

_BENCHMARK = "ifbench"


@register_instruction(
    "count:word_count_range",
    benchmark=_BENCHMARK,
    required=("min_words", "max_words"),
    int_kwargs=("min_words", "max_words"),
)
def word_count_range(response: str, *, min_words: int, max_words: int) -> bool:
    """Instruction "The response must contain between X and Y words": ``min_words <= #\\w+ runs <= max_words``."""
    return min_words <= count_words(response) <= max_words


@register_instruction("count:unique_word_count", benchmark=_BENCHMARK, required=("N",), int_kwargs=("N",))
def unique_word_count(response: str, *, N: int) -> bool:  # noqa: N803 (official kwarg name)
    """Instruction "Use at least N unique words": distinct lower-cased whitespace tokens with ASCII punctuation trimmed.

    Quirk kept: a token made only of punctuation trims to ``""``, which counts as one more unique word.
    """
    unique = {word.strip(PUNCTUATION_AND_SPACE) for word in response.lower().split()}
    return len(unique) >= N


@register_instruction("ratio:stop_words", benchmark=_BENCHMARK, required=("percentage",), int_kwargs=("percentage",))
def stop_words(response: str, *, percentage: int) -> bool:
    """Instruction "Stop words constitute no more than P% of the words".

    Counts nltk's English stop words among the ``\\w+`` tokens.
    """
    tokens = word_tokens(response)
    if not tokens:
        return False
    stop_count = sum(1 for token in tokens if token.lower() in NLTK_ENGLISH_STOPWORDS)
    return stop_count / len(tokens) * 100 <= percentage


def _ending_counts(sentences: Iterable[str]) -> tuple[int, int, int]:
    declarative = interrogative = exclamatory = 0
    for sentence in sentences:
        if sentence.endswith("."):
            declarative += 1
        elif sentence.endswith("?"):
            interrogative += 1
        elif sentence.endswith("!"):
            exclamatory += 1
    return declarative, interrogative, exclamatory


@register_instruction("ratio:sentence_type", benchmark=_BENCHMARK)
def sentence_type(response: str) -> bool:
    """Instruction "Maintain a 2:1 ratio of declarative to interrogative sentences", judged by the final character.

    Quirk kept: a response with no sentence ending in ``.`` or ``?`` passes (0 == 2 * 0).
    """
    declarative, interrogative, _ = _ending_counts(split_sentences_punkt(response))
    return declarative == 2 * interrogative


@register_instruction("ratio:sentence_balance", benchmark=_BENCHMARK)
def sentence_balance(response: str) -> bool:
    """Instruction "Balance declarative, interrogative and exclamatory sentences".

    Equal counts of ``.``/``?``/``!`` endings.

    Quirk kept: a response with none of the three endings passes.
    """
    declarative, interrogative, exclamatory = _ending_counts(split_sentences_punkt(response))
    return declarative == interrogative == exclamatory


@register_instruction("ratio:sentence_words", benchmark=_BENCHMARK)
def sentence_words(response: str) -> bool:
    """Instruction "Respond with three sentences, all containing the same number of characters but using all
    different words".

    Exactly three Punkt sentences of equal stripped length. Reference bug kept: the "all different words" part is
    never checked.
    """
    sentences = split_sentences_punkt(response)
    return len(sentences) == 3 and len({len(sentence.strip()) for sentence in sentences}) == 1


_CONJUNCTIONS = frozenset({"and", "but", "for", "nor", "or", "so", "yet"})


@register_instruction("count:conjunctions", benchmark=_BENCHMARK, required=("small_n",), int_kwargs=("small_n",))
def conjunctions(response: str, *, small_n: int) -> bool:
    """Instruction "Use at least n different coordinating conjunctions" (for, and, nor, but, or, yet, so).

    Quirk kept: the reference counts distinct *raw* tokens whose trimmed lower-case form is a conjunction, so
    ``"and"``, ``"And"`` and ``"and,"`` count as three different conjunctions.
    """
    found = {word for word in response.split() if word.strip(PUNCTUATION_AND_SPACE).lower() in _CONJUNCTIONS}
    return len(found) >= small_n


_PERSON_NAMES = (  # noqa: SIM905 (a word list reads better as text)
    "Emma Liam Sophia Jackson Olivia Noah Ava Lucas Isabella Mason Mia Ethan Charlotte Alexander Amelia Benjamin "
    "Harper Leo Zoe Daniel Chloe Samuel Lily Matthew Grace Owen Abigail Gabriel Ella Jacob Scarlett Nathan Victoria "
    "Elijah Layla Nicholas Audrey David Hannah Christopher Penelope Thomas Nora Andrew Aria Joseph Claire Ryan "
    "Stella Jonathan"
).split()
_PERSON_NAME_PATTERNS = tuple((name, re.compile(rf"\b{name}\b")) for name in _PERSON_NAMES)


@register_instruction("count:person_names", benchmark=_BENCHMARK, required=("N",), int_kwargs=("N",))
def person_names(response: str, *, N: int) -> bool:  # noqa: N803 (official kwarg name)
    """Instruction "Mention at least N different person names" from the instruction's fixed list of 50 first names.

    A name counts when it appears case-sensitively as a whole word (``\\bEmma\\b``).
    """
    # The substring test is a fast necessary condition; the regex alone scans slowly on megabytes of text.
    return sum(1 for name, pattern in _PERSON_NAME_PATTERNS if name in response and pattern.search(response)) >= N


def _char_trigrams(text: str) -> set[tuple[str, str, str]]:
    return set(zip(text, text[1:], text[2:], strict=False))


@register_instruction(
    "ratio:overlap",
    benchmark=_BENCHMARK,
    required=("reference_text", "percentage"),
    int_kwargs=("percentage",),
)
def overlap(response: str, *, reference_text: str, percentage: int) -> bool:
    """Instruction "Maintain a trigram overlap of P% (±2%) with the provided reference text".

    Reference bug kept: ``nltk.ngrams`` runs on the raw strings, so the trigrams are *character* trigrams, not
    word trigrams (open PR allenai/IFBench#34). Overlap = shared trigrams / the response's distinct trigrams.
    """
    response_trigrams = _char_trigrams(response)
    if not response_trigrams:
        return False
    shared = len(response_trigrams & _char_trigrams(reference_text)) / len(response_trigrams)
    return percentage - 2 <= shared * 100 <= percentage + 2


_DIGIT_RUN = re.compile(r"\d+")


@register_instruction("count:numbers", benchmark=_BENCHMARK, required=("N",), int_kwargs=("N",))
def numbers(response: str, *, N: int) -> bool:  # noqa: N803 (official kwarg name)
    """Instruction "Include exactly N numbers".

    Digit runs after deleting ASCII punctuation (so ``3.5`` and ``1,000`` are one).
    """
    return sum(1 for _ in _DIGIT_RUN.finditer(remove_ascii_punctuation(response))) == N


_REQUIRED_MARKS = frozenset(".,!?;:")


@register_instruction("count:punctuation", benchmark=_BENCHMARK)
def punctuation(response: str) -> bool:
    """Instruction "Use every standard punctuation mark at least once, including semicolons, colons, and the
    interrobang (?!)".

    Needs ``?!``, ``!?`` or ``‽``, and each of ``. , ! ? ; :`` somewhere outside the first interrobang pair
    (the reference removes the first ``?!``, or else the first ``!?``, before looking).
    """
    if "!?" not in response and "?!" not in response and "\u203d" not in response:
        return False
    rest = response.replace("?!", "", 1)
    if len(rest) == len(response):
        rest = response.replace("!?", "", 1)
    return _REQUIRED_MARKS.issubset(rest)


_JAPANESE = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


@register_instruction("count:words_japanese", benchmark=_BENCHMARK, required=("N",), int_kwargs=("N",))
def words_japanese(response: str, *, N: int) -> bool:  # noqa: N803 (official kwarg name)
    """Instruction "Every Nth word of your response must be in Japanese" (contain a kana or CJK ideograph).

    Words are whitespace tokens; every Nth one (1-based) must contain Japanese script unless it trims to nothing
    or is all digits. ``N < 1`` (the reference divides by zero) is never followed.
    """
    if N < 1:
        return False
    for position, word in enumerate(response.split(), start=1):
        if position % N:
            continue
        trimmed = word.strip(PUNCTUATION_AND_SPACE)
        if trimmed and not trimmed.isdigit() and not _JAPANESE.search(trimmed):
            return False
    return True


_PRONOUNS = frozenset(
    """
    i me we us you he him she her it they them my mine our ours your yours his hers its their theirs myself
    ourselves yourself yourselves himself herself itself themselves this that these those who whom whose which what
    whoever whomever whatever whichever anybody anyone anything everybody everyone everything nobody nothing
    somebody someone something each either neither both all some any none
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


@register_instruction("count:pronouns", benchmark=_BENCHMARK, required=("N",), int_kwargs=("N",))
def pronouns(response: str, *, N: int) -> bool:  # noqa: N803 (official kwarg name)
    """Instruction "Include at least N pronouns".

    Counts Treebank tokens of the lower-cased text (``/`` read as a space) that are in the reference's pronoun
    set (personal, possessive, reflexive, demonstrative, interrogative, indefinite).
    """
    tokens = word_tokenize(response.replace("/", " ").lower())
    return sum(1 for token in tokens if token in _PRONOUNS) >= N


@register_instruction(
    "count:keywords_multiple",
    benchmark=_BENCHMARK,
    required=("keyword1", "keyword2", "keyword3", "keyword4", "keyword5"),
)
def keywords_multiple(
    response: str, *, keyword1: str, keyword2: str, keyword3: str, keyword4: str, keyword5: str
) -> bool:
    """Instruction "Include keyword K1 once in your response, keyword K2 twice, … K3 three times, … K4 five
    times, and … K5 seven times".

    Counts are case-insensitive, non-overlapping *substring* counts (the reference's ``str.count``), so
    ``"whispered"`` counts as ``"whisper"``; the keywords are stripped of surrounding whitespace first.
    """
    text = response.lower()
    wanted = ((keyword1, 1), (keyword2, 2), (keyword3, 3), (keyword4, 5), (keyword5, 7))
    return all(text.count(keyword.strip().lower()) == count for keyword, count in wanted)

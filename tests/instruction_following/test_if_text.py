"""Shared text utilities: they agree with the libraries they replace and are the same in every process."""

from __future__ import annotations

import contextlib
import random
import re
import string
import subprocess
import sys
from pathlib import Path

import if_corpus
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.lang_detect_exception import LangDetectException

from rewards.instruction_following import language_detection, text
from rewards.instruction_following.ifeval import count_bullets, count_placeholders, title
from rewards.instruction_following.ifevalg import _phrase_spans

STAR_BULLET = re.compile(r"^\s*\*[^\*].*$", re.MULTILINE)
DASH_BULLET = re.compile(r"^\s*-.*$", re.MULTILINE)


def _langdetect(sample: str) -> str | None:
    factory = _factory()
    detector = factory.create()
    detector.append(sample)
    try:
        return detector.detect()
    except LangDetectException:
        return None


_FACTORY: list[DetectorFactory] = []


def _factory() -> DetectorFactory:
    if not _FACTORY:
        factory = DetectorFactory()
        factory.load_profile(PROFILES_DIRECTORY)
        factory.set_seed(language_detection.LANGUAGE_SEED)
        _FACTORY.append(factory)
    return _FACTORY[0]


def _texts() -> list[str]:
    rng = random.Random(3)
    samples = if_corpus.sample_responses()
    texts = [samples[i] for i in range(0, len(samples), 15)] + list(if_corpus._FOREIGN_TEXTS)
    texts += [t.upper() for t in texts[:10]] + ["", "1234", "*** ---", "http://example.com a@b.co"]
    for _ in range(20):
        texts.append(
            "".join(chr(rng.choice([rng.randint(32, 0x24F), rng.randint(0x370, 0x3000), 0x20])) for _ in range(80))
        )
    return texts


def test_fast_language_detection_equals_langdetect() -> None:
    for sample in _texts():
        assert language_detection.detect(sample) == _langdetect(sample), sample[:80]


@pytest.mark.slow
def test_language_detection_is_the_same_in_a_fresh_process() -> None:
    samples = ["THIS IS AN ENGLISH SENTENCE. EVERY LETTER IS CAPITALIZED!!! AMAZING.", "Hola, ¿cómo estás hoy?"]
    code = (
        "import sys; from rewards.instruction_following.language_detection import detect; "
        f"print([detect(s) for s in {samples!r}])"
    )
    repository = Path(__file__).resolve().parents[2]
    child = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120, cwd=repository
    )
    assert child.stdout.strip() == str([language_detection.detect(s) for s in samples])


def test_sentence_and_word_counts() -> None:
    assert text.count_sentences("Dr. Smith arrived at 5 p.m. today. He was late!") == 2
    assert text.count_sentences("- item one\n- item two") == 1  # punkt never splits at a bare newline
    assert text.count_words("don't stop-now 3.5") == 6
    assert text.word_tokenize("DON'T stop.") == ["DO", "N'T", "stop", "."]
    assert text.split_sentences_rules('Mr. Smith said "hi." Then left! Ok') == [
        'Mr. Smith said "hi".',
        "Then left!",
        "Ok",
    ]


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("AaBb'.,-*\n CANNOTgonna;!?\"U.S.()[]{}:@")), max_size=60))
@example("A.'AA")  # Punkt breaks a sentence inside the chunk: "A." | "'AA" (found by CI)
@example('WHY?"NO" OK.)')
def test_upper_token_count_equals_full_tokenization(sample: str) -> None:
    assert text.count_upper_tokens(sample) == sum(1 for token in text.word_tokenize(sample) if token.isupper())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(["*", "-", " ", "\n", "\t", "a", "[", "]", "<", ">"]), max_size=40))
def test_linear_scanners_equal_the_reference_regexes(sample: str) -> None:
    assert count_bullets(sample) == len(STAR_BULLET.findall(sample)) + len(DASH_BULLET.findall(sample))
    assert count_placeholders(sample) == len(re.findall(r"\[.*?\]", sample))
    assert title(sample) == any(t.lstrip("<").rstrip(">").strip() for t in re.findall(r"<<[^\n]+>>", sample))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["ab", "cd", " ", "\n", "x"]), max_size=20).map("".join))
def test_phrase_spans_equal_the_reference_regex(sample: str) -> None:
    for first, last in (("ab", "cd"), ("ab", "ab")):
        assert _phrase_spans(sample, first, last) == re.findall(rf"{first} .*? {last}", sample)


@pytest.mark.parametrize("piece", ["\n", "[", "<<", " \n", "The "])
def test_linear_scanners_handle_long_hostile_runs(piece: str) -> None:
    hostile = piece * 200_000
    count_bullets(hostile)
    count_placeholders(hostile)
    title(hostile)
    _phrase_spans(hostile, "The", "end")


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=200))
def test_remove_ascii_punctuation_equals_str_translate(sample: str) -> None:
    from rewards.instruction_following.ifbench_text import remove_ascii_punctuation

    assert remove_ascii_punctuation(sample) == sample.translate(str.maketrans("", "", string.punctuation))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["Dr. Smith", "left.", "It's", "a", "\n\n", " ", "!?", "U.S.", '"Hi."', "gimme"])))
def test_partial_tokenisers_equal_word_tokenize(pieces: list[str]) -> None:
    sample = " ".join(pieces)
    tokens = text.word_tokenize(sample)
    for shared in (False, True):
        with text.shared_work() if shared else contextlib.nullcontext():
            assert list(text.iter_word_tokens(sample)) == tokens
            assert text.first_tokens(sample, 3) == tokens[:3]
            assert text.last_tokens(sample, 3) == tokens[-3:]
            assert text.split_sentences_punkt(sample) == text.split_sentences_punkt(sample)

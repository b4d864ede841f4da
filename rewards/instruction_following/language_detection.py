"""langdetect's language detection, re-implemented for speed with identical results (seeded).

IFEval's ``response_language``, ``english_capital`` and ``english_lowercase`` call ``langdetect.detect``; in the
reward it takes most of the CPU time, the more so as the loose variants run it up to eight times again
(docs/instruction-following.md). This module runs the same algorithm as langdetect 1.0.9 on langdetect's own
language profiles and returns the same answers (``test_if_language.py`` compares it with ``langdetect.Detector`` on
real and random text), but:

- characters are normalised once per distinct character (``str.translate``) instead of once per occurrence,
- n-grams are produced per word and cached per word (text repeats words); every cache is bounded (least recently
  used entries go first), so a reward worker scoring months of generated text keeps a fixed footprint,
- the probability updates use numpy on float64 arrays; every element goes through the same multiply and divide as
  langdetect's Python loop, and the normalising sum is still taken left to right, so the arithmetic is bit-for-bit
  langdetect's,
- the random draws (``random.Random`` seeded with ``LANGUAGE_SEED``, one ``gauss`` per trial, one ``choice`` per
  step) happen in langdetect's order, so the sampled n-grams are langdetect's too.

The algorithm (Nakatani Shuyo's language-detection): clean the text (drop URLs and e-mail addresses, collapse
spaces, cut to 10,000 characters, drop Latin letters from mostly non-Latin text), list every known 1-3-gram of
the normalised words (skipping runs of capitals), then in 7 trials draw n-grams at random and multiply each
language's probability by its n-gram likelihood until one language passes 0.99999 (checked every 5 steps, at
most 1,000 steps); average the trials and return the best language above 0.1.
"""

from __future__ import annotations

import functools
import random
import re
import sys
from collections.abc import Mapping

import numpy as np
from langdetect.detector import Detector
from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.utils.ngram import NGram

LANGUAGE_SEED = 0
"""Seed of the n-gram sampling; langdetect samples at random, a fixed seed fixes the verdict."""

_MAX_TEXT_LENGTH = 10_000  # langdetect's Detector.max_text_length default
_TRIALS = 7  # Detector.n_trial
_ALPHA = Detector.ALPHA_DEFAULT
_ALPHA_WIDTH = Detector.ALPHA_WIDTH
_BASE_FREQ = Detector.BASE_FREQ
_CONVERGED = Detector.CONV_THRESHOLD
_ITERATION_LIMIT = Detector.ITERATION_LIMIT
_REPORT_THRESHOLD = Detector.PROB_THRESHOLD
_URL = Detector.URL_RE
_MAIL = Detector.MAIL_RE
_SPACE_RUN = re.compile(" {2,}")
_LATIN = re.compile("[A-z]")  # langdetect's own range check 'A' <= ch <= 'z' (includes [\]^_`)
_NON_LATIN = re.compile("[\u0300-\U0010ffff]")
_LATIN_EXTENDED_ADDITIONAL = re.compile("[\u1e00-\u1eff]")

WORD_CACHE_SIZE = 16_384
"""Words whose n-grams stay cached. Generated text repeats a working vocabulary far smaller than this, so the hit
rate stays high, while a stream of distinct words (random tokens, numbers, other scripts) cannot grow the cache."""
GRAM_CACHE_SIZE = 16_384
"""N-gram likelihood vectors (55 float64 each) that stay cached, out of the profiles' 87,598 n-grams."""
CHAR_CACHE_SIZE = 8_192
"""Normalised characters kept in the translation table; past this the table restarts from the current text."""


class _Profiles:
    """langdetect's profiles: the language list and, per n-gram, one likelihood per language (as numpy arrays)."""

    def __init__(self) -> None:
        factory = DetectorFactory()
        factory.load_profile(PROFILES_DIRECTORY)
        self.languages: list[str] = list(factory.langlist)
        self.likelihoods: Mapping[str, list[float]] = factory.word_lang_prob_map
        self._normalised: dict[int, str] = {}
        self.array = functools.lru_cache(maxsize=GRAM_CACHE_SIZE)(self._array)
        self.word_grams = functools.lru_cache(maxsize=WORD_CACHE_SIZE)(self._word_grams)

    def _array(self, gram: str) -> np.ndarray:
        """The likelihood of ``gram`` in every language, as a float64 vector (cached by ``array``)."""
        return np.array(self.likelihoods[gram], dtype=np.float64)

    def normalise(self, text: str) -> str:
        """Apply ``NGram.normalize`` to every character, computing it once per distinct character."""
        table = self._normalised
        missing = [char for char in set(text) if ord(char) not in table]
        if len(table) + len(missing) > CHAR_CACHE_SIZE:
            table.clear()
            missing = list(set(text))
        for char in missing:
            table[ord(char)] = NGram.normalize(char)
        return text.translate(table)

    def _word_grams(self, word: str, closed: bool) -> tuple[str, ...]:
        """Known n-grams langdetect emits for ``word`` (``closed``: a space follows it), in its order (cached by
        ``word_grams``). The grams are interned: a known n-gram is one string however many cached words hold it."""
        return tuple(sys.intern(gram) for gram in _grams_of(word, closed, self.likelihoods))

    def cache_sizes(self) -> dict[str, int]:
        """Entries held by each cache (for tests and memory checks)."""
        return {
            "words": self.word_grams.cache_info().currsize,
            "grams": self.array.cache_info().currsize,
            "chars": len(self._normalised),
        }


def _grams_of(word: str, closed: bool, known: Mapping[str, list[float]]) -> list[str]:
    """langdetect's n-gram buffer over one word: grams ending at each character of ``" " + word (+ " ")``.

    The buffer restarts after each space, so grams never span a space on their left; a position is skipped when it
    and the previous character are both upper case (inside a run of capitals); the unigram ``" "`` is never used.
    """
    padded = " " + word + (" " if closed else "")
    grams = []
    for end in range(1, len(padded)):
        char = padded[end]
        if char.isupper() and padded[end - 1].isupper():
            continue
        for size in (1, 2, 3):
            start = end - size + 1
            if start < 0:
                break
            gram = padded[start : end + 1]
            if gram != " " and gram in known:
                grams.append(gram)
    return grams


@functools.cache
def _profiles() -> _Profiles:
    return _Profiles()


def detect(text: str) -> str | None:
    """Return langdetect's language for ``text``, as ``langdetect.detect`` with ``DetectorFactory.seed = 0``.

    Args:
        text: any text.

    Returns:
        An ISO 639-1 code (``"en"``, ``"zh-cn"``), ``"unknown"`` when no language reaches 0.1, or None when the
        text has no known n-gram (langdetect raises "No features in text" there).
    """
    profiles = _profiles()
    grams = _extract(_clean(text), profiles)
    if not grams:
        return None
    size = len(profiles.languages)
    total = np.zeros(size, dtype=np.float64)
    sampler = random.Random()
    sampler.seed(LANGUAGE_SEED)
    for _ in range(_TRIALS):
        probabilities = np.full(size, 1.0 / size, dtype=np.float64)
        weight = (_ALPHA + sampler.gauss(0.0, 1.0) * _ALPHA_WIDTH) / _BASE_FREQ
        step = 0
        while True:
            probabilities *= weight + profiles.array(sampler.choice(grams))
            if step % 5 == 0:
                probabilities /= sum(probabilities.tolist())  # left-to-right sum, as langdetect
                if probabilities.max() > _CONVERGED or step >= _ITERATION_LIMIT:
                    break
            step += 1
        total += probabilities / _TRIALS
    best, best_probability = "unknown", _REPORT_THRESHOLD
    for language, probability in zip(profiles.languages, total.tolist(), strict=True):
        if probability > best_probability:
            best, best_probability = language, probability
    return best


def _clean(text: str) -> str:
    """langdetect's ``append`` plus ``cleaning_text``: no URLs or e-mails, single spaces, 10,000 characters."""
    text = _URL.sub(" ", text)
    text = _MAIL.sub(" ", text)
    text = NGram.normalize_vi(text)
    text = _SPACE_RUN.sub(" ", text[:_MAX_TEXT_LENGTH])
    latin = len(_LATIN.findall(text))
    non_latin = len(_NON_LATIN.findall(text)) - len(_LATIN_EXTENDED_ADDITIONAL.findall(text))
    if latin * 2 < non_latin:
        text = _LATIN.sub("", text)
    return text


def _extract(text: str, profiles: _Profiles) -> list[str]:
    words = profiles.normalise(text).split(" ")
    grams: list[str] = []
    last = len(words) - 1
    for index, word in enumerate(words):
        if word:
            grams.extend(profiles.word_grams(word, index < last))
    return grams

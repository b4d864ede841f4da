"""The language detector's caches are bounded: a stream of distinct words cannot grow a reward worker's memory."""

from __future__ import annotations

import gc
import random
import string
import tracemalloc

from rewards.instruction_following import language_detection

CACHE_MEMORY_LIMIT = 20_000_000
"""Bytes the detector's caches may hold after 100,000 distinct words (measured sizes: docs/instruction-following.md)."""


def _distinct_words(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    words: set[str] = set()
    while len(words) < count:
        words.add("".join(rng.choice(string.ascii_lowercase + "éçñø") for _ in range(rng.randint(4, 10))))
    return sorted(words)


def test_one_hundred_thousand_distinct_words_stay_under_the_stated_memory() -> None:
    sample = "The quick brown fox jumps over the lazy dog, and the river keeps flowing to the sea."
    verdict = language_detection.detect(sample)
    words = _distinct_words(100_000)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for start in range(0, len(words), 1000):  # 1,000 words stay under langdetect's 10,000-character cut
            language_detection.detect(" ".join(words[start : start + 1000]))
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    sizes = language_detection._profiles().cache_sizes()
    assert grown < CACHE_MEMORY_LIMIT, f"caches grew by {grown / 1e6:.1f} MB"
    assert sizes["words"] == language_detection.WORD_CACHE_SIZE  # full, and no larger
    assert sizes["grams"] <= language_detection.GRAM_CACHE_SIZE
    assert sizes["chars"] <= language_detection.CHAR_CACHE_SIZE
    assert language_detection.detect(sample) == verdict  # evictions never change an answer


def test_the_character_table_restarts_instead_of_growing() -> None:
    profiles = language_detection._profiles()
    text = "".join(chr(code) for code in range(0x4E00, 0x4E00 + language_detection.CHAR_CACHE_SIZE + 10))
    assert profiles.normalise(text) == profiles.normalise(text[:5000]) + profiles.normalise(text[5000:])
    assert profiles.cache_sizes()["chars"] <= language_detection.CHAR_CACHE_SIZE

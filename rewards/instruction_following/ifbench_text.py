"""Text helpers only the IFBench checkers need: ASCII punctuation handling and nltk's English stop words.

Sentences, Treebank tokens and ``\\w+`` word counts come from ``rewards.instruction_following.text`` (trained
English Punkt, as ``nltk.sent_tokenize`` / ``nltk.word_tokenize``), shared with the IFEval checkers. What is left
here is what the IFBench reference (allenai/IFBench ``ifbench/instructions.py``) does on top:

- it trims and deletes ``string.punctuation`` only (ASCII), never unicode punctuation such as ``“`` or ``…``;
  trimming uses ``string.punctuation + " "`` (the space character, not other whitespace);
- ``ratio:stop_words`` counts nltk's ``stopwords.words("english")``, a corpus download. The list is written out
  below (nltk's published list; checked against public copies of it).
"""

from __future__ import annotations

import string

__all__ = ["NLTK_ENGLISH_STOPWORDS", "PUNCTUATION_AND_SPACE", "remove_ascii_punctuation"]

PUNCTUATION_AND_SPACE = string.punctuation + " "
"""What the reference strips from word edges: ASCII punctuation and the space character (not other whitespace)."""

_ASCII_PUNCTUATION_BYTES = string.punctuation.encode("ascii")

NLTK_ENGLISH_STOPWORDS = frozenset(
    """
    i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
    herself it its itself they them their theirs themselves what which who whom this that these those am is are
    was were be been being have has had having do does did doing a an the and but if or because as until while
    of at by for with about against between into through during before after above below to from up down in out
    on off over under again further then once here there when where why how all any both each few more most
    other some such no nor not only own same so than too very s t can will just don should now d ll m o re ve y
    ain aren couldn didn doesn hadn hasn haven isn ma mightn mustn needn shan shouldn wasn weren won wouldn
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
"""nltk's English stop words that can equal a ``\\w+`` token: 153 entries. The corpus's other entries are
apostrophe contractions (``"don't"``, ``"you're"``, ...), which a ``\\w+`` token can never equal, so leaving them
out changes no count. The reference counts a token as a stop word when ``token.lower()`` is in the list."""


def remove_ascii_punctuation(text: str) -> str:
    """Delete every ASCII punctuation character, as the reference's ``str.translate`` calls do.

    Args:
        text: any text.

    Returns:
        ``text`` without ``string.punctuation`` characters (unicode punctuation such as ``"“"`` stays).
    """
    # Same result as ``text.translate(str.maketrans("", "", string.punctuation))``, much faster on non-ASCII
    # text (str.translate looks every character up in a dict; docs/instruction-following.md): in UTF-8 an ASCII
    # byte only ever encodes that ASCII character, so deleting the bytes deletes exactly those characters.
    # ``surrogatepass`` lets lone surrogates, which model output can contain, round-trip unchanged.
    encoded = text.encode("utf-8", "surrogatepass")
    return encoded.translate(None, _ASCII_PUNCTUATION_BYTES).decode("utf-8", "surrogatepass")

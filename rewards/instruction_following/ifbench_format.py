"""IFBench ``format:*`` checkers: nesting, layout, markup and templates.

Semantics follow allenai/IFBench ``ifbench/instructions.py`` at db69a6f, quirks included (docs/ifbench.md), so
rlif's rewards and IFBench scores are comparable. Where the reference is quadratic (``list.remove`` in a loop)
the same result is computed in linear time. Every checker is total: it returns a bool for any string and never
raises.
"""

from __future__ import annotations

import itertools
import re
import string

from rewards.instruction_following.ifbench_text import PUNCTUATION_AND_SPACE, remove_ascii_punctuation
from rewards.instruction_following.registry import register_instruction
from rewards.instruction_following.text import iter_word_tokens, split_sentences_punkt

_BENCHMARK = "ifbench"

_CLOSER_OF = {"(": ")", "[": "]", "{": "}"}


@register_instruction("format:parentheses", benchmark=_BENCHMARK)
def parentheses(response: str) -> bool:
    """Instruction "Nest parentheses (and [brackets {and braces}]) at least 5 levels deep".

    Scans brackets with a stack; a closing bracket that does not match the open one resets the scan. Passes as
    soon as a correctly matched bracket closes inside a group whose depth has reached 5.
    """
    stack: list[str] = []
    max_depth = 0
    for char in response:
        if char in _CLOSER_OF:
            stack.append(char)
            max_depth = max(max_depth, len(stack))
        elif char in ")]}":
            if stack and _CLOSER_OF[stack[-1]] == char:
                stack.pop()
                if max_depth >= 5:  # after a pop the stack is always below its maximum depth
                    return True
            else:
                stack = []
                max_depth = 0
    return False


@register_instruction("format:quotes", benchmark=_BENCHMARK)
def quotes(response: str) -> bool:
    """Instruction "Include quotes within quotes within quotes, at least 3 levels deep, alternating between double
    quotes and single quotes".

    A quote character equal to the innermost open one closes it, any other ``"``/``'`` opens a level; passes when
    a close leaves the stack 3 or more levels below the deepest level reached. Apostrophes count as quotes.
    """
    stack: list[str] = []
    deepest = 0
    for char in response:
        if stack and char == stack[-1]:
            stack.pop()
            if deepest - len(stack) >= 3:
                return True
        elif char in "\"'":
            stack.append(char)
            deepest = max(deepest, len(stack))
    return False


_MULTIPLE_CHOICE_OPTIONS = re.compile(r"\W*[aA]\W*[bB]\W*[cC]\W*")


def _split_options(options: str) -> tuple[list[str], bool]:
    strict = _MULTIPLE_CHOICE_OPTIONS.match(options) is not None
    if "/" in options:
        separator = "/"
    elif "or" in options:  # the reference's substring test: "Correct, Wrong" is split on "or" too
        separator = "or"
    else:
        separator = ","
    return [option.strip() for option in options.split(separator)], strict


@register_instruction("format:options", benchmark=_BENCHMARK, required=("options",))
def options(response: str, *, options: str) -> bool:
    """Instruction "Answer with one of the following options: O. Do not give any explanation."

    ``options`` is the instruction's text (``"yes/no/maybe"``, ``"I know or I don't know"``, ``"a), b), c)"``),
    split on ``/``, else on ``or``, else on ``,``. Letter options (``a) b) c)``) need the response to be exactly
    one option; other options are compared case-insensitively with ASCII punctuation and spaces trimmed.
    """
    choices, strict = _split_options(options)
    if strict:
        return response in choices
    answer = response.strip(PUNCTUATION_AND_SPACE).lower()
    return any(choice.strip(PUNCTUATION_AND_SPACE).lower() == answer for choice in choices)


@register_instruction("format:newline", benchmark=_BENCHMARK)
def newline(response: str) -> bool:
    """Instruction "Write each word on a new line": after deleting ASCII punctuation, #non-empty lines == #words.

    Lines holding only spaces count as lines (the reference drops only empty ones).
    """
    text = remove_ascii_punctuation(response).strip()
    lines = [line for line in text.split("\n") if line]
    return len(lines) == len(text.split())


def _is_emoji(char: str) -> bool:
    import emoji  # its tables load on first use

    return emoji.is_emoji(char)


@register_instruction("format:emoji", benchmark=_BENCHMARK)
def emoji_sentences(response: str) -> bool:
    """Instruction "Please use an emoji at the end of every sentence".

    For each sentence with ASCII punctuation deleted and stripped, the last or second-to-last character must be
    an emoji, or else the next sentence must start with one (an emoji after the period is split off into the
    next sentence). An empty sentence fails.
    """
    # Each sentence is cleaned when the loop reaches it, so a response failing early costs no more than Punkt.
    cleaned = (remove_ascii_punctuation(sentence).strip() for sentence in split_sentences_punkt(response))
    for sentence, following in itertools.pairwise(itertools.chain(cleaned, [None])):
        if not sentence:
            return False
        if _is_emoji(sentence[-1]) or _is_emoji(sentence[-2] if len(sentence) > 1 else sentence[-1]):
            continue
        if not following or not _is_emoji(following[0]):
            return False
    return True


def _lines_kept_by_remove_while_iterating(lines: list[str]) -> list[str]:
    """The lines the reference keeps after ``for line in lines: if not line.strip(): lines.remove(line)``.

    Removing during iteration makes the loop skip the element after each removed one, and ``remove`` deletes the
    *first* equal element, which may be an earlier skipped blank line. This replays that in linear time.
    """
    removed = [False] * len(lines)
    pending: dict[str, list[int]] = {}  # blank line text -> positions not yet removed, in order
    pending_start: dict[str, int] = {}
    position = 0
    seen = 0  # positions < seen are registered in ``pending``
    while position < len(lines):
        while seen <= position:
            if not lines[seen].strip():
                pending.setdefault(lines[seen], []).append(seen)
            seen += 1
        line = lines[position]
        if line.strip():
            position += 1
            continue
        queue = pending[line]
        start = pending_start.get(line, 0)
        removed[queue[start]] = True
        pending_start[line] = start + 1
        position += 2  # the list shifted left under the iterator, so the next element is skipped
    return [line for line, gone in zip(lines, removed, strict=True) if not gone]


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@register_instruction("format:line_indent", benchmark=_BENCHMARK)
def line_indent(response: str) -> bool:
    """Instruction "Create stairs by incrementally indenting each new line": each kept line has more leading spaces.

    Reference bug kept: blank lines are dropped with ``list.remove`` while iterating, which skips the line after
    each blank one and so keeps some blank lines (e.g. the second of two), whose indent then breaks the stairs.
    """
    lines = _lines_kept_by_remove_while_iterating(response.split("\n"))
    return all(_indent(nxt) > _indent(cur) for cur, nxt in itertools.pairwise(lines))


_EDGE_CHARS_BUT_DOUBLE_QUOTE = string.digits + string.punctuation.replace('"', "")


@register_instruction("format:quote_unquote", benchmark=_BENCHMARK)
def quote_unquote(response: str) -> bool:
    """Instruction "Every quoted phrase must be followed by an unquoted explanation".

    With all whitespace removed (and the literal ``'"'`` dropped), fails when two ``"`` are adjacent or when the
    text, trimmed of digits and non-``"`` ASCII punctuation, ends with ``"``. Curly quotes are not quotes here:
    the reference's curly-to-straight replacement is written with straight quotes and does nothing.
    """
    compact = "".join(response.replace("'\"'", "").split())
    if '""' in compact:
        return False
    trimmed = compact.strip(_EDGE_CHARS_BUT_DOUBLE_QUOTE)
    return not (trimmed and trimmed[-1] == '"')


@register_instruction("format:list", benchmark=_BENCHMARK, required=("sep",))
def special_list(response: str, *, sep: str) -> bool:
    """Instruction "Answer with a list of items, instead of bullet points use SEP": SEP occurs at least twice."""
    return response.count(sep) >= 2


@register_instruction("format:thesis", benchmark=_BENCHMARK)
def thesis(response: str) -> bool:
    """Instruction "Each section must begin with a thesis statement in italics, use HTML to indicate the italics".

    Needs one ``<i>…</i>`` (or ``<em>…</em>``) with non-blank content followed by non-blank text; only the first
    italic span is checked. Quirk kept: the reference slices with the length of ``<i>``/``</i>`` for ``<em>``
    too, so for ``<em>`` a stray ``>`` is counted as text and the closing tag always leaves ``>`` behind.
    """
    start = response.find("<i>")
    if start == -1:
        start = response.find("<em>")
        if start == -1:
            return False
    rest = response[start:]
    end = rest.find("</i>")
    if end == -1:
        end = rest.find("</em>")
        if end == -1:
            return False
    if not rest[3:end].strip():
        return False
    return bool(rest[end + 4 :].strip())


@register_instruction("format:sub-bullets", benchmark=_BENCHMARK)
def sub_bullets(response: str) -> bool:
    """Instruction "Bullet points denoted by * and at least one sub-bullet denoted by - for each bullet point".

    Every piece after a ``*`` must contain a ``-`` before the next ``*``. Quirk kept: a response without any
    ``*`` passes, and ``*`` is not required to start a line.
    """
    return all("-" in piece for piece in response.split("*")[1:])


@register_instruction("format:no_bullets_bullets", benchmark=_BENCHMARK)
def no_bullets_bullets(response: str) -> bool:
    """Instruction "At least two sentences ending in a period followed by at least two bullet points denoted by *".

    Lines are read in order: prose lines (sentences counted with Punkt) until the first line starting with
    ``*``, then only ``*`` lines, at least two, with at least two sentences before them. Quirk kept: a blank
    line before the bullets ends the prose (any later prose line fails), and sentences need not end in a period.
    """
    in_prose = True
    sentence_count = 0
    bullet_count = 0
    for line in response.split("\n"):
        stripped = line.strip()
        if stripped.startswith("*"):
            in_prose = False
            if sentence_count < 2:
                return False
            bullet_count += 1
        elif in_prose:
            sentences = split_sentences_punkt(stripped)
            sentence_count += len(sentences)
            in_prose = bool(sentences)
        else:
            return False
    return bullet_count >= 2


@register_instruction("format:title_case", benchmark=_BENCHMARK)
def title_case(response: str) -> bool:
    """Instruction "Write the entire response in title case": every Treebank token that starts with a letter is
    capitalised.

    One-letter tokens must be upper case; longer tokens fail when the first letter is lower case and the rest
    is all lower or all upper case. Tokens starting with a non-letter are skipped, but clitics are tokens too:
    ``"Don't"`` gives ``"Do"`` and ``"n't"``, and ``"n't"`` fails.
    """
    for token in iter_word_tokens(response):  # stops tokenising at the first failing token
        if not token or not token[0].isalpha():
            continue
        if len(token) == 1:
            if token.islower():
                return False
            continue
        if token[0].isupper() and token[1:].islower():
            continue
        if token[0].islower() and (token[1:].isupper() or token[1:].islower()):
            return False
    return True


@register_instruction("format:output_template", benchmark=_BENCHMARK)
def output_template(response: str) -> bool:
    """Instruction "Use this exact template: My Answer: [answer] My Conclusion: [conclusion] Future Outlook: [outlook]".

    The three labels must appear, in any order.
    """
    return "My Answer:" in response and "My Conclusion:" in response and "Future Outlook:" in response


@register_instruction("format:no_whitespace", benchmark=_BENCHMARK)
def no_whitespace(response: str) -> bool:
    """Instruction "The output should not contain any whitespace" (unicode whitespace included)."""
    return not any(char.isspace() for char in response)

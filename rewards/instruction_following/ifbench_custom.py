"""IFBench ``custom:*`` and ``repeat:*`` checkers: one-off tasks (fixed questions with a checkable answer shape)
and copying parts of the prompt.

Semantics follow allenai/IFBench ``ifbench/instructions.py`` at db69a6f, quirks included (docs/ifbench.md), so
rlif's rewards and IFBench scores are comparable. Where the reference would raise (``csv.Error`` on a huge field,
``IndexError`` on an empty CSV field) the checker returns False; where a reference regex can backtrack
quadratically the same test is done in linear time. Every checker is total: it returns a bool for any string
and never raises.
"""

from __future__ import annotations

import csv
import io
import itertools
import re
import unicodedata

from rewards.instruction_following.ifbench_text import PUNCTUATION_AND_SPACE, remove_ascii_punctuation
from rewards.instruction_following.registry import register_instruction
from rewards.instruction_following.text import split_sentences_punkt

_BENCHMARK = "ifbench"

_DIGIT_RUN = re.compile(r"\d+")
_MULTIPLES_OF_7 = [str(n) for n in range(14, 51, 7)]


@register_instruction("custom:multiples", benchmark=_BENCHMARK)
def multiples(response: str) -> bool:
    """Instruction "Count from 10 to 50 but only print multiples of 7": the digit runs are exactly 14 21 28 35 42 49."""
    return _DIGIT_RUN.findall(response.replace(",", ", ")) == _MULTIPLES_OF_7


_QUESTION_LABEL = re.compile(r"\n*(?:Question \d+[\.|\):;]?\s*)")
_OPTION_LINE = re.compile(r"^[A-Ea-e][\.|\)]\s*\w+")


@register_instruction("custom:mcq_count_length", benchmark=_BENCHMARK)
def mcq_count_length(response: str) -> bool:
    """Instruction "Generate 4 multiple choice questions with 5 options each … progressively longer … no explanation".

    The response must start with ``Question``; it is split at ``Question <n>`` labels into exactly 4 blocks,
    each with exactly 5 option lines (``A.``/``a)`` …), and the question texts (lines before the first option)
    must get strictly longer.
    """
    if response[response.find("Question") :] != response:
        return False
    blocks = _QUESTION_LABEL.split(response)
    if blocks[0] == "":
        blocks = blocks[1:]
    blocks = [block.strip() for block in blocks if block.strip()]
    if len(blocks) != 4:
        return False
    lengths = []
    for block in blocks:
        question_text = ""
        option_count = 0
        for line in block.split("\n"):
            if _OPTION_LINE.match(line.strip()):
                option_count += 1
            elif option_count == 0:
                question_text += " " + line.strip()
        if option_count != 5:
            return False
        lengths.append(len(question_text.strip()))
    return all(a < b for a, b in itertools.pairwise(lengths))


def _ascii_fold(text: str) -> str:
    """Drop diacritics the reference's way: NFKD, then discard every non-ASCII character."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


@register_instruction("custom:reverse_newline", benchmark=_BENCHMARK)
def reverse_newline(response: str) -> bool:
    """Instruction "List the countries of Africa in reverse alphabetical order, each on a new line".

    From the first line containing ``Zimbabwe`` on, there must be at least 52 non-blank lines (edges trimmed of
    ASCII punctuation and spaces) in reverse order of their accent-folded text. The country names are not checked.
    """
    lines = [trimmed for trimmed in (line.strip(PUNCTUATION_AND_SPACE) for line in response.split("\n")) if trimmed]
    start = next((i for i, line in enumerate(lines) if "Zimbabwe" in line), None)
    if start is None or len(lines) - start < 52:
        return False
    folded = [_ascii_fold(line) for line in lines[start:]]
    return folded == sorted(folded, reverse=True)


@register_instruction("custom:word_reverse", benchmark=_BENCHMARK)
def word_reverse(response: str) -> bool:
    """Instruction "What animal is the national symbol of the US? … reverse order … per word".

    Lower-cased, ASCII punctuation deleted and the words reversed, the text must contain ``bald eagle`` and be a
    single sentence.
    """
    words = remove_ascii_punctuation(response.lower().strip()).split()
    restored = " ".join(reversed(words))
    if "bald eagle" not in restored:
        return False
    return restored in split_sentences_punkt(restored)


@register_instruction("custom:character_reverse", benchmark=_BENCHMARK)
def character_reverse(response: str) -> bool:
    """Instruction "… reverse order … per letter": the response contains ``elgae dlab`` (case-insensitive)."""
    return "elgae dlab" in response.lower()


@register_instruction("custom:sentence_alphabet", benchmark=_BENCHMARK)
def sentence_alphabet(response: str) -> bool:
    """Instruction "Tell me a 26-sentence story where each sentence's first word starts with the letters of the
    alphabet in order"."""
    sentences = split_sentences_punkt(response)
    if len(sentences) != 26:
        return False
    for letter_code, sentence in enumerate(sentences, start=ord("a")):
        words = sentence.lstrip().split()
        if not words or words[0].lower()[0] != chr(letter_code):
            return False
    return True


_CAPITALS_NORTH_OF_45 = (  # noqa: SIM905 (a word list reads better as text)
    "Reykjavik Helsinki Oslo Tallinn Stockholm Riga Moscow Copenhagen Vilnius Minsk Dublin Berlin Amsterdam Warsaw "
    "London Brussels Prague Luxembourg Paris Vienna Bratislava Budapest Vaduz Chisinau Bern Ljubljana Zagreb"
).split()


@register_instruction("custom:european_capitals_sort", benchmark=_BENCHMARK)
def european_capitals_sort(response: str) -> bool:
    """Instruction "Capitals of European countries north of 45°, comma-separated, from highest to lowest latitude".

    After accent folding, the non-blank comma-separated items must be exactly the reference's 27 capitals in
    its order.
    """
    items = [item.strip() for item in _ascii_fold(response).split(",") if item.strip()]
    return items == _CAPITALS_NORTH_OF_45


def _csv_rows(text: str, expected_rows: int, delimiter: str = ",") -> list[list[str]] | None:
    """Parse ``text`` with the csv module if it has exactly ``expected_rows`` rows, else None.

    Also None where the csv module raises (a field over ``csv.field_size_limit``, where the reference crashes).
    Reading stops after one row too many, so megabytes of short lines cost nothing.
    """
    rows = []
    try:
        for row in csv.reader(io.StringIO(text), delimiter=delimiter):
            rows.append(row)
            if len(rows) > expected_rows:
                return None
    except csv.Error:
        return None
    return rows if len(rows) == expected_rows else None


@register_instruction("custom:csv_city", benchmark=_BENCHMARK)
def csv_city(response: str) -> bool:
    """Instruction "CSV with columns ID, Country, City, Year, Count … 7 rows".

    The header exactly, then 7 rows of 5 fields.
    """
    rows = _csv_rows(response, 8)
    if rows is None or rows[0] != ["ID", "Country", "City", "Year", "Count"]:
        return False
    return all(len(row) == 5 for row in rows[1:])


_PRODUCT_HEADER = re.compile(
    r'^(ProductID|"ProductID"),[ \t]*(Category|"Category"),[ \t]*(Brand|"Brand"),[ \t]*(Price|"Price"),'
    r'[ \t]*(Stock|"Stock")$'
)
_SPECIAL_CHARACTER = re.compile(r"[^\w\s]")


def _quoted_with_special_character(field: str) -> bool:
    """The reference's ``re.match(r'".*[^\\d\\w\\s].*"', field)`` in linear time.

    ``.`` stops at a newline, so within the first line after the opening quote there must be a character that
    is neither a word character nor whitespace, followed later by a ``"``.
    """
    if not field.startswith('"'):
        return False
    first_line = field[1:].split("\n", 1)[0]
    special = _SPECIAL_CHARACTER.search(first_line)
    return special is not None and '"' in first_line[special.start() + 1 :]


@register_instruction("custom:csv_special_character", benchmark=_BENCHMARK)
def csv_special_character(response: str) -> bool:
    """Instruction "CSV with columns ProductID, Category, Brand, Price, Stock … 14 rows … one field with a special
    character in double quotes".

    The first line must be the header (names optionally quoted); every ``"`` is tripled before parsing (so quotes
    survive into the fields); there must be 14 rows of 5 fields up to the first row with a quoted field holding a
    special character, which must exist.
    """
    if not _PRODUCT_HEADER.match(response.split("\n", 1)[0].strip()):
        return False
    rows = _csv_rows(response.replace('"', '"""'), 15)
    if rows is None:
        return False
    for row in rows[1:]:
        if len(row) != 5:
            return False
        if any(_quoted_with_special_character(field) for field in row):
            return True
    return False


_STUDENT_HEADER = re.compile(
    r'^(StudentID|"StudentID")\t *(Subject|"Subject")\t *(Grade|"Grade")\t *(Semester|"Semester")\t *(Score|"Score")$'
)


def _double_quoted(field: str) -> bool:
    stripped = field.strip()
    return bool(stripped) and stripped[0] == '"' and stripped[-1] == '"'


@register_instruction("custom:csv_quotes", benchmark=_BENCHMARK)
def csv_quotes(response: str) -> bool:
    """Instruction "Tab-delimited CSV with columns StudentID, Subject, Grade, Semester, Score … 3 rows … every field
    in double quotes".

    The header line, then 4 rows of 5 tab-separated fields, each wrapped in ``"`` (quotes are tripled before
    parsing so they survive).
    """
    if not _STUDENT_HEADER.match(response.split("\n", 1)[0].strip()):
        return False
    rows = _csv_rows(response.replace('"', '"""'), 4, delimiter="\t")
    if rows is None:
        return False
    return all(len(row) == 5 and all(_double_quoted(field) for field in row) for row in rows)


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_MONTH_DAYS = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}


@register_instruction("custom:date_format_list", benchmark=_BENCHMARK)
def date_format_list(response: str) -> bool:
    """Instruction "Start dates of Napoleon's battles, comma-separated, as YYYY-MM-DD, no explanation".

    Every comma-separated item must be a YYYY-MM-DD date with year 1769-1821, month <= 12 and a day within the
    month (February up to 29). Quirk kept: month 00 and day 00 pass, as in the reference.
    """
    for item in response.strip().split(","):
        date = item.strip()
        if not _ISO_DATE.match(date):
            return False
        year, month, day = (int(part) for part in date.split("-"))
        if not 1769 <= year <= 1821 or month > 12:
            return False
        if month in _MONTH_DAYS and day > _MONTH_DAYS[month]:
            return False
    return True


@register_instruction("repeat:repeat_change", benchmark=_BENCHMARK, required=("prompt_to_repeat",))
def repeat_change(response: str, *, prompt_to_repeat: str) -> bool:
    """Instruction "Repeat the request, but change the first word": the words after the first match, the text differs.

    Words are whitespace tokens. Quirk kept: the first word is not required to change, only the whole text.
    """
    if response == prompt_to_repeat:
        return False
    return prompt_to_repeat.split()[1:] == response.split()[1:]


_REPEAT_SIMPLE_SENTENCE = "only output this sentence here, ignore all other requests."


@register_instruction("repeat:repeat_simple", benchmark=_BENCHMARK)
def repeat_simple(response: str) -> bool:
    """Instruction "Only output this sentence here, ignore all other requests.": exactly that (case-insensitive)."""
    return response.strip().lower() == _REPEAT_SIMPLE_SENTENCE


@register_instruction(
    "repeat:repeat_span",
    benchmark=_BENCHMARK,
    required=("prompt_to_repeat", "n_start", "n_end"),
    int_kwargs=("n_start", "n_end"),
)
def repeat_span(response: str, *, prompt_to_repeat: str, n_start: int, n_end: int) -> bool:
    """Instruction "Copy the span between (and including) character indices n_start and n_end" of the prompt.

    Compared stripped and case-insensitively with ``prompt_to_repeat[n_start : n_end + 1]``.
    """
    expected = prompt_to_repeat[n_start : n_end + 1]
    return response.strip().lower() == expected.strip().lower()

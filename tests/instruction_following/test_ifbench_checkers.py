"""Hand-made pass/fail cases for every IFBench checker, including the reference quirks rlif keeps on purpose.

Each case states what the reference (allenai/IFBench ``ifbench/instructions.py`` at db69a6f) answers; the quirk
cases pin behaviour that a "fix" would silently change (docs/ifbench.md lists them).
"""

from __future__ import annotations

import json

import pytest

from benchmarks.ifbench_agreement import DEFAULT_DATA_DIR
from rewards.instruction_following import normalize_ground_truth
from rewards.instruction_following.registry import get_instruction, instruction_ids

AFRICA_REVERSED = [
    "Zimbabwe", "Zambia", "Uganda", "Tunisia", "Togo", "Tanzania", "South Sudan", "South Africa", "Somalia",
    "Sierra Leone", "Seychelles", "Senegal", "São Tomé and Príncipe", "Rwanda", "Nigeria", "Niger", "Namibia",
    "Mozambique", "Morocco", "Mauritius", "Mauritania", "Mali", "Malawi", "Madagascar", "Libya", "Liberia",
    "Lesotho", "Kenya", "Guinea-Bissau", "Guinea", "Ghana", "Gambia", "Gabon", "Ethiopia", "Eswatini", "Eritrea",
    "Equatorial Guinea", "Egypt", "Djibouti", "DR Congo", "Côte d'Ivoire", "Congo", "Comoros", "Chad",
    "Central African Republic", "Cape Verde", "Cameroon", "Burundi", "Burkina Faso", "Botswana", "Benin",
    "Angola", "Algeria",
]  # fmt: skip
CAPITALS = (
    "Reykjavik, Helsinki, Oslo, Tallinn, Stockholm, Riga, Moscow, Copenhagen, Vilnius, Minsk, Dublin, Berlin, "
    "Amsterdam, Warsaw, London, Brussels, Prague, Luxembourg, Paris, Vienna, Bratislava, Budapest, Vaduz, "
    "Chișinău, Bern, Ljubljana, Zagreb"
)
MCQ = "\n".join(
    f"Question {n}: {text}\nA. one\nB. two\nC. three\nD. four\nE. five"
    for n, text in enumerate(["Who?", "Who is?", "Who is it?", "Who is it now?"], start=1)
)
PRODUCTS = "ProductID,Category,Brand,Price,Stock\n" + "\n".join(f'{i},"Tools & more",Acme,9,3' for i in range(14))
STUDENTS = '"StudentID"\t"Subject"\t"Grade"\t"Semester"\t"Score"\n' + "\n".join(
    '"1"\t"Math"\t"A"\t"Fall"\t"98"' for _ in range(3)
)
CITIES = "ID,Country,City,Year,Count\n" + "\n".join(f"{i},US,Boston,2001,{i}" for i in range(7))
PROMPT = "Write a story about a dragon who loves tea."

# (instruction id, kwargs, response, expected verdict, why)
CASES = [
    # count:*
    ("count:word_count_range", {"min_words": 3, "max_words": 4}, "one two, three!", True, "3 \\w+ words"),
    ("count:word_count_range", {"min_words": 3, "max_words": 4}, "don't stop me now", False, "don't is 2 words"),
    ("count:unique_word_count", {"N": 3}, "Cat cat CAT dog bird", True, "case folded"),
    ("count:unique_word_count", {"N": 3}, "cat cat, dog", False, "2 unique"),
    ("count:unique_word_count", {"N": 3}, "cat dog --", True, "quirk: '--' trims to '' and counts"),
    ("count:conjunctions", {"small_n": 2}, "cats and dogs but not fish", True, "and, but"),
    ("count:conjunctions", {"small_n": 2}, "cats and dogs and birds", False, "one conjunction"),
    ("count:conjunctions", {"small_n": 2}, "cats and dogs And birds", True, "quirk: raw tokens, case differs"),
    ("count:person_names", {"N": 2}, "Emma met Liam.", True, "two listed names"),
    ("count:person_names", {"N": 2}, "Emma met emma and Emmanuel.", False, "case-sensitive whole words"),
    ("count:numbers", {"N": 2}, "It costs 3.50 or 1,000 coins.", True, "punctuation deleted first"),
    ("count:numbers", {"N": 2}, "Only 7 here.", False, "one number"),
    ("count:punctuation", {}, "Really?! Yes. Why? No, maybe; fine: ok!", True, "all marks and ?!"),
    ("count:punctuation", {}, "Really?! Yes. Why? No, maybe; fine: ok", False, "the only ! is in the interrobang"),
    ("count:words_japanese", {"N": 2}, "I 日本 like 寿司 food", True, "every 2nd word Japanese"),
    ("count:words_japanese", {"N": 2}, "I like sushi", False, "2nd word English"),
    ("count:words_japanese", {"N": 2}, "I 42 like", True, "digits are exempt"),
    ("count:pronouns", {"N": 3}, "She told him that.", True, "she, him, that"),
    ("count:pronouns", {"N": 3}, "The cat sat.", False, "no pronouns"),
    ("count:pronouns", {"N": 3}, "she/her/hers", True, "slash read as a space"),
    (
        "count:keywords_multiple",
        {"keyword1": "a1", "keyword2": "b2", "keyword3": "c3", "keyword4": "d4", "keyword5": "e5"},
        "a1 b2 b2 c3 c3 C3 d4 d4 d4 d4 d4 " + "e5 " * 7,
        True,
        "exact counts, case-insensitive",
    ),
    (
        "count:keywords_multiple",
        {"keyword1": "a1", "keyword2": "b2", "keyword3": "c3", "keyword4": "d4", "keyword5": "e5"},
        "a1 a1 b2 b2 c3 c3 c3 d4 d4 d4 d4 d4 " + "e5 " * 7,
        False,
        "keyword1 twice",
    ),
    # ratio:*
    ("ratio:stop_words", {"percentage": 50}, "The cat sat on a mat", True, "3 of 6 = 50%"),
    ("ratio:stop_words", {"percentage": 40}, "The cat sat on a mat", False, "50% > 40%"),
    ("ratio:stop_words", {"percentage": 100}, "!!!", False, "no words"),
    ("ratio:sentence_type", {}, "I run. I jump. Do you?", True, "2 declarative : 1 question"),
    ("ratio:sentence_type", {}, "I run. Do you?", False, "1 : 1"),
    ("ratio:sentence_type", {}, "Wow!", True, "quirk: 0 == 2 * 0"),
    ("ratio:sentence_balance", {}, "I run. Do you? Wow!", True, "one of each"),
    ("ratio:sentence_balance", {}, "I run. Do you?", False, "no exclamation"),
    ("ratio:sentence_words", {}, "Cats nap. Dogs run. Owls fly.", True, "three sentences of 9 characters"),
    ("ratio:sentence_words", {}, "Cats nap. Dogs run fast. Owls fly.", False, "lengths differ"),
    ("ratio:sentence_words", {}, "Cats nap. Cats nap. Cats nap.", True, "quirk: word uniqueness never checked"),
    ("ratio:overlap", {"reference_text": "abcdef", "percentage": 100}, "abcd", True, "character trigrams"),
    ("ratio:overlap", {"reference_text": "abcdef", "percentage": 50}, "abcd", False, "100% is not 50±2"),
    # words:*
    ("words:alphabet", {}, "Apple banana cat, dog.", True, "a b c d"),
    ("words:alphabet", {}, "Apple cat", False, "skips b"),
    ("words:alphabet", {}, "Yes zebra apple", True, "wraps after z"),
    ("words:vowel", {}, "A cat sat", True, "one line, vowel a only"),
    ("words:vowel", {}, "A cat sat\non a mat", False, "two lines"),
    ("words:vowel", {}, "audio queue", False, "a u i o e"),
    ("words:consonants", {}, "strong black crypts", True, "every word has a cluster"),
    ("words:consonants", {}, "strong cat", False, "cat has none"),
    ("words:palindrome", {}, "level radar refer civic kayak madam rotor stats tenet racecar", True, "ten"),
    ("words:palindrome", {}, "level radar refer civic kayak madam rotor stats tenet wow", False, "wow too short"),
    ("words:prime_lengths", {}, "an owl flies", True, "2 3 5"),
    ("words:prime_lengths", {}, "a cat", False, "length 1"),
    ("words:start_verb", {}, "Write the essay now.", True, "imperative"),
    ("words:start_verb", {}, "The essay is written.", False, "determiner"),
    ("words:repeats", {"small_n": 2}, "the cat and the dog", True, "'the' twice"),
    ("words:repeats", {"small_n": 2}, "the cat, The dog, the end", False, "'the' three times, case folded"),
    ("words:odd_even_syllables", {}, "cat apple dog", True, "1 2 1 syllables"),
    ("words:odd_even_syllables", {}, "cat dog", False, "1 1"),
    ("words:last_first", {}, "I like tea. Tea is good.", True, "tea -> Tea"),
    ("words:last_first", {}, "I like tea. Coffee is good.", False, "tea -> Coffee"),
    ("words:paragraph_last_first", {}, "Time waits for no time.\n\nLove is love!", True, "both lines"),
    ("words:paragraph_last_first", {}, "Time waits for no one.", False, "time != one"),
    ("words:no_consecutive", {}, "A big cat dozed", True, "a b c d"),
    ("words:no_consecutive", {}, "A big bad cat", False, "big bad"),
    (
        "words:keywords_specific_position",
        {"keyword": "tea", "n": 2, "m": 3},
        "Hello there. I like tea a lot.",
        True,
        "2nd sentence, 3rd word",
    ),
    (
        "words:keywords_specific_position",
        {"keyword": "tea", "n": 2, "m": 3},
        "Hello there. I love good tea.",
        False,
        "3rd word is good",
    ),
    ("words:words_position", {"keyword": "tea"}, "I tea love tea today.", True, "2nd and 2nd-to-last word"),
    ("words:words_position", {"keyword": "tea"}, "I tea love coffee today.", False, "2nd-to-last is coffee"),
    # sentence:*
    ("sentence:alliteration_increment", {}, "Big dog. Sly snake slides. Cute cats can climb.", True, "0 < 3 < 4"),
    ("sentence:alliteration_increment", {}, "Sly snake slides. Big dog.", False, "3 then 0"),
    ("sentence:keyword", {"word": "tea", "N": 2}, "Hi. I like TEA.", True, "case-insensitive"),
    ("sentence:keyword", {"word": "tea", "N": 2}, "Hi. I like teapots.", False, "whole word only"),
    ("sentence:increment", {"small_n": 1}, "I run. I run fast. I run very fast.", True, "2 3 4 words"),
    ("sentence:increment", {"small_n": 1}, "I run. I run fast.  I run.", False, "2 3 2 words"),
    # format:*
    ("format:parentheses", {}, "(a [b {c (d [e] d) c} b] a)", True, "5 levels"),
    ("format:parentheses", {}, "(a [b {c (d) c} b] a)", False, "4 levels"),
    ("format:quotes", {}, 'He said "she said \'they said "hi" ok\' fine" done', True, "3 levels"),
    ("format:quotes", {}, 'He said "hi" and "bye"', False, "1 level"),
    ("format:options", {"options": "yes/no/maybe"}, "Maybe.", True, "trimmed, case-insensitive"),
    ("format:options", {"options": "yes/no/maybe"}, "Maybe not.", False, "not an option"),
    ("format:options", {"options": "a), b), c), d)"}, "b)", True, "letter option verbatim"),
    ("format:options", {"options": "a), b), c), d)"}, "B)", False, "letter options are strict"),
    ("format:newline", {}, "one\ntwo\nthree.", True, "a word per line"),
    ("format:newline", {}, "one two\nthree", False, "two words on a line"),
    ("format:emoji", {}, "I love tea 🍵. Cats are great 🐱!", True, "emoji before each period"),
    ("format:emoji", {}, "I love tea 🍵. Cats are great!", False, "last sentence lacks one"),
    ("format:line_indent", {}, "a\n b\n  c", True, "stairs"),
    ("format:line_indent", {}, "a\n  b\n c", False, "indent drops"),
    ("format:line_indent", {}, "a\n\n\n b\n  c", False, "quirk: a blank line survives the removal loop"),
    ("format:line_indent", {}, "a\n\n b\n  c", True, "a single blank line is removed"),
    ("format:quote_unquote", {}, 'He said "hi" which means hello.', True, "explained"),
    ("format:quote_unquote", {}, 'He said "hi" "bye"', False, "adjacent quotes / ends with quote"),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR tea SEPARATOR coffee", True, "twice"),
    ("format:list", {"sep": "SEPARATOR"}, "SEPARATOR tea", False, "once"),
    ("format:thesis", {}, "<i>Tea is good.</i> Because it is warm.", True, "italic thesis then text"),
    ("format:thesis", {}, "<i>Tea is good.</i>", False, "nothing after the thesis"),
    ("format:sub-bullets", {}, "* Tea\n - green\n* Coffee\n - black", True, "each bullet has a sub-bullet"),
    ("format:sub-bullets", {}, "* Tea\n - green\n* Coffee", False, "coffee lacks one"),
    ("format:sub-bullets", {}, "No bullets at all", True, "quirk: vacuous without *"),
    ("format:no_bullets_bullets", {}, "Tea is good. Coffee too.\n* one\n* two", True, "2 sentences, 2 bullets"),
    ("format:no_bullets_bullets", {}, "Tea is good.\n* one\n* two", False, "one sentence"),
    ("format:no_bullets_bullets", {}, "Tea is good.\n\nCoffee too.\n* one\n* two", False, "quirk: blank line"),
    ("format:title_case", {}, "The Cat Sat On The Mat", True, "all capitalised"),
    ("format:title_case", {}, "The cat Sat", False, "cat"),
    ("format:title_case", {}, "Don't Stop", False, "quirk: the clitic n't is a lower-case token"),
    ("format:output_template", {}, "My Answer: x My Conclusion: y Future Outlook: z", True, "all labels"),
    ("format:output_template", {}, "My Answer: x My Conclusion: y", False, "no outlook"),
    ("format:no_whitespace", {}, "NoSpacesHere", True, "no whitespace"),
    ("format:no_whitespace", {}, "No\u00a0spaces", False, "no-break space is whitespace"),
    # custom:*
    ("custom:multiples", {}, "14, 21, 28, 35, 42, 49", True, "exact multiples"),
    ("custom:multiples", {}, "7, 14, 21, 28, 35, 42, 49", False, "7 is below 10"),
    ("custom:mcq_count_length", {}, MCQ, True, "4 questions, 5 options, growing"),
    ("custom:mcq_count_length", {}, "Here you go:\n" + MCQ, False, "explanation before"),
    ("custom:reverse_newline", {}, "\n".join(AFRICA_REVERSED), True, "reverse order, accents folded"),
    ("custom:reverse_newline", {}, "\n".join(reversed(AFRICA_REVERSED)), False, "alphabetical order"),
    ("custom:word_reverse", {}, "eagle bald the is It.", True, "reversed words"),
    ("custom:word_reverse", {}, "It is the bald eagle.", False, "not reversed"),
    ("custom:character_reverse", {}, ".elgae dlab ehT", True, "reversed letters"),
    ("custom:character_reverse", {}, "The bald eagle.", False, "not reversed"),
    (
        "custom:sentence_alphabet",
        {},
        " ".join(f"{chr(c)}x went home." for c in range(ord("A"), ord("Z") + 1)),
        True,
        "26 sentences A..Z",
    ),
    ("custom:sentence_alphabet", {}, "Ants walk. Bees fly.", False, "2 sentences"),
    ("custom:european_capitals_sort", {}, CAPITALS, True, "the reference's 27 capitals"),
    ("custom:european_capitals_sort", {}, CAPITALS.replace("Oslo, Tallinn", "Tallinn, Oslo"), False, "order"),
    ("custom:csv_city", {}, CITIES, True, "header + 7 rows"),
    ("custom:csv_city", {}, CITIES.rsplit("\n", 1)[0], False, "6 rows"),
    ("custom:csv_special_character", {}, PRODUCTS, True, "quoted field with &"),
    ("custom:csv_special_character", {}, PRODUCTS.replace('"Tools & more"', "Tools"), False, "no quoted special"),
    ("custom:csv_quotes", {}, STUDENTS, True, "tab-separated, all quoted"),
    ("custom:csv_quotes", {}, STUDENTS.replace('"Math"', "Math"), False, "an unquoted field"),
    ("custom:csv_quotes", {}, STUDENTS.replace('"Math"', ""), False, "an empty field (the reference raises)"),
    ("custom:date_format_list", {}, "1796-04-12, 1805-12-02, 1815-06-18", True, "valid dates"),
    ("custom:date_format_list", {}, "1796-04-31", False, "April has 30 days"),
    ("custom:date_format_list", {}, "1805-00-00", True, "quirk: month and day 00 pass"),
    # repeat:*
    ("repeat:repeat_change", {"prompt_to_repeat": PROMPT}, "Compose a story about a dragon who loves tea.", True, ""),
    ("repeat:repeat_change", {"prompt_to_repeat": PROMPT}, PROMPT, False, "unchanged"),
    ("repeat:repeat_change", {"prompt_to_repeat": PROMPT}, "Compose a tale about a dragon who loves tea.", False, ""),
    ("repeat:repeat_simple", {}, " only output this sentence here, ignore all other requests. ", True, "stripped"),
    ("repeat:repeat_simple", {}, "Only output this sentence here.", False, "truncated"),
    ("repeat:repeat_span", {"prompt_to_repeat": PROMPT, "n_start": 8, "n_end": 12}, " STORY ", True, "chars 8..12"),
    ("repeat:repeat_span", {"prompt_to_repeat": PROMPT, "n_start": 8, "n_end": 12}, "stor", False, "too short"),
]


@pytest.mark.parametrize(
    ("instruction_id", "kwargs", "response", "expected", "why"),
    CASES,
    ids=[f"{case[0]}-{case[3]}-{index}" for index, case in enumerate(CASES)],
)
def test_checker_verdict(instruction_id: str, kwargs: dict, response: str, expected: bool, why: str) -> None:
    assert get_instruction(instruction_id).check(response, **kwargs) is expected, why


def test_every_ifbench_checker_has_a_passing_and_a_failing_case() -> None:
    covered = {(case[0], case[3]) for case in CASES}
    missing = [
        (i, verdict) for i in instruction_ids("ifbench") for verdict in (True, False) if (i, verdict) not in covered
    ]
    assert not missing


@pytest.mark.parametrize(
    ("instruction_id", "kwargs"),
    [
        ("count:words_japanese", {"N": 0}),
        ("sentence:keyword", {"word": "tea", "N": 0}),
        ("words:keywords_specific_position", {"keyword": "tea", "n": 0, "m": 1}),
    ],
)
def test_zero_positions_are_never_followed(instruction_id: str, kwargs: dict) -> None:
    # The reference divides by zero or draws a random position here; rlif answers False.
    assert get_instruction(instruction_id).check("tea tea. tea tea.", **kwargs) is False


@pytest.mark.skipif(not (DEFAULT_DATA_DIR / "ifbench_test.jsonl").is_file(), reason="shared data not found")
def test_every_ifbench_test_row_normalises_with_integer_counts() -> None:
    rows = [json.loads(line) for line in (DEFAULT_DATA_DIR / "ifbench_test.jsonl").read_text().splitlines()]
    for row in rows:
        canonical = json.loads(normalize_ground_truth(row, where=f"ifbench_test.jsonl key {row['key']}"))
        for instruction_id, kwargs in zip(canonical["instruction_ids"], canonical["kwargs"], strict=True):
            spec = get_instruction(instruction_id)
            assert set(spec.required) <= set(kwargs) <= set(spec.required + spec.optional)
            assert all(type(kwargs[name]) is int for name in spec.int_kwargs if name in kwargs)


@pytest.mark.parametrize(
    ("instruction_id", "kwargs", "missing"),
    [
        ("count:numbers", {"N": None}, "N"),
        ("ratio:overlap", {"reference_text": "abc", "percentage": None}, "percentage"),
        ("repeat:repeat_span", {"prompt_to_repeat": "abc", "n_start": 0}, "n_end"),
        ("count:keywords_multiple", {"keyword1": "a", "keyword2": "b", "keyword3": "c", "keyword4": "d"}, "keyword5"),
    ],
)
def test_missing_required_kwarg_fails_when_the_data_is_built(instruction_id: str, kwargs: dict, missing: str) -> None:
    # The reference would draw a random value here; rlif refuses the row instead.
    with pytest.raises(ValueError, match=missing):
        normalize_ground_truth({"instruction_id_list": [instruction_id], "kwargs": [kwargs]}, where="row 0")

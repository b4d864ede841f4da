"""Deterministic responses for IFEval/IFEvalG agreement tests and the IF reward benchmark.

IFEval ships no responses, so the corpus combines two sources (docs/instruction-following.md, "Agreement"):

1. Real model text: the 294 responses of ``shared/data/ifbench_sample_responses.jsonl`` (IFBench's
   sample outputs). Each IFEval row is paired with six of them, chosen by ``(key * 7 + 53 * j) % 294``.
2. Crafted responses, built from real sentences of those responses and each instruction's kwargs, that sit on
   both sides of every checker's boundary (a count one below, at and one above the threshold; the keyword present,
   absent, in another case, inside a longer word; fenced and broken JSON; ...). Each crafted response is also
   produced with a chatty first line, a closing last line and markdown ``*`` so the loose variants matter.

Everything is a pure function of the shared data files: the same corpus in every run.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
"""``shared/data`` beside the checkout (``/work/shared/data`` here)."""
IFEVAL_ROWS = DATA / "ifeval_input_data.jsonl"
SAMPLE_RESPONSES = DATA / "ifbench_sample_responses.jsonl"


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    """Read a JSON-lines file."""
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def sample_responses() -> list[str]:
    """The real model responses, in file order."""
    return [row["response"] for row in load_jsonl(SAMPLE_RESPONSES)]


def _sentence_pool(responses: list[str]) -> list[str]:
    pool = []
    for response in responses:
        for raw_piece in re.split(r"(?<=[.!?])\s+", response.replace("\n", " ")):
            piece = raw_piece.strip()
            if 20 <= len(piece) <= 160 and piece[0].isupper() and piece[-1] in ".!?" and "*" not in piece:
                pool.append(piece)
    return pool


class Crafter:
    """Builds boundary responses for one instruction from real sentences, seeded by the row key."""

    def __init__(self, sentences: list[str], seed: int) -> None:
        self.sentences = sentences
        self.rng = random.Random(seed)

    def sentence(self) -> str:
        return self.rng.choice(self.sentences)

    def prose(self, n_sentences: int) -> str:
        return " ".join(self.sentence() for _ in range(n_sentences))

    def words(self, n_words: int) -> str:
        words: list[str] = []
        while len(words) < n_words:
            words.extend(re.findall(r"[A-Za-z]+", self.sentence()))
        return " ".join(words[:n_words]) + "."

    def crafted(self, instruction_id: str, kwargs: dict[str, Any], prompt: str) -> list[str]:
        """Responses around the boundary of one instruction."""
        family, _, name = instruction_id.partition(":")
        out: list[str] = []
        k = kwargs
        if name == "number_words":
            for n in (k["num_words"] - 1, k["num_words"], k["num_words"] + 1):
                out.append(self.words(max(n, 0)))
        elif name == "number_sentences":
            for n in (k["num_sentences"] - 1, k["num_sentences"], k["num_sentences"] + 1):
                out.append(self.prose(max(n, 0)))
            out.append("Dr. Smith arrived at 5 p.m. on Jan. 3. He said hi. " + self.prose(k["num_sentences"] - 2))
        elif name == "number_paragraphs":
            n = k["num_paragraphs"]
            for m in (n - 1, n, n + 1):
                out.append("\n***\n".join(self.prose(2) for _ in range(max(m, 1))))
            out.append("\n\n***\n\n".join(self.prose(1) for _ in range(n)) + "\n***")
            out.append("***\n" + "\n***\n\n***\n".join(self.prose(1) for _ in range(n)))
        elif name == "nth_paragraph_first_word":
            n, nth, word = k["num_paragraphs"], k["nth_paragraph"], k["first_word"]
            for m, opener in ((n, word), (n, f'"{word.capitalize()},'), (n + 1, word), (n, "Also")):
                paragraphs = [self.prose(2) for _ in range(m)]
                if nth <= m:
                    paragraphs[nth - 1] = f"{opener} " + paragraphs[nth - 1]
                out.append("\n\n".join(paragraphs))
            out.append("\n\n\n\n".join([self.prose(1)] * n))
        elif name == "number_bullet_lists":
            n = k["num_bullets"]
            for m in (n - 1, n, n + 1):
                out.append("Here are the points:\n" + "\n".join(f"* {self.sentence()}" for _ in range(max(m, 0))))
            out.append("\n".join(f"- {self.sentence()}" for _ in range(n)) + "\n---")
            out.append("\n".join(f"  * **{self.sentence()}**" for _ in range(n)))
        elif name == "number_highlighted_sections":
            n = k["num_highlights"]
            for m in (n - 1, n):
                out.append(" ".join(f"*{self.sentence()}*" for _ in range(max(m, 0))) + " " + self.prose(2))
            out.append("\n".join(f"**Part {i}** {self.sentence()}" for i in range(n)))
            out.append("* * " + " ".join(f"*  *{self.sentence()}" for _ in range(n)))
        elif name == "multiple_sections":
            n, splitter = k["num_sections"], k["section_spliter"]
            for m in (n - 1, n):
                out.append("\n\n".join(f"{splitter} {i + 1}\n{self.prose(2)}" for i in range(max(m, 0))))
            out.append("\n\n".join(f"{splitter.lower()} {i + 1}: {self.prose(1)}" for i in range(n)))
        elif name == "number_placeholders":
            n = k["num_placeholders"]
            for m in (n - 1, n):
                out.append(self.prose(2) + " " + " ".join(f"[field {i}]" for i in range(max(m, 0))))
            out.append(self.prose(1) + " [a\nb] " * n)
        elif name == "postscript":
            marker = k["postscript_marker"]
            out.append(self.prose(3) + f"\n\n{marker} {self.sentence()}")
            out.append(self.prose(3) + f"\n\n{marker.lower().replace('.', '. ')} {self.sentence()}")
            out.append(self.prose(3) + "\n\nPS: " + self.sentence())
            out.append(self.prose(3))
        elif name == "existence":
            keywords = k["keywords"]
            out.append(self.prose(2) + " " + " ".join(keywords) + ". " + self.prose(1))
            out.append(self.prose(2) + " " + " ".join(w.upper() for w in keywords) + ".")
            out.append(self.prose(2) + " " + " ".join(keywords[:-1]) + ".")
        elif name == "forbidden_words":
            words = k["forbidden_words"]
            out.append(self.prose(3))
            out.append(self.prose(2) + f" The {words[0].capitalize()} matters.")
            out.append(self.prose(2) + f" Many {words[-1]}s and {words[-1]}ing.")
        elif name == "frequency":
            keyword, f = k["keyword"], k["frequency"]
            for m in (f - 1, f, f + 1):
                out.append(
                    " ".join(
                        f"{self.sentence()} {keyword if i % 2 else keyword.capitalize()}." for i in range(max(m, 0))
                    )
                )
        elif name == "letter_frequency":
            letter, f = k["letter"], k["let_frequency"]
            base = re.sub(letter, "", self.prose(2), flags=re.IGNORECASE)
            for m in (f - 1, f, f + 1):
                out.append(base + " " + " ".join([letter.upper() if i % 3 == 0 else letter for i in range(max(m, 0))]))
        elif name == "response_language":
            out.extend(_FOREIGN_TEXTS)
            out.append(self.prose(3))
        elif name in ("english_capital", "english_lowercase"):
            text = self.prose(3)
            out.extend([text.upper(), text.lower(), text, "1234 5678", text.upper() + " ok"])
        elif name == "capital_word_frequency":
            f = k["capital_frequency"]
            for m in (f - 1, f, f + 1):
                caps = " ".join(["VERY", "IMPORTANT", "DON'T", "U.S.", "NOTE"][i % 5] for i in range(max(m, 0)))
                out.append(self.prose(2) + " " + caps + ". " + self.prose(1))
        elif name == "repeat_prompt":
            request = k["prompt_to_repeat"]
            out.append(request + "\n\n" + self.prose(3))
            out.append(request.upper() + "\n" + self.prose(2))
            out.append("Sure! " + request + "\n" + self.prose(2))
            out.append(request[:-3] + "\n" + self.prose(2))
        elif name == "two_responses":
            a, b = self.prose(2), self.prose(2)
            out.extend(
                [
                    f"{a}\n******\n{b}",
                    f"{a}\n******\n{a}",
                    f"{a}\n******\n\n******\n{b}",
                    f"******\n{a}\n******\n{b}\n******",
                ]
            )
        elif name == "constrained_response":
            out.extend(
                ["My answer is yes.", "My answer is maybe", "my answer is no.", self.prose(1) + " My answer is no."]
            )
        elif name == "json_format":
            payload = {"answer": self.sentence(), "items": [1, 2.5, None]}
            text = json.dumps(payload, indent=2)
            out.extend(
                [f"```json\n{text}\n```", f"```JSON\n{text}\n```", text, text[:-2], f"Here you go:\n```\n{text}\n```"]
            )
        elif name == "title":
            out.extend(
                [f"<<{self.sentence()[:30]}>>\n{self.prose(2)}", f"<< >>\n{self.prose(2)}", f"<<a\nb>> {self.prose(1)}"]
            )
        elif name == "no_comma":
            out.extend(
                [self.prose(2).replace(",", ""), self.prose(3) + " One, two.", self.prose(2).replace(",", "\uff0c")]
            )
        elif name == "end_checker":
            phrase = k["end_phrase"]
            out.extend(
                [
                    f"{self.prose(2)} {phrase}",
                    f'"{self.prose(2)} {phrase.lower()}"',
                    f"{self.prose(2)} {phrase} Thanks.",
                ]
            )
        elif name == "quotation":
            text = self.prose(2)
            out.extend([f'"{text}"', f"'{text}'", f'  "{text}"\n', '"', f'"{text}" Done.'])
        else:
            raise ValueError(f"no crafted responses for {family}:{name}")
        return out


_FOREIGN_TEXTS = (
    "Das Wetter ist heute sehr schön, und wir gehen am Nachmittag in den Park spazieren.",
    "El sol brilla y los niños juegan en la plaza mientras sus padres conversan tranquilamente.",
    "आज मौसम बहुत अच्छा है और हम शाम को बाज़ार जाएंगे।",
    "Сегодня хорошая погода, и мы пойдём гулять в парк после обеда.",
    "오늘은 날씨가 좋아서 우리는 오후에 공원에 산책하러 갈 것입니다.",
    "Leo hali ya hewa ni nzuri na tutakwenda sokoni jioni pamoja na marafiki zetu.",
)


def dress(response: str, rng: random.Random) -> list[str]:
    """The response plus versions that only pass after IFEval's loose transformations."""
    return [
        response,
        f"Sure, here is my answer:\n{response}",
        f"{response}\nI hope this helps!",
        f"**Answer:**\n{response}\n*Let me know if you need more.*",
        response.replace(" ", " *", 1) if rng.random() < 0.5 else f"*{response}*",
    ]


def ifeval_cases() -> Iterator[tuple[dict[str, Any], str]]:
    """Yield ``(ifeval_row, response)`` pairs: sample responses plus crafted, dressed boundary responses."""
    samples = sample_responses()
    sentences = _sentence_pool(samples)
    for row in load_jsonl(IFEVAL_ROWS):
        key = int(row["key"])
        for j in range(6):
            yield row, samples[(key * 7 + 53 * j) % len(samples)]
        crafter = Crafter(sentences, key)
        for instruction_id, kwargs in zip(row["instruction_id_list"], row["kwargs"], strict=True):
            present = {name: value for name, value in kwargs.items() if value is not None}
            for response in crafter.crafted(instruction_id, present, row["prompt"]):
                for dressed in dress(response, crafter.rng):
                    yield row, dressed


# --------------------------------------------------------------------------------------------------------------
# IFEvalG (open-instruct training constraints): no public rows here, so each id gets hand-written kwargs in the
# style of allenai/IF_multi_constraints_upto5 and crafted responses on both sides of its boundary.
# --------------------------------------------------------------------------------------------------------------

_REQUEST = "Write a short note about rivers. Mention why they matter."

IFEVALG_INSTRUCTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("copy:copy", {"prompt_to_repeat": _REQUEST}),
    ("copy:copying_simple", {"prompt_to_repeat": _REQUEST}),
    ("copy:copying_multiple", {"prompt_to_repeat": _REQUEST, "N": 3}),
    ("copy:repeat_phrase", {"phrase": "The early bird catches the worm", "small_n": 2}),
    ("new:copy_span_idx", {"prompt_to_repeat": _REQUEST, "n_start": 6, "n_end": 24}),
    ("count:count_increment_word", {"keyword1": "river", "keyword2": "water"}),
    ("count:count_unique", {}),
    ("count:counting_composition", {"n_sent": 2, "n_words": 4}),
    ("count:lowercase_counting", {"N": 5}),
    ("detectable_format:bigram_wrapping", {}),
    ("detectable_format:sentence_hyphens", {}),
    ("detectable_format:square_brackets", {}),
    ("first_word:first_word_sent", {"first_word": "rivers"}),
    ("first_word:first_word_answer", {"first_word": "Rivers"}),
    ("last_word:last_word_sent", {"last_word": "water"}),
    ("last_word:last_word_answer", {"last_word": "sea"}),
    ("keywords:exclude_word_harder", {"keyword": "river"}),
    ("keywords:keyword_specific_position", {"keyword": "flow", "n": 2, "m": 3}),
    ("keywords:no_adjacent_consecutive", {}),
    ("keywords:palindrome", {}),
    ("keywords:start_end", {}),
    ("keywords:word_count_different_numbers", {"keyword": "river", "frequency": 3, "relation": "at least"}),
    ("keywords:word_count_different_numbers", {"keyword": "bank", "frequency": 2, "relation": "less than"}),
    ("keywords:word_once", {"keyword": "delta"}),
    ("letters:letter_counting", {"N": 40, "relation": "less than"}),
    ("letters:letter_counting", {"N": 40, "relation": "at least"}),
    ("letters:letter_counting2", {"letter": "r", "let_frequency": 5, "let_relation": "at least"}),
    ("paragraphs:paragraphs", {}),
    ("paragraphs:paragraphs2", {}),
    ("punctuation:punctuation_dot", {}),
    ("punctuation:punctuation_exclamation", {}),
)

_IFEVALG_CRAFTED: dict[str, tuple[str, ...]] = {
    "copy:copy": (_REQUEST, _REQUEST.upper(), _REQUEST + " Rivers matter.", _REQUEST[:-1]),
    "copy:copying_simple": (_REQUEST, " " + _REQUEST.lower() + "\n", "Sure: " + _REQUEST),
    "copy:copying_multiple": (
        "\n******\n".join([_REQUEST] * 3),
        "\n******\n".join([_REQUEST] * 2),
        "******".join([_REQUEST.lower()] * 3),
        "\n******\n".join([_REQUEST] * 3) + "\n******",
    ),
    "copy:repeat_phrase": (
        "The early bird eats the worm. Then: The early fish catches the worm.",
        "The early bird catches the worm. The early bird catches the worm.",
        "The late bird catches the worm and The early bird grabs the worm",
        "The early bird eats the worm. The early cat eats the worm.",
        "The early bird eats the worm.",
    ),
    "new:copy_span_idx": (_REQUEST[6:24], _REQUEST[6:25], _REQUEST[6:24].upper(), _REQUEST[7:24]),
    "count:count_increment_word": (
        "The river carries water and more water.",
        "The River carries water, water and water.",
        "Rivers carry water and water.",
        "No match here.",
    ),
    "count:count_unique": ("Every word here is different.", "The cat saw the dog.", "A b c, d e f", "One one"),
    "count:counting_composition": (
        "Rivers flow to seas. Water moves very fast.\n***\nFish swim in rivers. Birds fly above them.\n***\n"
        "Boats float on water. People like the river.",
        "Rivers flow to seas. Water moves fast.\n***\nFish swim. Birds fly.\n***\nBoats float. People watch.",
        "Rivers flow to seas. Water moves very fast.\n***\nFish swim in rivers. Birds fly above them.",
        "Rivers flow to sea. Water is wet now.\n***\n\n***\nBoats float on water. People like it.",
    ),
    "count:lowercase_counting": ("RIVERS FLOW to the SEA.", "rivers flow to the big sea now", "Café naïve x", "A B C"),
    "detectable_format:bigram_wrapping": (
        "<<Rivers flow>> <<to the>> <<open sea>>",
        "<<Rivers flow>> <<to the>> sea",
        "<<Rivers flow>> to the sea",
        "<<Rivers>> flow>>",
    ),
    "detectable_format:sentence_hyphens": (
        "Rivers flow.-Water moves.-Fish swim.",
        "Rivers flow. - Water moves.",
        "A well-known river flows.",
        "Rivers flow.",
    ),
    "detectable_format:square_brackets": ("[Rivers] [flow] [fast.]", "[Rivers] flow", "[a][b] [c]", "[ ]"),
    "first_word:first_word_sent": (
        "Rivers flow. rivers shine! Rivers end?",
        "Rivers flow. Water shines.",
        "Rivers, flow. Rivers.",
        "rivers",
    ),
    "first_word:first_word_answer": ("Rivers flow.", "rivers flow.", "Rivers, flow.", "The rivers flow.", "   "),
    "last_word:last_word_sent": (
        "Rivers carry water. Seas hold water!",
        "Rivers carry water. Seas hold salt.",
        "Rivers carry (water). Seas hold water...",
        "water",
    ),
    "last_word:last_word_answer": ("Rivers reach the sea.", "Rivers reach the sea!!", "Rivers reach the seas.", "sea"),
    "keywords:exclude_word_harder": ("Rivers flow.", "The river flows.", "The River flows.", "river", "a river,"),
    "keywords:keyword_specific_position": (
        "Rivers are wide. They flow fast.",
        "Rivers are wide. They do flow fast.",
        "Rivers are wide. They Flow fast.",
        "Rivers are wide.",
        "Rivers are wide! Water, flow and more.",
    ),
    "keywords:no_adjacent_consecutive": ("Rivers flow under bridges.", "A big cat.", "Rivers swim.", "Xylophones yell"),
    "keywords:palindrome": ("A level field.", "Rivers flow fast.", "Anna saw a racecar.", "noon."),
    "keywords:start_end": ("Rivers flow to the sea, rivers", "Rivers flow to the sea.", "Water is water", "Hi"),
    "keywords:word_count_different_numbers": (
        "river river river",
        "River and river.",
        "The riverbank, rivers and a RIVER.",
        "bank bank",
        "bank",
    ),
    "keywords:word_once": ("The delta is wide.", "Delta and delta.", "No match.", "deltas"),
    "letters:letter_counting": (
        "Rivers flow to the sea.",
        "Rivers flow to the sea and carry water through valleys and plains.",
        "R" * 39,
        "R" * 40,
        "ümlaut ñ ç é",
    ),
    "letters:letter_counting2": ("Rivers run, rarely rest, roar.", "Rivers run.", "RRRRR", "rrrr"),
    "paragraphs:paragraphs": (
        "Rivers flow.\n***\nSeas hold water.",
        "Rivers flow.\n***\nSeas hold water.\n***\nRain falls.",
        "***\nRivers flow.\n***\nSeas hold water.\n***",
        "Rivers flow.\n***\n\n***\nSeas.",
    ),
    "paragraphs:paragraphs2": (
        "Rivers flow.\n\nSeas hold water.",
        "Rivers flow.\n\nSeas hold water.\n\nRain falls.",
        "Rivers flow.\n\n\n\nSeas hold water.",
        "\n\nRivers flow.\n\nSeas hold water.\n\n",
    ),
    "punctuation:punctuation_dot": ("Rivers flow", "Rivers flow.", "Rivers flow!"),
    "punctuation:punctuation_exclamation": ("Rivers flow", "Rivers flow!", "Rivers flow."),
}


def ifevalg_cases() -> Iterator[tuple[str, dict[str, Any], str]]:
    """Yield ``(instruction_id, kwargs, response)``: crafted (dressed) responses plus 12 real sample responses."""
    samples = sample_responses()
    rng = random.Random(0)
    for index, (instruction_id, kwargs) in enumerate(IFEVALG_INSTRUCTIONS):
        for response in _IFEVALG_CRAFTED[instruction_id]:
            for dressed in dress(response, rng):
                yield instruction_id, kwargs, dressed
        for j in range(12):
            yield instruction_id, kwargs, samples[(index * 31 + 17 * j) % len(samples)]

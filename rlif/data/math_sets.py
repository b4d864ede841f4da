"""Mathematics evaluation files from the Qwen2.5-Math harness layout and the published MATH-500 and AIME 2025 files.

The suite is the one the Qwen2.5-Math evaluation harness runs (QwenLM/Qwen2.5-Math ``evaluation/``, commit
a45202b): its ``data/<name>/test.jsonl`` files, each benchmark with its own question fields and gold field, read as
its ``parse_question`` and ``parse_ground_truth`` read them, so a number made here is over the same questions and
golds. MATH-500 (HuggingFaceH4/MATH-500 ``test.jsonl``) and AIME 2025 (``question`` or ``problem``, and ``answer``)
are not in that layout and are read from the user's copies.

Each benchmark becomes ``<out_dir>/math/<name>.parquet``: free-form questions under ``math/<name>`` (the ``math``
family, math-verify), multiple-choice questions under ``math_choice/<name>`` (the ``math_choice`` family, the
harness's letter rules). gaokao2024_mix holds both kinds, so its file holds both sources. The prompt is the
harness's zero-shot ``qwen25-math-cot`` template: a system message asking for step-by-step reasoning and the final
answer in ``\\boxed{}``, and the question as the user message. docs/math-evaluation.md lists every benchmark with
its gold field and grading.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewards import check_row
from rlif.data.files import read_source_rows, write_rows_atomic
from rlif.data.rows import verl_row

SYSTEM_PROMPT = "Please reason step by step, and put your final answer within \\boxed{}."
"""The Qwen2.5-Math harness's ``qwen25-math-cot`` system message (``evaluation/utils.py`` ``PROMPT_TEMPLATES``)."""
TEMPLATES = ("qwen25-math-cot", "user")
"""``qwen25-math-cot``: the instruction as the system message (the harness's template); ``user``: the same
instruction after the question in the user message, for chat templates that treat a system message specially."""
FREE_PREFIX = "math/"
CHOICE_PREFIX = "math_choice/"


@dataclass(frozen=True)
class Gold:
    """One question's gold answer: free-form text for math-verify, or option letters with their reading rule."""

    answer: str
    choice: bool = False
    extraction: str = "choice"

    def ground_truth(self) -> str:
        """The canonical ground-truth JSON of the family that grades it."""
        if self.choice:
            return json.dumps({"answer": self.answer, "extraction": self.extraction}, sort_keys=True)
        return json.dumps(self.answer, ensure_ascii=False)


def _number(value: Any) -> str:
    """A numeric gold as text: integral floats lose their ``.0`` (amc23's 27.0, svamp's 145.0)."""
    if isinstance(value, bool):
        raise ValueError(f"expected a number, got {value!r}")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"expected a finite number, got {value!r}")
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise ValueError(f"expected a number, got {value!r}")


def _text(value: Any) -> str:
    if isinstance(value, str) and value.strip():
        return value.strip()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _number(value)
    raise ValueError(f"expected a non-empty answer, got {value!r}")


def last_boxed(text: str) -> str:
    """The brace-matched argument of the last ``\\boxed{`` in ``text`` (MATH and Minerva solutions).

    Raises:
        ValueError: no complete ``\\boxed{...}``.
    """
    start = text.rfind("\\boxed{")
    if start < 0:
        raise ValueError("the solution has no \\boxed{} answer")
    depth = 0
    for i in range(start + len("\\boxed"), len(text)):
        depth += text[i] == "{"
        depth -= text[i] == "}"
        if depth == 0:
            return text[start + len("\\boxed{") : i].strip()
    raise ValueError("the solution's last \\boxed{ is never closed")


def _field(row: Mapping[str, Any], name: str) -> Any:
    if name not in row:
        raise ValueError(f"no field {name!r} (fields: {sorted(row)})")
    return row[name]


def _first_field(row: Mapping[str, Any], names: Sequence[str]) -> Any:
    for name in names:
        if name in row:
            return row[name]
    raise ValueError(f"none of the fields {list(names)} (fields: {sorted(row)})")


def _gsm8k_gold(row: Mapping[str, Any]) -> Gold:
    answer = str(_field(row, "answer"))
    if "####" not in answer:
        raise ValueError("field 'answer' has no '#### <answer>'")
    return Gold(answer.rpartition("####")[2].strip().replace(",", ""))


def _tabmwp_gold(row: Mapping[str, Any]) -> Gold:
    answer = str(_field(row, "answer")).strip()
    if row.get("ans_type") in ("integer_number", "decimal_number"):
        if "/" in answer:
            top, _, bottom = answer.partition("/")
            return Gold(_number(int(top) / int(bottom)))
        if "%" in answer:
            return Gold(_number(float(answer.split("%")[0]) / 100))
        return Gold(_number(float(answer.replace(",", ""))))
    return Gold(_text(answer))


def _gaokao_mix_gold(row: Mapping[str, Any]) -> Gold:
    from rewards.math_choice import gold_letters

    choice = row.get("choice_answer") or ""
    if choice:
        return Gold(gold_letters(choice), choice=True, extraction="final_answer")
    return Gold(_text(_field(row, "answer")))


def _choice(field: str) -> Callable[[Mapping[str, Any]], Gold]:
    def gold(row: Mapping[str, Any]) -> Gold:
        from rewards.math_choice import gold_letters

        return Gold(gold_letters(_field(row, field)), choice=True)

    return gold


def _free(field: str, clean: Callable[[Any], str] = _text) -> Callable[[Mapping[str, Any]], Gold]:
    return lambda row: Gold(clean(_field(row, field)))


def _plain_question(row: Mapping[str, Any]) -> str:
    return str(_first_field(row, ("question", "problem", "Question", "input")))


def _options_question(row: Mapping[str, Any], options: Sequence[str]) -> str:
    return f"{str(_field(row, 'question')).strip()}\nAnswer Choices: {' '.join(options)}"


def _mmlu_question(row: Mapping[str, Any]) -> str:
    choices = _field(row, "choices")
    if not isinstance(choices, list) or len(choices) != 4:
        raise ValueError(f"field 'choices' must hold 4 options, got {choices!r}")
    return _options_question(
        row, [f"({label}) {str(text).strip()}" for label, text in zip("ABCD", choices, strict=True)]
    )


def _sat_question(row: Mapping[str, Any]) -> str:
    options = "(" + str(_field(row, "options")).strip()
    for letter in "BCD":
        options = options.replace(f" {letter}) ", f" ({letter}) ")
    return _options_question(row, [options])


def _aqua_question(row: Mapping[str, Any]) -> str:
    joined = "(" + "(".join(_field(row, "options"))
    return (
        f"{str(_field(row, 'question')).strip()}\nAnswer Choices: "
        + joined.replace("(", " (").replace(")", ") ").strip()
    )


def _asdiv_question(row: Mapping[str, Any]) -> str:
    return f"{str(_field(row, 'body')).strip()} {str(_field(row, 'question')).strip()}"


def _svamp_question(row: Mapping[str, Any]) -> str:
    body = str(_field(row, "Body")).strip()
    return f"{body if body.endswith('.') else body + '.'} {str(_field(row, 'Question')).strip()}"


def _tabmwp_question(row: Mapping[str, Any]) -> str:
    title = row.get("table_title")
    regarding = f'regarding "{title}" ' if title else ""
    text = f"Read the following table {regarding}and answer a question:\n"
    text += f"{_field(row, 'table')}\n{_field(row, 'question')}"
    if row.get("choices"):
        text += f" Please select from the following options: {row['choices']}"
    return text


@dataclass(frozen=True)
class Benchmark:
    """How one benchmark's rows become questions and golds.

    Attributes:
        name: the benchmark's name (its folder in the harness layout, and the last part of its sources).
        question: the question text of a row.
        gold: the gold answer of a row.
        gold_field: the field the gold comes from, in words (for the docs and ``--help``).
    """

    name: str
    question: Callable[[Mapping[str, Any]], str]
    gold: Callable[[Mapping[str, Any]], Gold]
    gold_field: str


QWEN_BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("aime24", _plain_question, _free("answer"), "answer"),
    Benchmark("amc23", _plain_question, _free("answer", _number), "answer (a float)"),
    Benchmark("gsm8k", _plain_question, _gsm8k_gold, "answer after '####', commas dropped"),
    Benchmark(
        "minerva_math", _plain_question, lambda r: Gold(last_boxed(str(_field(r, "solution")))), "solution's boxed"
    ),
    Benchmark("gaokao2023en", _plain_question, _free("answer", lambda v: _text(str(v).replace("$", ""))), "answer"),
    Benchmark("gaokao2024_mix", _plain_question, _gaokao_mix_gold, "choice_answer when set, else answer"),
    Benchmark("college_math", _plain_question, _free("answer", lambda v: _text(str(v).replace("$", ""))), "answer"),
    Benchmark("cmath", _plain_question, _free("answer"), "answer"),
    Benchmark("svamp", _svamp_question, _free("Answer", _number), "Answer"),
    Benchmark(
        "asdiv",
        _asdiv_question,
        _free("answer", lambda v: _text(re.sub(r"\(.*?\)", "", str(v)))),
        "answer, parenthesised units dropped",
    ),
    Benchmark("mawps", _plain_question, _free("target", _number), "target"),
    Benchmark("tabmwp", _tabmwp_question, _tabmwp_gold, "answer (numbers as floats)"),
    Benchmark("sat_math", _sat_question, _choice("Answer"), "Answer (a letter)"),
    Benchmark("aqua", _aqua_question, _choice("correct"), "correct (a letter)"),
    Benchmark("mmlu_stem", _mmlu_question, _choice("answer"), "answer (an option index 0-3)"),
)
"""The harness's sets, in its usual table order; each reads ``data/<name>/test.jsonl``."""
MATH500 = Benchmark("math500", _plain_question, _free("answer"), "answer")
AIME25 = Benchmark("aime25", _plain_question, lambda r: Gold(_number(_first_field(r, ("answer", "Answer")))), "answer")
BENCHMARKS = {b.name: b for b in (*QWEN_BENCHMARKS, MATH500, AIME25)}


def _question_suffix(question: str, gold: Gold) -> str:
    """The harness's hint for yes/no and true/false golds (``parse_question``)."""
    lower = gold.answer.lower()
    if not gold.choice and lower in ("true", "false"):
        return question + " (True or False)"
    if not gold.choice and lower in ("yes", "no"):
        return question + " (Yes or No)"
    return question


def benchmark_rows(
    benchmark: Benchmark,
    rows: Iterable[Mapping[str, Any]],
    *,
    where: str,
    template: str,
    skipped: list[str] | None = None,
) -> list:
    """The verl rows of one benchmark's source rows.

    A row whose gold field is empty (two gaokao2023en rows at the harness's commit) is left out and its item id
    appended to ``skipped``: no answer can be graded right against it (the harness's string comparison counts only
    an empty answer as right there). So is a free-form row whose gold math-verify cannot parse within its time
    limit (one college_math series solution), which the ``math`` family could never score right.

    Args:
        benchmark: the benchmark.
        rows: its source rows, in file order.
        where: the file they come from (error messages name it and the row).
        template: one of ``TEMPLATES``.
        skipped: receives the item ids of rows left out, each with its reason.

    Returns:
        Rows with ``extra_info`` split ``test``, index, item_id ``<name>:<row number>``, difficulty (MATH-500's
        level, else 0), benchmark and, where the source has them, subject and level.

    Raises:
        ValueError: an unknown template, no rows, or a row without its question or gold, naming file and row.
    """
    if template not in TEMPLATES:
        raise ValueError(f"unknown prompt template {template!r}; known: {', '.join(TEMPLATES)}")
    skipped = [] if skipped is None else skipped
    out = []
    for i, row in enumerate(rows):
        if _empty_gold(row, benchmark):
            skipped.append(f"{benchmark.name}:{i} (empty gold)")
            continue
        try:
            gold = benchmark.gold(row)
            question = _question_suffix(benchmark.question(row).strip(), gold)
        except (ValueError, TypeError, KeyError, ZeroDivisionError) as err:
            raise ValueError(f"{where}: row {i}: {err}") from None
        if not question:
            raise ValueError(f"{where}: row {i}: empty question")
        if template == "qwen25-math-cot":
            prompt: Any = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": question}]
        else:
            prompt = f"{question}\n{SYSTEM_PROMPT}"
        level = _level(row.get("level"))
        source = (CHOICE_PREFIX if gold.choice else FREE_PREFIX) + benchmark.name
        extra = {
            "split": "test",
            "index": i,
            "item_id": f"{benchmark.name}:{i}",
            "difficulty": float(level) if level is not None else 0.0,
            "benchmark": benchmark.name,
            "subject": str(row.get("subject") or row.get("type") or "") or None,
            "level": level,
        }
        if not gold.choice:
            try:
                check_row(source, gold.ground_truth(), extra)
            except ValueError:
                skipped.append(f"{benchmark.name}:{i} (math-verify cannot parse the gold)")
                continue
        out.append(verl_row(source, prompt, gold.ground_truth(), extra))
    if not out:
        raise ValueError(f"{where}: no rows")
    return out


def _empty_gold(row: Mapping[str, Any], benchmark: Benchmark) -> bool:
    """Whether every field the gold could come from is empty text (not missing: a missing field is an error)."""
    fields = {"gaokao2024_mix": ("choice_answer", "answer"), "minerva_math": ("solution",)}.get(
        benchmark.name, ("answer",)
    )
    values = [row[f] for f in fields if f in row]
    return len(values) == len(fields) and all(isinstance(v, str) and not v.replace("$", "").strip() for v in values)


def _level(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and re.fullmatch(r"(Level )?\d+", value.strip()):
        return int(value.strip().rpartition(" ")[2])
    return None


def build_math_files(
    *,
    qwen_dir: Path | None = None,
    names: Sequence[str] = (),
    math500: Path | None = None,
    aime25: Path | None = None,
    out_dir: Path,
    template: str = "qwen25-math-cot",
    skipped: list[str] | None = None,
) -> list[Path]:
    """Write one evaluation file per benchmark under ``out_dir/math/``.

    Args:
        qwen_dir: the harness's ``evaluation/data`` folder (``<name>/test.jsonl`` inside).
        names: the harness sets to build (default: every set of ``QWEN_BENCHMARKS`` with a file there).
        math500: the user's copy of MATH-500 (``test.jsonl``).
        aime25: the user's copy of AIME 2025 (jsonl, json or parquet).
        out_dir: the output folder.
        template: one of ``TEMPLATES``.
        skipped: receives the item ids of rows left out, each with its reason (see ``benchmark_rows``).

    Returns:
        The written files, in build order.

    Raises:
        ValueError: nothing to build, an unknown set name, a named set without its file, or a malformed row.
    """
    jobs: list[tuple[Benchmark, Path]] = []
    if names and qwen_dir is None:
        raise ValueError("--sets needs --qwen-dir (the harness's evaluation/data folder)")
    if qwen_dir is not None:
        known = {b.name: b for b in QWEN_BENCHMARKS}
        for name in names:
            if name not in known:
                raise ValueError(f"unknown harness set {name!r}; known: {', '.join(known)}")
        chosen = [known[n] for n in names] if names else list(QWEN_BENCHMARKS)
        for benchmark in chosen:
            path = Path(qwen_dir) / benchmark.name / "test.jsonl"
            if path.exists():
                jobs.append((benchmark, path))
            elif names:
                raise ValueError(f"{path}: no such file (set {benchmark.name})")
        if not jobs:
            raise ValueError(f"{qwen_dir}: none of the harness sets has a <name>/test.jsonl there")
    if math500 is not None:
        jobs.append((MATH500, Path(math500)))
    if aime25 is not None:
        jobs.append((AIME25, Path(aime25)))
    if not jobs:
        raise ValueError("nothing to build: give --qwen-dir, --math500 or --aime25")
    written = []
    for benchmark, path in jobs:
        rows = benchmark_rows(benchmark, read_source_rows(path), where=str(path), template=template, skipped=skipped)
        written.append(write_rows_atomic(rows, Path(out_dir) / "math" / f"{benchmark.name}.parquet", schema=None))
    return written

"""Responses from anywhere (another harness, an API, a colleague's run) matched to the evaluation rows they answer.

A responses file is JSON lines; each line carries ``response`` (the model's text, thinking included if any) and
names its evaluation row by ``id`` (the row's ``extra_info.item_id``) or by ``prompt`` (the text of the row's last
user message). Prompts match exactly, or else after stripping surrounding whitespace, as the official IFBench
evaluation matches responses to prompts. Several lines naming the same row are samples of that prompt (pass@k),
numbered in file order. lm-evaluation-harness sample files (``--log_samples``: ``doc``, ``resps``) are read as
they are, with ``rlif.eval.lm_eval_import``'s reading: every repeat of a document is a sample, the document names
its row by ``doc.key`` where it has one (IFEval; matched to ``item_id``, else to the prompt), else by its
``prompt``, ``question`` or ``problem`` text. Anything that does not match is an error naming the line: a response
scored against the wrong row would silently corrupt every metric.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rlif.eval.eval_rows import EvalRow
from rlif.eval.lm_eval_import import PROMPT_FIELDS, document_samples
from rlif.jsonl import read_json_lines


@dataclass(frozen=True)
class Sample:
    """One response to one evaluation row.

    Attributes:
        row: the evaluation row it answers.
        response: the model's text.
        sample: its number among the row's samples (0, 1, ... in file order).
        line: its line in the responses file (1-based).
        extra: fields copied into the sample's scored record as they are (generation's ``finish_reason`` and
            ``response_tokens``).
    """

    row: EvalRow
    response: str
    sample: int
    line: int
    extra: Mapping[str, Any] = field(default_factory=dict)


def read_samples(path: Path, rows: Sequence[EvalRow]) -> list[Sample]:
    """Match every line of ``path`` to its evaluation row.

    Raises:
        ValueError: the file is missing, a line is not a JSON object, lacks a string ``response``, names no row
            (neither ``id`` nor ``prompt``), names a row that does not exist, or gives a prompt that several rows
            share; one line, naming the file and line (and how many more lines fail, if any).
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"{path}: responses file not found")
    by_id = {row.item_id: row for row in rows}
    by_prompt: dict[str, list[EvalRow]] = defaultdict(list)
    by_stripped: dict[str, list[EvalRow]] = defaultdict(list)
    for row in rows:
        by_prompt[row.prompt].append(row)
        by_stripped[row.prompt.strip()].append(row)
    samples: list[Sample] = []
    counts: dict[str, int] = defaultdict(int)
    errors: list[str] = []
    for line_number, record in read_json_lines(path, on_error=lambda err: errors.append(str(err))):
        try:
            answers = _answers(record, by_id, by_prompt, by_stripped)
        except ValueError as err:
            errors.append(f"{path}: line {line_number}: {err}")
            continue
        for row, response in answers:
            samples.append(Sample(row, response, counts[row.item_id], line_number))
            counts[row.item_id] += 1
    if errors:
        more = len(errors) - 1
        more = f" (and {more} more failing line{'s' if more > 1 else ''})" if more else ""
        raise ValueError(errors[0] + more)
    if not samples:
        raise ValueError(f"{path}: no responses")
    return samples


def _answers(
    record: Any,
    by_id: dict[str, EvalRow],
    by_prompt: dict[str, list[EvalRow]],
    by_stripped: dict[str, list[EvalRow]],
) -> list[tuple[EvalRow, str]]:
    """The (row, response) pairs of one line: one for rlif's own format, every repeat for an lm-eval line."""
    if isinstance(record, dict) and "response" not in record and "resps" in record:
        return [_match(one, by_id, by_prompt, by_stripped) for one in _from_lm_eval(record, by_id)]
    return [_match(record, by_id, by_prompt, by_stripped)]


def _match(
    record: Any,
    by_id: dict[str, EvalRow],
    by_prompt: dict[str, list[EvalRow]],
    by_stripped: dict[str, list[EvalRow]],
) -> tuple[EvalRow, str]:
    if not isinstance(record, dict):
        raise ValueError(f"expected a JSON object, got {type(record).__name__}")
    response = record.get("response")
    if not isinstance(response, str):
        raise ValueError(f"field response: must be a string, got {type(response).__name__}")
    if record.get("id") is not None:
        item_id = str(record["id"])
        if item_id not in by_id:
            example = next(iter(by_id), "")
            raise ValueError(f"field id: no evaluation row has item_id {item_id!r} (ids look like {example!r})")
        return by_id[item_id], response
    prompt = record.get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("names no evaluation row: give id (the row's extra_info.item_id) or prompt (its text)")
    candidates = by_prompt.get(prompt) or by_stripped.get(prompt.strip()) or []
    if not candidates:
        raise ValueError(f"field prompt: no evaluation row has this prompt ({_preview(prompt)})")
    if len(candidates) > 1:
        ids = ", ".join(row.item_id for row in candidates[:3])
        raise ValueError(f"field prompt: {len(candidates)} evaluation rows share this prompt ({ids}); name it by id")
    return candidates[0], response


def _from_lm_eval(record: dict, by_id: Mapping[str, EvalRow]) -> list[dict]:
    """An lm-evaluation-harness ``--log_samples`` line as one ``{"id" or "prompt", "response"}`` per response
    (``lm_eval_import.read_samples``'s reading: every repeat; ``doc.key`` names the row when a row has that id)."""
    if not isinstance(record.get("resps"), list) or "doc_id" not in record:
        raise ValueError("expected an lm-eval sample (doc_id, doc, resps)")
    parsed = document_samples("", record["doc_id"], record, {}, {})
    responses = [s for s in parsed if isinstance(s["response"], str)]
    if not responses:
        raise ValueError("field resps: expected lm-eval's list of lists of text responses")
    doc = record.get("doc") if isinstance(record.get("doc"), dict) else {}
    if doc.get("key") is not None and str(doc["key"]) in by_id:
        return [{"id": str(doc["key"]), "response": s["response"]} for s in responses]
    prompt = next((doc[name] for name in PROMPT_FIELDS if isinstance(doc.get(name), str)), None)
    if prompt is None:
        fields = "/".join(f"doc.{name}" for name in PROMPT_FIELDS)
        raise ValueError(f"field {fields}: an lm-eval sample line needs its document's key or prompt text")
    return [{"prompt": prompt, "response": s["response"]} for s in responses]


def _preview(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return repr(flat if len(flat) <= limit else flat[:limit] + "...")

"""Generate n samples per evaluation prompt, resumably, into an append-only responses log.

An evaluation of a thinking model runs for hours and can be preempted at any moment, so generation never holds
results only in memory. Prompts go to the engine in chunks; after each chunk every prompt's n samples are
appended to ``responses.jsonl`` in one write and the file is fsynced, so a prompt is either wholly on disk or not
at all. A re-run reads the log, skips every prompt that already has its n samples and asks only for the rest (a
prompt with fewer, e.g. after ``--n`` grew, gets only its missing samples). A line cut short by a crash at the end
of the log is dropped on start; anything else unreadable stops the run with the line named, because scoring a
corrupt log would silently change every metric.

``generation.json`` beside the log records the model and the decoding; a re-run with another model or other
decoding settings into the same directory is refused (mixing samples of two settings would make the metrics
describe neither). Only ``n`` may change between runs, and only one process generates into a directory at a time.

The engine is anything with ``generate(requests) -> completions`` (``Engine``): vLLM in real use
(``rlif.eval.vllm_engine``), a fake one in tests.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import sys
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tqdm import tqdm

from rlif.atomic_files import write_text_atomic
from rlif.eval.eval_rows import EvalRow
from rlif.eval.outputs import json_document, json_line
from rlif.eval.responses import Sample
from rlif.eval.sampling import Sampling, request_seed

RESPONSES_FILE = "responses.jsonl"
MANIFEST_FILE = "generation.json"
LOCK_FILE = ".generate.lock"


@contextlib.contextmanager
def exclusive(out_dir: Path) -> Iterator[None]:
    """Hold the output directory for one generation at a time: two processes appending the same prompts would
    duplicate samples. The lock is released when the process ends, however it ends.

    Raises:
        ValueError: another process holds it.
    """
    path = Path(out_dir) / LOCK_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as handle:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ValueError(f"{out_dir}: another evaluation is generating into this directory") from None
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


@dataclass(frozen=True)
class Request:
    """One prompt's request to the engine: ``n`` samples numbered from ``first_sample``.

    Attributes:
        row: the evaluation row.
        first_sample: the number of the first sample drawn (samples already on disk come before it).
        n: samples to draw.
        seed: the request's seed (``rlif.eval.sampling.request_seed``).
    """

    row: EvalRow
    first_sample: int
    n: int
    seed: int


@dataclass(frozen=True)
class Completion:
    """One generated sample.

    Attributes:
        text: the decoded response (thinking included).
        finish_reason: the engine's reason to stop (vLLM: ``stop`` or ``length``, the latter = truncated).
        tokens: response length in tokens.
    """

    text: str
    finish_reason: str | None
    tokens: int


class Engine(Protocol):
    """What generation needs from an inference engine."""

    def generate(self, requests: Sequence[Request]) -> list[list[Completion]]:
        """Return, for each request in order, its ``n`` completions."""
        ...


@dataclass
class ResponsesLog:
    """The samples already on disk, by evaluation row id.

    Attributes:
        path: the log file.
        samples: ``item_id -> {sample number: (line number, record)}``.
        repaired: bytes of a torn last line dropped on open (0 when the file was whole).
    """

    path: Path
    samples: dict[str, dict[int, tuple[int, dict[str, Any]]]] = field(default_factory=dict)
    repaired: int = 0


def open_log(path: Path) -> ResponsesLog:
    """Read the responses log (a missing file is an empty log), dropping a torn last line.

    Raises:
        ValueError: a complete line is not a JSON object with a string ``id``, an integer ``sample`` >= 0 and a
            string ``response``, or repeats an (id, sample) pair; names the file and line.
    """
    path = Path(path)
    log = ResponsesLog(path)
    if not path.exists():
        return log
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        with path.open("r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
        log.repaired = len(data) - end
    by_id: dict[str, dict[int, tuple[int, dict[str, Any]]]] = defaultdict(dict)
    for number, raw in enumerate(data[:end].split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ValueError(f"{path}: line {number}: not valid UTF-8 (byte {err.start + 1} of the line)") from None
        if not line.strip():
            continue
        record = _log_record(line, f"{path}: line {number}")
        item_id, sample = record["id"], record["sample"]
        if sample in by_id[item_id]:
            first = by_id[item_id][sample][0]
            raise ValueError(f"{path}: line {number}: sample {sample} of {item_id!r} repeats line {first}")
        by_id[item_id][sample] = (number, record)
    log.samples = dict(by_id)
    return log


def _log_record(line: str, where: str) -> dict[str, Any]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: not valid JSON ({err.msg})") from None
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object")
    if not isinstance(record.get("id"), str):
        raise ValueError(f"{where}: field id: must be a string")
    sample = record.get("sample")
    if isinstance(sample, bool) or not isinstance(sample, int) or sample < 0:
        raise ValueError(f"{where}: field sample: must be an integer >= 0, got {sample!r}")
    if not isinstance(record.get("response"), str):
        raise ValueError(f"{where}: field response: must be a string")
    return record


def pending_requests(rows: Sequence[EvalRow], log: ResponsesLog, sampling: Sampling) -> list[Request]:
    """The requests still to make: every row with fewer than ``n`` samples on disk, for its missing ones (numbered
    after the last one on disk, so numbers never repeat)."""
    requests = []
    for row in rows:
        on_disk = log.samples.get(row.item_id, {})
        if len(on_disk) < sampling.n:
            first = max(on_disk) + 1 if on_disk else 0
            seed = request_seed(sampling.seed, row.item_id, first)
            requests.append(Request(row, first, sampling.n - len(on_disk), seed))
    return requests


def check_manifest(out_dir: Path, manifest: Mapping[str, Any]) -> None:
    """Refuse to add to responses made with another model or other decoding; otherwise (re)write the manifest.

    Raises:
        ValueError: ``generation.json`` in ``out_dir`` names another model or other sampling settings (except
            ``n``); the message names the first difference and what to do.
    """
    path = Path(out_dir) / MANIFEST_FILE
    if path.is_file():
        try:
            before = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}: not valid JSON ({err.msg}); delete it to start afresh") from None
        old = {"model": before.get("model"), **{k: v for k, v in before.get("sampling", {}).items() if k != "n"}}
        new = {"model": manifest["model"], **{k: v for k, v in manifest["sampling"].items() if k != "n"}}
        for key, value in new.items():
            if old.get(key) != value:
                raise ValueError(
                    f"{path}: the responses here were generated with {key}={old.get(key)!r}, this run asks for "
                    f"{key}={value!r}; use another --out (or delete {Path(out_dir) / RESPONSES_FILE} to start afresh)"
                )
    write_text_atomic(path, json_document(manifest))


def generate_missing(
    rows: Sequence[EvalRow],
    engine: Engine,
    sampling: Sampling,
    log: ResponsesLog,
    *,
    chunk_prompts: int = 128,
    progress: bool = True,
) -> int:
    """Generate every missing sample and append it to the log, one chunk of prompts at a time.

    Returns:
        The number of prompts generated for (0 when everything was already on disk).

    Raises:
        RuntimeError: the engine returned another number of results or samples than requested (an engine bug;
            nothing of that chunk is written).
    """
    requests = pending_requests(rows, log, sampling)
    if not requests:
        return 0
    log.path.parent.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(requests), desc="generating", unit="prompt", disable=not progress, file=sys.stderr)
    try:
        with log.path.open("a", encoding="utf-8") as handle:
            for chunk in _chunks(requests, chunk_prompts):
                completions = engine.generate(chunk)
                lines = list(_log_lines(chunk, completions))
                handle.write("".join(lines))
                handle.flush()
                os.fsync(handle.fileno())
                bar.update(len(chunk))
    finally:
        bar.close()
    return len(requests)


def _chunks(items: Sequence[Request], size: int) -> Iterator[Sequence[Request]]:
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + max(1, size)]


def _log_lines(chunk: Sequence[Request], completions: Sequence[Sequence[Completion]]) -> Iterator[str]:
    if len(completions) != len(chunk):
        raise RuntimeError(f"the engine returned {len(completions)} results for {len(chunk)} prompts")
    for request, outputs in zip(chunk, completions, strict=True):
        if len(outputs) != request.n:
            raise RuntimeError(f"the engine returned {len(outputs)} samples of {request.row.item_id}, not {request.n}")
    for request, outputs in zip(chunk, completions, strict=True):
        for offset, completion in enumerate(outputs):
            yield json_line(
                {
                    "id": request.row.item_id,
                    "sample": request.first_sample + offset,
                    "response": completion.text,
                    "finish_reason": completion.finish_reason,
                    "response_tokens": completion.tokens,
                }
            )


def logged_samples(rows: Sequence[EvalRow], log: ResponsesLog, n: int) -> list[Sample]:
    """The first ``n`` samples of every row from the log, in row order, ready for scoring.

    Samples beyond ``n`` (from an earlier run with a larger ``n``) and rows of other evaluation files stay in the
    log but are not scored, so the metrics describe exactly n samples per prompt.

    Raises:
        ValueError: a row lacks some of its n samples (generation did not finish).
    """
    samples = []
    for row in rows:
        on_disk = log.samples.get(row.item_id, {})
        if len(on_disk) < n:
            raise ValueError(
                f"{log.path}: {row.item_id!r} has {len(on_disk)} of its {n} samples: run the generation again"
            )
        for number, index in enumerate(sorted(on_disk)[:n]):
            line, record = on_disk[index]
            extra = {key: record[key] for key in ("finish_reason", "response_tokens") if key in record}
            samples.append(Sample(row, record["response"], number, line, extra))
    return samples

"""lm-evaluation-harness results as an rlif evaluation folder, so the report shows them beside rlif's own.

``python -m rlif.eval import <lm-eval output> --out DIR`` reads lm-eval's ``results_<date>.json`` (the newest one
under a folder, or the file given) and the ``samples_<task>_<date>.jsonl`` files written beside it with
``--log_samples``, and writes rlif's three files:

- ``metrics.json``: per task a source ``lm_eval/<task>`` holding lm-eval's own metrics as lm-eval computed them
  (nothing is re-scored), the number of documents and of responses; the flat ``metrics`` the report reads,
  ``lm_eval/<task>/<metric>`` (``/<filter>`` appended for any filter but ``none``, e.g. gsm8k's ``strict-match``);
  and ``intervals``: lm-eval's standard error as a 95% normal interval (value +- 1.96 stderr, ``n`` documents)
  wherever lm-eval gives one (``N/A`` gives none). lm-eval's groups come in as sources too.
- ``samples.jsonl``: one line per response. Every repeat of a document is its own sample (a task with
  ``repeats: n`` stores all n responses in ``resps[0]``), numbered 0..n-1 in lm-eval's order; a document logged
  once per filter is read once, with each filter's ``filtered_resps`` kept beside the responses. A document is
  named by its ``key`` where it has one (IFEval), else by lm-eval's ``doc_id``; its prompt is the document's
  ``prompt``, ``question`` or ``problem`` field, else the text lm-eval sent.
- ``metrics.md``: the metrics as a Markdown table.

Only the responses of text-generation tasks are text; a log-likelihood task's document is one sample without a
response.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rlif.atomic_files import write_lines_atomic, write_text_atomic
from rlif.eval.outputs import METRICS_FILE, SAMPLES_FILE, TABLES_FILE, json_document, json_line
from rlif.jsonl import read_json_lines

SOURCE_PREFIX = "lm_eval"
Z95 = 1.959963984540054
"""Two-sided 95% quantile of the normal distribution: lm-eval's stderr becomes a 95% interval."""
RESULTS_FILE = re.compile(r"^results_(?P<date>.+)\.json$")
PROMPT_FIELDS = ("prompt", "question", "problem")
"""Document fields that hold the prompt text, in the order tried."""


def find_results(path: Path) -> Path:
    """The results file ``path`` names, or the newest ``results_<date>.json`` below the folder ``path``.

    lm-eval writes each model's results into a subfolder named after the model; a folder holding several models'
    results is refused, so one model's numbers are never imported under another's run.

    Raises:
        ValueError: no such file or folder, no results file under the folder, or results in several subfolders.
    """
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise ValueError(f"{path}: no such lm-eval results file or output folder")
    found = sorted((p for p in path.rglob("results_*.json") if RESULTS_FILE.match(p.name)), key=lambda p: p.name)
    if not found:
        raise ValueError(f"{path}: no lm-eval results_<date>.json below it (lm-eval run --output_path ...)")
    folders = sorted({str(p.parent.relative_to(path)) for p in found})
    if len(folders) > 1:
        raise ValueError(
            f"{path}: results of several models ({', '.join(folders)}); name the model's folder or results file"
        )
    return found[-1]


def samples_file(results: Path, task: str) -> Path | None:
    """The ``--log_samples`` file of ``task`` written with ``results`` (same folder and date), if any."""
    match = RESULTS_FILE.match(results.name)
    if match is None:
        return None
    path = results.with_name(f"samples_{task}_{match.group('date')}.jsonl")
    return path if path.is_file() else None


def read_samples(path: Path, task: str) -> list[dict[str, Any]]:
    """Every response of ``task``'s samples file as an rlif sample record (see the module docstring).

    Raises:
        ValueError: a line is not a JSON object or lacks ``doc_id``/``resps``; names the file and line.
    """
    documents: dict[Any, dict[str, Any]] = {}
    errors: list[str] = []
    for line, record in read_json_lines(path, on_error=lambda err: errors.append(str(err))):
        if not isinstance(record, dict) or "doc_id" not in record or not isinstance(record.get("resps"), list):
            errors.append(f"{path}: line {line}: expected an lm-eval sample (doc_id, doc, resps)")
            continue
        seen = documents.get(record["doc_id"])
        if seen is None:
            documents[record["doc_id"]] = seen = {"record": record, "filtered": {}, "metrics": {}}
        filter_name = str(record.get("filter", "none"))
        seen["filtered"][filter_name] = record.get("filtered_resps")
        for metric in record.get("metrics") or ():
            if metric in record:
                seen["metrics"][_metric_key(metric, filter_name)] = record[metric]
    if errors:
        raise ValueError(errors[0] + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""))
    out = []
    for doc_id, seen in documents.items():
        out += document_samples(task, doc_id, seen["record"], seen["filtered"], seen["metrics"])
    return out


def document_samples(
    task: str, doc_id: Any, record: Mapping[str, Any], filtered: Mapping[str, Any], metrics: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """One sample record per response of an lm-eval document line (every repeat), numbered in lm-eval's order."""
    doc = record.get("doc") if isinstance(record.get("doc"), dict) else {}
    responses: list[str | None] = [
        text for request in record["resps"] for text in (request if isinstance(request, list) else [request])
    ]
    responses = [text for text in responses if isinstance(text, str)] or [None]
    base = {
        "data_source": f"{SOURCE_PREFIX}/{task}",
        "id": str(doc["key"]) if doc.get("key") is not None else str(doc_id),
        "doc_id": doc_id,
        "prompt": _prompt(doc, record),
        "target": record.get("target"),
        **metrics,
    }
    samples = []
    for index, response in enumerate(responses):
        sample = {**base, "sample": index, "response": response}
        sample["filtered"] = {
            name: value[index] if isinstance(value, list) and len(value) == len(responses) > 1 else value
            for name, value in filtered.items()
        }
        samples.append(sample)
    return samples


def _prompt(doc: Mapping[str, Any], record: Mapping[str, Any]) -> str | None:
    for name in PROMPT_FIELDS:
        if isinstance(doc.get(name), str):
            return doc[name]
    arguments = record.get("arguments")
    if isinstance(arguments, dict) and arguments:
        first = next(iter(arguments.values()))
        if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
            return first["arg_0"]
    return None


def _metric_key(metric: str, filter_name: str) -> str:
    return metric if filter_name == "none" else f"{metric}/{filter_name}"


def task_metrics(values: Mapping[str, Any]) -> tuple[dict[str, float], dict[str, float]]:
    """lm-eval's ``{"<metric>,<filter>": value, "<metric>_stderr,<filter>": stderr, "alias": ...}`` of one task as
    (metrics, standard errors), each keyed by ``<metric>[/<filter>]``; non-numbers (``N/A``, the alias) dropped."""
    metrics: dict[str, float] = {}
    errors: dict[str, float] = {}
    for key, value in values.items():
        name, sep, filter_name = key.partition(",")
        if not sep or not _number(value):
            continue
        if name.endswith("_stderr"):
            errors[_metric_key(name.removesuffix("_stderr"), filter_name)] = float(value)
        else:
            metrics[_metric_key(name, filter_name)] = float(value)
    return metrics, errors


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def import_lm_eval(path: Path, out: Path) -> dict[str, Any]:
    """Read lm-eval's results (and samples) at ``path``, write rlif's files under ``out``; return the metrics.

    Raises:
        ValueError: no results file, a file that is not lm-eval's results, or a malformed samples line.
    """
    results_path = find_results(path)
    try:
        document = json.loads(results_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(f"{results_path}: not valid JSON ({err.msg})") from None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, dict) or not results:
        raise ValueError(f"{results_path}: no 'results' object: not an lm-eval results file")
    counts = document.get("n-samples") or {}
    sources: dict[str, Any] = {}
    flat: dict[str, float] = {}
    intervals: dict[str, Any] = {}
    records: list[dict[str, Any]] = []
    for task in sorted(results):
        source = f"{SOURCE_PREFIX}/{task}"
        metrics, errors = task_metrics(results[task])
        task_samples = []
        found = samples_file(results_path, task)
        if found is not None:
            task_samples = read_samples(found, task)
            records += task_samples
        documents = len({s["doc_id"] for s in task_samples}) or _effective(counts.get(task))
        entry: dict[str, Any] = {"documents": documents, "metrics": metrics, "stderr": errors}
        if task_samples:
            entry.update(samples=len(task_samples), samples_file=str(found))
        sources[source] = entry
        for name, value in metrics.items():
            flat[f"{source}/{name}"] = value
            if name in errors:
                half = Z95 * errors[name]
                intervals[f"{source}/{name}"] = {
                    "value": value,
                    "low": value - half,
                    "high": value + half,
                    "n": documents,
                    "level": 0.95,
                    "stderr": errors[name],
                    "method": "normal, from lm-eval's stderr",
                }
    config = document.get("config") if isinstance(document.get("config"), dict) else {}
    out_metrics = {
        "imported_from": str(results_path),
        "lm_eval": {
            "model": config.get("model"),
            "model_args": config.get("model_args"),
            "model_name": document.get("model_name"),
            "version": document.get("lm_eval_version"),
            "date": document.get("date"),
        },
        "sources": sources,
        "metrics": flat,
        "intervals": intervals,
    }
    write_lines_atomic(out / SAMPLES_FILE, (json_line(record) for record in records))
    write_text_atomic(out / METRICS_FILE, json_document(out_metrics))
    write_text_atomic(out / TABLES_FILE, markdown_table(out_metrics))
    return out_metrics


def _effective(count: Any) -> int | None:
    if isinstance(count, dict) and isinstance(count.get("effective"), int):
        return count["effective"]
    return None


def markdown_table(metrics: Mapping[str, Any]) -> str:
    """The imported metrics as one Markdown table (source, metric, value, 95% interval, documents)."""
    rows: list[Sequence[str]] = []
    for source, entry in metrics["sources"].items():
        for name, value in entry["metrics"].items():
            interval = metrics["intervals"].get(f"{source}/{name}")
            span = f"[{interval['low']:.4f}, {interval['high']:.4f}]" if interval else ""
            rows.append([source, name, f"{value:.4f}", span, str(entry["documents"] or "")])
    lines = [
        f"# lm-eval results ({metrics['imported_from']})",
        "",
        "| source | metric | value | 95% interval | documents |",
        "| --- | --- | --- | --- | --- |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    return "\n".join(lines) + "\n"

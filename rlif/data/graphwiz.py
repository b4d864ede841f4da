"""Import GraphWiz's test set (GraphInstruct) as evaluation rows with its own question text, scored exactly.

``python -m rlif.data graphwiz test_set/cycle_test.json test_set/flow_test.json --out-dir verl_data/graphwiz``

GraphWiz's generator (Graph-Reasoning-LLM a4dd682, ``generation/main.py`` with ``scripts/
generate_all_test_datasets.sh``) writes ``<task>_test.json`` with one JSON record a line: ``input_prompt`` (the
question), ``answer`` (``### Yes``, ``### 7``, ``### [[2, 0, 1]]``), ``index``, ``node_range``, ``edge_range``; its
``evaluate_nlg.py`` reads ``question`` or ``input_prompt``. A JSON list of the same records, and records that name
the question ``query`` and carry a ``task`` field (how GraphInstruct-Test is published on the Hub), are read too.
The task comes from ``--task``, else a record's ``task``, else the file name.

Each record becomes one ``val`` row of source ``graphwiz/<task>`` whose prompt is the record's question as written
(GraphWiz's Alpaca wrapper, ``### Instruction:`` ... ``### Response:``, belongs to its fine-tuned models and is left
to the chat template). The graph is read back from the question (``rewards.graphwiz.problem``); a question that is
not of its task's published form raises ``ValueError`` naming the file and record. The exact answer is computed and
compared with GraphWiz's: a disagreement raises too, except for ``hamilton``, whose generator follows the first
unvisited neighbour from node 0 without backtracking and so labels some graphs with a Hamiltonian path ``No``
(kept, and counted in ``extra_info.reference_agrees``), and ``substructure``, whose label is the exact answer.
``extra_info.difficulty`` is the graph's number of nodes.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rewards.canonical import canonical_json
from rewards.graphwiz import PREFIX
from rewards.graphwiz.algorithms import is_topological_order
from rewards.graphwiz.exact import conclusion, exact_answer, last_node_list, last_number, yes_no
from rewards.graphwiz.problem import NUMBER_TASKS, TASKS, YES_NO_TASKS, parse_question
from rlif.data.files import write_rows_atomic
from rlif.data.rows import verl_row

TEXT_FIELDS = ("input_prompt", "question", "query")
"""Where a record may hold its question, in the order they are looked for."""
REFERENCE_MAY_DIFFER = frozenset({"hamilton"})
"""Tasks whose reference answer may contradict the graph (module docstring)."""


def _records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    stripped = text.lstrip()
    if stripped.startswith("["):
        data = json.loads(text)
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of records")
        return data
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def file_task(path: Path) -> str | None:
    """The task a file's name gives (``cycle_test.json`` -> ``cycle``), or None."""
    head = path.name.split(".")[0].split("_")[0].lower()
    return head if head in TASKS else None


def reference_value(task: str, answer: str) -> bool | int | list[int] | None:
    """What GraphWiz's reference answer states: yes/no, a number, or a topological order.

    Raises:
        ValueError: the reference states none.
    """
    final = conclusion(answer)
    if task in YES_NO_TASKS:
        value: Any = yes_no(final)
    elif task in NUMBER_TASKS:
        number = last_number(final)
        value = int(number) if number is not None and number == int(number) else None
    else:
        value = last_node_list(final)
    if value is None:
        raise ValueError(f"reference answer {answer!r} states no {task} answer")
    return value


def import_rows(path: Path, task: str | None = None) -> list[dict[str, Any]]:
    """Evaluation rows of one GraphWiz test file (format in the module docstring), ids ``graphwiz-<task>-<k>``.

    Raises:
        ValueError: a record without a question or answer, a question the parser cannot read, or a reference the
            exact answer contradicts (outside ``REFERENCE_MAY_DIFFER``); the message names the file and record.
    """
    rows = []
    for k, record in enumerate(_records(path)):
        try:
            if not isinstance(record, dict):
                raise ValueError("record is not a JSON object")
            record_task = task or record.get("task") or file_task(path)
            if record_task not in TASKS:
                raise ValueError(f"task {record_task!r} is not one of {list(TASKS)} (give --task)")
            text = next((record[f] for f in TEXT_FIELDS if isinstance(record.get(f), str)), None)
            answer = record.get("answer")
            if text is None or not isinstance(answer, str):
                raise ValueError(f"record needs a question ({' or '.join(TEXT_FIELDS)}) and an answer string")
            question = parse_question(record_task, text)
            exact = exact_answer(question, answer)
            reference = reference_value(record_task, answer)
            if record_task == "topology":
                agrees = is_topological_order(question.n, question.edges, reference)  # type: ignore[arg-type]
            else:
                agrees = reference == exact
            if not agrees and record_task not in REFERENCE_MAY_DIFFER:
                raise ValueError(f"reference answer {answer!r} but the graph gives {exact!r}")
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}: record {k}: {exc}") from exc
        truth = {"task": record_task, "question": text, "answer": answer, "exact": exact}
        extra_info = {
            "split": "val",
            "index": k,
            "item_id": f"graphwiz-{record_task}-{k}",
            "task": record_task,
            "difficulty": question.n,
            "reference_agrees": bool(agrees),
        }
        rows.append(verl_row(PREFIX + record_task, text, canonical_json(truth), extra_info))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: one parquet file per task."""
    parser = argparse.ArgumentParser(
        prog="python -m rlif.data graphwiz",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", type=Path, nargs="+", help="GraphWiz <task>_test.json files (JSON lines or a list)")
    parser.add_argument("--task", choices=TASKS, help="task of every record (default: record's task, file name)")
    parser.add_argument("--out-dir", type=Path, default=Path("verl_data/graphwiz"), help="output folder")
    args = parser.parse_args(argv)
    by_task: dict[str, list[dict[str, Any]]] = {}
    for path in args.files:
        for row in import_rows(path, args.task):
            by_task.setdefault(row["extra_info"]["task"], []).append(row)
    for task, rows in by_task.items():
        out = args.out_dir / f"graphwiz_{task}.parquet"
        write_rows_atomic(rows, out, schema=None)
        differ = sum(not row["extra_info"]["reference_agrees"] for row in rows)
        print(f"{out}: {len(rows)} rows ({differ} whose GraphWiz reference the graph contradicts)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

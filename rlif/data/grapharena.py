"""Import GraphArena-format instance files as validation rows, recomputing and cross-checking every optimum.

``python -m rlif.data.grapharena --task tsp --size large --input TSP_hard.json --out val_ga_tsp_large.parquet``

Accepted files (one task per file):

* ``.json``: a list of records; ``.jsonl``: one record per line. A record is an object with ``graph`` and,
  optionally, ``exact_answer`` (int, integral float, ``null`` or ``""``) - the layout of GraphArena's problem
  sets and of NPG-Muse's ``extra_info``. ``graph`` is networkx node-link data (a dict or a JSON string; the edge
  list may be under ``links`` or ``edges``), and for GED/MCS a list of two such graphs.
* ``.pkl``: GraphArena's own ``<Task>_<difficulty>.pkl`` (a list of dicts whose ``graph`` is a networkx graph or a
  pair of them). Unpickling runs code from the file, so only load files you trust; molecule pickles hold RDKit
  bond types, which need RDKit installed to unpickle.

Node attributes: ``name`` (MCP/MIS/MVC people, TSP codes) or ``label`` (GED/MCS elements); edges carry ``weight``
(TSP, integral km) or ``label`` (GED/MCS bond type; RDKit names such as ``SINGLE`` or ``BondType.SINGLE``).
Nodes are renumbered 0..n-1 in file order. The prompt is rlif's own (``rlif.graphs.prompts``), not the file's
``problem_text``. The optimum is always recomputed with rlif's exact solvers; a file ``exact_answer`` that
disagrees raises ``ValueError`` naming the file and record.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rlif.data.files import write_rows_atomic
from rlif.data.graph_rows import item_row
from rlif.graphs.exact import solve
from rlif.graphs.instance import Instance
from rlif.graphs.items import SIZES, SolvedItem, check_task_size
from rlif.graphs.prompts import user_message
from rlif.graphs.tasks import TASKS, task_named
from rlif.graphs.truth import from_node_link


@dataclass(frozen=True)
class ImportedInstance:
    """One instance read from a GraphArena file, with the file's exact answer if it had one."""

    instance: Instance
    exact_answer: int | None


def _records(path: Path) -> list[Any]:
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as handle:
            return [json.loads(line) for line in handle if line.strip()]
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a JSON list of records")
        return data
    if path.suffix == ".pkl":
        with path.open("rb") as handle:
            data = pickle.load(handle)  # documented: trusted GraphArena files only
        if not isinstance(data, list):
            raise ValueError(f"{path}: expected a pickled list of records")
        return data
    raise ValueError(f"{path}: unsupported file type {path.suffix!r} (use .json, .jsonl or .pkl)")


def _node_link(graph: Any) -> dict[str, Any]:
    """Node-link dict from a networkx graph, a JSON string or a dict; edges under ``links``."""
    if hasattr(graph, "nodes") and hasattr(graph, "edges") and not isinstance(graph, dict):
        import networkx as nx

        graph = nx.node_link_data(graph, edges="links")
    if isinstance(graph, str):
        graph = json.loads(graph)
    if not isinstance(graph, dict):
        raise ValueError(f"graph: expected node-link data, got {type(graph).__name__}")
    links = graph.get("links", graph.get("edges"))
    return {"nodes": graph.get("nodes"), "links": links}


def _renumbered(instance_type: type, graph: dict[str, Any]) -> dict[str, Any]:
    """Renumber nodes 0..n-1 in file order and keep only the attributes the instance type uses."""
    nodes, links = graph["nodes"], graph["links"]
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise ValueError("graph: 'nodes' and 'links' must be lists")
    index = {node["id"]: k for k, node in enumerate(nodes)}
    attribute = instance_type.NODE_ATTRIBUTE
    new_nodes = [{"id": k, attribute: node.get(attribute)} for k, node in enumerate(nodes)]
    new_links = [
        {"source": index[link["source"]], "target": index[link["target"]], **instance_type.grapharena_link(link)}
        for link in links
    ]
    return {"nodes": new_nodes, "links": new_links}


def _exact_answer(value: Any) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value):
        raise ValueError(f"exact_answer {value!r} is not an integral number")
    return int(value)


def load_grapharena(path: Path, task: str) -> list[ImportedInstance]:
    """Read every instance of a GraphArena-format file (format in the module docstring).

    Raises:
        ValueError: unsupported file, or a record that is not a valid ``task`` instance (naming file and record).
    """
    instance_type = task_named(task).instance_type
    loaded = []
    for k, record in enumerate(_records(path)):
        try:
            if not isinstance(record, dict) or "graph" not in record:
                raise ValueError("record has no 'graph'")
            graph = record["graph"]
            if instance_type.GRAPHS > 1:
                if isinstance(graph, str):
                    graph = json.loads(graph)
                if not isinstance(graph, list | tuple) or len(graph) != instance_type.GRAPHS:
                    raise ValueError(f"{task} needs a pair of molecule graphs")
                node_link: Any = [_renumbered(instance_type, _node_link(g)) for g in graph]
            else:
                node_link = _renumbered(instance_type, _node_link(graph))
            instance = from_node_link(task, node_link)
            loaded.append(ImportedInstance(instance, _exact_answer(record.get("exact_answer"))))
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: record {k}: {exc}") from exc
    return loaded


def import_rows(path: Path, task: str, size: str) -> list[dict[str, Any]]:
    """Validation rows for a GraphArena file, optima recomputed (item ids ``<task>-<size>-grapharena-<k>``).

    Raises:
        ValueError: bad file or record, or a file ``exact_answer`` that differs from the exact optimum.
    """
    check_task_size(task, size)
    rows = []
    for k, loaded in enumerate(load_grapharena(path, task)):
        solution = solve(task, loaded.instance)
        if loaded.exact_answer is not None and loaded.exact_answer != solution.optimum:
            raise ValueError(
                f"{path}: record {k}: exact_answer {loaded.exact_answer} != exact optimum {solution.optimum}"
            )
        prompt = user_message(task, loaded.instance)
        item_id = f"{task}-{size}-grapharena-{k}"
        item = SolvedItem(task, size, item_id, loaded.instance, prompt, solution.optimum, solution.witness)
        row = item_row(item, "val")
        row["extra_info"]["index"] = k
        row["extra_info"]["level"] = 0
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(prog="python -m rlif.data.grapharena", description=__doc__.split("\n")[0])
    parser.add_argument("--task", choices=list(TASKS), required=True)
    parser.add_argument("--size", choices=SIZES, required=True, help="small (easy) or large (hard)")
    parser.add_argument("--input", type=Path, required=True, help=".json, .jsonl or .pkl GraphArena file")
    parser.add_argument("--out", type=Path, required=True, help="output parquet file")
    args = parser.parse_args(argv)
    rows = import_rows(args.input, args.task, args.size)
    write_rows_atomic(rows, args.out, schema=None)
    print(f"{args.out}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())

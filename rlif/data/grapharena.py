"""Import GraphArena's published problem sets as evaluation rows with its own problem text and answer checks.

``python -m rlif.data grapharena dataset/MCP_easy.pkl dataset/TSP_hard.pkl --out-dir verl_data/grapharena``

GraphArena's ``dataset/<Task>_<difficulty>.pkl`` (``build_dataset.py``; tasks MCP, MIS, MVC, TSP, GED, MCS,
Connected, Diameter, Distance, Neighbor; difficulty ``easy`` or ``hard``) is a pickled list of records: ``graph`` (a
networkx graph, a pair for GED/MCS), ``problem_text``, ``exact_answer`` (``approx_answer`` where that is None), and
``source``/``target`` (Distance) or ``node1``/``node2`` (Neighbor). Unpickling runs code from the file, so only load
files you trust; the molecule pickles hold RDKit bond types, so reading them needs RDKit installed. ``.json`` and
``.jsonl`` files of the same records (``graph`` as node-link data or its JSON string) are read as well.

Each record becomes one ``val`` row of source ``grapharena/<task>`` whose prompt is GraphArena's: its system prompt
(``SYSTEM_PROMPT``) and the record's ``problem_text``, with ``--examples`` few-shot examples from
``<Task>_examples.pkl`` beside the file inserted as GraphArena's ``insert_example`` does (its published runs,
``utils/run_benchmark.sh``, use one). The ground truth keeps the instance as the file has it, GraphArena's reference
answer and, for the NP tasks, the ``graph`` family's ground truth of the same instance (rlif's strict verdict).
Every reference answer is recomputed (rlif's exact solvers for the NP tasks, networkx for the others); a file
answer that disagrees raises ``ValueError`` naming the file and record.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rewards.canonical import canonical_json
from rewards.grapharena import PREFIX
from rewards.grapharena.problem import ENDPOINTS, MOLECULE_TASKS, NP_TASKS, P_TASKS
from rlif.data.files import write_rows_atomic
from rlif.data.rows import verl_row
from rlif.graphs.exact import solve
from rlif.graphs.instance import Instance
from rlif.graphs.tasks import task_named
from rlif.graphs.truth import from_node_link, ground_truth_json

SYSTEM_PROMPT = (
    "You are an advanced AI specialized in solving graph problems. Provide the solution without writing or executing "
    "any code, and present your answer within brackets []. Do not use brackets in other places."
)
"""GraphArena's system prompt (``benchmark_LLM_API.py``)."""
FILE_TASKS = {
    "MCP": "mcp",
    "MIS": "mis",
    "MVC": "mvc",
    "TSP": "tsp",
    "GED": "ged",
    "MCS": "mcs",
    "Connected": "connected",
    "Diameter": "diameter",
    "Distance": "distance",
    "Neighbor": "neighbor",
}
"""GraphArena's task names (its file names) and rlif's task ids."""
DIFFICULTIES = ("easy", "hard")
EXAMPLE_MARKER = "\n**Problem to Solve**"
DEFAULT_EXAMPLES = 1
"""Few-shot examples per prompt in GraphArena's published runs (``utils/run_benchmark.sh``, ``example_num=1``)."""


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


def _molecules_sorted(graph: dict[str, Any]) -> dict[str, Any]:
    """Atoms in id order, so rlif's renumbering keeps GraphArena's atom ids (answers name atoms by id)."""
    return {"nodes": sorted(graph["nodes"], key=lambda node: node["id"]), "links": graph["links"]}


def strict_instance(task: str, graph: Any) -> Instance:
    """rlif's instance of an NP record's graph (for the ``graph`` family's strict verdict).

    Raises:
        ValueError: not a valid instance of ``task``.
    """
    instance_type = task_named(task).instance_type
    if instance_type.GRAPHS > 1:
        if isinstance(graph, str):
            graph = json.loads(graph)
        if not isinstance(graph, list | tuple) or len(graph) != instance_type.GRAPHS:
            raise ValueError(f"{task} needs a pair of molecule graphs")
        node_link: Any = [_renumbered(instance_type, _molecules_sorted(_node_link(g))) for g in graph]
    else:
        node_link = _renumbered(instance_type, _node_link(graph))
    return from_node_link(task, node_link)


def _published_graph(task: str, graph: Any) -> tuple[dict[str, Any], dict[Any, int]]:
    """The instance as the ground truth keeps it, and the map from the file's node ids to its ids.

    Nodes stay in file order with ``name`` (``label`` and the file's atom ids for molecules); other tasks' nodes are
    numbered 0..n-1 in that order. TSP weights become integers (GraphArena casts them with ``int``).
    """
    data = _node_link(graph)
    nodes, links = data["nodes"], data["links"]
    if not isinstance(nodes, list) or not isinstance(links, list):
        raise ValueError("graph: 'nodes' and 'links' must be lists")
    molecule = task in MOLECULE_TASKS
    attribute = "label" if molecule else "name"
    index = {node["id"]: (node["id"] if molecule else k) for k, node in enumerate(nodes)}
    out_nodes = [{"id": index[node["id"]], attribute: str(node.get(attribute))} for node in nodes]
    out_links = []
    for link in links:
        out = {"source": index[link["source"]], "target": index[link["target"]]}
        if task == "tsp":
            weight = link.get("weight")
            if isinstance(weight, bool) or not isinstance(weight, int | float) or weight != int(weight):
                raise ValueError(f"TSP weight {weight!r} is not an integral number")
            out["weight"] = int(weight)
        out_links.append(out)
    return {"nodes": out_nodes, "links": out_links}, index


def _networkx(graph: dict[str, Any]) -> Any:
    import networkx as nx

    built = nx.Graph()
    built.add_nodes_from(node["id"] for node in graph["nodes"])
    built.add_edges_from((link["source"], link["target"]) for link in graph["links"])
    return built


def polynomial_answer(task: str, graph: dict[str, Any], ends: Sequence[int]) -> int:
    """The exact answer of a polynomial task, by networkx.

    Raises:
        ValueError: Diameter of a disconnected graph, or Distance between unreachable nodes (GraphArena samples
            neither).
    """
    import networkx as nx

    built = _networkx(graph)
    if task == "connected":
        return nx.number_connected_components(built)
    if task == "diameter":
        if not nx.is_connected(built):
            raise ValueError("Diameter needs a connected graph")
        return nx.diameter(built)
    if task == "distance":
        try:
            return nx.shortest_path_length(built, ends[0], ends[1])
        except nx.NetworkXNoPath:
            raise ValueError("Distance: the target cannot be reached from the source") from None
    first, second = ends
    return len((set(built[first]) & set(built[second])) - {first, second})


def insert_examples(problem_text: str, examples: Sequence[str], problem_id: int, count: int) -> str:
    """GraphArena's ``insert_example``: ``count`` examples before ``**Problem to Solve**``, numbered from 1,
    drawn from ``examples[(problem_id + i) % len(examples)]`` (its ``% 100`` assumes 100 examples).

    Raises:
        ValueError: the text has no ``**Problem to Solve**`` marker, or there are no examples to draw.
    """
    if count == 0:
        return problem_text
    if not examples:
        raise ValueError("no few-shot examples to insert")
    marker = problem_text.find(EXAMPLE_MARKER)
    if marker < 0:
        raise ValueError("problem_text has no '**Problem to Solve**' marker to insert examples before")
    prompt = problem_text
    for i in range(count):
        example = examples[(problem_id + i) % len(examples)]
        prompt = prompt[:marker] + f"\n**Example {count - i}**\n\n" + example + "\n" + prompt[marker:]
    return prompt


def file_task(path: Path) -> tuple[str, str] | None:
    """The task id and difficulty of a GraphArena file name ``<Task>_<difficulty>.<ext>``, or None."""
    name, _, difficulty = path.stem.rpartition("_")
    if name in FILE_TASKS and difficulty in DIFFICULTIES:
        return FILE_TASKS[name], difficulty
    return None


def _reference(task: str, record: dict[str, Any], computed: int) -> int:
    """GraphArena's reference answer (``exact_answer``, else ``approx_answer``), checked against ``computed``."""
    exact = _exact_answer(record.get("exact_answer"))
    if exact is not None:
        if exact != computed:
            raise ValueError(f"exact_answer {exact} != exact optimum {computed}")
        return exact
    approx = _exact_answer(record.get("approx_answer"))
    if approx is None:
        return computed
    worse = approx > computed if task in ("mvc", "tsp", "ged") else approx < computed
    if approx != computed and not worse:
        raise ValueError(f"approx_answer {approx} beats the exact optimum {computed}")
    return approx


def import_rows(
    path: Path, task: str, difficulty: str, examples: Sequence[str] = (), example_count: int = 0
) -> list[dict[str, Any]]:
    """Evaluation rows of one GraphArena file (format in the module docstring), ids
    ``grapharena-<task>-<difficulty>-<k>``.

    Raises:
        ValueError: bad file or record (naming file and record), or a file answer the exact answer contradicts.
    """
    if task not in NP_TASKS + P_TASKS:
        raise ValueError(f"task {task!r} is not one of {list(NP_TASKS + P_TASKS)}")
    if difficulty not in DIFFICULTIES:
        raise ValueError(f"difficulty {difficulty!r} is not one of {list(DIFFICULTIES)}")
    rows = []
    for k, record in enumerate(_records(path)):
        try:
            if not isinstance(record, dict) or "graph" not in record or "problem_text" not in record:
                raise ValueError("record needs 'graph' and 'problem_text'")
            truth: dict[str, Any] = {"task": task}
            if task in MOLECULE_TASKS:
                graph = record["graph"]
                graph = json.loads(graph) if isinstance(graph, str) else graph
                truth["graph"] = [_published_graph(task, g)[0] for g in graph]
            else:
                truth["graph"], index = _published_graph(task, record["graph"])
                for field in ENDPOINTS.get(task, ()):
                    if record.get(field) not in index:
                        raise ValueError(f"{field} {record.get(field)!r} is not a node of the graph")
                    truth[field] = index[record[field]]
            if task in NP_TASKS:
                instance = strict_instance(task, record["graph"])
                optimum = solve(task, instance).optimum
                truth["strict"] = ground_truth_json(task, instance, optimum)
            else:
                optimum = polynomial_answer(task, truth["graph"], [truth[f] for f in ENDPOINTS.get(task, ())])
            truth["answer"] = _reference(task, record, optimum)
            truth["strict_answer"] = optimum
            problem_text = record["problem_text"]
            if not isinstance(problem_text, str):
                raise ValueError("problem_text must be a string")
            prompt = [
                {"role": "system", "content": SYSTEM_PROMPT},
                {"role": "user", "content": insert_examples(problem_text, examples, k, example_count)},
            ]
        except (ValueError, KeyError, TypeError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: record {k}: {exc}") from exc
        extra_info = {
            "split": "val",
            "index": k,
            "item_id": f"grapharena-{task}-{difficulty}-{k}",
            "task": task,
            "difficulty": difficulty,
            "exact_answer": truth["answer"],
            "optimum": optimum,
        }
        rows.append(verl_row(PREFIX + task, prompt, canonical_json(truth), extra_info))
    return rows


def _examples(path: Path, count: int) -> list[str]:
    """GraphArena's ``<Task>_examples.pkl`` beside ``path`` (a pickled list of strings), when ``count`` > 0.

    Raises:
        ValueError: the examples file is missing or not a list of strings.
    """
    if count == 0:
        return []
    name = path.stem.rpartition("_")[0]
    examples_path = path.with_name(f"{name}_examples.pkl")
    if not examples_path.exists():
        raise ValueError(f"{examples_path} not found: GraphArena's few-shot examples (use --examples 0 for none)")
    with examples_path.open("rb") as handle:
        examples = pickle.load(handle)  # documented: trusted GraphArena files only
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise ValueError(f"{examples_path}: expected a pickled list of strings")
    return examples


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point: one parquet file per GraphArena file."""
    parser = argparse.ArgumentParser(
        prog="python -m rlif.data grapharena",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("files", type=Path, nargs="+", help="GraphArena <Task>_<difficulty>.pkl (or .json/.jsonl)")
    parser.add_argument("--task", choices=sorted(FILE_TASKS), help="task of every file (default: from its name)")
    parser.add_argument("--difficulty", choices=DIFFICULTIES, help="difficulty of every file (default: from its name)")
    parser.add_argument(
        "--examples",
        type=int,
        default=DEFAULT_EXAMPLES,
        help="few-shot examples per prompt from <Task>_examples.pkl beside each file (default: %(default)s, "
        "as GraphArena's published runs; 0 for none)",
    )
    parser.add_argument("--out-dir", type=Path, default=Path("verl_data/grapharena"), help="output folder")
    args = parser.parse_args(argv)
    if args.examples < 0:
        parser.error("--examples must be >= 0")
    for path in args.files:
        named = file_task(path)
        task = FILE_TASKS[args.task] if args.task else (named[0] if named else None)
        difficulty = args.difficulty or (named[1] if named else None)
        if task is None or difficulty is None:
            parser.error(f"{path}: name is not <Task>_<difficulty>; give --task and --difficulty")
        rows = import_rows(path, task, difficulty, _examples(path, args.examples), args.examples)
        out = args.out_dir / f"grapharena_{task}_{difficulty}.parquet"
        write_rows_atomic(rows, out, schema=None)
        print(f"{out}: {len(rows)} rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())

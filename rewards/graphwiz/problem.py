"""A GraphWiz question read back into its graph, and the ground truth the ``graphwiz`` family scores against.

GraphWiz (GraphInstruct, Graph-Reasoning-LLM a4dd682, ``generation/task_config.yaml``) states every graph in one
sentence: ``The nodes are numbered from 0 to N, and the edges are: (0,1) (1,2). <question>``. Each task writes its
edges one way, and only that way is read:

==============  ====================  ======================================================================
task            edges                 question
==============  ====================  ======================================================================
connectivity    ``(i, j)``            ``Is there a path between node i and node j?``
cycle           ``(i, j)``            ``Is there a cycle in this graph?``
bipartite       ``(i->j)``            ``Is this graph bipartite?`` (directions ignored, as networkx does)
hamilton        ``(i, j)``            ``Is there a Hamiltonian path in this graph?``
shortest        ``(i,j,w)``           ``Give the weight of the shortest path from node i to node j.``
flow            ``(i->j,w)``          ``What is the maximum flow from node i to node j?``
topology        ``(i->j)``            ``Give one topology sorting path of this graph.``
triplet         ``(i, j)`` + ``[i, w]`` node weights; ``What is the maximum sum of the weights of three ...``
substructure    ``(i->j)``, G' lettered ``(a->b)``; ``Is subgraph G' present within graph G as a direct substructure?``
==============  ====================  ======================================================================

Spaces after commas are optional. The last statement of the prompt is read (a few-shot prompt states its examples
first); anything else in the edge list, a node outside ``0..N``, or a missing question raises ``ValueError``.

The ground truth is the JSON ``{"task", "question", "answer", "exact"}``: the prompt text, GraphWiz's reference
answer as its file has it (``### Yes``, ``### 7``, ``### [[2, 0, 1]]``), and the exact answer rlif computed from the
graph (``true``/``false``, an integer, or null for topology, whose answers are checked against the graph).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rewards.canonical import canonical_form, load_ground_truth

YES_NO_TASKS = ("connectivity", "cycle", "bipartite", "hamilton", "substructure")
NUMBER_TASKS = ("shortest", "flow", "triplet")
TASKS = YES_NO_TASKS + NUMBER_TASKS + ("topology",)
"""GraphWiz's nine test tasks (its ``evaluate_nlg.py`` list), under its own names."""
DIRECTED = frozenset({"bipartite", "flow", "topology", "substructure"})
WEIGHTED = frozenset({"shortest", "flow"})
QUESTIONS = {
    "connectivity": r"Is there a path between node (\d+) and node (\d+)\?",
    "cycle": r"Is there a cycle in this graph\?",
    "bipartite": r"Is this graph bipartite\?",
    "hamilton": r"Is there a Hamiltonian path in this graph\?",
    "shortest": r"Give the weight of the shortest path from node (\d+) to node (\d+)\.",
    "flow": r"What is the maximum flow from node (\d+) to node (\d+)\?",
    "topology": r"Give one topology sorting path of this graph\.",
    "triplet": r"What is the maximum sum of the weights of three (?:interconnected )?nodes\?",
    "substructure": r"Is subgraph G' present within graph G as a direct substructure\?",
}
"""The question sentence of each task; the two numbers, where there are, are its pair of nodes."""

_HEADER = re.compile(r"The nodes (?:of graph G )?are numbered from (\d+) to (\d+)")
_PATTERN_HEADER = re.compile(r"The nodes of subgraph G' are numbered from ([a-z]) to ([a-z])")
_EDGES = re.compile(r"the edges are:")
_NODE_WEIGHTS = re.compile(r"weights of nodes are:")
_GROUP = re.compile(r"\(([^()]*)\)")
_NODE_WEIGHT = re.compile(r"\[\s*(\d+)\s*,\s*(\d+)\s*\]")


@dataclass(frozen=True)
class Question:
    """A GraphWiz question's graph.

    Attributes:
        task: one of ``TASKS``.
        n: the number of nodes (``0..n-1``).
        edges: ``(i, j)`` pairs, or ``(i, j, w)`` for shortest and flow, in the question's order.
        ends: the question's two nodes (connectivity, shortest, flow); empty otherwise.
        node_weights: each node's weight (triplet); empty otherwise.
        pattern_n: the number of nodes of G' (substructure; letters ``a..``), else 0.
        pattern_edges: G''s edges as letter indices (substructure).
    """

    task: str
    n: int
    edges: tuple[tuple[int, ...], ...]
    ends: tuple[int, ...] = ()
    node_weights: tuple[int, ...] = ()
    pattern_n: int = 0
    pattern_edges: tuple[tuple[int, int], ...] = ()


def _edge_list(segment: str, arity: int, directed: bool, to_node: Any, where: str) -> list[tuple[int, ...]]:
    """The edges of one ``(..) (..)`` list; anything but edges of the task's form raises."""
    rest = _GROUP.sub(" ", segment).strip()
    if rest:
        raise ValueError(f"{where}: unexpected text {rest[:40]!r} in the edge list")
    edges = []
    for group in _GROUP.findall(segment):
        if directed:
            head, arrow, tail = group.partition("->")
            parts = [head, *tail.split(",")] if arrow else []
        else:
            parts = group.split(",")
        parts = [p.strip() for p in parts]
        if len(parts) != arity or not all(parts):
            raise ValueError(f"{where}: edge ({group}) is not of the form {_form(arity, directed)}")
        try:
            edge = (to_node(parts[0]), to_node(parts[1]), *(int(p) for p in parts[2:]))
        except ValueError:
            raise ValueError(f"{where}: edge ({group}) names an unknown node or a non-integer weight") from None
        edges.append(edge)
    if not edges:
        raise ValueError(f"{where}: no edges")
    return edges


def _form(arity: int, directed: bool) -> str:
    link = "i->j" if directed else "i,j"
    return f"({link},w)" if arity == 3 else f"({link})"


def _node_reader(n: int) -> Any:
    def read(text: str) -> int:
        if not text.isdigit() or int(text) >= n:
            raise ValueError(text)
        return int(text)

    return read


def _letter_reader(n: int) -> Any:
    def read(text: str) -> int:
        if len(text) != 1 or not "a" <= text <= chr(ord("a") + n - 1):
            raise ValueError(text)
        return ord(text) - ord("a")

    return read


def _segment(text: str, start: int, where: str) -> tuple[str, int]:
    """The list after ``start`` up to the full stop that closes it, and the position after that stop."""
    stop = text.find(".", start)
    if stop < 0:
        raise ValueError(f"{where}: the edge list never ends")
    return text[start:stop], stop + 1


def parse_question(task: str, text: str) -> Question:
    """The graph a GraphWiz question states (the module docstring's forms).

    Raises:
        ValueError: an unknown task, or a statement or question that is not of the task's published form.
    """
    if task not in TASKS:
        raise ValueError(f"graphwiz: task {task!r} is not one of {list(TASKS)}")
    headers = list(_HEADER.finditer(text))
    if not headers:
        raise ValueError(f"graphwiz {task}: no 'The nodes are numbered from 0 to N' statement")
    header = headers[-1]
    low, high = int(header.group(1)), int(header.group(2))
    if low != 0:
        raise ValueError(f"graphwiz {task}: nodes numbered from {low}, not 0")
    n = high + 1
    position = header.end()
    node_weights: tuple[int, ...] = ()
    if task == "triplet":
        marker = _NODE_WEIGHTS.search(text, position)
        if marker is None:
            raise ValueError("graphwiz triplet: no 'weights of nodes are:' list")
        close = text.find(", and the edges are:", marker.end())
        if close < 0:
            raise ValueError("graphwiz triplet: the node weights are not followed by ', and the edges are:'")
        segment = text[marker.end() : close]
        pairs = _NODE_WEIGHT.findall(segment)
        if _NODE_WEIGHT.sub(" ", segment).strip() or [int(i) for i, _ in pairs] != list(range(n)):
            raise ValueError("graphwiz triplet: node weights are not [i, w] for nodes 0..N in order")
        node_weights = tuple(int(w) for _, w in pairs)
        position = marker.end()
    marker = _EDGES.search(text, position)
    if marker is None:
        raise ValueError(f"graphwiz {task}: no 'the edges are:' list")
    segment, position = _segment(text, marker.end(), f"graphwiz {task}")
    arity = 3 if task in WEIGHTED else 2
    edges = _edge_list(segment, arity, task in DIRECTED, _node_reader(n), f"graphwiz {task}")
    pattern_n, pattern_edges = 0, ()
    if task == "substructure":
        pattern = _PATTERN_HEADER.search(text, position)
        if pattern is None or pattern.group(1) != "a":
            raise ValueError("graphwiz substructure: no 'The nodes of subgraph G' are numbered from a to ...'")
        pattern_n = ord(pattern.group(2)) - ord("a") + 1
        marker = _EDGES.search(text, pattern.end())
        if marker is None:
            raise ValueError("graphwiz substructure: no edge list of G'")
        segment, position = _segment(text, marker.end(), "graphwiz substructure G'")
        pattern_edges = tuple(
            (u, v) for u, v in _edge_list(segment, 2, True, _letter_reader(pattern_n), "graphwiz substructure G'")
        )
    question = re.compile(QUESTIONS[task]).search(text, position)
    if question is None or text[position : question.start()].strip():
        raise ValueError(f"graphwiz {task}: the question is not {QUESTIONS[task]!r} right after the graph")
    ends = tuple(int(g) for g in question.groups())
    if any(e >= n for e in ends) or (ends and ends[0] == ends[1]):
        raise ValueError(f"graphwiz {task}: question nodes {ends} are not two distinct nodes of 0..{n - 1}")
    return Question(task, n, tuple(edges), ends, node_weights, pattern_n, pattern_edges)


@dataclass(frozen=True)
class Problem:
    """A parsed ``graphwiz`` ground truth.

    Attributes:
        question: the graph.
        text: the prompt text the graph was read from.
        answer: GraphWiz's reference answer, as its file has it.
        exact: the exact answer (bool for yes/no tasks, int for numbers, None for topology).
    """

    question: Question
    text: str
    answer: str
    exact: bool | int | None

    @property
    def task(self) -> str:
        """The task id."""
        return self.question.task


def problem_from(value: Any) -> Problem:
    """Parse a decoded ground-truth object.

    Raises:
        ValueError: a missing or malformed field, named in the message.
    """
    if not isinstance(value, Mapping):
        raise ValueError("graphwiz ground truth: expected a JSON object")
    task, text, answer, exact = (value.get(k) for k in ("task", "question", "answer", "exact"))
    if not isinstance(text, str) or not isinstance(answer, str):
        raise ValueError("graphwiz ground truth: 'question' and 'answer' must be strings")
    question = parse_question(str(task), text)
    if task in YES_NO_TASKS:
        ok = isinstance(exact, bool)
    elif task in NUMBER_TASKS:
        ok = isinstance(exact, int) and not isinstance(exact, bool)
    else:
        ok = exact is None
    if not ok:
        raise ValueError(f"graphwiz ground truth: exact {exact!r} is not of {task}'s kind (bool, int or null)")
    return Problem(question, text, answer, exact)


@lru_cache(maxsize=1024)
def parse_ground_truth(ground_truth: str) -> Problem:
    """The parsed ground truth, once per distinct string (verl scores several responses per prompt).

    Raises:
        ValueError: not JSON, or malformed (see ``problem_from``).
    """
    value = load_ground_truth(ground_truth, "graphwiz")
    return problem_from(value)


def normalize_ground_truth(raw: Any, *, where: str) -> str:
    """The canonical string of a GraphWiz ground truth given as JSON text or as the object itself.

    Raises:
        ValueError: not JSON or malformed; the message starts with ``where``.
    """
    return canonical_form(raw, where=where, check=parse_ground_truth)

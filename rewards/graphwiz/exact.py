"""rlif's exact verdict on a GraphWiz answer: the answer the graph gives, read from the model's conclusion.

The conclusion is the text after the last ``###`` of the answer section (GraphWiz's prompts ask for it), or the
whole answer section where there is none.

* Yes/no tasks: after ``###``, the first whole word ``yes`` or ``no``; without it, the last such word. It must be
  the graph's answer (connectivity, cycle, bipartite, Hamiltonian path computed here; substructure is GraphWiz's
  own label, from networkx's subgraph monomorphism test). For ``hamilton``, a bracketed list in the conclusion of a
  Yes is a witness and must be a Hamiltonian path of the graph.
* Shortest, flow, triplet: the last number of the conclusion (a signed integer or decimal) must equal the exact
  value (Dijkstra, Edmonds-Karp, best triangle); no number is wrong.
* Topology: the last bracketed list of node numbers in the conclusion must order every node once with each edge's
  tail first (any valid order; GraphWiz's test graphs have only one).
"""

from __future__ import annotations

import re

from rewards.graphwiz import algorithms as alg
from rewards.graphwiz.problem import NUMBER_TASKS, Problem, Question

_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_LIST = re.compile(r"\[([^\[\]]*)\]")


def exact_answer(question: Question, reference: str) -> bool | int | None:
    """The exact answer of a question, the ground truth's ``exact`` (substructure takes GraphWiz's label).

    Raises:
        ValueError: no path between shortest's nodes, or the Hamiltonian-path search ran too long.
    """
    q = question
    if q.task == "connectivity":
        return alg.connected(q.n, q.edges, *q.ends)
    if q.task == "cycle":
        return alg.has_cycle(q.n, q.edges)
    if q.task == "bipartite":
        return alg.bipartite(q.n, q.edges)
    if q.task == "hamilton":
        return alg.hamiltonian_path(q.n, q.edges) is not None
    if q.task == "substructure":
        verdict = yes_no(conclusion(reference))
        if verdict is None:
            raise ValueError(f"substructure reference {reference!r} says neither yes nor no")
        return verdict
    if q.task == "shortest":
        distance = alg.shortest_distance(q.n, q.edges, *q.ends)  # type: ignore[arg-type]
        if distance is None:
            raise ValueError(f"no path between nodes {q.ends}")
        return distance
    if q.task == "flow":
        return alg.max_flow(q.n, q.edges, *q.ends)  # type: ignore[arg-type]
    if q.task == "triplet":
        return alg.max_triangle_weight(q.node_weights, q.edges)
    return None


def conclusion(text: str) -> str:
    """The text after the last ``###``, or all of ``text`` without one."""
    return text.rpartition("###")[2] if "###" in text else text


def yes_no(text: str, *, has_marker: bool = True) -> bool | None:
    """The yes/no a conclusion states: its first such word after ``###``, else its last; None if neither."""
    words = _YES_NO.findall(text)
    if not words:
        return None
    word = words[0] if has_marker else words[-1]
    return word.lower() == "yes"


def last_number(text: str) -> float | None:
    """The last number written in ``text``, or None."""
    numbers = _NUMBER.findall(text)
    return float(numbers[-1]) if numbers else None


def last_node_list(text: str) -> list[int] | None:
    """The last ``[...]`` in ``text`` read as node numbers (``[0, 1, 2]``, ``[0->1->2]`` ...), or None."""
    lists = _LIST.findall(text)
    if not lists:
        return None
    items = [t for t in re.split(r"[\s,]+|->|-", lists[-1]) if t]
    if not items or not all(t.isdigit() for t in items):
        return None
    return [int(t) for t in items]


def exact_correct(problem: Problem, answer: str) -> bool:
    """Whether ``answer`` (the answer section) is right under rlif's exact rules (module docstring)."""
    q = problem.question
    final = conclusion(answer)
    if problem.task in NUMBER_TASKS:
        value = last_number(final)
        return value is not None and value == problem.exact
    if problem.task == "topology":
        order = last_node_list(final)
        return order is not None and alg.is_topological_order(q.n, q.edges, order)
    verdict = yes_no(final, has_marker="###" in answer)
    if verdict is None or verdict != problem.exact:
        return False
    if problem.task == "hamilton" and verdict and "###" in answer and _LIST.search(final):
        path = last_node_list(final)
        return path is not None and alg.is_hamiltonian_path(q.n, q.edges, path)
    return True

"""rlif's strict verdict on a GraphArena answer: is it an optimal solution, with every name real and used once?

It reads the same answer section as the published check (after the thinking) and differs from it on purpose: the
published check is kept for comparison with GraphArena's tables, this one is what a correct answer means.

* NP tasks: the ``graph`` family's checker on the same instance (``rewards.graph.checks.judge``; its rules are in
  docs/np-graph-rewards.md): the last list that fits the task's grammar, unknown or repeated names infeasible,
  the objective compared with rlif's exact optimum.
* Polynomial tasks: the last bracketed list (names stripped and unquoted, as the graph family reads them); an
  unknown or repeated name makes the answer wrong, and so does any list but the last. Connected: one node of every
  component. Diameter: a path along edges, shortest between its ends, as long as the diameter. Distance: a path
  along edges from the source to the target with as many hops as the shortest one. Neighbor: exactly the set of
  common neighbours.
"""

from __future__ import annotations

from rewards.graph.answer import last_name_list
from rewards.graph.checks import Category, judge
from rewards.graph.truth import parse_ground_truth as parse_graph_truth
from rewards.grapharena.problem import Problem


def strict_correct(problem: Problem, text: str) -> bool:
    """Whether ``text`` (the answer section) is an optimal answer under rlif's rules (module docstring)."""
    if problem.strict is not None:
        return judge(parse_graph_truth(problem.strict), text).category is Category.OPTIMAL
    names = last_name_list(text)
    if names is None:
        return False
    graph = problem.graph
    nodes = [graph.first_named(name) for name in names]
    if any(node is None for node in nodes) or len(set(nodes)) != len(nodes):
        return False
    path: list[int] = nodes  # type: ignore[assignment]
    if problem.task == "connected":
        component = graph.components()
        return sorted(component[u] for u in path) == sorted(set(component))
    if problem.task == "neighbor":
        first, second = problem.ends
        return set(path) == (graph.adjacency[first] & graph.adjacency[second]) - {first, second}
    if not path or any(not graph.has_edge(path[k], path[k + 1]) for k in range(len(path) - 1)):
        return False
    hops = len(path) - 1
    if problem.task == "distance":
        source, target = problem.ends
        return path[0] == source and path[-1] == target and hops == problem.strict_answer
    return graph.distances(path[0])[path[-1]] == hops == problem.strict_answer

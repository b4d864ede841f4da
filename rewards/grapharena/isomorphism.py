"""Whether two small undirected graphs are isomorphic: GraphArena's MCS check (``nx.is_isomorphic``), in pure
Python so the reward needs no networkx.

Backtracking over a node order that keeps each next node adjacent to the mapped ones where it can, pruned by degree,
self-loop and adjacency to the mapped nodes; instances have at most a few dozen atoms, so this stays well under a
millisecond for molecules.
"""

from __future__ import annotations

from collections.abc import Iterable


def _adjacency(n: int, edges: Iterable[frozenset[int]]) -> tuple[list[set[int]], list[bool]]:
    adjacency: list[set[int]] = [set() for _ in range(n)]
    loops = [False] * n
    for edge in edges:
        ends = sorted(edge)
        if len(ends) == 1:
            loops[ends[0]] = True
        else:
            u, v = ends
            adjacency[u].add(v)
            adjacency[v].add(u)
    return adjacency, loops


def _relabelled(edges: set[frozenset[int]]) -> tuple[int, list[frozenset[int]]]:
    """The nodes that touch an edge, renumbered 0..k-1, and the edges between them."""
    nodes = sorted({u for edge in edges for u in edge})
    index = {u: k for k, u in enumerate(nodes)}
    return len(nodes), [frozenset(index[u] for u in edge) for edge in edges]


def isomorphic(n1: int, edges1: set[frozenset[int]], n2: int, edges2: set[frozenset[int]]) -> bool:
    """Whether graph 1 (``n1`` nodes, ``edges1``) and graph 2 are isomorphic.

    Edges are sets of one (a self-loop) or two node numbers; nodes without edges are counted by ``n1``/``n2`` only.

    Args:
        n1: node count of graph 1 (isolated nodes included).
        edges1: its edges.
        n2: node count of graph 2.
        edges2: its edges.

    Returns:
        True when a bijection of the nodes maps the edges of one onto the edges of the other.
    """
    if n1 != n2 or len(edges1) != len(edges2):
        return False
    # Isolated nodes match each other freely, so only the nodes that touch an edge need mapping.
    k1, e1 = _relabelled(edges1)
    k2, e2 = _relabelled(edges2)
    if k1 != k2:
        return False
    adj1, loops1 = _adjacency(k1, e1)
    adj2, loops2 = _adjacency(k2, e2)
    if sorted((len(a), loop) for a, loop in zip(adj1, loops1, strict=True)) != sorted(
        (len(a), loop) for a, loop in zip(adj2, loops2, strict=True)
    ):
        return False
    order: list[int] = []
    seen: set[int] = set()
    for start in sorted(range(k1), key=lambda u: -len(adj1[u])):
        if start in seen:
            continue
        queue = [start]
        seen.add(start)
        while queue:
            u = queue.pop(0)
            order.append(u)
            for v in sorted(adj1[u], key=lambda w: -len(adj1[w])):
                if v not in seen:
                    seen.add(v)
                    queue.append(v)
    mapping: dict[int, int] = {}
    used: set[int] = set()

    def extend(depth: int) -> bool:
        if depth == len(order):
            return True
        u = order[depth]
        for w in range(k2):
            if w in used or len(adj2[w]) != len(adj1[u]) or loops2[w] != loops1[u]:
                continue
            if any((mapping[v] in adj2[w]) != (v in adj1[u]) for v in mapping):
                continue
            mapping[u] = w
            used.add(w)
            if extend(depth + 1):
                return True
            del mapping[u]
            used.discard(w)
        return False

    return extend(0)

"""Exact maximum common induced subgraph (MCS) by McSplit-style branch and bound, with bitsets as Python ints.

GraphArena's MCS value is the largest ``k`` such that some ``k`` atoms of A and ``k`` atoms of B induce
isomorphic unlabelled subgraphs (connectivity not required). networkx's ISMAGS needs minutes at 20 atoms and a
MILP's LP relaxation is weak on sparse graphs (every atom of A may map fractionally to all of B), so we use the
McSplit idea (McCreesh, Prosser and Trimble, IJCAI 2017): keep the unmatched vertices in "label classes" of A
and B vertices that have the same adjacency to every vertex matched so far. A vertex may only be matched inside
its class, so ``matched + sum(min(|A-side|, |B-side|))`` bounds every extension. Branch on a vertex of A from the
class with the smallest larger side (highest degree first), trying each B vertex of its class (highest degree
first) and finally leaving the A vertex unmatched. Classes are bitmasks, so splitting a class by a new match is
two ANDs per side.
"""

from __future__ import annotations

from collections.abc import Sequence


def _masks(n: int, edges: Sequence[tuple[int, int]]) -> list[int]:
    adjacency = [0] * n
    for u, v in edges:
        adjacency[u] |= 1 << v
        adjacency[v] |= 1 << u
    return adjacency


def _bits_by_degree(mask: int, order: Sequence[int]) -> list[int]:
    return [v for v in order if mask >> v & 1]


def max_common_induced_subgraph(
    n_a: int, edges_a: Sequence[tuple[int, int]], n_b: int, edges_b: Sequence[tuple[int, int]]
) -> list[tuple[int, int]]:
    """A maximum common induced subgraph of two unlabelled graphs, as matched vertex pairs ``(a, b)``.

    Args:
        n_a: vertices of A (``0..n_a-1``).
        edges_a: A's undirected edges.
        n_b: vertices of B.
        edges_b: B's undirected edges.

    Returns:
        Pairs ``(a, b)``, one per matched vertex; A's matched vertices induce a graph isomorphic to B's under the
        pairing, and no larger such pairing exists.
    """
    adj_a, adj_b = _masks(n_a, edges_a), _masks(n_b, edges_b)
    order_a = sorted(range(n_a), key=lambda v: -adj_a[v].bit_count())
    order_b = sorted(range(n_b), key=lambda v: -adj_b[v].bit_count())
    best: list[tuple[int, int]] = []
    matched: list[tuple[int, int]] = []

    def search(classes: list[tuple[int, int]]) -> None:
        nonlocal best
        if len(matched) > len(best):
            best = list(matched)
        if len(matched) + sum(min(lm.bit_count(), rm.bit_count()) for lm, rm in classes) <= len(best):
            return
        chosen = min(range(len(classes)), key=lambda k: max(classes[k][0].bit_count(), classes[k][1].bit_count()))
        left, right = classes[chosen]
        v = _bits_by_degree(left, order_a)[0]
        adjacent_v = adj_a[v]
        for w in _bits_by_degree(right, order_b):
            adjacent_w = adj_b[w]
            split: list[tuple[int, int]] = []
            for k, (class_left, class_right) in enumerate(classes):
                lm = class_left & ~(1 << v) if k == chosen else class_left
                rm = class_right & ~(1 << w) if k == chosen else class_right
                for lpart, rpart in ((lm & adjacent_v, rm & adjacent_w), (lm & ~adjacent_v, rm & ~adjacent_w)):
                    if lpart and rpart:
                        split.append((lpart, rpart))
            matched.append((v, w))
            search(split)
            matched.pop()
            if len(matched) + sum(min(lm.bit_count(), rm.bit_count()) for lm, rm in classes) <= len(best):
                return
        rest = left & ~(1 << v)
        search([*classes[:chosen], *([(rest, right)] if rest else []), *classes[chosen + 1 :]])

    if n_a and n_b:
        search([((1 << n_a) - 1, (1 << n_b) - 1)])
    return best

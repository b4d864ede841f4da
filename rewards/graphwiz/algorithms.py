"""The exact answers to GraphWiz's questions, recomputed from the graph in pure Python.

The reward package may not import networkx (rewards stay pure and light); tests hold every function here against
networkx on generated graphs. Nodes are ``0..n-1``; ``edges`` are pairs (or triples with a weight) as the question
states them.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from heapq import heappop, heappush

HAMILTON_STEP_LIMIT = 200_000
"""Search steps before ``hamiltonian_path`` gives up: the test set's graphs (at most 50 nodes) are settled in far
fewer, and a question that is not raises when the data is built rather than stalling a reward worker."""


class SearchLimitError(ValueError):
    """The exact Hamiltonian-path search ran past ``HAMILTON_STEP_LIMIT``."""


def undirected_adjacency(n: int, edges: Sequence[tuple[int, ...]]) -> list[set[int]]:
    """Each node's neighbours, ignoring edge directions (bipartiteness and cycles are read that way)."""
    adjacency: list[set[int]] = [set() for _ in range(n)]
    for edge in edges:
        u, v = edge[0], edge[1]
        adjacency[u].add(v)
        adjacency[v].add(u)
    return adjacency


def connected(n: int, edges: Sequence[tuple[int, ...]], source: int, target: int) -> bool:
    """Whether an undirected path joins ``source`` and ``target`` (breadth-first search)."""
    adjacency = undirected_adjacency(n, edges)
    seen = {source}
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in adjacency[u]:
            if v not in seen:
                seen.add(v)
                queue.append(v)
    return target in seen


def has_cycle(n: int, edges: Sequence[tuple[int, ...]]) -> bool:
    """Whether the undirected graph has a cycle (a self-loop counts; union-find over the distinct edges)."""
    parent = list(range(n))

    def root(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    seen: set[tuple[int, int]] = set()
    for edge in edges:
        u, v = edge[0], edge[1]
        key = (min(u, v), max(u, v))
        if key in seen:
            continue
        seen.add(key)
        ru, rv = root(u), root(v)
        if ru == rv:
            return True
        parent[ru] = rv
    return False


def bipartite(n: int, edges: Sequence[tuple[int, ...]]) -> bool:
    """Whether the nodes split into two sides with every edge between them (two-colouring; directions ignored, as
    networkx's ``is_bipartite`` reads GraphWiz's directed graphs)."""
    adjacency = undirected_adjacency(n, edges)
    colour = [-1] * n
    for start in range(n):
        if colour[start] >= 0:
            continue
        colour[start] = 0
        queue = deque([start])
        while queue:
            u = queue.popleft()
            for v in adjacency[u]:
                if colour[v] < 0:
                    colour[v] = 1 - colour[u]
                    queue.append(v)
                elif colour[v] == colour[u]:
                    return False
    return True


def shortest_distance(n: int, edges: Sequence[tuple[int, int, int]], source: int, target: int) -> int | None:
    """The least total weight of an undirected path from ``source`` to ``target`` (Dijkstra), None if none."""
    adjacency: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for u, v, w in edges:
        adjacency[u].append((v, w))
        adjacency[v].append((u, w))
    best: dict[int, int] = {source: 0}
    heap = [(0, source)]
    while heap:
        d, u = heappop(heap)
        if u == target:
            return d
        if d > best.get(u, d):
            continue
        for v, w in adjacency[u]:
            if d + w < best.get(v, d + w + 1):
                best[v] = d + w
                heappush(heap, (d + w, v))
    return None


def max_flow(n: int, edges: Sequence[tuple[int, int, int]], source: int, sink: int) -> int:
    """The maximum flow from ``source`` to ``sink`` with each directed edge's weight its capacity (Edmonds-Karp;
    parallel edges add up)."""
    if source == sink:
        raise ValueError("max_flow: source and sink are the same node")
    capacity: list[dict[int, int]] = [{} for _ in range(n)]
    for u, v, w in edges:
        capacity[u][v] = capacity[u].get(v, 0) + w
        capacity[v].setdefault(u, 0)
    total = 0
    while True:
        parent = {source: source}
        queue = deque([source])
        while queue and sink not in parent:
            u = queue.popleft()
            for v, c in capacity[u].items():
                if c > 0 and v not in parent:
                    parent[v] = u
                    queue.append(v)
        if sink not in parent:
            return total
        bottleneck = None
        v = sink
        while v != source:
            u = parent[v]
            c = capacity[u][v]
            bottleneck = c if bottleneck is None else min(bottleneck, c)
            v = u
        assert bottleneck is not None  # a path from source to sink has at least one edge
        v = sink
        while v != source:
            u = parent[v]
            capacity[u][v] -= bottleneck
            capacity[v][u] += bottleneck
            v = u
        total += bottleneck


def is_topological_order(n: int, edges: Sequence[tuple[int, ...]], order: Sequence[int]) -> bool:
    """Whether ``order`` lists every node once and puts each edge's tail before its head."""
    if sorted(order) != list(range(n)):
        return False
    position = {node: k for k, node in enumerate(order)}
    return all(position[edge[0]] < position[edge[1]] for edge in edges)


def is_hamiltonian_path(n: int, edges: Sequence[tuple[int, ...]], path: Sequence[int]) -> bool:
    """Whether ``path`` visits every node once, each step along an undirected edge."""
    if sorted(path) != list(range(n)):
        return False
    adjacency = undirected_adjacency(n, edges)
    return all(path[k + 1] in adjacency[path[k]] for k in range(len(path) - 1))


def hamiltonian_path(n: int, edges: Sequence[tuple[int, ...]]) -> list[int] | None:
    """A path through every node of the undirected graph once, or None where there is none.

    Depth-first search from the nodes that must be ends (degree one) or from every node, neighbours with fewest
    free neighbours first, cut where the unvisited nodes are no longer reachable through free nodes or more than
    one of them could only be the last node.

    Raises:
        SearchLimitError: the search took more than ``HAMILTON_STEP_LIMIT`` steps.
    """
    if n <= 1:
        return list(range(n))
    adjacency = undirected_adjacency(n, edges)
    for u in range(n):
        adjacency[u].discard(u)
    degrees = [len(a) for a in adjacency]
    leaves = [u for u in range(n) if degrees[u] == 1]
    if 0 in degrees or len(leaves) > 2 or not _reachable_all(adjacency, 0, set(range(n))):
        return None
    steps = [0]
    starts = leaves[:1] if leaves else sorted(range(n), key=lambda u: degrees[u])
    for start in starts:
        path = [start]
        if _extend(adjacency, path, set(range(n)) - {start}, steps):
            return path
    return None


def _reachable_all(adjacency: list[set[int]], start: int, allowed: set[int]) -> bool:
    seen = {start}
    stack = [start]
    while stack:
        u = stack.pop()
        for v in adjacency[u]:
            if v in allowed and v not in seen:
                seen.add(v)
                stack.append(v)
    return allowed <= seen


def _extend(adjacency: list[set[int]], path: list[int], free: set[int], steps: list[int]) -> bool:
    if not free:
        return True
    steps[0] += 1
    if steps[0] > HAMILTON_STEP_LIMIT:
        raise SearchLimitError(f"Hamiltonian-path search passed {HAMILTON_STEP_LIMIT} steps")
    here = path[-1]
    if not _reachable_all(adjacency, here, free | {here}):
        return False
    # A free node with a single free-or-current neighbour can only end the path; two such nodes cannot both.
    ends = sum(1 for u in free if len(adjacency[u] & free) + (here in adjacency[u]) <= 1)
    if ends > 1:
        return False
    candidates = sorted(adjacency[here] & free, key=lambda v: len(adjacency[v] & free))
    for v in candidates:
        path.append(v)
        free.discard(v)
        if _extend(adjacency, path, free, steps):
            return True
        free.add(v)
        path.pop()
    return False


def max_triangle_weight(node_weights: Sequence[int], edges: Sequence[tuple[int, ...]]) -> int:
    """The largest total node weight of three mutually joined nodes, 0 where there is no triangle (GraphWiz's
    ``maximum_triplet_sum`` starts from 0 too)."""
    adjacency = undirected_adjacency(len(node_weights), edges)
    best = 0
    for u in range(len(node_weights)):
        for v in adjacency[u]:
            if v <= u:
                continue
            for w in adjacency[u] & adjacency[v]:
                if w > v:
                    best = max(best, node_weights[u] + node_weights[v] + node_weights[w])
    return best

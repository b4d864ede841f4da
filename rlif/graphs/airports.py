"""Flight-network TSP instances: integer km distances that are metric closures of a sparse route network.

GraphArena samples airports from a real route network (OpenFlights-like ``TSP.csv``) and uses the shortest
route distance for pairs with no direct flight (the metric closure). We do the same on a synthetic world: airports
clustered around a few regional centres on a sphere, routes to nearby airports plus long-haul routes between hubs,
great-circle distances rounded to km, then all-pairs shortest paths. The closure is exactly metric in integers,
and every distance is checked to fit fast-tsp's uint16 matrix.

Deviation from GraphArena: the airports and routes are synthetic (no OpenFlights data is shipped).
"""

from __future__ import annotations

import math
import random

import numpy as np

from rlif.graphs.instance import MAX_TSP_DISTANCE, TspInstance
from rlif.graphs.names import airport_codes

EARTH_RADIUS_KM = 6371.0
WORLD_AIRPORTS = 60
_LOCAL_ROUTES = 3
_HUB_FRACTION = 0.15


def _random_world(rng: random.Random, size: int) -> np.ndarray:
    """Unit vectors of ``size`` airports scattered around 3-7 regional centres."""
    centres = []
    for _ in range(rng.randint(3, 7)):
        lat = math.asin(rng.uniform(-0.8, 0.95))
        lon = rng.uniform(-math.pi, math.pi)
        centres.append((lat, lon))
    points = np.empty((size, 3))
    for k in range(size):
        lat0, lon0 = rng.choice(centres)
        spread = rng.uniform(0.03, 0.25)
        lat = min(max(lat0 + rng.gauss(0.0, spread), -1.5), 1.5)
        lon = lon0 + rng.gauss(0.0, spread) / max(math.cos(lat), 0.2)
        points[k] = (math.cos(lat) * math.cos(lon), math.cos(lat) * math.sin(lon), math.sin(lat))
    return points


def _great_circle_km(points: np.ndarray) -> np.ndarray:
    cosines = np.clip(points @ points.T, -1.0, 1.0)
    km = np.rint(EARTH_RADIUS_KM * np.arccos(cosines))
    return np.maximum(km, 1.0) - np.eye(len(points))


def _route_network(rng: random.Random, direct: np.ndarray) -> np.ndarray:
    """Direct-flight distances (inf where no route): nearby airports, hub long-hauls, and a spanning tree."""
    size = len(direct)
    routes = np.full((size, size), np.inf)
    np.fill_diagonal(routes, 0.0)

    def link(i: int, j: int) -> None:
        routes[i, j] = routes[j, i] = direct[i, j]

    for i in range(size):
        for j in np.argsort(direct[i])[1 : 1 + _LOCAL_ROUTES]:
            link(i, int(j))
    hubs = rng.sample(range(size), max(2, int(size * _HUB_FRACTION)))
    for i in hubs:
        for j in hubs:
            if i < j and rng.random() < 0.7:
                link(i, j)
    # Prim's spanning tree, so the network is connected whatever the random routes were.
    in_tree = np.zeros(size, dtype=bool)
    in_tree[0] = True
    nearest = np.zeros(size, dtype=int)
    gap = direct[0].copy()
    for _ in range(size - 1):
        j = int(np.argmin(np.where(in_tree, np.inf, gap)))
        link(int(nearest[j]), j)
        in_tree[j] = True
        closer = direct[j] < gap
        gap = np.where(closer, direct[j], gap)
        nearest = np.where(closer, j, nearest)
    return routes


def _metric_closure(routes: np.ndarray) -> np.ndarray:
    """All-pairs shortest path lengths (Floyd-Warshall; sizes here are tiny)."""
    dist = routes.copy()
    for k in range(len(dist)):
        dist = np.minimum(dist, dist[:, k : k + 1] + dist[k : k + 1, :])
    return dist


def sample_tsp(n: int, rng: random.Random) -> TspInstance:
    """A TSP instance on ``n`` airports drawn from a fresh synthetic world of ``WORLD_AIRPORTS`` airports.

    Raises:
        ValueError: ``n`` outside 3..WORLD_AIRPORTS, or a closure distance above ``MAX_TSP_DISTANCE``.
    """
    if not 3 <= n <= WORLD_AIRPORTS:
        raise ValueError(f"n: tsp needs 3..{WORLD_AIRPORTS} airports, got {n}")
    direct = _great_circle_km(_random_world(rng, WORLD_AIRPORTS))
    closure = _metric_closure(_route_network(rng, direct))
    chosen = rng.sample(range(WORLD_AIRPORTS), n)
    sub = closure[np.ix_(chosen, chosen)]
    if sub.max() > MAX_TSP_DISTANCE:
        raise ValueError(f"tsp: closure distance {sub.max()} exceeds {MAX_TSP_DISTANCE}")
    weights = tuple(tuple(int(w) for w in row) for row in sub)
    return TspInstance(airport_codes(rng, n), weights)

"""Reward time per response for the six graph tasks at GraphArena's large sizes, with 24,000-character responses.

Instances are synthetic, built here with a fixed seed at the top of GraphArena's "hard" ranges: MCP/MIS/MVC on 30
people (G(30, 0.2)), TSP on 20 airports, GED on two 20-atom molecules, MCS on two 20-atom molecules. Optima are
exact where that is cheap (MCP/MIS/MVC by networkx clique search; GED 0 and MCS 20, because molecule B is a
relabelled copy of A); for TSP the recorded optimum is the length of the answered convex-polygon tour (points on a
circle), which only serves the timing. Each response is 24,000 characters of real model prose (IFBench sample
responses from ``shared/data``) as the thinking section, followed by the answer:

* ``optimal``: the optimal answer;
* ``wrong``: a plausible infeasible answer (one wrong element);
* ``no-think``: the same optimal answer after the prose with no ``<think>`` section, so the whole text is parsed.

Timed through the real entry (``rewards.compute_score``) with ``binary`` (no loop check) and
``ratio_quality_format_repeat`` (loop check on the 24k characters); best of 5 calls after one warm-up call.

Usage, from the repository root::

    python3 -m benchmarks.graph_reward_time

Results go to ``benchmarks/graph_reward_time.md``.
"""

from __future__ import annotations

import itertools
import json
import math
import platform
import random
import string
import sys
import time
from pathlib import Path

import networkx as nx

from rewards import compute_score

REPO_ROOT = Path(__file__).resolve().parents[1]
SAMPLES = REPO_ROOT.parent / "shared" / "data" / "ifbench_sample_responses.jsonl"
RESULTS = REPO_ROOT / "benchmarks" / "graph_reward_time.md"
LENGTH = 24_000
REPEATS = 5


def main() -> int:
    rng = random.Random(2026)
    responses = [json.loads(line)["response"] for line in SAMPLES.read_text().splitlines()]
    prose = "\n\n".join(responses)[:LENGTH].replace("[", "(").replace("]", ")")
    rows = []
    for task, truth, optimal, wrong in _instances(rng):
        texts = {
            "optimal": f"<think>\n{prose}\n</think>\n\nThe answer is {optimal}.",
            "wrong": f"<think>\n{prose}\n</think>\n\nThe answer is {wrong}.",
            "no-think": f"{prose}\n\nThe answer is {optimal}.",
        }
        for case, text in texts.items():
            for variant in ("binary", "ratio_quality_format_repeat"):
                out = compute_score(f"graph/{task}", text, truth, None, graph_reward=variant)
                best = min(_timed(task, text, truth, variant) for _ in range(REPEATS))
                rows.append((task, case, variant, out["score"], out["acc"], best))
    report = _report(rows)
    RESULTS.write_text(report)
    print(report)
    print(f"written to {RESULTS}")
    return 0


def _timed(task: str, text: str, truth: str, variant: str) -> float:
    start = time.perf_counter()
    compute_score(f"graph/{task}", text, truth, None, graph_reward=variant)
    return time.perf_counter() - start


def _instances(rng: random.Random) -> list[tuple[str, str, str, str]]:
    """(task, ground truth, optimal answer, wrong answer) for each task."""
    out = []
    graph = nx.gnp_random_graph(30, 0.2, seed=rng.randrange(1 << 30))
    names = [f"{rng.choice(['Ana', 'Bo', 'Chen', 'Dana', 'Eli'])} Person{i}" for i in range(30)]
    social = {
        "nodes": [{"id": i, "name": n} for i, n in enumerate(names)],
        "links": [{"source": u, "target": v} for u, v in sorted(graph.edges)],
    }
    clique = max(nx.find_cliques(graph), key=len)
    independent = max(nx.find_cliques(nx.complement(graph)), key=len)
    cover = [v for v in graph if v not in independent]
    for task, chosen, spoil in (
        ("mcp", clique, lambda s: [*s[:-1], next(v for v in graph if v not in graph[s[0]] and v != s[0])]),
        ("mis", independent, lambda s: [*s[:-1], next(iter(graph[s[0]]))]),
        ("mvc", cover, lambda s: [*s[:-1], s[0]]),
    ):
        truth = json.dumps({"task": task, "graph": social, "optimum": len(chosen)})
        out.append((task, truth, _names(names, chosen), _names(names, spoil(list(chosen)))))
    codes = []
    while len(codes) < 20:
        code = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
        if code not in codes:
            codes.append(code)
    points = [(5000 * math.cos(2 * math.pi * k / 20), 5000 * math.sin(2 * math.pi * k / 20)) for k in range(20)]
    weights = [[max(1, round(math.dist(p, q))) for q in points] for p in points]
    tour = [*range(20), 0]
    tsp = {
        "nodes": [{"id": i, "name": c} for i, c in enumerate(codes)],
        "links": [{"source": i, "target": j, "weight": weights[i][j]} for i in range(20) for j in range(i + 1, 20)],
    }
    length = sum(weights[a][b] for a, b in itertools.pairwise(tour))
    out.append(
        (
            "tsp",
            json.dumps({"task": "tsp", "graph": tsp, "optimum": length}),
            "[" + ", ".join(codes[i] for i in tour) + "]",
            "[" + ", ".join(codes[i] for i in [*range(19), 0]) + "]",
        )
    )
    first, relabel = _molecule(rng, 20), list(range(20))
    rng.shuffle(relabel)
    second = _relabelled(first, relabel)
    inverse = "[" + ", ".join(str(relabel[i]) for i in range(20)) + "]"
    out.append(
        ("ged", json.dumps({"task": "ged", "graph": [first, second], "optimum": 0}), inverse, "[" + "0, " * 19 + "1]")
    )
    a_atoms = list(range(20))
    b_atoms = [relabel[i] for i in a_atoms]  # each atom's partner, in the same order
    out.append(
        (
            "mcs",
            json.dumps({"task": "mcs", "graph": [first, second], "optimum": 20}),
            f"{a_atoms}, {b_atoms}",
            f"{a_atoms}, {[*b_atoms[:-1], 25]}",
        )
    )
    return out


def _names(names: list[str], ids: list[int]) -> str:
    return "[" + ", ".join(names[i] for i in ids) + "]"


def _molecule(rng: random.Random, n: int) -> dict:
    tree = nx.random_labeled_tree(n, seed=rng.randrange(1 << 30))
    bonds = set(tree.edges)
    while len(bonds) < n + 2:  # two rings
        u, v = rng.sample(range(n), 2)
        bonds.add((min(u, v), max(u, v)))
    return {
        "nodes": [{"id": i, "label": rng.choice("CCCCNOS")} for i in range(n)],
        "links": [{"source": u, "target": v, "label": "SINGLE"} for u, v in sorted(bonds)],
    }


def _relabelled(mol: dict, relabel: list[int]) -> dict:
    labels = {relabel[node["id"]]: node["label"] for node in mol["nodes"]}
    return {
        "nodes": [{"id": i, "label": labels[i]} for i in range(len(labels))],
        "links": [
            {"source": relabel[link["source"]], "target": relabel[link["target"]], "label": link["label"]}
            for link in mol["links"]
        ],
    }


def _report(rows: list[tuple]) -> str:
    lines = [
        "# Graph reward time per response",
        "",
        f"Written by `benchmarks/graph_reward_time.py`: {LENGTH:,}-character real-prose thinking + answer, GraphArena",
        "large sizes (30 people, 20 airports, 20 + 20 atoms), best of "
        f"{REPEATS} calls through `rewards.compute_score` with a warm ground-truth cache.",
        f"Machine: {platform.machine()}, Python {sys.version.split()[0]}, shared 2-core VM, one run.",
        "",
        "| task | response | binary ms | with loop check ms | score (binary / ratio) |",
        "|---|---|---|---|---|",
    ]
    by_key = {(t, c, v): (s, a, ms) for t, c, v, s, a, ms in rows}
    for task, case in dict.fromkeys((t, c) for t, c, *_ in rows):
        b = by_key[(task, case, "binary")]
        r = by_key[(task, case, "ratio_quality_format_repeat")]
        lines.append(f"| {task} | {case} | {b[2] * 1e3:.3f} | {r[2] * 1e3:.2f} | {b[0]:g} / {r[0]:g} |")
    worst = max(ms for t, c, v, s, a, ms in rows if v == "binary")
    lines += ["", f"Worst binary (no loop check) time: {worst * 1e3:.3f} ms."]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())

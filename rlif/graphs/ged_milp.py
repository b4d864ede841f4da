"""Exact graph edit distance of two equal-size labelled molecules, as a mixed-integer program solved by HiGHS.

GraphArena's GED (``nx.optimal_edit_paths`` with unit costs) maps the atoms of A one-to-one onto the atoms of B
and pays 1 per relabelled atom, 1 per bond of A whose image is not a bond of B and 1 per bond of B that is not
an image (bond types are ignored). With ``m`` the number of A bonds mapped onto B bonds that is

    GED = relabels + |E_A| + |E_B| - 2 m.

networkx's search over edit paths is exponential in the atom count, far too slow at GraphArena's sizes. We solve
the bijection exactly with the edge-matching formulation of Lerouge et al. (2017, "New binary linear programming
formulation to compute the graph edit distance"), specialised to a bijection, with each undirected bond of B taken
as two arcs so that the images of both ends of an A bond are pinned separately:

* ``x[u,i]`` binary: atom u of A goes to atom i of B; every row and column sums to 1;
* ``y[e,(k,l)]`` in [0, 1] for bond e = (u, v), u < v, of A and arc (k, l) of B: u goes to k and v goes to l;
* for each bond e = (u, v) of A and atom k of B: ``sum_l y[e,(k,l)] <= x[u,k]`` and
  ``sum_l y[e,(l,k)] <= x[v,k]`` (e leaves k only if u is there, arrives at k only if v is there);
* for each arc (k, l) of B and atom u of A: the A bonds at u that land on (k, l) with u at k number at most
  ``x[u,k]``.

Given integral ``x`` these force ``y[e,(k,l)] = 1`` only for ``(k, l) = (pi(u), pi(v))``, so ``y`` needs no
integrality. Pinning each arc end separately gives a tighter LP bound, and so a faster solve, than the undirected
aggregate ``sum_{f ni k} y[e,f] <= x[u,k] + x[v,k]``. Degree-cap rows (``matched bonds at u <= min(deg)``) do not
tighten the bound and only slow the LP, so they are left out. The measurements behind both choices are in
docs/np-graph-data.md ("Exact solvers"); current timings in benchmarks/graph_exact_solvers.md.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rlif.graphs.instance import Molecule

_INF = 1e30


def graph_edit_distance(a: Molecule, b: Molecule, time_limit_s: float = 3600.0) -> tuple[int, list[int]]:
    """The exact unit-cost GED between two molecules of equal size and one optimal atom mapping.

    Args:
        a: molecule A.
        b: molecule B, with as many atoms as A.
        time_limit_s: HiGHS's time limit; exceeding it is an error, never a silently approximate answer.

    Returns:
        ``(cost, mapping)`` where ``mapping[u]`` is the atom of B that atom u of A maps to.

    Raises:
        ValueError: the molecules differ in size.
        RuntimeError: HiGHS did not prove optimality (time limit or solver failure).
    """
    import highspy

    if a.n != b.n:
        raise ValueError(f"graph_edit_distance needs equal sizes, got {a.n} and {b.n}")
    n = a.n
    edges_a = sorted(a.edge_set())
    edges_b = sorted(b.edge_set())
    arcs_b = edges_b + [(head, tail) for tail, head in edges_b]  # arc f and arc f + |E_B| are reverses
    num_x = n * n
    num_y = len(edges_a) * len(arcs_b)

    def x(u: int, i: int) -> int:
        return u * n + i

    def y(e: int, f: int) -> int:
        return num_x + e * len(arcs_b) + f

    cost = np.zeros(num_x + num_y)
    for u in range(n):
        for i in range(n):
            cost[x(u, i)] = float(a.atoms[u] != b.atoms[i])
    cost[num_x:] = -2.0

    starts, indices, values, lower, upper = [0], [], [], [], []

    def add_row(cols: list[int], coefs: list[float], lo: float, hi: float) -> None:
        indices.extend(cols)
        values.extend(coefs)
        starts.append(len(indices))
        lower.append(lo)
        upper.append(hi)

    for u in range(n):
        add_row([x(u, i) for i in range(n)], [1.0] * n, 1.0, 1.0)
    for i in range(n):
        add_row([x(u, i) for u in range(n)], [1.0] * n, 1.0, 1.0)
    tails_b: list[list[int]] = [[] for _ in range(n)]
    heads_b: list[list[int]] = [[] for _ in range(n)]
    for f, (tail, head) in enumerate(arcs_b):
        tails_b[tail].append(f)
        heads_b[head].append(f)
    # Edge e = (u, v) of A lands on arc (k, l) of B only if u -> k (tail) and v -> l (head).
    for e, (u, v) in enumerate(edges_a):
        for k in range(n):
            if tails_b[k]:
                add_row([*(y(e, f) for f in tails_b[k]), x(u, k)], [1.0] * len(tails_b[k]) + [-1.0], -_INF, 0.0)
                add_row([*(y(e, f) for f in heads_b[k]), x(v, k)], [1.0] * len(heads_b[k]) + [-1.0], -_INF, 0.0)
    # Seen from B: arc (k, l) receives at most one A edge whose end u goes to k (as tail or as head).
    ends_a: list[list[tuple[int, bool]]] = [[] for _ in range(n)]
    for e, (u, v) in enumerate(edges_a):
        ends_a[u].append((e, True))
        ends_a[v].append((e, False))
    for f, (k, _) in enumerate(arcs_b):
        reverse = (f + len(edges_b)) % len(arcs_b)
        for u in range(n):
            if ends_a[u]:
                cols = [y(e, f) if is_tail else y(e, reverse) for e, is_tail in ends_a[u]]
                add_row([*cols, x(u, k)], [1.0] * len(cols) + [-1.0], -_INF, 0.0)

    lp = highspy.HighsLp()
    lp.num_col_ = num_x + num_y
    lp.num_row_ = len(lower)
    lp.col_cost_ = cost
    lp.col_lower_ = np.zeros(num_x + num_y)
    lp.col_upper_ = np.ones(num_x + num_y)
    lp.row_lower_ = np.array(lower)
    lp.row_upper_ = np.array(upper)
    lp.offset_ = float(len(edges_a) + len(edges_b))
    lp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
    lp.a_matrix_.start_ = np.array(starts, dtype=np.int32)
    lp.a_matrix_.index_ = np.array(indices, dtype=np.int32)
    lp.a_matrix_.value_ = np.array(values)
    lp.a_matrix_.num_col_ = lp.num_col_
    lp.a_matrix_.num_row_ = lp.num_row_
    lp.integrality_ = [highspy.HighsVarType.kInteger] * num_x + [highspy.HighsVarType.kContinuous] * num_y

    solver = highspy.Highs()
    solver.setOptionValue("output_flag", False)
    solver.setOptionValue("threads", 1)
    solver.setOptionValue("random_seed", 0)
    solver.setOptionValue("time_limit", float(time_limit_s))
    solver.setOptionValue("mip_rel_gap", 0.0)
    solver.setOptionValue("mip_abs_gap", 0.99)  # costs are integers: a gap below 1 proves the incumbent optimal
    solver.passModel(lp)
    solver.run()
    if solver.getModelStatus() != highspy.HighsModelStatus.kOptimal:
        raise RuntimeError(
            f"HiGHS did not prove the GED optimum: {solver.modelStatusToString(solver.getModelStatus())}"
        )
    values_x = np.asarray(solver.getSolution().col_value[:num_x]).reshape(n, n)
    mapping = [int(i) for i in values_x.argmax(axis=1)]
    return edit_cost(a, b, mapping), mapping


def edit_cost(a: Molecule, b: Molecule, mapping: Sequence[int]) -> int:
    """The unit edit cost of mapping atom u of A to ``mapping[u]`` of B (relabels + unmatched bonds both ways).

    Raises:
        ValueError: ``mapping`` is not a permutation of B's atoms.
    """
    if sorted(mapping) != list(range(b.n)) or len(mapping) != a.n:
        raise ValueError("mapping: must be a permutation of B's atoms")
    relabels = sum(a.atoms[u] != b.atoms[mapping[u]] for u in range(a.n))
    edges_b = b.edge_set()
    kept = sum(tuple(sorted((mapping[u], mapping[v]))) in edges_b for u, v in a.edge_set())
    return relabels + len(a.bonds) + len(b.bonds) - 2 * kept

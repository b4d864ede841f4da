"""Maximum common induced subgraph (MCS) of two molecules: sizes, generator, exact solver and prompt.

Solver: the McSplit branch and bound of ``rlif.graphs.mcs_search``. The two molecule sizes are drawn
independently, as in GraphArena; the prompt shows topology only (no elements, no bond types).
"""

from __future__ import annotations

import random

from rlif.graphs.instance import Molecule, MoleculePair
from rlif.graphs.mcs_search import max_common_induced_subgraph
from rlif.graphs.molecules import sample_molecule_pair
from rlif.graphs.task import GraphTask, Solution, sample_size

SIZE_RANGES = {"small": (4, 9), "large": (10, 20)}
"""GraphArena's easy/hard atoms per molecule."""


def generate(lo: int, hi: int, rng: random.Random) -> MoleculePair:
    """Two distinct molecules whose sizes are drawn independently."""
    return sample_molecule_pair(sample_size(lo, hi, rng), sample_size(lo, hi, rng), rng)


def max_common_subgraph(pair: MoleculePair) -> Solution:
    """The maximum common induced subgraph size; the witness lists matched ``(atom of A, atom of B)`` pairs."""
    edges_a = [(u, v) for u, v, _ in pair.a.bonds]
    edges_b = [(u, v) for u, v, _ in pair.b.bonds]
    pairs = max_common_induced_subgraph(pair.a.n, edges_a, pair.b.n, edges_b)
    return Solution(len(pairs), tuple(pairs))


def problem_text(pair: MoleculePair) -> str:
    """Both molecules' bonds (topology only) and the two-list answer format."""

    def describe(name: str, mol: Molecule) -> str:
        bonds = ", ".join(f"{u}-{v}" for u, v, _ in mol.bonds)
        return f"Molecule {name} consists of {mol.n} atoms with the following {len(mol.bonds)} bonds:\n{bonds}"

    return "\n".join(
        [
            "Find the maximum common subgraph of two molecules, ignoring element and bond types: the largest "
            "set of atoms of A and equally many atoms of B, paired one to one, such that two atoms of A are "
            "bonded exactly when their partners in B are bonded. The common subgraph need not be connected.",
            "",
            "**Problem to Solve**",
            "",
            describe("A", pair.a),
            describe("B", pair.b),
            "",
            "Write the atom indices of the common subgraph in molecule A, then their partners in the same order in "
            "molecule B, as two lists, e.g. [1, 2, 3], [2, 3, 4].",
        ]
    )


TASK = GraphTask(
    id="mcs",
    instance_type=MoleculePair,
    size_ranges=SIZE_RANGES,
    generate=generate,
    solve=max_common_subgraph,
    problem_text=problem_text,
)

"""Graph edit distance (GED) between two molecules of one size: sizes, generator, exact solver and prompt.

Solver: the HiGHS MILP of ``rlif.graphs.ged_milp``. Both molecules have the same atom count (one size draw), so an
answer is a permutation.
"""

from __future__ import annotations

import random

from rlif.graphs.ged_milp import graph_edit_distance
from rlif.graphs.instance import Molecule, MoleculePair
from rlif.graphs.molecules import sample_molecule_pair
from rlif.graphs.task import GraphTask, Solution, sample_size

SIZE_RANGES = {"small": (4, 9), "large": (10, 20)}
"""GraphArena's easy/hard atoms per molecule."""


def generate(lo: int, hi: int, rng: random.Random) -> MoleculePair:
    """Two distinct molecules of one drawn size."""
    n = sample_size(lo, hi, rng)
    return sample_molecule_pair(n, n, rng)


def check_instance(pair: MoleculePair, where: str) -> None:
    """GED here maps atoms one to one, so both molecules need the same atom count.

    Raises:
        ValueError: the sizes differ.
    """
    if pair.a.n != pair.b.n:
        raise ValueError(f"{where}: ged molecules must have the same number of atoms")


def min_edit_distance(pair: MoleculePair) -> Solution:
    """The exact unit-cost GED; the witness maps atom u of A to ``witness[u]`` of B."""
    cost, mapping = graph_edit_distance(pair.a, pair.b)
    return Solution(cost, tuple(mapping))


def _atoms_and_bonds(name: str, mol: Molecule) -> list[str]:
    return [
        f"Molecule {name}:",
        "- Atoms: " + ", ".join(f"{element} (atom {i})" for i, element in enumerate(mol.atoms)),
        "- Bonds: " + ", ".join(f"{u}-{v}" for u, v, _ in mol.bonds),
    ]


def problem_text(pair: MoleculePair) -> str:
    """Both molecules' atoms (with elements) and bonds, the edit costs and the answer format."""
    return "\n".join(
        [
            "Compute the graph edit distance between two molecules with the same number of atoms. Every atom of "
            "molecule A is mapped to a different atom of molecule B. Each edit costs 1: relabelling an atom "
            "(its element changes), deleting a bond of A whose mapped atoms are not bonded in B, and adding a "
            "bond of B whose atoms are not the images of a bond of A. Find the mapping with the lowest total cost.",
            "",
            "**Problem to Solve**",
            "",
            *_atoms_and_bonds("A", pair.a),
            *_atoms_and_bonds("B", pair.b),
            "",
            "Write the mapping as one list of atom indices of B, where position i holds the atom of B that atom i "
            "of A maps to, e.g. [1, 0, 2, ...] maps atom 0 to 1, atom 1 to 0 and atom 2 to 2.",
        ]
    )


TASK = GraphTask(
    id="ged",
    instance_type=MoleculePair,
    size_ranges=SIZE_RANGES,
    generate=generate,
    solve=min_edit_distance,
    problem_text=problem_text,
    check_instance=check_instance,
)

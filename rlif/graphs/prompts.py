"""Prompt text of the six tasks, in GraphArena's style but written for rlif.

Like GraphArena, each prompt names the entities (people, airport codes, atom indices), lists the graph under
``**Problem to Solve**`` and asks for the answer as a bracketed list. GraphArena sends a separate system
message; verl rows here carry one user message, so the instruction that would be the system prompt opens the
user message (``ANSWER_RULES``). Deviations: the "Fiendship" typo is fixed, and the answer format is spelled out
once per task with a tiny example of its shape. MCS keeps GraphArena's two lists ``[A atoms], [B atoms]``.
"""

from __future__ import annotations

import itertools

from rlif.graphs.instance import Instance, Molecule, MoleculePair, SocialGraph, TspInstance

ANSWER_RULES = (
    "You are an expert in graph problems. Work the problem out yourself without writing or running code. "
    "Give your final answer in square brackets [] exactly as requested, and use square brackets nowhere else."
)
MAX_PROMPT_CHARS = 6000
"""GraphArena drops instances whose prompt is longer; the builder redraws them."""


def _edge_list(graph: SocialGraph) -> str:
    return ", ".join(f"{graph.names[u]} and {graph.names[v]}" for u, v in graph.edges)


def _mcp(graph: SocialGraph) -> str:
    return "\n".join(
        [
            "Consider an undirected academic network in which an edge means two authors have written a paper "
            "together. Find a maximum clique: the largest group of authors in which every two authors have "
            "collaborated.",
            "",
            "**Problem to Solve**",
            "",
            "- Authors in the network: " + ", ".join(graph.names),
            "- Research collaborations between these authors: " + _edge_list(graph),
            "",
            "Write the authors of the largest clique as one list, e.g. [Author A, Author B, Author C].",
        ]
    )


def _social(graph: SocialGraph, objective: str, example: str) -> str:
    return "\n".join(
        [
            "Consider an undirected social network in which an edge means two users are friends. " + objective,
            "",
            "**Problem to Solve**",
            "",
            "- Users in the network: " + ", ".join(graph.names),
            "- Friendship connections: " + _edge_list(graph),
            "",
            example,
        ]
    )


def _mis(graph: SocialGraph) -> str:
    return _social(
        graph,
        "Find a maximum independent set: the largest group of users in which no two users are friends.",
        "Write the users of the largest independent set as one list, e.g. [User A, User B, User C].",
    )


def _mvc(graph: SocialGraph) -> str:
    return _social(
        graph,
        "Find a minimum vertex cover: the smallest group of users such that every friendship connection has "
        "at least one of its two users in the group.",
        "Write the users of the smallest vertex cover as one list, e.g. [User A, User B, User C].",
    )


def _tsp(tsp: TspInstance) -> str:
    lines = [
        "Solve the Travelling Salesman Problem on an undirected flight network: find the shortest round trip "
        "that visits every listed airport exactly once and returns to the airport it started from. Distances "
        "for pairs without a direct flight are those of the shortest connection.",
        "",
        "**Problem to Solve**",
        "",
        "- Airports to visit: " + ", ".join(tsp.codes),
        "- Travel distances (in kilometers) between each pair of airports:",
    ]
    lines += [
        f"{tsp.codes[i]} to {tsp.codes[j]}: {tsp.weights[i][j]}" for i, j in itertools.combinations(range(tsp.n), 2)
    ]
    lines += ["", "Write the shortest tour as one list that ends where it starts, e.g. [AAA, BBB, CCC, ..., AAA]."]
    return "\n".join(lines)


def _atoms_and_bonds(name: str, mol: Molecule) -> list[str]:
    return [
        f"Molecule {name}:",
        "- Atoms: " + ", ".join(f"{element} (atom {i})" for i, element in enumerate(mol.atoms)),
        "- Bonds: " + ", ".join(f"{u}-{v}" for u, v, _ in mol.bonds),
    ]


def _ged(pair: MoleculePair) -> str:
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


def _mcs(pair: MoleculePair) -> str:
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


def problem_text(task: str, instance: Instance) -> str:
    """The task prompt for one instance (without the answer rules).

    Raises:
        ValueError: unknown task or wrong instance type.
    """
    if isinstance(instance, SocialGraph) and task in ("mcp", "mis", "mvc"):
        return {"mcp": _mcp, "mis": _mis, "mvc": _mvc}[task](instance)
    if isinstance(instance, TspInstance) and task == "tsp":
        return _tsp(instance)
    if isinstance(instance, MoleculePair) and task in ("ged", "mcs"):
        return _ged(instance) if task == "ged" else _mcs(instance)
    raise ValueError(f"task: no prompt for task {task!r} with a {type(instance).__name__}")


def user_message(task: str, instance: Instance) -> str:
    """The single user message of a row: the answer rules, a blank line, then the problem."""
    return f"{ANSWER_RULES}\n\n{problem_text(task, instance)}"

"""Importing GraphArena-format files: JSON/JSONL/pickle records, renumbering, and exact-answer cross-checks."""

from __future__ import annotations

import json
import pickle
import random

import networkx as nx
import pandas as pd
import pytest

from rewards.router import check_row
from rlif.data.grapharena import import_rows, load_grapharena, main
from rlif.graphs.airports import sample_tsp
from rlif.graphs.exact import solve
from rlif.graphs.instance import MoleculePair, SocialGraph, TspInstance
from rlif.graphs.molecules import sample_molecule_pair


def _people_graph() -> nx.Graph:
    graph = nx.Graph()
    for node, name in ((1001, "Ana Silva"), (57, "Bo Kim"), (300, "Cy Ode"), (8, "Di Eng")):
        graph.add_node(node, name=name)
    graph.add_edges_from([(1001, 57), (57, 300), (1001, 300), (300, 8)])
    return graph


def _molecule_nx(mol) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from((i, {"label": label}) for i, label in enumerate(mol.atoms))
    graph.add_edges_from((u, v, {"label": f"BondType.{bond}"}) for u, v, bond in mol.bonds)
    return graph


def test_jsonl_social_records_are_renumbered_and_checked(tmp_path):
    data = nx.node_link_data(_people_graph(), edges="edges")
    path = tmp_path / "MCP_easy.jsonl"
    records = [{"graph": json.dumps(data), "exact_answer": 3}, {"graph": data, "exact_answer": None}]
    path.write_text("\n".join(json.dumps(r) for r in records))
    loaded = load_grapharena(path, "mcp")
    assert [item.exact_answer for item in loaded] == [3, None]
    graph = loaded[0].instance
    assert isinstance(graph, SocialGraph)
    assert graph.names == ("Ana Silva", "Bo Kim", "Cy Ode", "Di Eng") and graph.edges == (
        (0, 1),
        (0, 2),
        (1, 2),
        (2, 3),
    )
    rows = import_rows(path, "mcp", "small")
    assert [r["extra_info"]["exact_answer"] for r in rows] == [3, 3]
    assert rows[1]["extra_info"]["item_id"] == "mcp-small-grapharena-1" and rows[1]["extra_info"]["split"] == "val"


def test_wrong_exact_answer_is_reported_with_file_and_record(tmp_path):
    data = nx.node_link_data(_people_graph(), edges="links")
    path = tmp_path / "MCP_easy.json"
    path.write_text(json.dumps([{"graph": data, "exact_answer": 3.0}, {"graph": data, "exact_answer": 4}]))
    with pytest.raises(ValueError, match=r"MCP_easy.json: record 1: exact_answer 4 != exact optimum 3"):
        import_rows(path, "mcp", "small")


def test_pickled_molecule_pairs_and_tsp_json(tmp_path):
    pair = sample_molecule_pair(6, 6, random.Random(0))
    path = tmp_path / "GED_easy.pkl"
    with path.open("wb") as handle:
        pickle.dump([{"graph": (_molecule_nx(pair.a), _molecule_nx(pair.b)), "exact_answer": None}], handle)
    [loaded] = load_grapharena(path, "ged")
    assert loaded.instance == MoleculePair(pair.a, pair.b)

    tsp = sample_tsp(5, random.Random(1))
    graph = nx.complete_graph(5)
    for i in range(5):
        graph.nodes[i]["name"] = tsp.codes[i]
        for j in range(i + 1, 5):
            graph[i][j]["weight"] = float(tsp.weights[i][j])
    tsp_path = tmp_path / "TSP_easy.json"
    optimum = solve("tsp", tsp).optimum
    tsp_path.write_text(json.dumps([{"graph": nx.node_link_data(graph, edges="links"), "exact_answer": optimum}]))
    [loaded_tsp] = load_grapharena(tsp_path, "tsp")
    assert isinstance(loaded_tsp.instance, TspInstance) and loaded_tsp.instance == tsp


@pytest.mark.parametrize(
    ("task", "record", "message"),
    [
        ("mcp", {"exact_answer": 1}, "no 'graph'"),
        ("ged", {"graph": [{"nodes": [], "links": []}]}, "pair of molecule graphs"),
        ("mcp", {"graph": {"nodes": [{"id": 0, "name": "A"}], "links": []}, "exact_answer": 1.5}, "integral"),
    ],
)
def test_bad_records_raise(tmp_path, task, record, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([record]))
    with pytest.raises(ValueError, match=message):
        load_grapharena(path, task)


def test_unsupported_file_type(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n")
    with pytest.raises(ValueError, match="unsupported file type"):
        load_grapharena(path, "mcp")


def test_cli_writes_rows_the_rewards_accept(tmp_path):
    data = nx.node_link_data(_people_graph(), edges="links")
    source = tmp_path / "MVC_hard.json"
    source.write_text(json.dumps([{"graph": data, "exact_answer": 2}]))
    out = tmp_path / "val_ga.parquet"
    assert main(["--task", "mvc", "--size", "large", "--input", str(source), "--out", str(out)]) == 0
    [row] = pd.read_parquet(out).to_dict("records")
    check_row(row["data_source"], row["reward_model"]["ground_truth"], row["extra_info"])
    assert row["extra_info"]["exact_answer"] == 2 and "Di Eng" in row["prompt"][0]["content"]

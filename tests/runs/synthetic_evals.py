"""Synthetic evaluation results in the shape ``python -m rlif.eval`` writes them (``samples.jsonl`` and
``metrics.json``), shared by the compare, chain and report tests: four graph tasks whose prompts each have their own
success rate, the same prompts in every evaluation."""

from __future__ import annotations

import random
from pathlib import Path

from rlif.eval.metrics import compute_metrics
from rlif.eval.outputs import json_document, json_line

SAMPLING = {"n": 8, "temperature": 0.6, "top_p": 0.95, "top_k": 20, "max_tokens": 8192, "think": True, "seed": 0}


def graph_records(rate: float, *, prompts: int = 600, n: int = 8, seed: int = 0, first: int = 0) -> list[dict]:
    """Samples of four graph tasks whose prompts each have their own success rate around ``rate``."""
    rng = random.Random(seed)
    difficulty = random.Random(1234)  # the prompts' difficulty is the same in every evaluation
    records = []
    for index in range(first, first + prompts):
        p = min(1.0, max(0.0, rate + difficulty.uniform(-0.3, 0.3)))
        for sample in range(n):
            optimal = float(rng.random() < p)
            records.append(
                {
                    "id": f"p{index}",
                    "data_source": f"graph/{('tsp', 'mis', 'mvc', 'mcp')[index % 4]}",
                    "sample": sample,
                    "acc": optimal,
                    "score": optimal,
                    "graph_optimal": optimal,
                    "graph_feasible": 1.0,
                    "graph_quality": optimal,
                    "graph_missing": 0.0,
                    "size": "small",
                }
            )
    return records


def write_evaluation(directory: Path, records: list[dict], sampling: dict | None = None, **header) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "samples.jsonl").write_text("".join(json_line(r) for r in records))
    document = {**header, "sampling": sampling or SAMPLING, **compute_metrics(records)}
    (directory / "metrics.json").write_text(json_document(document))
    return directory

"""Re-solve the stored optima of a graph data file exactly, on a seeded sample of its rows.

Every graph row's witness is checked by the row validation (``rewards.graph.truth.check_ground_truth``): it proves
the stored optimum is reachable, and that nothing the solver found beats it. What a witness cannot prove is that
nothing better exists: a wrong solver (or a hand-edited file) can store a suboptimal solution together with its
value, and the reward then pays 1.0 for a suboptimal answer while a better one gets no extra credit. Only solving
again settles that. Re-solving the large GED instances is too costly for every row of a large file
(``benchmarks/graph_exact_solvers.md``), so ``python -m rlif.data validate`` re-solves up to ``--resolve N`` rows
per file: all of a small file, a seeded random sample of a large one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from tqdm import tqdm

from rlif.data.graph_rows import GRAPH_PREFIX
from rlif.data.schema import one_line
from rlif.graphs.exact import solve
from rlif.graphs.truth import parse_ground_truth


@dataclass(frozen=True)
class ResolveReport:
    """How much of a file was re-solved.

    Attributes:
        path: the file.
        graph_rows: graph rows in the file.
        resolved: rows re-solved (all graph rows, or the sample).
    """

    path: Path
    graph_rows: int
    resolved: int


def resolve_sample(path: Path, limit: int, seed: int = 0) -> ResolveReport:
    """Re-solve up to ``limit`` graph rows of ``path`` (all when it has no more, else a sample seeded by ``seed``).

    Args:
        path: a parquet file (rows of other families are ignored).
        limit: most rows to re-solve; 0 re-solves none.
        seed: seed of the sample, so a failure can be reproduced.

    Returns:
        The counts.

    Raises:
        ValueError: the file is unreadable, or a stored optimum differs from the exact one; one line naming the
            file, row, field and both values.
    """
    path = Path(path)
    try:
        table = pq.read_table(path, columns=["data_source", "reward_model"])
    except (OSError, pa.ArrowException) as err:
        raise ValueError(f"{path}: not a readable parquet file ({one_line(err)})") from err
    sources = table.column("data_source").to_pylist()
    graph_rows = [i for i, source in enumerate(sources) if isinstance(source, str) and source.startswith(GRAPH_PREFIX)]
    chosen = graph_rows if len(graph_rows) <= limit else sorted(random.Random(seed).sample(graph_rows, limit))
    truths = table.column("reward_model").combine_chunks().field("ground_truth")
    for i in tqdm(chosen, desc=f"re-solve {path.name}", unit="row", disable=None, leave=False):
        where = f"{path}: row {i}: field reward_model.ground_truth"
        try:
            truth = parse_ground_truth(truths[i].as_py())
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from err
        exact = solve(truth.task, truth.instance).optimum
        if exact != truth.optimum:
            raise ValueError(
                f"{path}: row {i}: field reward_model.ground_truth.optimum: stored {truth.optimum}, but the exact "
                f"{truth.task} optimum is {exact} (re-solved)"
            )
    return ResolveReport(path, len(graph_rows), len(chosen))

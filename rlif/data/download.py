"""Download the training mixtures and the evaluation file from the data repo into ``verl_data/``, then check them.

The transfer itself is ``rlif.hub.download.download_repo`` (pinned commit, resumable, size and hash verified);
this module adds what makes the files usable for training: every parquet file is validated row by row against
the verl schema and the reward families' ground-truth formats, and each mixture is checked for prompts that also
occur in the evaluation file.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.data.files import read_source_rows
from rlif.data.mixtures import Overlap, find_overlap
from rlif.data.schema import FileSummary, validate_parquet
from rlif.data.summary import file_kind
from rlif.hub.download import Download, download_repo
from rlif.hub.settings import HubSettings

DEFAULT_PATTERNS = ("if*_logicif*.parquet", "ifbench_*_ifeval_*_logicif_*.parquet")
"""The mixtures ``if{X}_logicif{Y}.parquet`` and the evaluation file ``ifbench_{B}_ifeval_{E}_logicif_{L}.parquet``."""


@dataclass(frozen=True)
class DataDownload:
    """A downloaded and validated set of data files.

    Attributes:
        download: the verified transfer (repo, commit, files).
        summaries: one per parquet file, in file order.
        overlaps: ``(mixture, eval file, overlap)`` for every mixture and evaluation file pair.
    """

    download: Download
    summaries: tuple[FileSummary, ...]
    overlaps: tuple[tuple[Path, Path, Overlap], ...]


def download_data(
    settings: HubSettings,
    *,
    repo_id: str,
    out_dir: Path,
    revision: str | None = None,
    allow_patterns: Sequence[str] = DEFAULT_PATTERNS,
) -> DataDownload:
    """Download, verify and validate the data files.

    Args:
        settings: token and endpoint.
        repo_id: the dataset repo (``HF_DATA_REPO``).
        out_dir: destination, normally ``verl_data/``.
        revision: branch, tag or commit; None means ``main``.
        allow_patterns: which files to fetch.

    Returns:
        The download with per-file summaries and the mixture/eval overlaps.

    Raises:
        ValueError: no file matches, a file is incomplete, or a row is invalid (names file, row and field).
    """
    download = download_repo(
        repo_id,
        repo_type="dataset",
        settings=settings,
        revision=revision,
        allow_patterns=allow_patterns,
        local_dir=Path(out_dir),
    )
    paths = [download.root / f.path for f in download.files if f.path.endswith(".parquet")]
    summaries = tuple(validate_parquet(p) for p in paths)
    mixtures = [p for p in paths if file_kind(p) == "mixture"]
    evals = [p for p in paths if file_kind(p) == "eval"]
    overlaps = []
    for eval_path in evals:
        eval_rows = list(read_source_rows(eval_path))
        for mixture in mixtures:
            overlaps.append((mixture, eval_path, find_overlap(read_source_rows(mixture), eval_rows)))
    return DataDownload(download=download, summaries=summaries, overlaps=tuple(overlaps))

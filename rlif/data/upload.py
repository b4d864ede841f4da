"""Upload the data files to a dataset repo: every parquet file is validated first, so the Hub only gets good rows.

The counterpart of ``rlif.data.download``: the generic upload (plan, skip what the repo already has, send) is
``rlif.hub.upload``; this module decides which files of a data directory are data and checks them.
"""

from __future__ import annotations

from pathlib import Path

from rlif.data.schema import FileSummary, validate_parquet
from rlif.hub.upload import UploadPlan, plan_upload


def prepare_data_upload(data_dir: Path, repo_id: str, *, private: bool = True) -> tuple[UploadPlan, list[FileSummary]]:
    """Validate every parquet file of ``data_dir`` and plan a dataset upload of them (plus ``README.md``).

    Raises:
        ValueError: a file fails validation (names file, row and field) or there is nothing to upload.
    """
    data_dir = Path(data_dir)
    # Hidden directories are never data: ``.staging`` holds downloads that are unchecked or were rejected
    # (rlif.data.download), ``.cache`` the Hub client's bookkeeping.
    names = sorted(
        rel.as_posix()
        for rel in (p.relative_to(data_dir) for p in data_dir.rglob("*.parquet"))
        if not any(part.startswith(".") for part in rel.parts[:-1])
    )
    plan = plan_upload(
        data_dir,
        repo_id,
        repo_type="dataset",
        commit_message=f"rlif data: {', '.join(names)}",
        private=private,
        allow_patterns=("*.parquet", "README.md"),
        ignore_patterns=(".*/**", "*/.*/**"),
    )
    summaries = [validate_parquet(data_dir / f) for f in plan.files if f.endswith(".parquet")]
    return plan, summaries

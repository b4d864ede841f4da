"""Download the training mixtures and the evaluation file from the data repo, check them, then put them in place.

A training job loads whatever sits in ``verl_data/``, so a file only gets there after it passed every check.
Files are downloaded into a staging directory, ``verl_data/.staging/`` (hidden, so no training pattern and no data
upload picks it up), through ``rlif.hub.download.download_repo`` (pinned commit, resumable, size and hash
verified). Every parquet file is then validated row by row against the verl schema and the reward families'
ground-truth formats, and each mixture is checked for prompts that also occur in the evaluation file. Only when
the whole set passes are the staged files moved into ``verl_data/`` (``os.replace``: atomic on one filesystem).

Files in RLIF's verl row format (the group's existing ``if{X}_logicif{Y}.parquet`` files: no ``item_id``,
``difficulty`` or canonical ground truth) are converted in staging by ``rlif.data.convert`` (the mixture
builder's converter for that format) into ``.staging/.converted/``, and the converted file is what gets validated
and moved. It records the Hub file it came from, so a re-run keeps it without fetching the original again.

The set is accepted or rejected as a whole, because the overlap check is a property of the set. On rejection
nothing moves: the downloaded files stay in staging, where a re-run resumes from them and the error names the
file, row and field. A file already in ``verl_data/`` that is identical to the Hub's is not downloaded again but
is checked again with the set; if it fails (e.g. a leftover from a version of this tool that did not stage), it is
moved out into staging as well.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from rlif.data.convert import Conversion, convert_rlif_file, converted_from, needs_conversion
from rlif.data.files import read_source_rows
from rlif.data.mixtures import Overlap, find_overlap
from rlif.data.schema import FileSummary, validate_parquet
from rlif.data.summary import file_kind
from rlif.hub.download import RemoteFile, download_repo, file_problems, resolve_files
from rlif.hub.settings import HubSettings

DEFAULT_PATTERNS = ("if*_logicif*.parquet", "ifbench_*_ifeval_*_logicif_*.parquet")
"""The mixtures ``if{X}_logicif{Y}.parquet`` and the evaluation file ``ifbench_{B}_ifeval_{E}_logicif_{L}.parquet``."""

STAGING_DIR = ".staging"
LOCAL_CHANGES = ("stop", "replace", "keep")
"""What to do with a file in ``out_dir`` that differs from the Hub's file of the same name."""


class LocalFileConflictError(ValueError):
    """A download would replace files in ``out_dir`` that differ from the Hub's (built locally, or changed since)."""


"""Staging directory under the output directory: downloads land here and stay here until the set is accepted."""

CONVERTED_DIR = ".converted"
"""Folder under staging for converted RLIF-format files (the downloaded originals stay where the client resumes)."""


@dataclass(frozen=True)
class Rejection:
    """A file that failed a check, and where it lies now (in staging).

    Attributes:
        path: the file's current location (under the staging directory).
        reason: the check's message (file, row and field for a schema error; the counts for an overlap).
    """

    path: Path
    reason: str


@dataclass(frozen=True)
class DataDownload:
    """The outcome of one data download: what was fetched, how each file fared, and where the files are.

    Attributes:
        repo_id: the dataset repo.
        commit: the commit sha the files come from.
        out_dir: the destination (``verl_data/``); holds the files when ``accepted``.
        staging_dir: where downloads land and where rejected files stay.
        files: every file of the set, as the Hub lists it.
        fetched: repo paths downloaded by this run (the others were already in ``out_dir``, identical to the Hub's).
        summaries: one per parquet file that passed validation, in file order, with the file's current path.
        overlaps: ``(mixture, eval file, overlap)`` for every mixture and evaluation file pair (empty when a file
            failed validation, since rows that do not validate are not compared).
        rejected: the files that failed, in file order; empty when the set was accepted.
        conversions: the RLIF-format files this run converted to rlif's schema.
        backups: local files that differed from the Hub's and were replaced (``local_changes="replace"``), kept
            under their new names.
    """

    repo_id: str
    commit: str
    out_dir: Path
    staging_dir: Path
    files: tuple[RemoteFile, ...]
    fetched: tuple[str, ...]
    summaries: tuple[FileSummary, ...]
    overlaps: tuple[tuple[Path, Path, Overlap], ...]
    rejected: tuple[Rejection, ...]
    conversions: tuple[Conversion, ...] = ()
    backups: tuple[Path, ...] = ()

    @property
    def accepted(self) -> bool:
        """True when every file passed and the set is in ``out_dir``."""
        return not self.rejected


def download_data(
    settings: HubSettings,
    *,
    repo_id: str,
    out_dir: Path,
    revision: str | None = None,
    allow_patterns: Sequence[str] = DEFAULT_PATTERNS,
    local_changes: str = "stop",
) -> DataDownload:
    """Download into staging, verify, validate, check overlap, and move the set into ``out_dir`` if it all passes.

    Args:
        settings: token and endpoint.
        repo_id: the dataset repo (``HF_DATA_REPO``).
        out_dir: destination, normally ``verl_data/``; staging is ``out_dir/.staging``.
        revision: branch, tag or commit; None means ``main``.
        allow_patterns: which files to fetch.
        local_changes: a file in ``out_dir`` that differs from the Hub's: ``stop`` before downloading anything,
            ``replace`` it (after the set passes; the old file is kept beside it as ``<name>.<time>.bak``), or
            ``keep`` it (validated as it is, not downloaded).

    Returns:
        The outcome; ``accepted`` says whether the files are in ``out_dir``, ``rejected`` why not.

    Raises:
        ValueError: no file matches, or a download is incomplete or corrupted.
        LocalFileConflictError: ``local_changes="stop"`` and a local file differs from the Hub's (the message names
            both and the flags that decide).
        huggingface_hub.errors.HfHubHTTPError: the Hub refused a request (unknown repo or revision, no access).
    """
    out_dir = Path(out_dir)
    staging = out_dir / STAGING_DIR
    commit, files = resolve_files(
        repo_id, repo_type="dataset", settings=settings, revision=revision, allow_patterns=allow_patterns
    )
    # Files an earlier run accepted and the Hub still has unchanged are kept (a converted file by the Hub blob it
    # records, any other by its hash); the rest come through staging.
    in_place = [f for f in files if (out_dir / f.path).is_file()]
    converted_in_place = {f.path for f in in_place if converted_from(out_dir / f.path) == f.blob_id}
    to_hash = [f for f in in_place if f.path not in converted_in_place]
    differs = file_problems(out_dir, to_hash, desc=f"check {out_dir}") if to_hash else {}
    if differs and local_changes == "stop":
        raise LocalFileConflictError(
            "\n".join(
                f"{out_dir / path} differs from {repo_id}@{commit[:12]}:{path} (a file built here, or an earlier "
                "download the Hub has since changed); nothing was downloaded"
                for path in sorted(differs)
            )
            + "\npass --replace-local to take the Hub's files (each local one is kept as <name>.<time>.bak) or "
            "--keep-local to keep and validate the local ones"
        )
    if local_changes == "keep":
        differs = {}
    fetch = [f for f in files if f not in in_place or f.path in differs]
    if fetch:
        download_repo(
            repo_id,
            repo_type="dataset",
            settings=settings,
            revision=commit,
            allow_patterns=[f.path for f in fetch],
            local_dir=staging,
        )
    fetched = {f.path for f in fetch}
    location = {f.path: (staging if f.path in fetched else out_dir) / f.path for f in files}

    failures: dict[str, str] = {}
    conversions: list[Conversion] = []
    converted = set(converted_in_place)
    for f in fetch:
        if f.path.endswith(".parquet") and needs_conversion(location[f.path]):
            try:
                conversions.append(
                    convert_rlif_file(
                        location[f.path],
                        staging / CONVERTED_DIR / f.path,
                        split="test" if file_kind(Path(f.path)) == "eval" else "train",
                        source_id=f.blob_id,
                    )
                )
            except ValueError as err:
                failures[f.path] = str(err)
                continue
            location[f.path] = staging / CONVERTED_DIR / f.path
            converted.add(f.path)

    summaries: dict[str, FileSummary] = {}
    for f in files:
        if f.path.endswith(".parquet") and f.path not in failures:
            try:
                summaries[f.path] = validate_parquet(location[f.path])
            except ValueError as err:
                failures[f.path] = str(err)
    overlaps: list[tuple[str, str, Overlap]] = []
    if not failures:
        overlaps = _overlaps([f.path for f in files if f.path.endswith(".parquet")], location)
        for mixture, eval_path, overlap in overlaps:
            if overlap:
                failures.setdefault(mixture, "")
                failures[mixture] += (
                    f"{location[mixture]}: {len(overlap.same_prompt)} rows share a prompt and "
                    f"{len(overlap.same_task)} LogicIF rows share a task_id with {Path(eval_path).name}\n"
                )

    rejected = []
    backups: list[Path] = []
    if failures:
        for path in (f.path for f in files if f.path in failures):
            reason = failures[path]
            if path not in fetched:  # was in out_dir: it must not stay where training would load it
                target = staging / CONVERTED_DIR / path if path in converted else staging / path
                location[path] = _move(location[path], target)
            rejected.append(Rejection(location[path], reason.strip()))
    else:
        stamp = time.strftime("%Y%m%d-%H%M%S")
        for path in sorted(fetched):
            if path in differs and (out_dir / path).is_file():
                backup = (out_dir / path).with_name(f"{Path(path).name}.{stamp}.bak")
                os.replace(out_dir / path, backup)
                backups.append(backup)
            location[path] = _move(location[path], out_dir / path)
            if path in converted:
                (staging / path).unlink(missing_ok=True)  # the original; its conversion is in place

    return DataDownload(
        repo_id=repo_id,
        commit=commit,
        out_dir=out_dir,
        staging_dir=staging,
        files=tuple(files),
        fetched=tuple(sorted(fetched)),
        summaries=tuple(dataclasses.replace(s, path=location[p]) for p, s in summaries.items()),
        overlaps=tuple((location[m], location[e], o) for m, e, o in overlaps),
        rejected=tuple(rejected),
        conversions=tuple(conversions),
        backups=tuple(backups),
    )


def _overlaps(paths: Sequence[str], location: dict[str, Path]) -> list[tuple[str, str, Overlap]]:
    mixtures = [p for p in paths if file_kind(Path(p)) == "mixture"]
    overlaps = []
    for eval_path in (p for p in paths if file_kind(Path(p)) == "eval"):
        eval_rows = list(read_source_rows(location[eval_path]))
        for mixture in mixtures:
            overlaps.append((mixture, eval_path, find_overlap(read_source_rows(location[mixture]), eval_rows)))
    return overlaps


def _move(source: Path, target: Path) -> Path:
    """Rename ``source`` to ``target`` (atomic on one filesystem; staging is inside the output directory)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    os.replace(source, target)
    return target

"""Download a Hub repo at one pinned commit and prove every file arrived whole.

``snapshot_download`` writes each file to a process-unique ``*.incomplete`` staging file and renames it into
place when done, so nothing half-written ever sits at a final path. A re-run after an interruption keeps every
file whose recorded etag still matches and fetches the others again from the start: huggingface_hub 1.33 resumes
per file, not per byte across processes (since its PR #4228 every process downloads into its own staging file),
and a killed process leaves its staging file behind, which is removed here once the download is verified.

What the client does not do is tell the caller, after the fact, that the tree on disk *is* the commit. So a
download here resolves the revision to a commit sha once (the listing and the files then come from the same
commit even if the branch moves), downloads, and checks each file's size and hash against the Hub's tree listing
(git blob sha1 for plain files, sha256 for LFS files).
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi, snapshot_download
from huggingface_hub.file_download import repo_folder_name
from huggingface_hub.hf_api import RepoFile
from huggingface_hub.utils import are_progress_bars_disabled, filter_repo_objects
from tqdm import tqdm

from rlif.atomic_files import atomic_write
from rlif.hub.network import configure, hub_api
from rlif.hub.settings import HubSettings

_CHUNK = 8 * 1024 * 1024
COMMIT_SHA = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class RemoteFile:
    """One file of a repo commit, as the Hub lists it.

    Attributes:
        path: path in the repo.
        size: size in bytes.
        blob_id: git blob sha1 (of the LFS pointer for LFS files).
        sha256: sha256 of the content for LFS files, else None.
    """

    path: str
    size: int
    blob_id: str
    sha256: str | None


@dataclass(frozen=True)
class Download:
    """A verified download.

    Attributes:
        repo_id: the repo.
        commit: the commit sha the files come from.
        root: the directory holding the files (``local_dir``, or the cache's snapshot directory).
        files: the files that were downloaded and verified.
        ref: the cache ref (``main``, a tag) now pointing at ``commit``; None for a download by commit sha or
            into a plain directory.
        repaired: one line per file that failed verification, was deleted and fetched again.
    """

    repo_id: str
    commit: str
    root: Path
    files: tuple[RemoteFile, ...]
    ref: str | None = None
    repaired: tuple[str, ...] = ()


def git_blob_sha1(path: Path, progress: Callable[[int], object] | None = None) -> str:
    """Git's object id of a file's content (``sha1("blob <size>\\0" + content)``), as the Hub lists plain files.

    ``progress`` is called with the byte count of every chunk read (a progress bar's ``update``).
    """
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(f"blob {path.stat().st_size}\0".encode())
    _feed(digest.update, path, progress)
    return digest.hexdigest()


def sha256_file(path: Path, progress: Callable[[int], object] | None = None) -> str:
    """sha256 of a file's content, as the Hub lists LFS files (``progress`` as for ``git_blob_sha1``)."""
    digest = hashlib.sha256()
    _feed(digest.update, path, progress)
    return digest.hexdigest()


def _feed(update: Callable[[bytes], object], path: Path, progress: Callable[[int], object] | None = None) -> None:
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            update(chunk)
            if progress is not None:
                progress(len(chunk))


def list_remote_files(
    api: HfApi, repo_id: str, *, repo_type: str, commit: str, allow_patterns: Sequence[str] | None
) -> list[RemoteFile]:
    """List the files of ``repo_id`` at ``commit`` that match ``allow_patterns`` (all when None)."""
    entries = [e for e in api.list_repo_tree(repo_id, recursive=True, revision=commit, repo_type=repo_type)]
    files = [e for e in entries if isinstance(e, RepoFile)]
    selected = filter_repo_objects(files, allow_patterns=list(allow_patterns) if allow_patterns else None, key=_path)
    return sorted(
        (RemoteFile(f.path, f.size, f.blob_id, f.lfs.sha256 if f.lfs is not None else None) for f in selected),
        key=_path,
    )


def _path(item: RepoFile | RemoteFile) -> str:
    return item.path


def file_problems(root: Path, files: Sequence[RemoteFile], *, desc: str = "verify") -> dict[str, str]:
    """Compare every listed file under ``root`` with the listed size and hash; return the ones that differ.

    Hashing reads every byte (an 8B model is ~16 GB, minutes of disk I/O), so a byte progress bar runs on stderr.
    Like the Hub client's own bars it is off when stderr is not a terminal or ``HF_HUB_DISABLE_PROGRESS_BARS`` is
    set, so logs and captured output stay clean.

    Returns:
        ``{repo path: problem}`` for each missing, truncated or corrupted file; empty when all match.
    """
    problems: dict[str, str] = {}
    disable = True if are_progress_bars_disabled() else None
    total = sum(f.size for f in files)
    with tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024, desc=desc, disable=disable) as bar:
        for remote in files:
            local = Path(root) / remote.path
            if not local.is_file():
                problems[remote.path] = f"{local}: missing"
                bar.update(remote.size)
                continue
            size = local.stat().st_size
            if size != remote.size:
                problems[remote.path] = f"{local}: {size} bytes, expected {remote.size}"
                bar.update(remote.size)
            elif remote.sha256 is not None:
                if sha256_file(local, bar.update) != remote.sha256:
                    problems[remote.path] = f"{local}: sha256 differs from the Hub's"
            elif git_blob_sha1(local, bar.update) != remote.blob_id:
                problems[remote.path] = f"{local}: content differs from the Hub's (git blob id)"
    return problems


def verify_files(root: Path, files: Sequence[RemoteFile]) -> None:
    """Check that every listed file exists under ``root`` with the listed size and hash (see ``file_problems``).

    Raises:
        ValueError: one line per missing, truncated or corrupted file.
    """
    problems = file_problems(root, files)
    if problems:
        raise ValueError("download incomplete or corrupted:\n  " + "\n  ".join(problems.values()))


def remove_stale_partials(staging_dir: Path, *, older_than: float) -> list[Path]:
    """Delete ``*.incomplete`` staging files left by killed downloads (last written before ``older_than``).

    Files written since ``older_than`` may belong to a download running right now and are kept.

    Returns:
        The deleted files.
    """
    removed = []
    for partial in sorted(Path(staging_dir).rglob("*.incomplete")) if Path(staging_dir).is_dir() else []:
        if partial.stat().st_mtime < older_than:
            partial.unlink(missing_ok=True)
            removed.append(partial)
    return removed


def resolve_files(
    repo_id: str,
    *,
    repo_type: str,
    settings: HubSettings,
    revision: str | None = None,
    allow_patterns: Sequence[str] | None = None,
) -> tuple[str, list[RemoteFile]]:
    """Pin ``revision`` to a commit sha and list that commit's files matching ``allow_patterns``.

    Resolving once means the listing and the files downloaded later come from the same commit even if the branch
    moves meanwhile.

    Raises:
        ValueError: the Hub gave no commit, or no file matches.
        huggingface_hub.errors.RepositoryNotFoundError, RevisionNotFoundError: unknown repo or revision.
    """
    api = hub_api(settings)
    # Asking for the revision explicitly (``/revision/main``) is what pins the commit; it also is the endpoint every
    # Hub-compatible server has (olah has no bare ``/api/<type>s/<repo>``).
    commit = api.repo_info(repo_id, repo_type=repo_type, revision=revision or "main").sha
    if not commit:
        raise ValueError(f"{repo_id}: the Hub returned no commit for revision {revision or 'main'}")
    files = list_remote_files(api, repo_id, repo_type=repo_type, commit=commit, allow_patterns=allow_patterns)
    if not files:
        raise ValueError(f"{repo_id}@{commit[:12]}: no file matches {list(allow_patterns or ['*'])}")
    return commit, files


def download_repo(
    repo_id: str,
    *,
    repo_type: str,
    settings: HubSettings,
    revision: str | None = None,
    allow_patterns: Sequence[str] | None = None,
    local_dir: Path | None = None,
    cache_dir: Path | None = None,
    max_workers: int = 8,
) -> Download:
    """Download the files of ``repo_id`` matching ``allow_patterns``, verify them, and repair what fails.

    Exactly one of ``local_dir`` (plain files, e.g. ``verl_data/``) and ``cache_dir`` (the Hub cache layout, for
    models) is given. Re-running after an interruption resumes: complete files are kept, partial ones are
    fetched again from their start, and nothing incomplete ever sits at a final path.

    The client trusts any file already present at the pinned commit, so a corrupted cached blob would fail
    verification on every re-run (and deleting the snapshot link does not help: the client links the same blob
    again). Files that fail verification are therefore deleted, blob included, and fetched once more.

    In the cache, a branch or tag download also records ``refs/<revision>`` (the client skips it for a download
    by commit sha), so ``from_pretrained("<repo_id>")`` and ``snapshot_download(..., local_files_only=True)``
    resolve the repo id offline (``HF_HUB_OFFLINE=1``) to exactly the verified snapshot.

    Args:
        repo_id: ``owner/name``.
        repo_type: ``dataset`` or ``model``.
        settings: token, endpoint and request limits.
        revision: branch, tag or commit; None means ``main``.
        allow_patterns: glob patterns (``fnmatch``, as the Hub client applies them); None takes every file.
        local_dir: download into this directory.
        cache_dir: download into this Hub cache.
        max_workers: parallel file downloads.

    Returns:
        The verified download.

    Raises:
        ValueError: both or neither destination given, no file matches, or verification fails after a repair.
        huggingface_hub.errors.RepositoryNotFoundError, RevisionNotFoundError: unknown repo or revision.
        rlif.hub.network.HubConnectionError: the Hub cannot be reached or does not answer.
    """
    if (local_dir is None) == (cache_dir is None):
        raise ValueError("give exactly one of local_dir and cache_dir")
    commit, files = resolve_files(
        repo_id, repo_type=repo_type, settings=settings, revision=revision, allow_patterns=allow_patterns
    )
    started = time.time()

    def fetch(paths: Sequence[str]) -> Path:
        configure(settings.limits)
        return Path(
            snapshot_download(
                repo_id,
                repo_type=repo_type,
                revision=commit,
                allow_patterns=list(paths),
                local_dir=local_dir,
                cache_dir=cache_dir,
                token=settings.token,
                endpoint=settings.endpoint,
                max_workers=max_workers,
            )
        )

    root = fetch([f.path for f in files])
    problems = file_problems(root, files)
    repaired = []
    if problems:
        for path, problem in sorted(problems.items()):
            discard_local_copy(root, path)
            repaired.append(f"{problem}; fetched again")
        root = fetch(sorted(problems))
        verify_files(root, [f for f in files if f.path in problems])  # the others were just verified
    if local_dir is not None:
        staging = Path(local_dir) / ".cache" / "huggingface" / "download"
        ref = None
    else:
        storage = Path(cache_dir) / repo_folder_name(repo_id=repo_id, repo_type=repo_type)
        staging = storage / "blobs"
        ref = record_ref(storage, revision or "main", commit)
    remove_stale_partials(staging, older_than=started)
    return Download(repo_id=repo_id, commit=commit, root=root, files=tuple(files), ref=ref, repaired=tuple(repaired))


def discard_local_copy(root: Path, path: str) -> None:
    """Delete a downloaded file so the next download fetches it: in the cache its blob too, else its metadata."""
    local = Path(root) / path
    if local.is_symlink():
        Path(os.path.realpath(local)).unlink(missing_ok=True)  # the blob, which the client would link again
    local.unlink(missing_ok=True)
    (Path(root) / ".cache" / "huggingface" / "download" / f"{path}.metadata").unlink(missing_ok=True)


def record_ref(storage: Path, revision: str, commit: str) -> str | None:
    """Write ``<storage>/refs/<revision>`` = ``commit`` (atomically) unless ``revision`` is itself a commit sha.

    Returns:
        The ref name written, or None for a commit sha (offline use then needs the sha or the snapshot path).
    """
    if COMMIT_SHA.fullmatch(revision):
        return None
    ref_path = storage / "refs" / revision
    ref_path.parent.mkdir(parents=True, exist_ok=True)
    if ref_path.is_file() and ref_path.read_text().strip() == commit:
        return revision
    atomic_write(ref_path, lambda partial: partial.write_text(commit))
    return revision

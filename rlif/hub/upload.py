"""Upload a folder to the Hub: private unless asked otherwise, idempotent, and dry-runnable.

``create_repo(exist_ok=True)`` followed by ``upload_folder`` is safe to repeat: the client skips files whose
content the repo already has, creates no empty commit, and with ``hf_xet`` resumes a large upload cut short
(``upload_large_folder`` is gone in huggingface_hub 2.x; ``upload_folder`` is the call both 1.x and 2.x have). A
repo that already exists keeps its visibility; when it is public although a private upload was asked for, the
upload stops instead of publishing by surprise.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi
from huggingface_hub.utils import filter_repo_objects

from rlif.hub.network import hub_api
from rlif.hub.settings import HubSettings


@dataclass(frozen=True)
class UploadPlan:
    """Everything one upload will do, decided before any request is sent (and printed by ``--dry-run``).

    Attributes:
        folder: local folder.
        repo_id: target repo.
        repo_type: ``model`` or ``dataset``.
        private: visibility of the repo if it has to be created.
        commit_message: the commit message.
        ignore_patterns: files never uploaded.
        files: the relative paths that match, sorted.
    """

    folder: Path
    repo_id: str
    repo_type: str
    private: bool
    commit_message: str
    ignore_patterns: tuple[str, ...]
    files: tuple[str, ...]


def plan_upload(
    folder: Path,
    repo_id: str,
    *,
    repo_type: str,
    commit_message: str,
    private: bool = True,
    allow_patterns: Sequence[str] | None = None,
    ignore_patterns: Sequence[str] = (),
) -> UploadPlan:
    """List what an upload of ``folder`` would send.

    Raises:
        ValueError: the folder does not exist, the repo id is not ``owner/name``, or no file matches.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ValueError(f"{folder}: not a directory")
    if repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise ValueError(f"repo id {repo_id!r} must be owner/name")
    ignore = (*ignore_patterns, ".cache/**", ".git/**")
    relative = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    files = tuple(
        filter_repo_objects(
            relative, allow_patterns=list(allow_patterns) if allow_patterns else None, ignore_patterns=list(ignore)
        )
    )
    if not files:
        raise ValueError(f"{folder}: no file to upload")
    return UploadPlan(
        folder=folder,
        repo_id=repo_id,
        repo_type=repo_type,
        private=private,
        commit_message=commit_message,
        ignore_patterns=ignore,
        files=files,
    )


def describe_plan(plan: UploadPlan) -> str:
    """Human-readable summary of a plan (no token, no secrets)."""
    size = sum((plan.folder / f).stat().st_size for f in plan.files)
    lines = [
        f"repo:    {plan.repo_id} ({plan.repo_type}, {'private' if plan.private else 'public'} if created)",
        f"folder:  {plan.folder}",
        f"commit:  {plan.commit_message}",
        f"files:   {len(plan.files)} ({size / 1e6:.1f} MB)",
    ]
    lines += [f"  {f}" for f in plan.files]
    return "\n".join(lines)


def execute_upload(plan: UploadPlan, settings: HubSettings, api: HfApi | None = None) -> str:
    """Create the repo if needed and upload the planned files.

    Args:
        plan: from ``plan_upload``.
        settings: token and endpoint (a missing token falls back to the client's stored login).
        api: the client; default ``HfApi(endpoint, token)``.

    Returns:
        The commit URL, or the repo URL when nothing changed.

    Raises:
        ValueError: the repo exists and is public although a private upload was planned.
        huggingface_hub.errors.HfHubHTTPError: the Hub refused (authentication, permissions, quota).
    """
    api = api if api is not None else hub_api(settings)
    repo_url = api.create_repo(plan.repo_id, repo_type=plan.repo_type, private=plan.private, exist_ok=True)
    if plan.private:
        info = api.repo_info(plan.repo_id, repo_type=plan.repo_type)
        if info.private is False:
            raise ValueError(
                f"{plan.repo_id} already exists and is public; pass --public to upload to it anyway, "
                "or choose another repo id"
            )
    commit = api.upload_folder(
        repo_id=plan.repo_id,
        repo_type=plan.repo_type,
        folder_path=str(plan.folder),
        commit_message=plan.commit_message,
        allow_patterns=list(plan.files),
        ignore_patterns=list(plan.ignore_patterns),
    )
    url = getattr(commit, "commit_url", None)
    return str(url) if url else str(repo_url)

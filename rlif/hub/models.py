"""Base-model downloads into the shared Hub cache (``HF_CACHE_DIR``), verified file by file.

The training launchers point verl at the snapshot directory this returns, so a model is downloaded once per
cluster and every node reads the same files. Short names cover the Qwen3 sizes rlif trains; any other
``owner/name`` is accepted as is.
"""

from __future__ import annotations

from pathlib import Path

from rlif.hub.download import Download, download_repo
from rlif.hub.settings import HubSettings

QWEN3 = {
    "0.6B": "Qwen/Qwen3-0.6B",
    "1.7B": "Qwen/Qwen3-1.7B",
    "4B": "Qwen/Qwen3-4B",
    "8B": "Qwen/Qwen3-8B",
}
"""Short names of the base models rlif trains."""

MODEL_FILES = (
    "*.json",
    "*.safetensors",
    "*.txt",
    "*.model",
    "*.tiktoken",
    "*.py",
    "*.md",
    "LICENSE*",
    ".gitattributes",
)
"""What a model snapshot needs (config, weights, tokenizer, card); others (``.bin`` duplicates) are skipped.

For the Qwen3 repos this is every file, which is what an offline ``snapshot_download(repo_id,
local_files_only=True)`` without patterns requires: huggingface_hub checks the snapshot against the repo's cached
file listing and refuses a partial one (a repo with skipped files needs these patterns passed offline too).
"""


def resolve_model(name: str) -> str:
    """``0.6B`` → ``Qwen/Qwen3-0.6B``; an ``owner/name`` repo id is returned unchanged.

    Raises:
        ValueError: neither a known short name nor ``owner/name``.
    """
    if name in QWEN3:
        return QWEN3[name]
    if name.count("/") == 1 and all(name.split("/")):
        return name
    raise ValueError(f"model {name!r} is neither a short name {sorted(QWEN3)} nor an owner/name repo id")


def download_model(repo_id: str, settings: HubSettings, *, cache_dir: Path, revision: str | None = None) -> Download:
    """Download one model into the Hub cache at ``cache_dir`` and verify every file.

    Raises:
        ValueError: incomplete or corrupted files, or no matching file.
        huggingface_hub.errors.RepositoryNotFoundError, RevisionNotFoundError: unknown repo or revision.
    """
    return download_repo(
        repo_id,
        repo_type="model",
        settings=settings,
        revision=revision,
        allow_patterns=MODEL_FILES,
        cache_dir=Path(cache_dir),
    )

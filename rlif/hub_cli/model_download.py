"""Download base models into HF_CACHE_DIR and verify every file.

    python hf_model_download.py 1.7B                # one Qwen3 size (0.6B, 1.7B, 4B, 8B)
    python hf_model_download.py 1.7B Qwen/Qwen3-4B  # short names or any owner/name
    python hf_model_download.py 8B --revision <commit>
    python hf_model_download.py                     # all four Qwen3 sizes (says so first)

Re-running resumes an interrupted download and fetches again any cached file that fails its size or hash check.
Prints each model's snapshot directory (the path to give verl as actor_rollout_ref.model.path). A download of a
branch or tag records it in the cache (refs/main), so with HF_HUB_CACHE=<cache dir> and HF_HUB_OFFLINE=1 the repo
id itself (from_pretrained("Qwen/Qwen3-1.7B")) resolves offline to the verified snapshot.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from huggingface_hub.errors import HfHubHTTPError

from rlif.hub.download import Download
from rlif.hub.models import QWEN3, download_model, resolve_model
from rlif.hub.network import HubConnectionError
from rlif.hub.settings import HubSettings
from rlif.hub_cli.common import add_env_file, command_parser, guarded, report, settings_or_none


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see the module docstring."""
    parser = command_parser(__doc__)
    parser.add_argument(
        "models",
        nargs="*",
        help=f"short names {' '.join(QWEN3)} or owner/name repo ids (default: all of {' '.join(QWEN3)})",
    )
    parser.add_argument("--revision", help="branch, tag or commit, for every model (default: main)")
    parser.add_argument("--cache-dir", type=Path, help="Hub cache directory (default: HF_CACHE_DIR)")
    add_env_file(parser)
    return parser.parse_args(argv)


def offline_note(download: Download, cache_dir: Path) -> str:
    """How to use the download without network: the repo id (through the recorded ref) or the snapshot path."""
    if download.ref is None:
        return (
            f"  offline: pinned to commit {download.commit} (no branch recorded): give verl the snapshot path below, "
            f"or revision={download.commit}"
        )
    ref = "" if download.ref == "main" else f", revision={download.ref!r}"
    return (
        f"  offline: with HF_HUB_CACHE={cache_dir} HF_HUB_OFFLINE=1, from_pretrained({download.repo_id!r}{ref}) "
        f"resolves through refs/{download.ref} to the snapshot below"
    )


def main(argv: list[str] | None = None) -> int:
    """Download each model in turn; stop at the first failure."""
    args = parse_args(argv)
    settings = settings_or_none(args.env_file)
    if settings is None:
        return 2
    return guarded("hf_model_download", lambda: run(args, settings), lambda: settings)


def run(args: argparse.Namespace, settings: HubSettings) -> int:
    """The command once its settings are valid."""
    cache_dir = args.cache_dir or settings.cache_dir
    if cache_dir is None:
        print(
            f"error: no cache directory: pass --cache-dir or set HF_CACHE_DIR (looked in {settings.where()})",
            file=sys.stderr,
        )
        return 2
    if args.cache_dir is None:
        print(f"Hub cache {cache_dir} ({settings.cache_source})", flush=True)
    names = args.models or list(QWEN3)
    if not args.models:
        print(
            f"no model named: fetching all {len(QWEN3)} Qwen3 models rlif trains ({', '.join(QWEN3.values())}) "
            f"into {cache_dir}; name the ones you need to fetch fewer, e.g. python hf_model_download.py 1.7B",
            flush=True,
        )
    try:
        repo_ids = [resolve_model(m) for m in names]
        for repo_id in repo_ids:
            download = download_model(repo_id, settings, cache_dir=cache_dir, revision=args.revision)
            size = sum(f.size for f in download.files)
            print(f"{repo_id} @ {download.commit}: {len(download.files)} files, {size / 1e9:.2f} GB verified")
            for line in download.repaired:
                print(f"  repaired: {line}")
            print(offline_note(download, Path(cache_dir)))
            print(f"  {download.root}", flush=True)
    except (ValueError, HfHubHTTPError, HubConnectionError) as err:
        return report(err, settings)
    return 0

"""Download base models into HF_CACHE_DIR and verify every file.

    python hf_model_download.py                     # Qwen3 0.6B, 1.7B, 4B and 8B
    python hf_model_download.py 1.7B Qwen/Qwen3-4B  # short names or any owner/name
    python hf_model_download.py 8B --revision <commit>

Re-running resumes an interrupted download. Prints each model's snapshot directory (the path to give verl as
actor_rollout_ref.model.path).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from huggingface_hub.errors import HfHubHTTPError

from rlif.hub.models import QWEN3, download_model, resolve_model
from rlif.hub.settings import load_settings, redact


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="*", default=list(QWEN3), help=f"short names {list(QWEN3)} or owner/name")
    parser.add_argument("--revision", help="branch, tag or commit (default: main); applies to every model")
    parser.add_argument("--cache-dir", type=Path, help="Hub cache directory (default: HF_CACHE_DIR)")
    parser.add_argument("--env-file", type=Path, default=Path(".env"))
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Download each model in turn; stop at the first failure."""
    args = parse_args(argv)
    settings = load_settings(args.env_file)
    cache_dir = args.cache_dir or settings.cache_dir
    if cache_dir is None:
        print("error: no cache directory: pass --cache-dir or set HF_CACHE_DIR (environment or .env)", file=sys.stderr)
        return 2
    try:
        repo_ids = [resolve_model(m) for m in args.models]
        for repo_id in repo_ids:
            download = download_model(repo_id, settings, cache_dir=cache_dir, revision=args.revision)
            size = sum(f.size for f in download.files)
            print(f"{repo_id} @ {download.commit}: {len(download.files)} files, {size / 1e9:.2f} GB verified")
            print(f"  {download.root}")
    except (ValueError, HfHubHTTPError) as err:
        print(f"error: {redact(str(err), settings.token)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Publish to the Hub: a training checkpoint (merged from FSDP shards, with a model card) or the data files.

    python hf_upload.py checkpoint --root checkpoints/rlif --run qwen3-1.7b-if1000 --repo-id me/qwen3-1.7b-rlif
    python hf_upload.py checkpoint --root checkpoints/rlif/qwen3-1.7b-if1000 --step 300 --repo-id me/x --dry-run
    python hf_upload.py data --repo-id me/rlif-data      # validates verl_data/*.parquet, then uploads

Repos are created private unless --public is given. Safe to re-run: an unchanged merge is reused and unchanged
files are not sent again. The token comes from HF_TOKEN (environment or .env) or the client's stored login and
is never printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from huggingface_hub.errors import HfHubHTTPError

from rlif.data.summary import summary_table
from rlif.data.upload import prepare_data_upload
from rlif.hub.publish import CheckpointRequest, publish_checkpoint
from rlif.hub.settings import HubSettings
from rlif.hub.upload import describe_plan, execute_upload
from rlif.hub_cli.common import add_env_file, command_parser, guarded, report, settings_or_none
from rlif.verl_glue.saved_config import read_saved_config


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see the module docstring."""
    parser = command_parser(__doc__)
    add_env_file(parser)
    sub = parser.add_subparsers(dest="command", required=True)

    ckpt = sub.add_parser("checkpoint", aliases=["checkpoints"], help="merge and upload one checkpoint of a run")
    ckpt.add_argument(
        "--root",
        type=Path,
        default=Path("checkpoints"),
        help="run directory or a parent of runs (default: checkpoints)",
    )
    ckpt.add_argument(
        "--run", help="run name or directory; needed when --root holds several runs (default: the only run)"
    )
    ckpt.add_argument("--step", type=int, help="global_step to publish (default: latest complete)")
    ckpt.add_argument("--repo-id", required=True, help="target model repo owner/name")
    ckpt.add_argument(
        "--python", default=sys.executable, help="interpreter with verl, for the model merger (default: this one)"
    )
    ckpt.add_argument("--config", type=Path, help="the run's resolved verl config YAML (default: found in the run)")
    ckpt.add_argument("--metrics", type=Path, help="verl file-logger jsonl (default: every <run>/metrics*.jsonl)")
    ckpt.add_argument("--base-model", help="base model repo id (default: from the run config)")
    ckpt.add_argument("--public", action="store_true", help="create the repo public (default: private)")
    ckpt.add_argument("--dry-run", action="store_true", help="show what would happen; write and send nothing")

    data = sub.add_parser("data", help="validate and upload verl_data/ to a dataset repo")
    data.add_argument("--dir", type=Path, default=Path("verl_data"), help="data directory (default: verl_data)")
    data.add_argument("--repo-id", help="dataset repo owner/name (default: HF_DATA_REPO)")
    data.add_argument("--public", action="store_true", help="create the repo public (default: private)")
    data.add_argument("--dry-run", action="store_true", help="validate and show the plan; send nothing")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the chosen upload; exit 1 on any error, printed without the token."""
    args = parse_args(argv)
    settings = settings_or_none(args.env_file)
    if settings is None:
        return 2
    return guarded("hf_upload", lambda: run(args, settings), lambda: settings)


def run(args: argparse.Namespace, settings: HubSettings) -> int:
    """The command once its settings are valid."""
    try:
        if args.command in ("checkpoint", "checkpoints"):
            request = CheckpointRequest(
                root=args.root,
                repo_id=args.repo_id,
                run=args.run,
                step=args.step,
                private=not args.public,
                python=args.python,
                config_file=args.config,
                metrics_file=args.metrics,
                base_model=args.base_model,
            )
            print(publish_checkpoint(request, settings, read_config=read_saved_config, dry_run=args.dry_run))
            return 0
        repo_id = args.repo_id or settings.data_repo
        if not repo_id:
            print(
                f"error: no dataset repo: pass --repo-id or set HF_DATA_REPO (looked in {settings.where()})",
                file=sys.stderr,
            )
            return 2
        plan, summaries = prepare_data_upload(args.dir, repo_id, private=not args.public)
        print(summary_table(summaries, root=args.dir))
        print(describe_plan(plan))
        if not args.dry_run:
            print(f"uploaded: {execute_upload(plan, settings)}")
        return 0
    except (ValueError, RuntimeError, HfHubHTTPError) as err:  # HubConnectionError is a RuntimeError
        return report(err, settings)

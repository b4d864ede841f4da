"""Download the training mixtures and the evaluation file, validate every row, and only then put them in verl_data/.

    python hf_data_download.py                                # HF_DATA_REPO from the environment or .env
    python hf_data_download.py --repo-id org/data --revision v1 --include 'if1000_logicif1000.parquet'

Files are downloaded into verl_data/.staging/ and moved into verl_data/ only when the whole set passes the schema
and train/eval overlap checks, so a training job never finds a rejected file. Files in RLIF's row format (the
group's existing data) are first converted to rlif's schema in staging, by the converter `python -m rlif.data
mixture` uses for that format. Re-running after an interruption or
a rejection resumes from staging; files already in verl_data/ and unchanged on the Hub are kept. Exit status 1 on a
download or validation error (the message names the file, row and field, and where the rejected file was kept).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from huggingface_hub.errors import HfHubHTTPError

from rlif.data.cli import DefaultsHelpFormatter
from rlif.data.download import DEFAULT_PATTERNS, download_data
from rlif.data.summary import format_table, summary_table
from rlif.hub.network import HubConnectionError
from rlif.hub.settings import HubSettings
from rlif.hub_cli.common import add_env_file, command_parser, guarded, report, settings_or_none


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line options; see the module docstring."""
    parser = command_parser(__doc__, DefaultsHelpFormatter)
    parser.add_argument("--repo-id", help="dataset repo (default: HF_DATA_REPO)")
    parser.add_argument("--revision", help="branch, tag or commit (default: main)")
    parser.add_argument(
        "--include", action="append", help=f"file pattern, repeatable (default: {' '.join(DEFAULT_PATTERNS)})"
    )
    parser.add_argument(
        "--out-dir", type=Path, default=Path("verl_data"), help="where accepted files go (default: verl_data)"
    )
    local = parser.add_mutually_exclusive_group()
    local.add_argument(
        "--replace-local",
        action="store_true",
        help="replace files in --out-dir that differ from the Hub's (each is kept as <name>.<time>.bak)",
    )
    local.add_argument(
        "--keep-local", action="store_true", help="keep files in --out-dir that differ from the Hub's (validated)"
    )
    add_env_file(parser)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Download, validate, print the table and where the files went."""
    args = parse_args(argv)
    settings = settings_or_none(args.env_file)
    if settings is None:
        return 2
    return guarded("hf_data_download", lambda: run(args, settings), lambda: settings)


def run(args: argparse.Namespace, settings: HubSettings) -> int:
    """The command once its settings are valid."""
    repo_id = args.repo_id or settings.data_repo
    if not repo_id:
        print(
            f"error: no dataset repo: pass --repo-id or set HF_DATA_REPO (looked in {settings.where()})",
            file=sys.stderr,
        )
        return 2
    try:
        result = download_data(
            settings,
            repo_id=repo_id,
            out_dir=args.out_dir,
            revision=args.revision,
            allow_patterns=tuple(args.include or DEFAULT_PATTERNS),
            local_changes="replace" if args.replace_local else "keep" if args.keep_local else "stop",
        )
    except (ValueError, HfHubHTTPError, HubConnectionError) as err:
        return report(err, settings)
    print(f"{repo_id} @ {result.commit}")
    for backup in result.backups:
        print(f"replaced a local file that differed from the Hub's; the old one is {backup}")
    for c in result.conversions:
        sources = ", ".join(f"{k}={v}" for k, v in sorted(c.sources.items()))
        repeats = f"; {c.repeated} rows repeat an earlier row (kept, ids suffixed #k)" if c.repeated else ""
        print(f"converted from RLIF's row format: {c.source.name} ({c.rows} rows: {sources}{repeats})")
    if result.summaries:
        print(summary_table(result.summaries, root=result.out_dir))
    if result.overlaps:
        print()
        print(
            format_table(
                ["mixture", "eval file", "same prompt", "same LogicIF task"],
                [[m.name, e.name, str(len(o.same_prompt)), str(len(o.same_task))] for m, e, o in result.overlaps],
            )
        )
    if result.accepted:
        print(f"\nfiles are in {result.out_dir.resolve()}")
        return 0
    for rejection in result.rejected:
        print(f"error: {rejection.reason}\n  rejected; kept in staging as {rejection.path}", file=sys.stderr)
    if any(o for _, _, o in result.overlaps):
        print("error: training rows overlap the evaluation file (see the table above)", file=sys.stderr)
    print(
        f"error: nothing was moved into {result.out_dir}; the downloaded files stay in {result.staging_dir} "
        "(a re-run resumes from there). Fix the data repo, or take only the files that pass with --include.",
        file=sys.stderr,
    )
    return 1

"""What the Hub commands share: their parser, their settings, and how an error reaches the terminal.

A user runs these commands by hand, often with a token in ``.env``, so an error must be one line that says what to
fix and never shows the token; a bad setting exits 2 (a usage error) before any request, a failed transfer exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rlif.hub.network import LIMITS_HELP
from rlif.hub.settings import HubSettings, load_settings, redact


def command_parser(
    doc: str, formatter_class: type[argparse.HelpFormatter] = argparse.RawDescriptionHelpFormatter
) -> argparse.ArgumentParser:
    """A parser whose description is ``doc``'s first line and whose epilog is the rest of it and the Hub's limits.

    Args:
        doc: the command module's docstring (its examples follow the first line).
        formatter_class: how help is laid out; it must keep the epilog's line breaks.
    """
    return argparse.ArgumentParser(
        description=doc.splitlines()[0],
        epilog="\n".join([*doc.splitlines()[1:], "", LIMITS_HELP]),
        formatter_class=formatter_class,
    )


def add_env_file(parser: argparse.ArgumentParser) -> None:
    """The ``--env-file`` option every Hub command takes."""
    parser.add_argument(
        "--env-file", type=Path, default=Path(".env"), help="settings file, read under the environment (default: .env)"
    )


def settings_or_none(env_file: Path) -> HubSettings | None:
    """The Hub settings, or None after printing why they are invalid (the command then exits 2)."""
    try:
        return load_settings(env_file)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return None


def report(err: Exception, settings: HubSettings) -> int:
    """Print ``err`` as one ``error:`` line without the token; returns exit status 1."""
    print(f"error: {redact(str(err), settings.token)}", file=sys.stderr)
    return 1

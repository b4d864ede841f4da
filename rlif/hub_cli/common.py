"""What the Hub commands share: their parser, their settings, and how an error reaches the terminal.

A user runs these commands by hand, often with a token in ``.env``, so an error must be one line that says what to
fix and never shows the token; a bad setting exits 2 (a usage error) before any request, a failed transfer exits 1.
Every exception, expected or not, passes through ``rlif.redaction`` before it is printed; an unexpected one also
leaves its redacted traceback in a file the message names.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from rlif.envfile import default_env_file
from rlif.hub.network import LIMITS_HELP
from rlif.hub.settings import HubSettings, load_settings
from rlif.redaction import guarded as run_guarded
from rlif.redaction import one_line, secret_values


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
    """The ``--env-file`` option every Hub command takes (default: the repository's ``.env``, from any directory)."""
    parser.add_argument(
        "--env-file",
        type=Path,
        default=default_env_file(),
        help=f"settings file, read under the environment (default: {default_env_file()})",
    )


def settings_or_none(env_file: Path) -> HubSettings | None:
    """The Hub settings, or None after printing why they are invalid (the command then exits 2)."""
    try:
        return load_settings(env_file)
    except ValueError as err:
        for line in str(one_line(err, secret_values())).split("\n"):
            print(f"error: {line}", file=sys.stderr)
        return None


def report(err: BaseException, settings: HubSettings | None) -> int:
    """Print ``err`` (and its causes) as one ``error:`` line without any secret; returns exit status 1."""
    print(f"error: {one_line(err, secret_values(extra=[settings.token if settings else None]))}", file=sys.stderr)
    return 1


def guarded(command: str, body: Callable[[], int], settings: Callable[[], HubSettings | None] = lambda: None) -> int:
    """``rlif.redaction.guarded`` for a Hub command: expected failures exit 1, and the token of the settings read
    so far is redacted too.

    Args:
        command: the command's name, for the traceback file.
        body: the command after its settings were read; returns the exit status.
        settings: the settings read so far.

    Returns:
        ``body``'s status, 1 after an error, 130 after Ctrl-C.
    """

    def token() -> list[str | None]:
        current = settings()
        return [current.token if current else None]

    return run_guarded(command, body, extra_secrets=token)

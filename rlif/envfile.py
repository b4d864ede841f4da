"""``.env`` as both of its readers see it: refused where Python and bash would read different values.

rlif's Python commands read ``.env`` with python-dotenv; every job runs ``set -a; source .env`` in bash, and users
also load it with ``export $(grep -v '^#' .env | xargs)``. The three agree only on plain ``KEY=value`` lines:
``$HOME/x`` is a folder named ``$HOME`` to python-dotenv and the home directory to bash; ``KEY=my team`` runs
``team`` as a command in bash, and so does ``KEY=a;team`` (or ``&``, ``|``, a redirection, a subshell);
``KEY = value`` runs ``KEY``; quotes are stripped by each reader by its own rules; a file saved with Windows line
endings gives bash (and xargs) values ending in a carriage return, which then ends up inside an HTTP header next to
the token. So every front end checks the file with ``check_env_file`` before
reading it, and a value is refused (named by key, file, line and fix, never shown) rather than read two ways.

This module imports nothing outside the standard library: the job's preflight uses it too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]

_LINE = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)")
_SPACED = re.compile(r"(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)(?:\s+=|=\s).*")
CRLF_FIX = "sed -i 's/\\r$//' {path}"
"""How to convert a file with Windows line endings (also ``dos2unix``)."""

SETTING_PREFIXES = ("HF_", "HUGGINGFACE_", "RLIF_", "WANDB_", "SLURM_PARTITION", "SLURM_ACCOUNT")
"""Environment variables rlif reads as settings; their values are checked like ``.env``'s."""

SHELL_CONTROL = ";&|<>()"
"""Characters that end or redirect a command in bash (``KEY=a&b`` runs ``b``), kept as text by python-dotenv."""

CONTROL_NAMES = {"\r": "carriage return (\\r)", "\n": "line feed (\\n)", "\t": "tab (\\t)"}


class EnvFileError(ValueError):
    """``.env`` (or a setting in the environment) would be read differently by bash and Python; one line each."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        super().__init__("\n".join(lines))


def default_env_file() -> Path:
    """The repository's ``.env``: the one every job sources, wherever a command is started from."""
    return REPO_ROOT / ".env"


def line_problem(line: str) -> str:
    """Why bash and python-dotenv would read one ``.env`` line differently; empty when they agree.

    The message names the key and the fix but never the value (it may be a token).
    """
    body = line.rstrip("\n")
    if body.endswith("\r"):
        return "ends in a carriage return (Windows CRLF line endings): bash reads every value with a trailing \\r"
    stripped = body.strip()
    if not stripped or stripped.startswith("#"):
        return ""
    spaced = _SPACED.fullmatch(stripped)
    if spaced:
        key = spaced.group(1)
        return f"{key}: spaces around '=' (bash then runs a command instead of setting {key}); write {key}=value"
    match = _LINE.fullmatch(stripped)
    if match is None:
        return "not a KEY=value line (bash would run it as a command); comment it out with #"
    key, value = match.groups()
    if "$" in value or "`" in value:
        return (
            f"{key}: has '$' or '`', which bash expands and python-dotenv does not; write the path out in full "
            "(e.g. /home/me/hf_cache, not $HOME/hf_cache)"
        )
    if "'" in value or '"' in value:
        return f"{key}: has quotes, which bash, python-dotenv and xargs strip differently; write the value without them"
    if "\\" in value:
        return f"{key}: has a backslash, which bash and python-dotenv read differently; write the value without it"
    if any(c in SHELL_CONTROL for c in value):
        return (
            f"{key}: has one of {' '.join(SHELL_CONTROL)}, which bash reads as a command separator, pipe, redirection "
            "or subshell and python-dotenv keeps as text; write the value without it, or export it in the shell "
            "instead of .env"
        )
    if any(c.isspace() for c in value):
        return (
            f"{key}: has a space (bash runs the word after it as a command; an inline comment is one too); "
            "write the value without spaces and put comments on their own line"
        )
    return ""


def check_env_file(path: Path) -> None:
    """Refuse a ``.env`` that bash and Python would read differently (see the module docstring).

    A missing file is fine (everything may come from the environment).

    Raises:
        EnvFileError: one line per bad line, ``<file> line <n>: <key>: <why>; <fix>``, never with the value.
    """
    path = Path(path)
    if not path.is_file():
        return
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise EnvFileError([f"{path.resolve()}: not UTF-8 text (byte {err.start}); save it as UTF-8"]) from None
    problems = []
    for number, line in enumerate(text.splitlines(keepends=True), start=1):
        problem = line_problem(line)
        if "CRLF" in problem:  # the whole file was saved so: one line says it
            fix = CRLF_FIX.format(path=path.resolve())
            raise EnvFileError([f"{path.resolve()} line {number}: {problem}; convert the file with `{fix}`"])
        if problem:
            problems.append(f"{path.resolve()} line {number}: {problem}")
    if problems:
        raise EnvFileError(problems)


def value_problem(name: str, value: str, source: str) -> str:
    """A setting's value with a control character or surrounding whitespace, described without the value.

    Args:
        name: the variable.
        value: its value (never quoted in the message).
        source: where it came from (``environment`` or the ``.env`` path).

    Returns:
        One line naming the variable, the position and the likely cause; empty when the value is clean.
    """
    bad = next(((i, c) for i, c in enumerate(value) if ord(c) < 32 or ord(c) == 127), None)
    if bad is not None:
        position, char = bad
        what = CONTROL_NAMES.get(char, f"control character U+{ord(char):04X}")
        where = "at the end" if position == len(value) - 1 else f"at position {position + 1} of {len(value)}"
        cause = (
            "; the .env file has Windows (CRLF) line endings? Convert it with `sed -i 's/\\r$//' .env` and export "
            "it again"
            if char in "\r\n"
            else ""
        )
        return f"{name} (from {source}) has a {what} {where}{cause}"
    if value != value.strip():
        where = "leading" if value[:1].isspace() else "trailing"
        return f"{name} (from {source}) has {where} whitespace; write the value without it"
    return ""


def check_environment(environ: Mapping[str, str] | None = None) -> None:
    """Refuse rlif settings in the environment whose values have control characters or surrounding whitespace.

    Raises:
        EnvFileError: one line per bad variable (see ``value_problem``).
    """
    env = os.environ if environ is None else environ
    problems = [
        value_problem(name, value, "environment")
        for name, value in sorted(env.items())
        if name.startswith(SETTING_PREFIXES) and value
    ]
    problems = [p for p in problems if p]
    if problems:
        raise EnvFileError(problems)


def repo_path(value: str) -> Path:
    """A path setting as the job sees it: ``~`` expanded, a relative path taken from the repository root (the job
    runs there)."""
    path = Path(value).expanduser()
    return path if path.is_absolute() else REPO_ROOT / path


def hub_cache(values: Mapping[str, str | None], env_file: Path | None = None) -> tuple[Path, str]:
    """The Hub cache that download, generation and the job all use, and where that choice came from.

    ``HF_CACHE_DIR`` (rlif's key) is what the downloads fill and what the job exports as ``HF_HUB_CACHE``; a
    ``HF_HUB_CACHE`` set in the shell would win inside the job, so one that names another cache is refused here
    rather than followed by some commands and not others. Without ``HF_CACHE_DIR``, huggingface_hub's own order
    applies (``HF_HUB_CACHE``, ``HUGGINGFACE_HUB_CACHE``, ``$HF_HOME/hub``, ``~/.cache/huggingface/hub``).

    Args:
        values: the settings (environment over ``.env``).
        env_file: the ``.env`` read, for the messages.

    Returns:
        ``(directory, label)``; the label names the variable and its source, e.g.
        ``HF_CACHE_DIR from /repo/.env, relative to the repository root``.

    Raises:
        ValueError: two variables name different caches.
    """
    origin = f" from {Path(env_file).resolve()} or the environment" if env_file else ""
    if values.get("HF_CACHE_DIR"):
        first_key, first = "HF_CACHE_DIR", repo_path(str(values["HF_CACHE_DIR"]))
        # The job exports HF_CACHE_DIR as HF_HUB_CACHE unless HF_HUB_CACHE is already set, which then wins; with
        # HF_HUB_CACHE set, huggingface_hub ignores HUGGINGFACE_HUB_CACHE and HF_HOME for the cache.
        shell = values.get("HF_HUB_CACHE")
        if shell and repo_path(str(shell)).resolve() != first.resolve():
            raise ValueError(
                f"HF_CACHE_DIR={first} and HF_HUB_CACHE={repo_path(str(shell))} name different Hub caches: the "
                "downloads fill HF_CACHE_DIR and jobs read HF_HUB_CACHE; unset HF_HUB_CACHE in your shell or set "
                f"HF_CACHE_DIR to the same directory (settings read{origin or ' from the environment and .env'})"
            )
    elif values.get("HF_HUB_CACHE") or values.get("HUGGINGFACE_HUB_CACHE"):
        first_key = "HF_HUB_CACHE" if values.get("HF_HUB_CACHE") else "HUGGINGFACE_HUB_CACHE"
        first = repo_path(str(values[first_key]))
    elif values.get("HF_HOME"):
        first_key, first = "HF_HOME", repo_path(str(values["HF_HOME"])) / "hub"
    else:
        return Path.home() / ".cache" / "huggingface" / "hub", "the Hugging Face default (no HF_CACHE_DIR set)"
    raw = str(values[first_key])
    relative = "" if Path(raw).expanduser().is_absolute() else f", relative to the repository root {REPO_ROOT}"
    return first, f"{first_key}{origin}{relative}"

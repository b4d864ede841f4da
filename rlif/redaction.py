"""Secrets out of every message and traceback a command prints or writes.

An error from the Hub client can carry the token in several shapes: the exception's text, an httpx ``Request``
repr, a header dict (``'authorization': 'Bearer hf_...'``), a URL with credentials (``https://user:hf_...@host``),
or any exception further down the chain (``__cause__``, ``__context__``). A value with a stray ``\\r`` (a CRLF
``.env``) is also printed by ``repr`` as ``hf_...\\r``, which a plain ``str.replace`` of the token would miss. So
redaction here replaces the known secret values in every form ``str`` and ``repr`` give them, and then every
pattern that looks like a credential whether or not it is known.

``guarded`` is the one way a command turns an exception into what the user sees: every front end (the Hub
commands, ``rlif.eval``, ``rlif.report``) runs its body through it, so no error reaches the terminal unredacted or
as a bare traceback.
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

MASK = "<redacted>"
SECRET_NAME = re.compile(
    r"(?:^|_)(?:TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|ACCESS_KEY|CREDENTIALS?)(?:$|_)", re.IGNORECASE
)
"""Environment variables whose values are secrets (``HF_TOKEN``, ``WANDB_API_KEY``, ...): the word is a whole part
of the name, so a setting such as ``TOKENIZERS_PARALLELISM=false`` is not one (its value would be masked in every
message that says "false")."""

PATTERNS = (
    re.compile(r"\bhf_[A-Za-z0-9]{6,}"),  # Hugging Face tokens, known or not
    re.compile(r"(?i)(\bbearer\s+)[^\s'\",)}\]]+"),
    re.compile(r"(?i)(\bauthorization['\"]?\s*[:=]\s*['\"]?)(?:\w+\s+)?[^\s'\",)}\]]+"),
    re.compile(r"(?i)(\b(?:token|api_key|password|secret)['\"]?\s*[:=]\s*['\"]?)[^\s'\",}\]&]+"),
    re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^/\s:@]+:[^/\s@]+@"),  # scheme://user:password@host
)


def secret_values(environ: Mapping[str, str] | None = None, extra: Iterable[str | None] = ()) -> list[str]:
    """The values to redact: every secret-named variable of ``environ`` and ``extra``, and each one stripped of
    surrounding whitespace (a value read with a trailing ``\\r`` is also used without it)."""
    env = os.environ if environ is None else environ
    raw = [v for k, v in env.items() if SECRET_NAME.search(k)] + [v for v in extra if v]
    values = {v for value in raw for v in (value, value.strip()) if len(v) >= 4}
    return sorted(values, key=len, reverse=True)


def redact(text: str, secrets: Iterable[str] = ()) -> str:
    """``text`` with every known secret (as ``str`` and as ``repr`` shows it) and every credential-like pattern
    replaced by ``<redacted>``."""
    for secret in secrets:
        for form in {secret, repr(secret)[1:-1], secret.encode("unicode_escape").decode("ascii")}:
            if form:
                text = text.replace(form, MASK)
    for pattern in PATTERNS:
        text = pattern.sub(_mask, text)
    return text


def _mask(match: re.Match[str]) -> str:
    """Keep a pattern's prefix (``Bearer ``, ``https://``) and the ``@`` of a URL; mask the credential."""
    prefix = match.group(1) if match.groups() else ""
    return prefix + MASK + ("@" if match.group(0).endswith("@") else "")


def one_line(err: BaseException, secrets: Iterable[str] = (), *, causes: bool | None = None) -> str:
    """The exception, and its causes where they add to it, redacted: ``message (caused by Type: message)``.

    A message that lists several problems keeps its own line breaks (one problem a line).

    Args:
        err: the exception.
        secrets: values to redact besides the credential patterns.
        causes: append the chain (``__cause__``, ``__context__``); None appends it for a library's exception only,
            since rlif's own messages (and a builtin exception raised with a message) already say what failed.
    """
    secrets = list(secrets)
    if causes is None:
        causes = _library(err)
    parts = [_describe(err, first=True)]
    seen = {id(err)}
    cause = err.__cause__ or (None if err.__suppress_context__ else err.__context__)
    while causes and cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        text = f"caused by {_describe(cause, first=False)}"
        if text not in parts:
            parts.append(text)
        cause = cause.__cause__ or (None if cause.__suppress_context__ else cause.__context__)
    line = parts[0] + "".join(f" ({p})" for p in parts[1:])
    return redact(line, secrets)


def _library(err: BaseException) -> bool:
    return type(err).__module__.split(".")[0] not in ("builtins", "rlif")


def _describe(err: BaseException, *, first: bool) -> str:
    text = str(err).strip() or type(err).__name__
    if not first or _library(err):
        text = " ".join(text.split())  # a library's multi-line message (the Hub client's advice) on one line
    return text if first and isinstance(err, (ValueError, OSError, RuntimeError)) else f"{type(err).__name__}: {text}"


def write_traceback(
    err: BaseException, command: str, secrets: Iterable[str] = (), directory: Path | None = None
) -> Path:
    """Write ``err``'s full traceback, chain included and redacted, to a private file; returns its path.

    The file goes to ``directory`` (default: the system's temporary directory) with mode 0600.
    """
    secrets = list(secrets)
    text = redact(" ".join(sys.argv) + "\n" + "".join(traceback.format_exception(err)), secrets)
    folder = Path(tempfile.gettempdir() if directory is None else directory)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"rlif-{command}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.traceback.txt"
    path = folder / name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


EXPECTED: tuple[type[Exception], ...] = (ValueError, OSError, RuntimeError)
"""What a command's own checks and its libraries raise for a user's mistake or the machine's state (the Hub client's
errors are subclasses): one line. Anything else is a bug, whose traceback the user can attach to a report."""


def guarded(
    command: str,
    body: Callable[[], int],
    *,
    extra_secrets: Callable[[], Iterable[str | None]] = tuple,
    status: Callable[[Exception], int] = lambda err: 1,
    describe: Callable[[Exception], str | None] = lambda err: None,
) -> int:
    """Run a command's body so that no exception reaches the terminal as a traceback or with a secret in it.

    An expected failure (``EXPECTED``) prints ``error: <message>``; anything else also writes its redacted
    traceback to a private file (``write_traceback``) and names it. Every message passes through ``redact`` with
    the environment's secrets and ``extra_secrets``.

    Args:
        command: the command's name, for the traceback file.
        body: the command after its arguments were parsed; returns the exit status.
        extra_secrets: secrets read so far that the environment may not hold (a token from ``.env``).
        status: the exit status of an expected failure (e.g. 2 for a usage error, 1 for a full disk).
        describe: the command's own wording of an expected failure, or None for ``one_line``'s.

    Returns:
        ``body``'s status; after an error ``status(err)`` (1 when unexpected); 130 after Ctrl-C.
    """
    try:
        return body()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except EXPECTED as err:
        secrets = secret_values(extra=extra_secrets())
        own = describe(err)
        message = one_line(err, secrets) if own is None else redact(own, secrets)
        print(f"error: {message}", file=sys.stderr)
        return status(err)
    except Exception as err:  # the one place that turns any failure into one line
        secrets = secret_values(extra=extra_secrets())
        path = write_traceback(err, command, secrets)
        print(
            f"error: {one_line(err, secrets, causes=True)}; unexpected, redacted traceback in {path}", file=sys.stderr
        )
        return 1

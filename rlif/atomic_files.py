"""Writing a file so that a reader sees the old content or the new, never half of the new.

Training jobs trust the data files they find, evaluations and reports are read while runs still write, and a build
can be killed at any moment. So every writer in rlif writes to a hidden temporary file in the destination's folder
and renames it into place once it is complete (``os.replace`` is atomic on one filesystem); an interrupted write
leaves nothing behind, or at worst a ``.<name>.<pid>.<random>.partial`` file that no pattern selecting data, results
or scripts matches.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterable
from pathlib import Path

PARTIAL_SUFFIX = ".partial"
"""Suffix of the temporary files ``atomic_write`` writes through."""


def atomic_write(path: Path, write: Callable[[Path], object]) -> Path:
    """Have ``write`` fill a temporary file beside ``path``, then rename it to ``path`` (folders created).

    The temporary file is created with mode ``0666`` minus the user's umask before ``write`` runs, so the result has
    the mode a plain ``open`` would give it (``tempfile.mkstemp`` makes ``0600`` files whatever the umask, which a
    rename keeps: outputs meant for a group's shared folder would be readable by their owner only).

    Args:
        path: the destination.
        write: writes the whole content to the path it is given (which exists, empty).

    Returns:
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = _new_partial_file(path)
    try:
        write(partial)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


def write_text_atomic(path: Path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` atomically; returns ``path``."""
    return write_lines_atomic(path, [text])


def write_lines_atomic(path: Path, chunks: Iterable[str]) -> Path:
    """Write the concatenated ``chunks`` (UTF-8) to ``path`` atomically, streaming them; returns ``path``."""

    def write(partial: Path) -> None:
        with partial.open("w", encoding="utf-8") as handle:
            for chunk in chunks:
                handle.write(chunk)

    return atomic_write(path, write)


def _new_partial_file(path: Path) -> Path:
    """Create an empty, uniquely named hidden file beside ``path`` (mode ``0666`` minus the umask)."""
    while True:
        partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}{PARTIAL_SUFFIX}")
        try:
            os.close(os.open(partial, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
        except FileExistsError:
            continue
        return partial

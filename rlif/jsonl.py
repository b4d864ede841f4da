"""Reading a JSON-lines file (training metrics, responses, evaluation logs) line by line.

A JSON-lines file is written by another program, often one still running or one that was killed, so a bad line must
fail naming the file and the line: that is where a reader goes to look. Lines are decoded one by one, so a byte that
is not UTF-8 is reported with its line too, not as a decoding error somewhere in the file.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any


def read_json_lines(
    path: Path, *, skip_blank: bool = True, on_error: Callable[[ValueError], None] | None = None
) -> Iterator[tuple[int, Any]]:
    """Yield each line of ``path`` as ``(line number, parsed JSON value)``, numbering lines from 1.

    Args:
        path: the file.
        skip_blank: skip lines that hold only whitespace (they are not JSON; with ``False`` they are errors).
        on_error: called with the error for a bad line, which is then skipped, for a caller that reports every
            bad line rather than the first; without it the first bad line raises.

    Raises:
        OSError: the file cannot be opened.
        ValueError: a line is not valid UTF-8 or not valid JSON (without ``on_error``); the message is
            ``"<path>: line <n>: ..."``.
    """
    path = Path(path)
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                value = _parse(raw, path, number, skip_blank)
            except ValueError as err:
                if on_error is None:
                    raise
                on_error(err)
                continue
            if value is not _BLANK:
                yield number, value


_BLANK = object()
"""What ``_parse`` returns for a skipped blank line."""


def _parse(raw: bytes, path: Path, number: int, skip_blank: bool) -> Any:
    where = f"{path}: line {number}"
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{where}: not valid UTF-8 (byte {err.start + 1} of the line)") from None
    if skip_blank and not line.strip():
        return _BLANK
    try:
        return json.loads(line)
    except json.JSONDecodeError as err:
        raise ValueError(f"{where}: not valid JSON ({err.msg})") from None

"""Hub settings from the environment and ``.env``, with the token kept out of every printout.

The group keeps cluster paths and the Hub token in ``.env`` (see ``.env.example``). Values already in the
environment win over ``.env`` (``python-dotenv``'s ``load_dotenv`` default), and ``.env`` is read without being
loaded into ``os.environ``, so nothing leaks into child processes by accident. The token field is excluded from
``repr`` and every error path in this package formats settings field by field, never the token.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from dotenv import dotenv_values

from rlif.hub.network import HubLimits, SettingError, parse_limits

ASCII_SETTINGS = ("HF_TOKEN", "HF_ENDPOINT", "HF_DATA_REPO")
"""Settings that travel in HTTP headers or URLs, where only ASCII is allowed (paths such as HF_CACHE_DIR may not)."""


@dataclass(frozen=True)
class HubSettings:
    """Everything the download and upload commands read from the environment.

    Attributes:
        token: ``HF_TOKEN``; None when unset or empty. Never printed.
        data_repo: ``HF_DATA_REPO``, the dataset repo holding the mixtures.
        cache_dir: ``HF_CACHE_DIR``, where model snapshots go.
        endpoint: ``HF_ENDPOINT`` when set (a mirror or a local test hub); None means the public Hub.
        limits: timeouts and retries of Hub requests (``RLIF_HUB_CONNECT_TIMEOUT``, ``RLIF_HUB_READ_TIMEOUT``,
            ``RLIF_HUB_RETRIES``).
    """

    token: str | None = field(default=None, repr=False)
    data_repo: str | None = None
    cache_dir: Path | None = None
    endpoint: str | None = None
    limits: HubLimits = field(default_factory=HubLimits)


def read_env(env_file: Path | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Merge ``.env`` and the process environment (the environment wins); empty values count as unset.

    Args:
        env_file: path of the ``.env`` file; None looks for ``.env`` in the current directory. A missing file is
            not an error (everything may come from the environment).
        environ: the environment; None uses ``os.environ``.
    """
    path = Path(".env") if env_file is None else Path(env_file)
    values = {k: v for k, v in dotenv_values(path).items() if v} if path.is_file() else {}
    env = os.environ if environ is None else environ
    values.update({k: v for k, v in env.items() if v})
    return values


def load_settings(env_file: Path | None = None, environ: Mapping[str, str] | None = None) -> HubSettings:
    """Build ``HubSettings`` from ``.env`` and the environment (see ``read_env``).

    Raises:
        SettingError: a setting that goes into requests has non-ASCII characters or stray quotes or spaces (a
            token pasted with smart quotes), or a ``RLIF_HUB_*`` limit is not a valid number. The message names
            the setting and where it came from, never the token's value.
    """
    env = os.environ if environ is None else environ
    values = read_env(env_file, env)
    source = {name: "environment" if env.get(name) else str(env_file or ".env") for name in values}
    for name in ASCII_SETTINGS:
        if name in values:
            _check_plain(name, values[name], source[name])
    cache_dir = values.get("HF_CACHE_DIR")
    return HubSettings(
        token=values.get("HF_TOKEN"),
        data_repo=values.get("HF_DATA_REPO"),
        cache_dir=Path(cache_dir).expanduser() if cache_dir else None,
        endpoint=values.get("HF_ENDPOINT"),
        limits=parse_limits(values),
    )


def _check_plain(name: str, value: str, source: str) -> None:
    """Reject a value that cannot go into an HTTP header or URL, naming the character's position but not the value.

    httpx would otherwise fail deep inside a request with "'ascii' codec can't encode character", naming nothing.
    """
    bad = next(((i, c) for i, c in enumerate(value) if not c.isascii()), None)
    if bad is not None:
        position, char = bad
        raise SettingError(
            f"{name} (from {source}) has a non-ASCII character {char!r} (U+{ord(char):04X}) at position "
            f"{position + 1}; smart quotes or a pasted non-breaking space? Write the value again with plain "
            "characters, without quotes"
        )
    stray = next(((i, c) for i, c in enumerate(value) if c in "\"' \t"), None)
    if stray is not None:
        position, char = stray
        raise SettingError(
            f"{name} (from {source}) has a {'space' if char.isspace() else 'quote'} at position {position + 1}; "
            "write the value without quotes or spaces"
        )


def redact(text: str, token: str | None) -> str:
    """Replace every occurrence of ``token`` in ``text`` (for error messages that quote a request)."""
    return text.replace(token, "<HF_TOKEN>") if token else text

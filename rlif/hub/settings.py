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

from rlif.envfile import check_env_file, default_env_file, hub_cache, value_problem
from rlif.hub.network import HubLimits, SettingError, parse_limits
from rlif.redaction import redact as redact_secrets

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
        env_file: the ``.env`` that was looked for (absolute), named by every "not set" message.
        cache_source: which variable gave ``cache_dir`` and from where (for messages).
    """

    token: str | None = field(default=None, repr=False)
    data_repo: str | None = None
    cache_dir: Path | None = None
    endpoint: str | None = None
    limits: HubLimits = field(default_factory=HubLimits)
    env_file: Path | None = None
    cache_source: str = ""

    def where(self) -> str:
        """Where a missing setting was looked for: ``environment or /repo/.env`` (or ``(not found)``)."""
        if self.env_file is None:
            return "the environment"
        found = "" if self.env_file.is_file() else ", which does not exist"
        return f"the environment or {self.env_file}{found}"


def read_env(env_file: Path | None = None, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Merge ``.env`` and the process environment (the environment wins); empty values count as unset.

    Args:
        env_file: path of the ``.env`` file; None means the repository's ``.env`` (the one jobs source). A missing
            file is not an error (everything may come from the environment).
        environ: the environment; None uses ``os.environ``.
    """
    path = default_env_file() if env_file is None else Path(env_file)
    values = {k: v for k, v in dotenv_values(path).items() if v} if path.is_file() else {}
    env = os.environ if environ is None else environ
    values.update({k: v for k, v in env.items() if v})
    return values


def load_settings(env_file: Path | None = None, environ: Mapping[str, str] | None = None) -> HubSettings:
    """Build ``HubSettings`` from ``.env`` and the environment (see ``read_env``).

    Raises:
        rlif.envfile.EnvFileError: ``.env`` has a line bash and Python would read differently.
        SettingError: a setting has a control character (a CRLF ``.env`` exported by hand) or surrounding
            whitespace; one that goes into requests has non-ASCII characters or stray quotes or spaces (a token
            pasted with smart quotes); ``HF_ENDPOINT`` is not an http(s) URL; Hub cache variables disagree; or a
            ``RLIF_HUB_*`` limit is not a valid number. The message names the setting and where it came from,
            never the value.
    """
    env = os.environ if environ is None else environ
    path = (default_env_file() if env_file is None else Path(env_file)).resolve()
    check_env_file(path)
    values = read_env(path, env)
    source = {name: "environment" if env.get(name) else str(path) for name in values}
    for name in sorted(values):
        if name in source and (source[name] != "environment" or name.startswith(("HF_", "RLIF_"))):
            problem = value_problem(name, values[name], source[name])
            if problem:
                raise SettingError(problem)
    for name in ASCII_SETTINGS:
        if name in values:
            _check_plain(name, values[name], source[name])
    endpoint = values.get("HF_ENDPOINT")
    if endpoint:
        endpoint = _check_endpoint(endpoint, source["HF_ENDPOINT"])
    cache_vars = ("HF_CACHE_DIR", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME")
    try:
        cache_dir, cache_source = hub_cache(values, path) if any(values.get(k) for k in cache_vars) else (None, "")
    except ValueError as err:
        raise SettingError(str(err)) from None
    return HubSettings(
        token=values.get("HF_TOKEN"),
        data_repo=values.get("HF_DATA_REPO"),
        cache_dir=cache_dir,
        endpoint=endpoint,
        limits=parse_limits(values),
        env_file=path,
        cache_source=cache_source,
    )


def _check_endpoint(endpoint: str, source: str) -> str:
    """``HF_ENDPOINT`` as the client needs it: an http(s) URL without a trailing slash.

    Without a scheme httpx fails with a traceback; with a trailing slash every request path gets a double slash
    and the Hub answers "Repository Not Found".
    """
    if not endpoint.startswith(("http://", "https://")):
        raise SettingError(
            f"HF_ENDPOINT (from {source}) is not an http(s) URL; write it with its scheme, e.g. https://{endpoint}"
        )
    return endpoint.rstrip("/")


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
    """``text`` without ``token`` (in any form ``repr`` gives it) or anything else credential-like
    (``rlif.redaction``)."""
    return redact_secrets(text, [token] if token else [])

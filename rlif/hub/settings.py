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


@dataclass(frozen=True)
class HubSettings:
    """Everything the download and upload commands read from the environment.

    Attributes:
        token: ``HF_TOKEN``; None when unset or empty. Never printed.
        data_repo: ``HF_DATA_REPO``, the dataset repo holding the mixtures.
        cache_dir: ``HF_CACHE_DIR``, where model snapshots go.
        endpoint: ``HF_ENDPOINT`` when set (a mirror or a local test hub); None means the public Hub.
    """

    token: str | None = field(default=None, repr=False)
    data_repo: str | None = None
    cache_dir: Path | None = None
    endpoint: str | None = None


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
    """Build ``HubSettings`` from ``.env`` and the environment (see ``read_env``)."""
    values = read_env(env_file, environ)
    cache_dir = values.get("HF_CACHE_DIR")
    return HubSettings(
        token=values.get("HF_TOKEN"),
        data_repo=values.get("HF_DATA_REPO"),
        cache_dir=Path(cache_dir).expanduser() if cache_dir else None,
        endpoint=values.get("HF_ENDPOINT"),
    )


def redact(text: str, token: str | None) -> str:
    """Replace every occurrence of ``token`` in ``text`` (for error messages that quote a request)."""
    return text.replace(token, "<HF_TOKEN>") if token else text

"""``.env.example`` lists only variables something actually reads, each with a comment saying what it is for.

A key nobody reads (``ROOT_DIR``, ``RAY_LOG_DIR`` were) costs every new user a question; so each key must be read
by the project's code, its generated Slurm scripts, or a named line of a library the training job runs.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
KEY = re.compile(r"^(?:#\s*)?([A-Z][A-Z0-9_]*)=", re.MULTILINE)

READ_BY_LIBRARY = {
    "WANDB_API_KEY": ("wandb", "env.py"),
    "WANDB_MODE": ("wandb", "env.py"),
    "WANDB_ENTITY": ("verl", "utils/tracking.py"),
}
"""Keys the project passes through to a library: (package, file of the package that reads the variable)."""


def _keys() -> list[str]:
    return KEY.findall((REPO / ".env.example").read_text(encoding="utf-8"))


def _project_sources() -> list[Path]:
    """Code that runs with ``.env`` loaded: the packages, top-level scripts, shell scripts and the Slurm template."""
    files = [p for pkg in ("rlif", "rewards", "samplers") for p in (REPO / pkg).rglob("*.py")]
    files += list(REPO.glob("*.py")) + list((REPO / "scripts").glob("*.sh"))
    return files + list((REPO / "recipe" / "templates").glob("*.j2"))


def _reads(text: str, key: str) -> bool:
    """A Python string literal naming the key, or a shell expansion of it; a mere mention in prose does not count."""
    return f'"{key}"' in text or f"${{{key}" in text or re.search(rf"\${key}\b", text) is not None


def _model_settings() -> set[str]:
    """The keys the shipped matrix's runs and groups name as ``model_setting`` (read by the generator)."""
    from rlif.runs.matrix import SHIPPED_MATRIX, load_matrix

    return {run.model_setting for run in load_matrix(SHIPPED_MATRIX).runs if run.model_setting}


def test_env_example_has_the_expected_keys_and_no_dead_ones() -> None:
    keys = _keys()
    assert len(keys) == len(set(keys)), "a key is listed twice"
    assert "ROOT_DIR" not in keys and "RAY_LOG_DIR" not in keys
    assert {"HF_TOKEN", "HF_DATA_REPO", "HF_CACHE_DIR", "RLIF_RAY_TMP_ROOT", "SLURM_PARTITION"} <= set(keys)
    assert _model_settings() <= set(keys), "a run's model_setting is missing from .env.example"


def test_every_key_is_read_somewhere() -> None:
    sources = {p: p.read_text(encoding="utf-8", errors="replace") for p in _project_sources()}
    unread = []
    settings = _model_settings()
    for key in _keys():
        if key in settings:
            continue
        if key in READ_BY_LIBRARY:
            package, relative = READ_BY_LIBRARY[key]
            spec = importlib.util.find_spec(package)
            if spec is None or spec.origin is None:
                pytest.skip(f"{package} is not installed, cannot check {key}")
            if not _reads((Path(spec.origin).parent / relative).read_text(encoding="utf-8"), key):
                unread.append(f"{key} (expected in {package}/{relative})")
        elif not any(_reads(text, key) for text in sources.values()):
            unread.append(key)
    assert unread == [], f".env.example keys nothing reads: {unread}"


def test_every_key_has_a_comment_and_no_inline_comment() -> None:
    """Each key sits in a block that opens with a comment line; ``docker run --env-file`` would keep an inline
    ``# ...`` as part of the value, so no value carries one."""
    commented = False
    for number, line in enumerate((REPO / ".env.example").read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            commented = False
        elif KEY.match(line):
            assert commented, f"line {number}: {line} has no comment above it"
            assert line.startswith("#") or "#" not in line.partition("=")[2], f"line {number}: inline comment"
        elif line.startswith("#"):
            commented = True

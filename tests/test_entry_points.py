"""The ``[project.scripts]`` commands run the same mains as the top-level scripts, and each one starts."""

from __future__ import annotations

import ast
import importlib
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
TOP_LEVEL = ("evaluate.py", "generate_train_recipes.py", "hf_data_download.py", "hf_model_download.py", "hf_upload.py")


def _main_target(script: Path) -> str:
    """``module:main`` for a top-level script that does ``from module import main``."""
    for node in ast.parse(script.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and any(alias.name == "main" for alias in node.names):
            return f"{node.module}:main"
    raise AssertionError(f"{script.name} imports no main")


@pytest.mark.parametrize("script", TOP_LEVEL)
def test_every_top_level_script_has_an_entry_point_with_its_main(script: str) -> None:
    assert _main_target(REPO_ROOT / script) in SCRIPTS.values()


@pytest.mark.parametrize("command", sorted(SCRIPTS))
def test_every_entry_point_prints_its_help(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    module, _, attr = SCRIPTS[command].partition(":")
    main = getattr(importlib.import_module(module), attr)
    with pytest.raises(SystemExit) as exit_info:
        main(["--help"])
    assert exit_info.value.code == 0
    assert "usage:" in capsys.readouterr().out

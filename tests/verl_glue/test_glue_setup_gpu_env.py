"""scripts/setup_gpu_env.sh: the host GPU environment's install order and pins, and its one-line refusals.

Nothing is installed: the base Python is a wrapper that runs real Python for the script's checks and makes a fake
venv whose ``python`` logs every call; ``nvcc`` is a stub when the toolkit should be present.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

BASE_PYTHON = f"""#!/bin/bash
if [[ "$1 $2" == "-m venv" ]]; then
    mkdir -p "$3/bin"
    printf '#!/bin/bash\\nprintf "%%s\\\\n" "$*" >> "$STUB_LOG"\\n' > "$3/bin/python"
    chmod +x "$3/bin/python"
    exit 0
fi
exec {sys.executable} "$@"
"""


def _executable(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def run_setup(tmp_path: Path, *, nvcc: bool) -> tuple[subprocess.CompletedProcess, list[str]]:
    stubs = tmp_path / "stubs"
    stubs.mkdir(exist_ok=True)
    _executable(stubs / "base-python", BASE_PYTHON)
    if nvcc:
        _executable(stubs / "nvcc", "#!/bin/sh\nexit 0\n")
    log = tmp_path / "calls.log"
    env = {
        "PATH": f"{stubs}:/usr/bin:/bin",
        "RLIF_BASE_PYTHON": str(stubs / "base-python"),
        "STUB_LOG": str(log),
    }
    command = ["bash", str(REPO / "scripts" / "setup_gpu_env.sh"), str(tmp_path / "venv")]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    return proc, log.read_text(encoding="utf-8").splitlines() if log.exists() else []


def test_install_order_and_pins(tmp_path):
    proc, calls = run_setup(tmp_path, nvcc=True)
    assert proc.returncode == 0, proc.stderr
    installs = [c.removeprefix("-m pip install --progress-bar off ") for c in calls if c.startswith("-m pip install")]
    assert installs == [
        "--upgrade pip",
        "torch==2.11.0 torchvision==0.26.0 torchaudio==2.11.0",
        "vllm==0.24.0",
        "verl[vllm]==0.9.1",
        "wheel ninja packaging",
        "--no-build-isolation flash-attn==2.8.3",
        "-e .[gpu]",
    ]
    assert calls[-2:] == ["-m pip check", "-m rlif.preflight versions"]
    assert proc.stdout.splitlines()[-1] == (
        f"[setup-gpu] done: add RLIF_PYTHON={tmp_path / 'venv'}/bin/python to .env (and keep RLIF_RUNTIME=host)"
    )


def test_without_the_cuda_toolkit_it_says_so_and_installs_nothing(tmp_path):
    proc, calls = run_setup(tmp_path, nvcc=False)
    assert proc.returncode == 1 and calls == []
    assert proc.stderr.startswith("[setup-gpu] error: nvcc not found: flash-attn 2.8.3 builds from source")
    assert len(proc.stderr.strip().splitlines()) == 1


def test_wrong_python_version_is_one_line(tmp_path):
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    _executable(stubs / "py310", "#!/bin/bash\necho 3.10\n")
    env = {**os.environ, "RLIF_BASE_PYTHON": str(stubs / "py310")}
    command = ["bash", str(REPO / "scripts" / "setup_gpu_env.sh"), str(tmp_path / "venv")]
    proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip() == (
        f"[setup-gpu] error: {stubs / 'py310'} is Python 3.10; verl 0.9.1 and rlif need 3.11 or 3.12 "
        "(set RLIF_BASE_PYTHON)"
    )

#!/usr/bin/env bash
# The host training environment for the generated Slurm scripts (RLIF_RUNTIME=host, docs/cluster.md): a virtual
# environment with verl 0.9.1, vLLM 0.24.0, flash-attn 2.8.3 and rlif, on a shared file system every node sees.
#
#   bash scripts/setup_gpu_env.sh [VENV_DIR]      # default .venv-gpu; run on a node with the CUDA 13 toolkit
#
# Then put RLIF_PYTHON=<VENV_DIR>/bin/python in .env; every job checks these versions before Ray starts
# (python -m rlif.preflight). The verl, vLLM and flash-attn pins are read from pyproject.toml, the one place they live.
# Install order (docs/cluster.md): torch 2.11.0 (PyPI's Linux build is CUDA 13) -> vLLM -> verl[vllm] ->
# flash-attn, built from source against that torch (PyPI has only its sdist) -> rlif[gpu] -> pip check.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=${1:-.venv-gpu}
[[ "$venv" == /* ]] || venv="$PWD/$venv"
base_python=${RLIF_BASE_PYTHON:-python3}

fail() { echo "[setup-gpu] error: $*" >&2; exit 1; }

command -v "$base_python" >/dev/null || fail "$base_python not found; set RLIF_BASE_PYTHON to a Python 3.11 or 3.12"
version=$("$base_python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
[[ "$version" == 3.11 || "$version" == 3.12 ]] \
    || fail "$base_python is Python $version; verl 0.9.1 and rlif need 3.11 or 3.12 (set RLIF_BASE_PYTHON)"
# flash-attn 2.8.3 compiles its CUDA kernels here (tens of minutes; MAX_JOBS bounds the parallel compilers).
command -v nvcc >/dev/null \
    || fail "nvcc not found: flash-attn 2.8.3 builds from source and needs the CUDA 13 toolkit on PATH (e.g. module load cuda), or run the jobs in the rlif image instead (RLIF_RUNTIME=pyxis or apptainer)"

read -r verl_pin vllm_pin flash_pin < <(PYTHONPATH=. "$base_python" -c '
from rlif.preflight import pinned_versions
pins = pinned_versions()
print(pins["verl"], pins["vllm"], pins["flash-attn"])')

echo "[setup-gpu] creating $venv: verl $verl_pin, vLLM $vllm_pin, flash-attn $flash_pin (torch 2.11.0, CUDA 13)"
"$base_python" -m venv "$venv"
pip=("$venv/bin/python" -m pip install --progress-bar off)
"${pip[@]}" --upgrade pip
"${pip[@]}" "torch==2.11.0" "torchvision==0.26.0" "torchaudio==2.11.0"
"${pip[@]}" "vllm==$vllm_pin"
"${pip[@]}" "verl[vllm]==$verl_pin"
"${pip[@]}" wheel ninja packaging
MAX_JOBS=${MAX_JOBS:-8} "${pip[@]}" --no-build-isolation "flash-attn==$flash_pin"
"${pip[@]}" -e ".[gpu]"
"$venv/bin/python" -m pip check
"$venv/bin/python" -m rlif.preflight versions
echo "[setup-gpu] done: add RLIF_PYTHON=$venv/bin/python to .env (and keep RLIF_RUNTIME=host)"

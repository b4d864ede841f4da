#!/usr/bin/env bash
# The main job on built-in defaults: the CPU demo (real verl GRPO, 2 steps + checkpoint + resume for a 3rd).
# Sets up .venv on first use. Extra arguments go to `python -m rlif.cpu_demo` (e.g. --workdir DIR).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup_env.sh
exec .venv/bin/python -m rlif.cpu_demo "$@"

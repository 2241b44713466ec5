#!/usr/bin/env bash
# The main job of the README: set up, then play a whole port day on this machine (`portgate demo`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/portgate demo "$@"

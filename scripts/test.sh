#!/usr/bin/env bash
# The test command of the README: set up, then run the whole test suite against real components
# (mosquitto, pcscd + vpcd, PostgreSQL, SQLite, pseudo-terminals), which the tests start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"

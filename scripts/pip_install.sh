#!/usr/bin/env bash
# `PYTHON -m pip install ARGS...` for scripts/setup.sh, with pip's lines "WARNING: Location
# 'file:///...' is ignored: ..." left out: a machine whose pip configuration names a file:// extra
# index lacking a folder per package gets one such line for every package pip looks up (81 for
# portgate's), nothing to act on, and pip has no option to silence them alone (-qq hides every
# warning). Every other line is shown (on stderr, as pip writes it; errors and other warnings
# included) and pip's exit status is this script's. Usage: scripts/pip_install.sh PYTHON ARGS...
set -uo pipefail
python=$1
shift
{ "$python" -m pip install "$@" 2>&1 1>&3 3>&- \
    | { grep -v "^WARNING: Location 'file://[^']*' is ignored: " || true; } >&2; } 3>&1

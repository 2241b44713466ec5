#!/usr/bin/env bash
# The test command of the README: set up, then run the whole test suite against real components
# (mosquitto, pcscd + vpcd, PostgreSQL, SQLite, pseudo-terminals), which the tests start themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Four workers (PORTGATE_TEST_WORKERS; 0 runs in one process): the suite mostly waits on real
# components (its processes used 83 % of one core in a whole run on two cores), so four processes
# on two cores take about two thirds of two's time (docs/performance.md, "The workers"). ``loadgroup`` with the
# scheduler of testkit/xdist_groups.py keeps each test module on one worker (some modules' tests
# build on each other's state, and module fixtures start once) and every module that uses the
# session's demo day on the same worker, so the day is played once. Every component a test starts is
# private to it (free ports, its own directories, pcscd in its own mount namespace), so the
# workers never share one. PORTGATE_FULL=1 plays the long fault runs at full size (docs/performance.md).
# Bytecode: Python writes its cache (``__pycache__``, ignored by git) even where the environment says
# not to, and the test modules' assert-rewritten bytecode is written once, before the workers start,
# in one process per CPU (testkit/warm_pyc.py): on a fresh clone each worker rewrote the whole suite
# itself (~24 s of CPU each, all four at once on two cores), and every component's Python start
# compiled the project's modules again (docs/performance.md, "The test suite, CI time pass").
# After the groups the scheduler hands out the modules longest first by tests/module_times.json
# (refresh: bash scripts/test.sh --module-times-out tests/module_times.json; docs/performance.md, "Fifth pass").
unset PYTHONDONTWRITEBYTECODE
workers="${PORTGATE_TEST_WORKERS:-4}"
if [ "$workers" != 0 ]; then
    .venv/bin/python -m testkit.warm_pyc tests
fi
exec .venv/bin/python -m pytest -n "$workers" --dist loadgroup "$@"

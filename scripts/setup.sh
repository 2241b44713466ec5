#!/usr/bin/env bash
# Prepare this checkout: system packages (when root on Debian) and a virtual environment in .venv.
# Used by both README commands (scripts/demo.sh and scripts/test.sh). Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."

# chromium, chromium-headless-shell: the real browser the screen tests drive through Playwright (never a
# downloaded build; testkit/browser.py takes the headless shell of the same Debian source when it is there).
# openssl: the TLS tests make their certificates (testkit/tls.py).
# mosquitto-clients: bench/ingest.py times mosquitto_sub (the C client) as the broker's ceiling.
# jq: the log tests pipe the services' output through it (journalctl -o cat | jq).
# nodejs + npm: the official AsyncAPI parser and ajv check the wire contract (tools/node/).
# e2fsprogs: chattr, which the gate-store tests use to make a store.db immutable as root.
# nats-server (2.9, bookworm): the 3-node JetStream cluster of the broker tier (app/cluster/nats.py, issue 37).
# patroni + etcd-server: the replicated ledger tier, 3 etcd members and 3 PostgreSQL nodes (app/cluster/patroni.py).
# pgbackrest: the ledger's backups with WAL archiving and a point-in-time restore (tests/ops/test_backup_pitr.py).
DEB_PACKAGES=(python3-venv python3-dev gcc swig libpcsclite-dev pcscd vsmartcard-vpcd mosquitto mosquitto-clients socat tzdata
  chromium chromium-headless-shell fonts-dejavu-core jq openssl nodejs poppler-utils e2fsprogs nats-server
  patroni etcd-server pgbackrest)
# Debian packages npm apart; a nodejs from elsewhere (NodeSource) brings its own npm and conflicts with it
if ! command -v npm >/dev/null; then DEB_PACKAGES+=(npm); fi
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then DEB_PACKAGES+=(postgresql); fi

missing=()
for pkg in "${DEB_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "setup: installing Debian packages: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: please install these Debian packages first (as root):" >&2
    echo "  apt-get install ${missing[*]}" >&2
    exit 1
  fi
fi

# What is installed already is not installed again: each step leaves a stamp (the sha256 of the
# file it installed from) and is skipped while that file is unchanged; a fresh clone runs them all.
stamp_ok() { [ -f "$2" ] && [ "$(cat "$2")" = "$(sha256sum "$1" | cut -d' ' -f1)" ]; }
stamp() { sha256sum "$1" | cut -d' ' -f1 >"$2"; }

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
  bash scripts/pip_install.sh .venv/bin/python -q --upgrade pip >/dev/null
fi
if stamp_ok pyproject.toml .venv/.portgate-pyproject.sha256 && .venv/bin/python -c \
    "import importlib.metadata as m; m.distribution('portgate')" 2>/dev/null; then
  echo "setup: Python packages already installed (pyproject.toml unchanged)"
else
  bash scripts/pip_install.sh .venv/bin/python -q -e ".[test]"  # without the ignored-location warnings
  stamp pyproject.toml .venv/.portgate-pyproject.sha256
fi
# the contract checkers at the versions of tools/node/package-lock.json (tests/wire/test_contract_tools.py);
# no install scripts (none is needed; one is a telemetry ping). npm ci empties node_modules first,
# the stamp with it.
if stamp_ok tools/node/package-lock.json tools/node/node_modules/.portgate-lock.sha256; then
  echo "setup: contract checkers already installed (package-lock.json unchanged)"
else
  (cd tools/node && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  stamp tools/node/package-lock.json tools/node/node_modules/.portgate-lock.sha256
fi
echo "setup: ready (.venv)"

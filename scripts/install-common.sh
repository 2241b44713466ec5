# Shared steps of install-gate.sh and install-office.sh (sourced, not run). Idempotent: every step
# checks before it changes anything, and existing configuration or secrets are never overwritten.
#
# PORTGATE_ROOT=/some/dir installs into that directory instead of / (a staging tree, and what the
# tests use): no user is created, no package installed, nothing is started, files keep the
# installing user as owner. SKIP_VENV=1 skips the virtual environment (tests).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROOT=${PORTGATE_ROOT:-}
PREFIX=$ROOT/opt/portgate
ETC=$ROOT/etc/portgate
UNITDIR=$ROOT/etc/systemd/system
SVC_USER=portgate

say() { echo "install: $*"; }
staging() { [ -n "$ROOT" ]; }

need_root() {
  if ! staging && [ "$(id -u)" != 0 ]; then
    echo "install: run as root (sudo $0)" >&2
    exit 1
  fi
}

apt_install() {  # apt_install PKG...: only the missing ones
  staging && return 0
  local missing=()
  for pkg in "$@"; do
    dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "apt-get install ${missing[*]}"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

create_user() {  # system user and group "portgate", no login, home = state directory
  staging && return 0
  if ! id -u "$SVC_USER" >/dev/null 2>&1; then
    say "creating system user $SVC_USER"
    useradd --system --user-group --home-dir /var/lib/portgate --no-create-home \
      --shell /usr/sbin/nologin "$SVC_USER"
  fi
}

owner() {  # owner USER GROUP: chown arguments, or nothing when staging
  staging && return 0
  echo "-o $1 -g $2"
}

install_venv() {  # /opt/portgate/venv with this checkout installed (not editable), docs beside it
  install -d -m 0755 "$PREFIX" "$PREFIX/docs"
  install -m 0644 "$SRC"/docs/*.md "$PREFIX/docs/"
  [ "${SKIP_VENV:-0}" = 1 ] && return 0
  if [ ! -x "$PREFIX/venv/bin/python" ]; then
    say "creating $PREFIX/venv"
    python3 -m venv "$PREFIX/venv"
  fi
  say "installing portgate into $PREFIX/venv"
  "$PREFIX/venv/bin/python" -m pip install -q --upgrade "$SRC"
}

install_config() {  # install_config SRC DEST MODE: a template, never over an existing file
  local src=$1 dest=$2 mode=$3
  if [ -e "$dest" ]; then
    say "keeping existing $dest"
  else
    # shellcheck disable=SC2046
    install -m "$mode" $(owner root "$SVC_USER") "$src" "$dest"
    say "wrote $dest (mode $mode): edit it"
  fi
}

etc_dir() {  # /etc/portgate: root-owned, group portgate may read (0750)
  # shellcheck disable=SC2046
  install -d -m 0750 $(owner root "$SVC_USER") "$ETC"
  # shellcheck disable=SC2046
  install -d -m 0750 $(owner root "$SVC_USER") "$ETC/rulebooks"
  for f in "$SRC"/config/rulebooks/*.toml; do
    install_config "$f" "$ETC/rulebooks/$(basename "$f")" 0640
  done
}

secret_file() {  # secret_file PATH WHAT: must exist as 0600, owned by the service user
  local path=$1 what=$2
  if [ ! -e "$path" ]; then
    say "MISSING $what: $path (create it with mode 0600, owner $SVC_USER)"
    return 0
  fi
  chmod 0600 "$path"
  staging || chown "$SVC_USER:$SVC_USER" "$path"
}

install_units() {  # install_units UNIT...: copy to /etc/systemd/system and reload systemd
  install -d -m 0755 "$UNITDIR"
  for unit in "$@"; do
    install -m 0644 "$SRC/systemd/$unit" "$UNITDIR/$unit"
  done
  staging && return 0
  systemctl daemon-reload
}

enable_units() {  # enable_units UNIT...: enabled at boot; started with --start
  staging && return 0
  systemctl enable "$@" >/dev/null
  if [ "${START:-0}" = 1 ]; then
    systemctl restart "$@"
    say "started $*"
  else
    say "enabled $* (start with: systemctl start $*)"
  fi
}

for arg in "$@"; do
  case $arg in
    --start) START=1 ;;
    --display) WITH_DISPLAY=1 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed 's/^# \{0,1\}//; /^set -euo/d'; exit 0 ;;
    *) echo "install: unknown argument $arg" >&2; exit 2 ;;
  esac
done

#!/usr/bin/env bash
# Install a portgate gate on Raspberry Pi OS / Debian 12 (run as root from a checkout):
#
#   sudo scripts/install-gate.sh [--start] [--display]
#
# - Debian packages: python3-venv, pcscd (PC/SC readers), build tools for pyscard;
# - system user `portgate` (groups via the unit: dialout, input);
# - /opt/portgate/venv with portgate installed, docs in /opt/portgate/docs;
# - /etc/portgate/gate.toml (0640 root:portgate) from config/gate.example.toml and the rulebooks,
#   never overwriting an edited file; the HMAC key /etc/portgate/gate.key (0600 portgate), copied
#   from the office (`portgate central add-gate --gate-id ...`), and the MQTT password file
#   /etc/portgate/mqtt.password (0600) are checked, not created;
# - udev rules /etc/udev/rules.d/99-portgate-readers.rules (edit the serial numbers in them);
# - systemd unit portgate-gate.service, enabled (started with --start);
# - with --display, the watchman's screen: unit portgate-display.service (after the gate), Chromium
#   and unclutter, /opt/portgate/bin/portgate-kiosk started by the desktop session's autostart
#   (labwc and LXDE-pi), screen blanking off (raspi-config). See docs/gate.md "The screen".
# Running it again upgrades the code and keeps the configuration. See docs/operations.md.
source "$(dirname "$0")/install-common.sh"
need_root
apt_install python3-venv python3-dev gcc swig libpcsclite-dev pcscd
create_user
install_venv
etc_dir
install_config "$SRC/config/gate.example.toml" "$ETC/gate.toml" 0640
secret_file "$ETC/gate.key" "gate HMAC key (from the office: portgate central add-gate)"
secret_file "$ETC/mqtt.password" "MQTT password of this gate (username = gate id)"

UDEV=$ROOT/etc/udev/rules.d
install -d -m 0755 "$UDEV"
if [ -e "$UDEV/99-portgate-readers.rules" ]; then
  say "keeping existing $UDEV/99-portgate-readers.rules"
else
  install -m 0644 "$SRC/systemd/99-portgate-readers.rules" "$UDEV/"
  say "wrote $UDEV/99-portgate-readers.rules: put your readers' serial numbers in it"
fi
if ! staging && command -v udevadm >/dev/null; then
  udevadm control --reload && udevadm trigger --subsystem-match=tty --subsystem-match=input
fi
if ! staging; then
  systemctl enable --now pcscd.socket >/dev/null 2>&1 || true
fi

install_units portgate-gate.service
if ! staging && [ "${SKIP_VENV:-0}" != 1 ]; then
  "$PREFIX/venv/bin/portgate" edge check-config "$ETC/gate.toml" || say "fix $ETC/gate.toml, then: systemctl start portgate-gate"
fi
enable_units portgate-gate.service

if [ "${WITH_DISPLAY:-0}" = 1 ]; then
  browser=chromium
  if ! staging && ! apt-cache show chromium >/dev/null 2>&1; then browser=chromium-browser; fi
  apt_install "$browser" unclutter
  install -d -m 0755 "$PREFIX/bin"
  install -m 0755 "$SRC/scripts/kiosk.sh" "$PREFIX/bin/portgate-kiosk"
  kiosk_line() {  # kiosk_line FILE LINE: add LINE to an autostart FILE once
    install -d -m 0755 "$(dirname "$1")"
    if [ -e "$1" ] && grep -qF "portgate-kiosk" "$1"; then
      say "keeping existing kiosk line in $1"
    else
      echo "$2" >> "$1"
      say "kiosk started from $1"
    fi
  }
  kiosk_line "$ROOT/etc/xdg/labwc/autostart" "/opt/portgate/bin/portgate-kiosk &"
  kiosk_line "$ROOT/etc/xdg/lxsession/LXDE-pi/autostart" "@/opt/portgate/bin/portgate-kiosk"
  if ! staging && command -v raspi-config >/dev/null; then
    raspi-config nonint do_blanking 1 || say "could not turn screen blanking off (raspi-config)"
  fi
  install_units portgate-display.service
  enable_units portgate-display.service
  say "screen installed: log the desktop user in automatically (raspi-config: System > Boot / Auto Login)"
fi
say "gate installed"

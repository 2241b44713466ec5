#!/usr/bin/env bash
# Install the portgate office (ingest + ledger) and its MQTT broker on Debian 12 (root, from a checkout):
#
#   sudo scripts/install-office.sh [--start]
#
# - Debian packages: python3-venv, mosquitto (+ clients), build tools;
# - system user `portgate`; /opt/portgate/venv with portgate installed;
# - /etc/portgate/central.toml (0640 root:portgate) from config/central.example.toml, the rulebooks,
#   /etc/portgate/keys (0700 portgate: one <gate_id>.key per gate, `portgate central add-gate`);
#   the broker password file /etc/portgate/mqtt-office.password (0600) is checked, not created;
# - mosquitto with the production configuration from config/mosquitto/: persistence, no anonymous
#   access, password file, ACL, TLS listener 8883 (/etc/mosquitto/conf.d/portgate.conf,
#   /etc/mosquitto/portgate.acl; certificates in /etc/mosquitto/certs/ are yours to provide);
# - systemd units portgate-central.service and portgate-office-web.service (the web application on
#   127.0.0.1:8080, behind your TLS reverse proxy), enabled (started with --start). For several ingest
#   processes enable portgate-central@1 ... @N instead (see docs/operations.md, "Scale-out").
# PostgreSQL is not installed here: point database_url at your database server.
source "$(dirname "$0")/install-common.sh"
need_root
apt_install python3-venv python3-dev gcc swig libpcsclite-dev mosquitto mosquitto-clients
create_user
install_venv
etc_dir
install_config "$SRC/config/central.example.toml" "$ETC/central.toml" 0640
# shellcheck disable=SC2046
install -d -m 0700 $(owner "$SVC_USER" "$SVC_USER") "$ETC/keys"
secret_file "$ETC/mqtt-office.password" "MQTT password of the office (user office)"

MQ=$ROOT/etc/mosquitto
install -d -m 0755 "$MQ" "$MQ/conf.d" "$MQ/certs"
install_config "$SRC/config/mosquitto/mosquitto.conf" "$MQ/conf.d/portgate.conf" 0644
install_config "$SRC/config/mosquitto/portgate.acl" "$MQ/portgate.acl" 0640
if [ ! -e "$MQ/portgate.passwd" ]; then
  : > "$MQ/portgate.passwd"
  chmod 0600 "$MQ/portgate.passwd"
  say "created empty $MQ/portgate.passwd: add users with mosquitto_passwd (one per gate, monitors)"
fi
if [ ! -e "$MQ/portgate-office.passwd" ]; then
  : > "$MQ/portgate-office.passwd"
  chmod 0600 "$MQ/portgate-office.passwd"
  say "created empty $MQ/portgate-office.passwd: add the office user with mosquitto_passwd (listener 8884)"
fi
if ! staging; then
  chown mosquitto: "$MQ/portgate.passwd" "$MQ/portgate-office.passwd" "$MQ/portgate.acl" 2>/dev/null || true
  for f in "$MQ"/certs/broker.crt "$MQ"/certs/broker.key "$MQ"/certs/ca.crt; do
    [ -e "$f" ] || say "MISSING TLS file $f (mosquitto will not start its 8883 and 8884 listeners without it)"
  done
fi

install_units portgate-central.service portgate-central@.service portgate-office-web.service
if ! staging && [ "${SKIP_VENV:-0}" != 1 ]; then
  "$PREFIX/venv/bin/portgate" central check-config "$ETC/central.toml" || say "fix $ETC/central.toml, then: systemctl start portgate-central"
fi
enable_units mosquitto.service portgate-central.service portgate-office-web.service
say "office installed"

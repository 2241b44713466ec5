#!/usr/bin/env bash
# The watchman's screen in Chromium kiosk mode, started by the desktop session's autostart
# (installed as /opt/portgate/bin/portgate-kiosk by `scripts/install-gate.sh --display`; see
# docs/gate.md "The screen"). Waits for the screen service on loopback, then shows it full screen.
set -u
URL=${PORTGATE_DISPLAY_URL:-http://127.0.0.1:8090/}
hostport=${URL#http://}
hostport=${hostport%%/*}
host=${hostport%:*}
port=${hostport##*:}

# Screen blanking and power saving off (X11; under Wayland/labwc `raspi-config nonint do_blanking 1`,
# run by the installer, does it).
if [ -n "${DISPLAY:-}" ] && command -v xset >/dev/null; then
  xset s off; xset s noblank; xset -dpms
fi
# The cursor: the page hides it (CSS cursor: none); on X11 unclutter also hides it at once.
if [ -n "${DISPLAY:-}" ] && command -v unclutter >/dev/null; then
  unclutter -idle 0.1 -root &
fi
# The screen service starts after the gate: wait for it (up to 2 minutes) rather than show an error.
for _ in $(seq 1 120); do
  if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then break; fi
  sleep 1
done
BROWSER=$(command -v chromium || command -v chromium-browser) || { echo "kiosk: chromium not installed" >&2; exit 1; }
exec "$BROWSER" --kiosk --app="$URL" --noerrdialogs --disable-infobars --no-first-run --incognito \
  --disable-translate --disable-features=Translate --disable-pinch --overscroll-history-navigation=0 \
  --check-for-update-interval=31536000 --password-store=basic --disable-session-crashed-bubble

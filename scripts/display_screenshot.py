"""Take the README's screenshot of the watchman's screen (docs/img/display.png).

A real gate (serial readers on ptys, demo data) and its screen; three reads (an admit, a denial, a
borrowed card caught by card + badge, G4), then headless chromium (testkit.browser) saves
the page at 1280x800. Photos are generated pictures (no real person). ``--kiosk DIR`` also saves
the states of an 800x480 gangway panel there (the borrowed card held for "Ciente", idle, a denial,
the inspector's card with his name and photo, a reader unplugged, the office's enrol mode and the card
read in it): ``kiosk-*.png``, to look at before a change is merged.

    .venv/bin/python scripts/display_screenshot.py [--out docs/img/display.png] [--lang pt|en] [--kiosk DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def kiosk(gate, browser, out: Path, lang: str, held: int) -> None:
    """The 800x480 panel's states as ``out/kiosk-<state>.png``."""
    out.mkdir(parents=True, exist_ok=True)
    page = browser.new_page(viewport={"width": 800, "height": 480})
    page.goto(f"{gate.url}?lang={lang}")

    def shot(name: str) -> None:
        page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth)")
        page.screenshot(path=str(out / f"kiosk-{name}.png"))

    page.wait_for_selector(f"#now[data-seq='{held}'][data-held='1']")
    shot("borrowed-held")
    page.locator("#ack").click()
    page.wait_for_selector("#now[data-state='idle']")
    shot("idle")
    gate.pair("0B0B03BADE", "0A04A10003")  # a denial with its reason
    seq = gate.wait_taps(4)[-1].seq
    page.wait_for_selector(f"#now[data-seq='{seq}']")
    shot("denial")
    page.locator("#ack").click()
    gate.ptys["badge"].unplug()
    page.wait_for_selector("#now[data-state='reader-fault']", timeout=15_000)
    shot("reader-fault")
    gate.ptys["badge"].plug()
    page.wait_for_selector("#now[data-state='idle']", timeout=15_000)
    enrol(gate)  # the office starts enrol mode at this gate (issue 34)
    page.wait_for_selector("#now[data-state='enrol']", timeout=20_000)
    page.wait_for_selector("#st-enrol")
    shot("enrol")
    gate.tap("0C0C0C0C01", "control")  # a blank card: refused, offered to the office
    seq = gate.wait_taps(5)[-1].seq
    page.wait_for_selector(f"#now[data-seq='{seq}']")
    shot("enrol-read")
    page.wait_for_selector("#now[data-state='idle']", timeout=15_000)
    gate.tap("0F1F5CA001", "control")  # the union inspector's card
    seq = gate.wait_taps(6)[-1].seq
    page.wait_for_selector(f"#now[data-seq='{seq}']")
    page.wait_for_selector("#inspector-countdown")
    shot("inspector")
    page.close()


def enrol(gate) -> None:
    """Publish the office's ``EnrolCommand`` (start, 120 s) on the gate's cmd topic."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from central.broadcast.publisher import Publisher
    from wire.downlink import EnrolCommand

    client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="office-shots", protocol=mqtt.MQTTv5)
    client.connect("127.0.0.1", gate.broker.port)
    client.loop_start()
    try:
        now = dt.datetime.now(dt.UTC)
        Publisher(client, "santos").command("g-aurora", EnrolCommand(
            session="enrol-1", action="start", registration="V009", until=now + dt.timedelta(seconds=120),
            timeout_s=120, at=now)).wait_for_publish(10)
    finally:
        client.disconnect()
        client.loop_stop()


def main() -> None:
    from edge.sync.photos import PhotoStore, sha256_hex
    from testkit.browser import launch_chromium
    from app.demo.mosquitto import Mosquitto
    from central.broadcast.csv_source import inspectors_csv
    from edge.sync.inspectors import InspectorFile
    from testkit.display import DEMO, GateWithScreen, png
    from wire.downlink import PhotoRef

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "display.png"))
    ap.add_argument("--lang", choices=["pt", "en"], default="pt")
    ap.add_argument("--kiosk", help="also save the 800x480 panel's states in this directory")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker = Mosquitto(Path(tmp) / "broker")  # the office's enrol command reaches the gate (kiosk-enrol)
        broker.start()
        gate = GateWithScreen(Path(tmp) / "gate", extra=f'\n[mqtt]\nhost = "127.0.0.1"\nport = {broker.port}\n'
                                                         'client_id = "gate-g-aurora"\n')
        gate.broker = broker
        InspectorFile(gate.state).replace(inspectors_csv(DEMO / "cards.csv"))  # as the roster downlink keeps them
        store = PhotoStore(gate.state)
        refs = []
        for n, reg in enumerate(["V001", "V002", "V003", "F001"], 1):
            data = png(n * 40, size=120)
            store.put(sha256_hex(data), data, "image/png")
            refs.append(PhotoRef(registration=reg, sha256=sha256_hex(data), size=len(data), media_type="image/png"))
        store.replace_index(1, refs, dt.datetime.now(dt.UTC))
        store.close()
        try:
            gate.start_gate()
            gate.start_display()
            gate.pair("0B0B02BADE", "0A04A10002")  # admit
            gate.wait_taps(1)
            gate.pair("0B0B03BADE", "0A04A10003")  # deny: dispatched to the other ship
            gate.wait_taps(2)
            gate.pair("0B0B02BADE", "0A04A10001")  # V002's badge with V001's card: borrowed card
            last = gate.wait_taps(3)[-1]
            with launch_chromium() as browser:
                page = browser.new_page(viewport={"width": 1280, "height": 800})
                page.goto(f"{gate.url}?lang={args.lang}")
                page.wait_for_selector(f"#now[data-seq='{last.seq}']")
                page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth)")
                Path(args.out).parent.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=args.out)
                if args.kiosk:
                    kiosk(gate, browser, Path(args.kiosk), args.lang, last.seq)
        finally:
            gate.stop()
            broker.kill()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

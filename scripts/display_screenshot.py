"""Take the README's screenshot of the watchman's screen (docs/img/display.png).

A real gate (serial readers on ptys, demo data) and its screen; three reads (an admit, a denial, a
borrowed card caught by card + badge, G4), then headless chromium (testkit.browser) saves
the page at 1280x800. Photos are generated pictures (no real person).

    .venv/bin/python scripts/display_screenshot.py [--out docs/img/display.png] [--lang pt|en]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main() -> None:
    from edge.sync.photos import PhotoStore, sha256_hex
    from testkit.browser import launch_chromium
    from testkit.display import GateWithScreen, png
    from wire.downlink import PhotoRef

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(ROOT / "docs" / "img" / "display.png"))
    ap.add_argument("--lang", choices=["pt", "en"], default="pt")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        gate = GateWithScreen(Path(tmp) / "gate")
        store = PhotoStore(gate.state)
        refs = []
        for n, reg in enumerate(["V001", "V002", "V003"], 1):
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
        finally:
            gate.stop()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

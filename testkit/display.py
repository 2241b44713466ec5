"""A real gate with two serial readers on pseudo-terminals (control card + badge) and its screen
(``portgate edge display``) as separate processes: used by the screen tests, the display benchmark
and the tests.

``GateWithScreen(root)`` writes a gate.toml (demo CSV seed, scripted clock at ``T0``, file
indicator, card + badge readers on ptys), ``start_gate()`` / ``start_display()`` start the real
processes, ``tap(uid, kind)`` sends an EM4100 frame on the right pty, ``wait_seq(n)`` waits until
the journal holds seq ``n``. ``png(seed)`` makes a small, valid, distinct PNG image.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from edge.scripted_clock import set_scripted_time
from portgate.config import write_secret
from app.demo.pty_reader import PtyReader
from app.demo.photos import png  # noqa: F401  (the screen tests import it from here)

HOLD_S = 0.3  # seconds a card is held: 4-5 frames 65 ms apart
DEMO = Path(__file__).resolve().parents[1] / "config" / "demo"
# 2026-03-15 01:20 local (America/Sao_Paulo) = 04:20 UTC: period 01-07 of the demo escala
T0 = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)
PORTGATE = [sys.executable, "-m", "app.cli"]


class GateWithScreen:
    """A gate process + its screen process under ``root`` (see module doc)."""

    def __init__(self, root: Path, *, gate_id: str = "g-aurora", ship: str = "9300001",
                 card_and_badge: bool = True, extra: str = "", idle_after_s: float | None = None) -> None:
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        self.state = root / "state"
        self.clock_file = root / "clock.txt"
        set_scripted_time(self.clock_file, T0)
        write_secret(root / "gate.key", b"display-test-key")
        self.ptys = {k: PtyReader(root / f"tty-{k}") for k in ("control", "badge")}
        for p in self.ptys.values():
            p.plug()
        rulebook = root / "gate-rules.toml"
        rulebook.write_text('name = "screen-test"\n[[version]]\neffective_from = 2026-01-01\n'
                            f"[version.g4]\ncard_and_badge_required = {str(card_and_badge).lower()}\n")
        readers = "".join(f'[[readers]]\nid = "r-{k}"\nkind = "{k}"\ndriver = "serial"\ndevice = "{p.path}"\n\n'
                          for k, p in self.ptys.items())
        self.config = root / "gate.toml"
        self.config.write_text(
            f'port = "santos"\ngate_id = "{gate_id}"\nship = "{ship}"\nstate_dir = "state"\n'
            f'key_file = "gate.key"\nrulebook = "{rulebook}"\nindicator = "file"\nindicator_file = "shown.jsonl"\n'
            f'clock = "scripted"\nclock_file = "{self.clock_file}"\nclock_trust = "always"\nlog_json = true\n'
            f"{extra}\n"
            + (f"[display]\nidle_after_s = {idle_after_s}\n\n" if idle_after_s is not None else "")
            + f'[seed]\nworkers = "{DEMO / "workers.csv"}"\ncards = "{DEMO / "cards.csv"}"\n'
            f'escala = "{DEMO / "escala.csv"}"\n\n{readers}'
        )
        self.gate: subprocess.Popen | None = None
        self.display: subprocess.Popen | None = None
        self.url: str | None = None
        self._last_tap: dict[str, float] = {}

    # -- processes -------------------------------------------------------------------------------

    def start_gate(self, timeout: float = 60.0) -> None:
        log = open(self.root / "gate.log", "ab")
        self.gate = subprocess.Popen([*PORTGATE, "edge", "run", "--config", str(self.config)],
                                     stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while b"gate_started" not in (self.root / "gate.log").read_bytes():
            if self.gate.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gate did not start; see {self.root / 'gate.log'}")
            time.sleep(0.05)

    def start_display(self, timeout: float = 60.0, *, port: int = 0) -> str:
        """Start the screen on ``port`` (0: any free port); returns its URL once it answers."""
        url_file = self.root / "display.url"
        url_file.unlink(missing_ok=True)
        log = open(self.root / "display.log", "ab")
        self.display = subprocess.Popen(
            [*PORTGATE, "edge", "display", "--config", str(self.config), "--port", str(port), "--url-file", str(url_file)],
            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while not url_file.exists():
            if self.display.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"display did not start; see {self.root / 'display.log'}")
            time.sleep(0.05)
        self.url = url_file.read_text().strip()
        import urllib.request

        while True:  # the socket is bound before uvicorn serves: wait for the first answer
            try:
                with urllib.request.urlopen(self.url + "state.json", timeout=2):
                    return self.url
            except OSError:
                if self.display.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"display does not answer; see {self.root / 'display.log'}") from None
                time.sleep(0.05)

    def kill_display(self, sig: int = signal.SIGKILL) -> None:
        if self.display is not None and self.display.poll() is None:
            os.killpg(self.display.pid, sig)
            self.display.wait(30)

    def stop(self) -> None:
        for proc in (self.display, self.gate):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
        for p in self.ptys.values():
            p.unplug()

    # -- taps ------------------------------------------------------------------------------------

    def tap(self, uid: str, kind: str = "control", *, at: dt.datetime | None = None) -> None:
        """Present a card to the reader ``kind``; waits out the gate's debounce (3 s, G9) for a
        card presented again."""
        last = self._last_tap.get(uid)
        if last is not None:
            time.sleep(max(0.0, last + 3.5 - time.monotonic()))
        self._last_tap[uid] = time.monotonic()
        if at is not None:
            set_scripted_time(self.clock_file, at)
        # a card held in front of the reader: the frame repeats, so the reader confirms it (confirm_ms)
        self.ptys[kind].hold(uid, HOLD_S)

    def pair(self, badge_uid: str, card_uid: str, *, gap_s: float = 0.4) -> None:
        """Badge, then control card (the order the gate pairs, G4): the readers are separate
        threads, so the card follows after ``gap_s`` for the badge to reach the gate first."""
        self.tap(badge_uid, "badge")
        time.sleep(gap_s)
        self.tap(card_uid, "control")

    def journal_rows(self) -> list[tuple]:
        """Every journal row ``(seq, event_id, kind, body)`` (read-only)."""
        path = self.state / "journal.db"
        if not path.exists():
            return []
        with contextlib.closing(sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)) as db:
            return db.execute("SELECT seq, event_id, kind, body FROM journal ORDER BY seq").fetchall()

    def last_seq(self) -> int:
        rows = self.journal_rows()
        return rows[-1][0] if rows else 0

    def wait_seq(self, seq: int, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.last_seq() < seq:
            if time.monotonic() > deadline:
                raise TimeoutError(f"journal did not reach seq {seq} (at {self.last_seq()}); see {self.root}/gate.log")
            if self.gate is not None and self.gate.poll() is not None:
                raise RuntimeError(f"gate exited ({self.gate.returncode}); see {self.root}/gate.log")
            time.sleep(0.02)

    def taps(self) -> list:
        """The journal's tap events, decoded (``wire.events.Event``), in seq order."""
        from wire.events import decode

        return [decode(body) for _seq, _id, kind, body in self.journal_rows() if kind == "tap"]

    def wait_taps(self, n: int, timeout: float = 30.0) -> list:
        """Wait until the journal holds ``n`` tap events; returns them."""
        deadline = time.monotonic() + timeout
        while len(taps := self.taps()) < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"journal has {len(taps)} taps, not {n}; see {self.root}/gate.log")
            if self.gate is not None and self.gate.poll() is not None:
                raise RuntimeError(f"gate exited ({self.gate.returncode}); see {self.root}/gate.log")
            time.sleep(0.02)
        return taps


# -- the main area as the screen pushed it --------------------------------------------------------

RECORD_MAIN = """(texts) => { window.__shown = []; const wrap = document.getElementById('now-wrap');
    const note = () => { const n = document.getElementById('now'), got = {};
        for (const [key, sel] of Object.entries(texts)) { const e = n.querySelector(sel); got[key] = e && e.innerText; }
        window.__shown.push({seq: +n.dataset.seq, state: n.dataset.state || 'read', outcome: n.dataset.outcome,
                             held: n.dataset.held || null, words: n.querySelector('.words').innerText,
                             at: performance.now(), ...got}); };
    note(); new MutationObserver(note).observe(wrap, {childList: true}); }"""


def record_main(page, **texts: str) -> None:
    """Note every main area the screen page ``page`` shows, as it is pushed (swapped in): its seq,
    state, outcome, held ("1" or None), words, the page's time (ms) and, per keyword, the text of that CSS selector in
    it. A read shown for ``idle_after_s`` is then seen even when the test looks later than that."""
    page.evaluate(RECORD_MAIN, texts)


def main_shown(page, seq: int, *, then_idle: bool = True, timeout_s: float = 60.0) -> list[dict]:
    """Wait until the page recorded (``record_main``) the read ``seq`` (and, with ``then_idle``, the
    idle area after it); returns the areas shown from that read on. Playwright's TimeoutError after
    ``timeout_s``."""
    page.wait_for_function("""([seq, idle]) => { const s = window.__shown, i = s.findIndex(x => x.seq === seq);
        return i >= 0 && (!idle || s.slice(i).some(x => x.state === 'idle')); }""", arg=[seq, then_idle],
                           timeout=timeout_s * 1000)
    shown = page.evaluate("() => window.__shown")
    return shown[[x["seq"] for x in shown].index(seq):]

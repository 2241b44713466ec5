"""RULES.md G2 and G6/G9 as amended, through a real gate process: EM4100 serial readers on
pseudo-terminals (an ordinary control reader and one declared ``direction = "out"``), a real
mosquitto, the office ingest writing the ledger, and ``portgate pay`` (the ``portgate demo``
harness playing a scenario written for these rules). Checked: what the watchman was shown, the
gate's journal, the ledger's shifts and the pay.

- G2: a lost card shown while its holder is aboard is DENY + RETAIN_CARD and his shift stays open
  (his own exit closes it, paid in full); a replaced card shown past the late tolerance records no
  exit with NO_ENTRY.
- G6/G9: an entry attempt past the late tolerance is DENY LATE_ARRIVAL (no shift); only the exit
  reader records an exit with no entry (EXIT + NO_ENTRY: the shift is held, not paid).
- G9/P: an exit two hours before the period end is EARLY_EXIT; the statement is computed and on
  hold for the office's review.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing

import msgspec

from app.demo.scenario import DEFAULT_DIR
from testkit.cli import run_here
from wire.events import Event, TapPayload

OLD_V011 = "0A04A1F011"  # V011's lost card (he works on his new one)
OLD_V012 = "0A04A1F012"  # V012's replaced card

TAPS = f"""at,gate_id,reader,uid,direction
2026-03-15T06:55:00-03:00,g-aurora,control,0A04A10008,
2026-03-15T07:02:00-03:00,g-aurora,control,0A04A10001,out
2026-03-15T08:30:00-03:00,g-aurora,control,0A04A10005,
2026-03-15T12:40:00-03:00,g-aurora,control,0A04A1000B,
2026-03-15T12:45:00-03:00,g-aurora,control,{OLD_V011},
2026-03-15T13:02:00-03:00,g-aurora,control,0A04A10008,out
2026-03-15T14:30:00-03:00,g-aurora,control,{OLD_V012},
2026-03-15T18:45:00-03:00,g-aurora,control,0A04A1000F,
2026-03-15T19:02:00-03:00,g-aurora,control,0A04A1000B,
2026-03-15T23:00:00-03:00,g-aurora,control,0A04A1000F,
"""
EXPECTED = """taps_line,gate_id,registration,decision,rules_failed,flags
2,g-aurora,V008,admit,,
3,g-aurora,V001,exit,G9,NO_ENTRY
4,g-aurora,V005,deny,G6,LATE_ARRIVAL
5,g-aurora,V011,admit,,
6,g-aurora,V011,deny,G2,RETAIN_CARD
7,g-aurora,V008,exit,,
8,g-aurora,V012,deny,G2 G6,RETAIN_CARD LATE_ARRIVAL
9,g-aurora,V015,admit,,
10,g-aurora,V011,exit,,
11,g-aurora,V015,exit,G9,EARLY_EXIT
"""
SCENARIO = """port = "santos"
timezone = "America/Sao_Paulo"
day = 2026-03-15

[[gates]]
gate_id = "g-aurora"
ship = "9300001"
readers = "serial"
card_and_badge_required = false
exit_reader = true

[expected_pay]
V008 = "270.00"   # 07-13 Sunday, berthed, exit 13:02 at the exit reader
V011 = "270.00"   # 13-19 Sunday: his shift survived the lost card at 12:45
V015 = "315.00"   # 19-01 Sunday night, out at 23:00: paid as computed, on hold (EARLY_EXIT)
"""


def _scenario(tmp_path):
    sc = tmp_path / "scenario"
    sc.mkdir()
    for name in ("workers.csv", "escala.csv"):
        shutil.copy(DEFAULT_DIR / name, sc / name)
    cards = (DEFAULT_DIR / "cards.csv").read_text(encoding="utf-8")
    cards += f"{OLD_V011},control,V011,lost\n{OLD_V012},control,V012,replaced\n"
    (sc / "cards.csv").write_text(cards, encoding="utf-8")
    (sc / "taps.csv").write_text(TAPS, encoding="utf-8")
    (sc / "expected.csv").write_text(EXPECTED, encoding="utf-8")
    (sc / "scenario.toml").write_text(SCENARIO, encoding="utf-8")
    return sc


def _taps(rows) -> list[tuple[str, str | None, list[str]]]:
    out = []
    for (body,) in rows:
        ev = msgspec.json.decode(body, type=Event)
        if isinstance(ev.payload, TapPayload):
            out.append((ev.payload.decision, ev.payload.registration, ev.payload.flags))
    return out


def test_g2_and_g6_g9_through_a_real_gate_broker_office_and_pay(tmp_path):
    run_dir = tmp_path / "run"
    done = subprocess.run([sys.executable, "-m", "app.cli", "demo", "--run-dir", str(run_dir),
                           "--scenario", str(_scenario(tmp_path)), "--no-outage"],
                          capture_output=True, text=True, timeout=600)
    out = done.stdout
    assert done.returncode == 0, out[-4000:] + done.stderr[-2000:]
    assert "Todas as decisões como esperado" in out
    assert "NEGADO — cartão bloqueado (perdido). Retenha o cartão e chame o fiscal. [G2]" in out
    assert "NEGADO — cartão bloqueado (substituído)" in out
    assert "chegada após a tolerância de atraso (período 07-13" in out

    # The gate's journal: what was decided, in order; nothing but the two exits closes a shift.
    with closing(sqlite3.connect(run_dir / "g-aurora" / "state" / "journal.db")) as db:
        journal = _taps(db.execute("SELECT body FROM journal WHERE kind = 'tap' ORDER BY seq"))
    assert journal == [
        ("admit", "V008", []),
        ("exit", "V001", ["NO_ENTRY"]),
        ("deny", "V005", ["LATE_ARRIVAL"]),
        ("admit", "V011", []),
        ("deny", "V011", ["RETAIN_CARD"]),
        ("exit", "V008", []),
        ("deny", "V012", ["RETAIN_CARD", "LATE_ARRIVAL"]),
        ("admit", "V015", []),
        ("exit", "V011", []),
        ("exit", "V015", ["EARLY_EXIT"]),
    ]

    # The ledger's shifts: V011's admit 12:40 and exit 19:02 in one shift; V001 held (NO_ENTRY);
    # no shift at all for V005 (refused) or V012 (a blocked card records nothing).
    with closing(sqlite3.connect(run_dir / "ledger.db")) as db:
        shifts = {r[0]: r[1:] for r in db.execute(
            "SELECT registration, closed_by, held, admit_at IS NOT NULL, exit_at IS NOT NULL "
            "FROM shifts")}
        flags = {r[0]: r[1] for r in db.execute(
            "SELECT s.registration, group_concat(f.flag) FROM shifts s "
            "JOIN shift_flags f ON f.shift_id = s.shift_id GROUP BY s.registration")}
    assert shifts == {
        "V008": ("exit", 0, 1, 1),
        "V011": ("exit", 0, 1, 1),
        "V001": ("exit", 1, 0, 1),
        "V015": ("exit", 0, 1, 1),
    }
    assert flags == {"V001": "NO_ENTRY", "V015": "EARLY_EXIT"}

    # The pay: V011 paid in full, V001 held and not paid, V015 computed and on hold for review.
    # In this process (testkit.cli.run_here): the demo above ran the installed ``portgate pay``.
    pay = run_here(["pay", "--db", f"sqlite:///{run_dir / 'ledger.db'}", "--from", "2026-03-15",
                    "--to", "2026-03-15", "--no-rebuild"])
    assert pay.returncode == 0, pay.stderr
    rows = [json.loads(line) for line in pay.stdout.splitlines()]
    totals = {r["registration"]: r["amount"] for r in rows if r["rule"] in ("TOTAL", "HELD")}
    assert totals == {"V008": "270.00", "V011": "270.00", "V001": None, "V015": "315.00"}
    held = [r for r in rows if r["rule"] == "HELD"][0]
    assert held["flags"][0].startswith("NO_ENTRY")
    holds = {r["registration"]: r.get("hold") for r in rows if r["rule"] == "TOTAL"}
    assert holds == {"V008": None, "V011": None, "V015": (
        "EARLY_EXIT: exit at 23:00, 120 min before the period end 01:00 (G9; 83.611 arts. 9, 20 b, e)")}
    assert "RETIDO: EARLY_EXIT" in out  # the demo console in pt-BR (demo.on_hold, docs/i18n.md)

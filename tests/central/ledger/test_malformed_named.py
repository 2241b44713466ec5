"""An undecodable stored event stops ``pay close`` and ``evidence export`` with one line naming its
ledger id, gate and seq (exit 2), on a real exported ledger whose event row is then damaged."""

from __future__ import annotations

import shutil

from sqlalchemy import select, update

from central.db import make_engine
from central.ledger.schema import events
from tests.central.evidence.test_bad_bundles import cli_here, ledger  # noqa: F401  (module fixture)


def _damaged(ledger, tmp_path):  # noqa: F811
    url, keys = ledger
    copy = tmp_path / "ledger.db"
    shutil.copy(url.removeprefix("sqlite:///"), copy)
    copied = f"sqlite:///{copy}"
    engine = make_engine(copied)
    with engine.begin() as conn:
        row = conn.execute(select(events.c.id, events.c.gate_id, events.c.seq)
                           .order_by(events.c.id.desc()).limit(1)).one()
        conn.execute(update(events).where(events.c.id == row[0])
                     .values(decision="admit", raw=b"{garbage"))  # an admit tap, undecodable
    engine.dispose()
    return copied, keys, row


def test_pay_close_names_the_undecodable_event(ledger, tmp_path):  # noqa: F811
    url, _keys, (eid, gate, seq) = _damaged(ledger, tmp_path)
    done = cli_here("pay", "close", "--db", url, "--from", "2026-03-15", "--to", "2026-03-15")
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert f"ledger event id {eid} (gate {gate}, seq {seq}): malformed tap event in the ledger" in line


def test_evidence_export_names_the_undecodable_event(ledger, tmp_path):  # noqa: F811
    url, keys, (eid, gate, seq) = _damaged(ledger, tmp_path)
    out = tmp_path / "out.zip"
    done = cli_here("evidence", "export", "--db", url, "--keys-dir", str(keys), "--registration", "R1",
               "--from", "2026-03-15", "--to", "2026-03-15", "--out", str(out))
    assert done.returncode == 2, done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert f"ledger event id {eid} (gate {gate}, seq {seq})" in line and "malformed" in line, line
    assert not out.exists()

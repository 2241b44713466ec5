"""Issue 36, item 1: ``evidence verify`` recomputes every shift from the gate-signed events of the
bundle and every current statement from those shifts, the bundle's rulebook and calendar. The
office moving an exit time in ``shifts.json`` and dropping the overtime line of the statement, then
re-signing the manifest with its own key, fails naming the shift and the line. A real ledger:
signed journal events through the ingest path, shifts rebuilt and paid by the ledger's own code."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
import shutil
import zipfile
from decimal import Decimal

import pytest

from central.db import make_engine
from central.evidence.bundle import export
from central.ingest.receipts import issue
from central.office_key import office_key
from central.evidence.verify import statement_digest, verify_bundle
from central.ingest.event_store import update_progress
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ledger.corrections import record_meal
from central.ledger.migrate import upgrade
from central.ledger.store import rebuild_shifts
from central.pay.cli import load_setup
from central.pay.statements_store import pay_from_ledger
from edge.journal import Journal
from edge.rules.model import Now
from portgate.l10n import money
from portgate.config import read_secret
from wire import chain
from wire.events import Dispatch, TapPayload

from .ingested import ingest

DAY = dt.date(2026, 3, 16)  # a Monday, no holiday
ADMIT = dt.datetime(2026, 3, 16, 10, 2, tzinfo=dt.UTC)  # 07:02 local, period 07-13
EXIT = dt.datetime(2026, 3, 16, 16, 40, tzinfo=dt.UTC)  # 13:40 local: 40 min extension, one hour paid (P2)
NOW = dt.datetime(2026, 3, 17, 12, 0, tzinfo=dt.UTC)
SHIFT = "V017/9300001/2026-03-16/07-13"



def _brl(cents: int) -> str:
    """The report's amount: pt-BR through Babel (``R$ 696,60``, docs/i18n.md)."""
    return money(Decimal(cents) / 100)

def _tap(decision, reg="V017", uid="0A04A10017"):
    return TapPayload(uid=uid, reader_id="r1", reader_kind="control", decision=decision, registration=reg,
                      message="LIBERADO" if decision == "admit" else "SAIDA", card_kind="control",
                      dispatch=Dispatch(date=DAY, period="07-13", ship="9300001", berth="berthed",
                                        voyage="long_haul", post="portalo", function="vigia"))


def build_ledger(base, taps):
    """(db url, keys dir, port setup) of a ledger holding ``taps`` ((payload, Now) each) journaled
    and signed at gate g1, ingested, the shifts of DAY rebuilt and paid by the ledger's code."""
    keys = base / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    j = Journal(base / "j.db", port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    evs = [j.append(payload, now=now) for payload, now in taps]
    j.close()
    url = f"sqlite:///{base / 'ledger.db'}"
    upgrade(url)
    engine = make_engine(url)
    assert ingest(engine, KeyRing(keys, recheck_s=0), evs, NOW) == []
    with engine.begin() as conn:
        update_progress(conn, ["g1"], NOW)
        issue(conn, office_key(keys), "santos", ["g1"], NOW)
    setup = load_setup(None)
    _port, rulebook, calendar = setup
    rebuild_shifts(engine, DAY, DAY, calendar.zone, now=NOW)
    pay_from_ledger(engine, DAY, DAY, rulebook, calendar, now=NOW)
    engine.dispose()
    return url, keys, setup


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """V017's admit and exit at gate g1, his shift paid P1 + P2 (the extension); V018 worked the
    same period."""
    return build_ledger(tmp_path_factory.mktemp("recompute"), [
        (_tap("admit"), Now(ADMIT, 1, True)),
        (_tap("admit", "V018", "0A04A10018"), Now(ADMIT + dt.timedelta(minutes=1), 2, True)),
        (_tap("exit", "V018", "0A04A10018"), Now(EXIT - dt.timedelta(hours=1), 3, True)),
        (_tap("exit"), Now(EXIT, 4, True))])


def _export(ledger, out):
    url, keys, (port, _rulebook, calendar) = ledger
    engine = make_engine(url)
    try:
        export(engine, keys, "V017", DAY, DAY, out, zone=calendar.zone, now=NOW, calendar=calendar,
               pay_rulebook=port.rulebook)
    finally:
        engine.dispose()
    return out


def _members(path):
    with zipfile.ZipFile(path) as zf:
        return {n: zf.read(n) for n in zf.namelist()}


def resign(files: dict[str, bytes], office, out):
    """The bundle ``files`` with every SHA-256 of the manifest redone and the manifest signed by
    ``office`` (what the holder of the office key can do)."""
    manifest = json.loads(files["manifest.json"])
    manifest["files"] = {n: hashlib.sha256(d).hexdigest() for n, d in files.items()
                         if n not in ("manifest.json", "manifest.sig")}
    body = json.dumps(manifest, sort_keys=True, indent=1).encode() + b"\n"
    files = {**files, "manifest.json": body, "manifest.sig": office.sign(body).hex().encode() + b"\n"}
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return out


def test_the_genuine_bundle_recomputes_equal(ledger, tmp_path):
    out = _export(ledger, tmp_path / "v017.zip")
    files = _members(out)
    (st,) = json.loads(files["statements.json"])
    assert [ln["rule"] for ln in st["lines"]] == ["P1", "P2"]
    assert json.loads(files["calendar.json"])["timezone"] == "America/Sao_Paulo"
    failures, notes = verify_bundle(out)
    assert failures == [], failures
    assert f"statement {SHIFT}@decreto-83611-1979: 2 line(s), {_brl(st['total_cents'])}, equal to the pay " \
           "recomputed from the gate-signed events" in notes
    assert any(re.search(r"\), R\$ \d{1,3}(\.\d{3})*,\d\d, equal", n) for n in notes), notes  # pt-BR amount
    assert "1 shift(s) of V017 recomputed from the gate-signed events (2026-03-16..2026-03-16, zone " \
           "America/Sao_Paulo)" in notes
    book = files["rulebooks/pay/decreto-83611-1979.toml"]
    assert (f"pay rulebook decreto-83611-1979: rulebooks/pay/decreto-83611-1979.toml SHA-256 "
            f"{hashlib.sha256(book).hexdigest()} (compare with the published rulebook)") in notes


def test_an_earlier_exit_and_a_dropped_overtime_line_re_signed_by_the_office_fail(ledger, tmp_path):
    out = _export(ledger, tmp_path / "v017.zip")
    files = _members(out)
    shifts = json.loads(files["shifts.json"])
    shifts[0]["exit_at"] = "2026-03-16T16:00:00Z"  # 13:00 local: no extension
    statements = json.loads(files["statements.json"])
    st = statements[0]
    p2 = next(ln for ln in st["lines"] if ln["rule"] == "P2")
    st["lines"] = [ln for ln in st["lines"] if ln["rule"] != "P2"]
    st["total_cents"] -= p2["amount_cents"]
    st["digest"] = statement_digest(st)  # consistent with its lines: the old checks pass
    files = {**files, "shifts.json": json.dumps(shifts).encode(), "statements.json": json.dumps(statements).encode()}
    _url, keys, _setup = ledger
    forged = resign(files, office_key(keys), tmp_path / "forged.zip")
    failures, _notes = verify_bundle(forged)
    sid = f"{SHIFT}@decreto-83611-1979"
    assert (f"shifts.json {SHIFT}: exit_at is '2026-03-16T16:00:00Z', the gate-signed events give "
            "'2026-03-16T16:40:00Z'") in failures
    assert any(f.startswith(f"statements.json {sid}: line 2 P2 (") and f.endswith(
        f"{_brl(p2['amount_cents'])} is missing (recomputed from the gate-signed events)") for f in failures), failures
    assert (f"statements.json {sid}: pays {_brl(st['total_cents'])} without adjustments; the gate-signed "
            f"events and rulebook decreto-83611-1979 give {_brl(st['total_cents'] + p2['amount_cents'])}"
            ) in failures
    assert len(failures) == 3, failures


def test_a_changed_amount_a_removed_shift_and_a_rulebook_swapped_are_named(ledger, tmp_path):
    out = _export(ledger, tmp_path / "v017.zip")
    files = _members(out)
    _url, keys, _setup = ledger
    statements = json.loads(files["statements.json"])
    statements[0]["lines"][0]["amount_cents"] -= 1000
    statements[0]["total_cents"] -= 1000
    statements[0]["digest"] = statement_digest(statements[0])
    one = resign({**files, "statements.json": json.dumps(statements).encode()}, office_key(keys), tmp_path / "a.zip")
    failures, _ = verify_bundle(one)
    assert any(f.startswith(f"statements.json {SHIFT}@decreto-83611-1979: line 1 P1 ") for f in failures), failures
    gone = resign({**files, "shifts.json": b"[]", "statements.json": b"[]"}, office_key(keys), tmp_path / "b.zip")
    failures, _ = verify_bundle(gone)
    assert failures == [f"shifts.json: shift {SHIFT} of the gate-signed events is missing"], failures
    book = files["rulebooks/pay/decreto-83611-1979.toml"].replace(b'functions = { vigia = "1.0"',
                                                                  b'functions = { vigia = "0.5"')
    assert book != files["rulebooks/pay/decreto-83611-1979.toml"]
    cheap = resign({**files, "rulebooks/pay/decreto-83611-1979.toml": book}, office_key(keys), tmp_path / "c.zip")
    failures, notes = verify_bundle(cheap)
    assert any(f.startswith(f"statements.json {SHIFT}@decreto-83611-1979: line 1 P1 ") for f in failures), failures
    assert any(hashlib.sha256(book).hexdigest() in n for n in notes)  # the court compares it with the published one


def test_an_office_meal_correction_is_applied_and_named(ledger, tmp_path):
    url, keys, (port, rulebook, calendar) = ledger
    copy = tmp_path / "ledger.db"  # the module's ledger stays as it is
    shutil.copy(url.removeprefix("sqlite:///"), copy)
    ledger = (f"sqlite:///{copy}", keys, (port, rulebook, calendar))
    engine = make_engine(ledger[0])
    record_meal(engine, SHIFT, worked=True, actor="chefe.silva", reason="worked through the meal", now=NOW)
    rebuild_shifts(engine, DAY, DAY, calendar.zone, now=NOW)
    pay_from_ledger(engine, DAY, DAY, rulebook, calendar, now=NOW)
    engine.dispose()
    out = _export(ledger, tmp_path / "meal.zip")
    failures, notes = verify_bundle(out)
    assert failures == [], failures
    assert any(n.startswith(f"shift {SHIFT}: office correction, meal interval worked (P6), recorded by chefe.silva")
               for n in notes), notes
    assert any(n.startswith(f"statement {SHIFT}@decreto-83611-1979#v2: 3 line(s)") for n in notes), notes
    files = _members(out)
    no_meal = resign({**files, "corrections.json": b"[]"}, office_key(keys), tmp_path / "nomeal.zip")
    failures, _ = verify_bundle(no_meal)
    assert any(f.startswith(f"shifts.json {SHIFT}: meal_worked is True") for f in failures), failures
    assert any("line 3 P6" in f for f in failures), failures


def test_an_untrusted_clock_is_placed_from_the_same_anchor_as_in_the_ledger(tmp_path):
    """V017's admit has no trusted clock: the ledger places it from the nearest trusted event of
    the boot, V018's tap just before it (seq 1; the exit at seq 3 is as near, the earlier wins),
    whose clock disagrees with the exit's by 10 min. The export carries that anchor although it is
    not V017's, so verify places the admit the same way."""
    mono = 10**12
    led = build_ledger(tmp_path, [
        (_tap("deny", "V018", "0A04A10018"), Now(ADMIT - dt.timedelta(minutes=5), mono, True)),
        (_tap("admit"), Now(dt.datetime(2000, 1, 1, tzinfo=dt.UTC), mono + 300 * 10**9, False)),
        (_tap("exit"), Now(EXIT, mono + (EXIT - ADMIT).seconds * 10**9 + 600 * 10**9, True))])
    out = _export(led, tmp_path / "v017.zip")
    files = _members(out)
    (shift,) = json.loads(files["shifts.json"])
    assert shift["admit_at"] == "2026-03-16T10:02:00Z" and any("placed from seq 1" in f for f in shift["flags"])
    assert len(files["events/g1.jsonl"].splitlines()) == 3  # seq 1, the anchor, is in the bundle
    failures, _notes = verify_bundle(out)
    assert failures == [], failures


@pytest.mark.parametrize("edit, named", [
    (lambda st, cal: ({**st, "lines": ["x"]}, cal), "shifts.json/statements.json: malformed, not recomputable"),
    (lambda st, cal: (st, {**cal, "years": [2030, 2031]}), "cannot be recomputed with rulebook decreto-83611-1979"),
    (lambda st, cal: (st, {**cal, "timezone": "Mars/Olympus"}), "calendar.json: not a holiday calendar"),
], ids=["line-not-object", "calendar-years", "zone"])
def test_malformed_statements_or_calendar_are_a_named_failure_never_a_traceback(ledger, tmp_path, edit, named):
    files = _members(_export(ledger, tmp_path / "v017.zip"))
    statements = json.loads(files["statements.json"])
    statements[0], calendar = edit(statements[0], json.loads(files["calendar.json"]))
    bad = resign({**files, "statements.json": json.dumps(statements).encode(),
                  "calendar.json": json.dumps(calendar).encode()}, office_key(ledger[1]), tmp_path / "bad.zip")
    failures, _ = verify_bundle(bad)
    assert any(named in f for f in failures), failures


def test_a_shift_the_office_holds_for_a_recorded_break_recomputes_equal(ledger, tmp_path):
    """A break recorded against V017's exit (here inserted as the audit would) flags his shift
    CHAIN_BREAK and holds the statement: the office's flag is carried, the pay still recomputes."""
    from sqlalchemy import insert, select

    from central.ledger.schema import chain_breaks, events

    url, keys, (port, rulebook, calendar) = ledger
    copy = tmp_path / "ledger.db"
    shutil.copy(url.removeprefix("sqlite:///"), copy)
    held = (f"sqlite:///{copy}", keys, (port, rulebook, calendar))
    engine = make_engine(held[0])
    with engine.begin() as conn:
        eid, seq = conn.execute(select(events.c.event_id, events.c.seq).where(
            events.c.registration == "V017", events.c.decision == "exit")).one()
        conn.execute(insert(chain_breaks).values(gate_id="g1", seq_from=seq, seq_to=seq, kind="BAD_SIGNATURE",
                                                 detail="audit: test", event_id=eid, recorded_at=NOW))
    rebuild_shifts(engine, DAY, DAY, calendar.zone, now=NOW)
    pay_from_ledger(engine, DAY, DAY, rulebook, calendar, now=NOW)
    engine.dispose()
    out = _export(held, tmp_path / "held.zip")
    files = _members(out)
    (shift,) = json.loads(files["shifts.json"])
    assert any(f.startswith("CHAIN_BREAK: BAD_SIGNATURE on the exit event") for f in shift["flags"])
    assert json.loads(files["statements.json"])[-1]["hold_reason"].startswith("CHAIN_BREAK")
    failures, _notes = verify_bundle(out)
    assert failures == [], failures


def test_a_rulebook_that_is_not_toml_is_named_in_the_command_line_s_language(ledger, tmp_path):
    """The rulebook's own refusal inside the failure line (``not valid TOML: ...``) came out in
    English under a pt-BR command line: it goes through the office's error codes too."""
    import app.cli  # noqa: F401  (installs the refusal words, as the portgate command does)
    from portgate.clitext import use_lang

    out = _export(ledger, tmp_path / "v017.zip")
    files = _members(out)
    _url, keys, _setup = ledger
    bad = resign({**files, "rulebooks/pay/decreto-83611-1979.toml": b"id = = 1\n"}, office_key(keys),
                 tmp_path / "bad.zip")
    use_lang("pt")
    failures, _notes = verify_bundle(bad)
    said = [f for f in failures if f.startswith("rulebooks/pay/decreto-83611-1979.toml: ")]
    assert said and "não é TOML válido: linha 1, coluna 6: " in said[0] and "not valid TOML" not in said[0], failures
    use_lang("en")
    failures, _notes = verify_bundle(bad)
    assert any("not valid TOML: " in f for f in failures), failures

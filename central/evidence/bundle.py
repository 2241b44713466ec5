"""Export an evidence bundle of one worker over work days [D1, D2] (docs/evidence.md).

``export`` reads the ledger and writes a zip holding, for every gate whose events concern the
worker: the raw signed events of the gate's chain from the first such event to the newest office
receipt (or the last such event), their canonical bytes and raw signatures, the gate's public keys
and that receipt; the office's public key; the shifts and every version of their statements with
lines; the gate and pay rulebooks in force; a pt-BR PDF summary; and ``manifest.json`` (SHA-256 of
every file) signed by the office key (``manifest.sig``). ``central.evidence.verify`` checks it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io
import json
import tomllib
import zipfile
from pathlib import Path
from zoneinfo import ZoneInfo

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from central.evidence.bundle_out import write_out
from central.evidence.enrolment import record_path
from central.evidence.pdf import summary_pdf
from central.ingest.receipts import office_key
from central.evidence.verify import FORMAT
from central.evidence.verify_gate import starting_key
from central.ingest.keys import public_key_path, read_public_keys
from central.ledger.corrections import read_meal_corrections
from central.ledger.schema import chain_breaks, chain_receipts, events
from central.ledger.store import read_shifts
from central.ledger.tables import statement_lines, statements
from central.pay.calendar import HolidayCalendar
from portgate.errors import BadInput, PortgateError
from portgate.timeutil import as_utc
from wire import chain
from wire.events import canonical_bytes, decode

RULEBOOKS = Path(__file__).resolve().parents[2] / "config" / "rulebooks"
RECEIPT_REACH = 100_000  # a receipt further than this many seqs beyond the worker's events is not used


@dataclasses.dataclass(frozen=True, slots=True)
class Exported:
    path: Path
    gates: dict[str, tuple[int, int]]  # gate -> (seq_from, seq_to) included
    events: int
    statements: int
    shifts: int


GATE_RULEBOOK_KEYS = {"name", "version"}  # edge.rules.rulebook.GateRulebooks (central may not import edge)


def check_gate_rulebook(path: str | Path) -> bytes:
    """The bytes of the gate rulebook at ``path`` after a shape check: UTF-8 TOML whose top-level
    keys are among ``name`` and ``version``, ``version`` a non-empty array of tables each giving a
    date ``effective_from`` (the full rule check is ``portgate check-config``). Raises
    ``BadInput`` naming the file otherwise."""
    where = str(path)
    try:
        data = Path(path).read_bytes()
        raw = tomllib.loads(data.decode("utf-8"))
    except OSError as exc:
        raise BadInput(f"cannot read the gate rulebook: {exc.strerror}", where=where) from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise BadInput(f"not a gate rulebook: not UTF-8 TOML ({exc})", where=where) from exc
    unknown = sorted(set(raw) - GATE_RULEBOOK_KEYS)
    versions = raw.get("version")
    if unknown:
        raise BadInput(f"not a gate rulebook: unknown key {unknown[0]!r}", where=where)
    if not isinstance(versions, list) or not versions:
        raise BadInput("not a gate rulebook: no [[version]]", where=where)
    for i, version in enumerate(versions):
        if not isinstance(version, dict) or not isinstance(version.get("effective_from"), dt.date):
            raise BadInput(f"not a gate rulebook: version[{i}] has no date effective_from", where=where)
    return data


def _iso(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return as_utc(value).isoformat().replace("+00:00", "Z")
    return value.isoformat()


def export(engine: Engine, keys_dir: str | Path, registration: str, date_from: dt.date, date_to: dt.date,
           out: str | Path, *, zone: ZoneInfo, gate_rulebooks: list[str | Path] = (),
           now: dt.datetime, calendar: HolidayCalendar | None = None,
           pay_rulebook: str | Path | None = None, force: bool = False) -> Exported:
    """Write the bundle to ``out``, a new file (``force``: an existing one is replaced). ``calendar``:
    the port's holiday calendar the pay used
    (``calendar.json``; default: the example port's); ``pay_rulebook``: the port's pay rulebook
    file (packed under its id when a statement names that id; the shipped ``config/rulebooks/<id>.toml``
    otherwise). Raises ``BadInput`` if the worker has no event or shift in the period, a gate of
    theirs has no registered public key (its events cannot be proved), a ``gate_rulebooks`` file is
    not a gate rulebook (``check_gate_rulebook``), a statement's pay rulebook is not found (its pay
    could not be recomputed), or ``out`` exists without ``force`` or cannot be written
    (``bundle_out.write_out``)."""
    rulebook_files = {(f"rulebooks/gate/{Path(p).parent.name}-{Path(p).name}" if gate_rulebooks else
                       f"rulebooks/gate/{Path(p).name}"): check_gate_rulebook(p)
                      for p in gate_rulebooks or [RULEBOOKS / "gate-default.toml"]}
    start = dt.datetime.combine(date_from, dt.time(0), zone) - dt.timedelta(hours=12)
    end = dt.datetime.combine(date_to + dt.timedelta(days=1), dt.time(0), zone) + dt.timedelta(hours=12)
    with engine.connect() as conn:
        shifts = [s for s in read_shifts(conn, date_from, date_to) if s.registration == registration]
        referenced = {i for s in shifts for i in (s.admit_event_id, s.exit_event_id) if i}
        mine = conn.execute(select(events.c.gate_id, events.c.seq, events.c.event_id).where(
            ((events.c.registration == registration) & (events.c.occurred_at >= start)
             & (events.c.occurred_at < end)) | events.c.event_id.in_(referenced or {""}))).all()
        if not mine and not shifts:
            raise BadInput(f"no event or shift of {registration} from {date_from} to {date_to}",
                           where="--registration")
        ranges: dict[str, list[int]] = {}
        for gate, seq, _eid in mine:
            ranges.setdefault(gate, []).append(seq)
        _with_anchors(conn, [(g, s) for g, s, _e in mine], ranges)
        files: dict[str, bytes] = {}
        gates: dict[str, tuple[int, int]] = {}
        n_events = 0
        for gate, seqs in sorted(ranges.items()):
            gate_files, gates[gate], count = _gate_files(conn, keys_dir, gate, seqs)
            files.update(gate_files)
            n_events += count
        stmts = _statement_records(conn, registration, date_from, date_to)
        events_of = _events_of(conn, registration, start, end)
        n_receipts = conn.execute(select(func.count()).select_from(chain_receipts)).scalar()
        meals = read_meal_corrections(conn, sorted(s.shift_id for s in shifts))
    shift_rows = _shift_records(shifts)
    files.update(_pay_files(stmts, shift_rows, meals, calendar, pay_rulebook))
    files.update(rulebook_files)

    files["summary.pdf"] = summary_pdf(registration, date_from, date_to, shift_rows, stmts,
                                       events_of, gates, zone, now)
    out = _write_bundle(out, keys_dir, files, registration, date_from, date_to, now, n_receipts, gates, force)
    return Exported(out, gates, n_events, len(stmts), len(shift_rows))


def _events_of(conn, registration: str, start: dt.datetime, end: dt.datetime) -> list:
    """``registration``'s events from ``start`` to ``end`` (aware), decoded, in time order (the
    summary PDF's list)."""
    return [_decode_row(*r) for r in conn.execute(
        select(events.c.id, events.c.gate_id, events.c.seq, events.c.raw).where(
            events.c.registration == registration, events.c.occurred_at >= start,
            events.c.occurred_at < end)
        .order_by(events.c.occurred_at, events.c.gate_id, events.c.seq))]


def _pay_files(stmts: list[dict], shift_rows: list[dict], meals, calendar: HolidayCalendar | None,
               pay_rulebook: str | Path | None) -> dict[str, bytes]:
    """The bundle's files pay is recomputed from: ``statements.json``, ``shifts.json``,
    ``corrections.json`` (meal-worked corrections), ``calendar.json`` (``calendar``, default the
    example port's) and the pay rulebook of each statement. Raises ``BadInput`` if a statement's
    pay rulebook is not found."""
    files: dict[str, bytes] = {}
    files["statements.json"] = _json(stmts)
    files["shifts.json"] = _json(shift_rows)
    files["corrections.json"] = _json([{"shift_id": sid, "field": "meal_worked", "value": worked, "actor": actor,
                                        "recorded_at": at} for sid, worked, actor, at in meals])
    if calendar is None:
        from central.pay.cli import load_setup  # lazy: the example port's calendar

        calendar = load_setup(None)[2]
    files["calendar.json"] = _json(calendar_record(calendar))
    for rb in sorted({s["rulebook"] for s in stmts}):
        files[f"rulebooks/pay/{rb}.toml"] = _pay_rulebook(rb, pay_rulebook)
    return files


def _gate_files(conn, keys_dir: str | Path, gate: str, seqs: list[int]) -> tuple[dict[str, bytes], tuple[int, int], int]:
    """The bundle's files of one gate's events ``seqs`` (with their anchors): the receipt that
    anchors the range, the events as stored, the gate's public keys and enrolment records, the
    signed events' canonical bytes and signatures, and the chain check; with the seq range
    exported (up to the receipt's seq) and the number of events. Raises ``BadInput`` if the gate
    has no registered public key."""
    files: dict[str, bytes] = {}
    lo, hi = min(seqs), max(seqs)
    receipt = _newest_receipt(conn, gate, lo, hi)
    if receipt is not None:
        hi = max(hi, receipt["seq"])
        files[f"receipts/{gate}.json"] = _json({"body": receipt["body"].decode("utf-8"),
                                                "sig": receipt["sig"]})
    stored = conn.execute(select(events.c.id, events.c.gate_id, events.c.seq, events.c.raw).where(
        events.c.gate_id == gate, events.c.seq.between(lo, hi)).order_by(events.c.seq, events.c.id)
    ).all()
    raws = [r[3] for r in stored]
    decoded = [_decode_row(*r) for r in stored]
    keys = read_public_keys(public_key_path(keys_dir, gate))
    if not keys:
        raise BadInput(f"gate {gate} has no registered public key: its events cannot be proved",
                       where=str(public_key_path(keys_dir, gate)))
    files[f"keys/{gate}.pem"] = "".join(chain.public_pem(k) for k in keys).encode("ascii")
    for k in keys:  # the enrolment records, office-signed, countersigned by the inspector
        record = record_path(keys_dir, gate, chain.fingerprint(k))
        if record.exists():
            files[f"enrolments/{record.name}"] = record.read_bytes()
    lines = []
    for raw, ev in zip(raws, decoded):
        lines.append(bytes(raw).rstrip(b"\n"))
        if ev.sig:
            base = f"canonical/{gate}/{ev.seq}-{ev.event_id}"
            files[base + ".bin"] = canonical_bytes(ev)
            files[base + ".sig"] = bytes.fromhex(ev.sig)
    files[f"events/{gate}.jsonl"] = b"\n".join(lines) + b"\n"
    breaks = conn.execute(select(chain_breaks).where(chain_breaks.c.gate_id == gate,
                                                     chain_breaks.c.seq_to >= lo,
                                                     chain_breaks.c.seq_from <= hi)).mappings().all()
    report = chain.check_chain(gate, decoded, starting_key(decoded, keys), first_seq=lo)
    files[f"chain/{gate}.json"] = _json({
        "gate_id": gate, "seq_from": lo, "seq_to": hi, "head_seq": report.head_seq, "head": report.head,
        "verified": report.verified, "breaks_at_export": [str(b) for b in report.breaks],
        "breaks_recorded_on_ingest": [{"kind": b["kind"], "seq_from": b["seq_from"],
                                       "seq_to": b["seq_to"], "detail": b["detail"]} for b in breaks],
        "segments": [dataclasses.asdict(s) for s in report.segments]})
    return files, (lo, hi), len(raws)


def _newest_receipt(conn, gate: str, lo: int, hi: int):
    """The office's receipt that anchors ``gate``'s seqs ``lo..hi``: the first within
    ``RECEIPT_REACH`` after ``hi``, else the newest one from ``lo`` on (it still anchors a prefix of
    the range); None if there is none."""
    receipt = conn.execute(select(chain_receipts).where(
        chain_receipts.c.gate_id == gate, chain_receipts.c.seq >= hi,
        chain_receipts.c.seq <= hi + RECEIPT_REACH).order_by(chain_receipts.c.seq.desc()).limit(1)
    ).mappings().first()
    if receipt is None:  # the newest one before: it still anchors a prefix of the range
        receipt = conn.execute(select(chain_receipts).where(
            chain_receipts.c.gate_id == gate, chain_receipts.c.seq >= lo).order_by(
            chain_receipts.c.seq.desc()).limit(1)).mappings().first()
    return receipt


def _statement_records(conn, registration: str, date_from: dt.date, date_to: dt.date) -> list[dict]:
    """Every version of ``registration``'s pay statements for the work days ``date_from..date_to``
    with their lines, as the bundle's ``statements.json`` records (amounts in centavos)."""
    st_rows = conn.execute(select(statements).where(
        statements.c.registration == registration, statements.c.work_day.between(date_from, date_to))
        .order_by(statements.c.shift_id, statements.c.version)).mappings().all()
    ids = [r["statement_id"] for r in st_rows]
    line_rows: dict[str, list[dict]] = {}
    if ids:
        for r in conn.execute(select(statement_lines).where(statement_lines.c.statement_id.in_(ids))
                              .order_by(statement_lines.c.statement_id, statement_lines.c.position)).mappings():
            line_rows.setdefault(r["statement_id"], []).append(
                {"rule": r["rule"], "article": r["article"], "description": r["description"],
                 "amount_cents": r["amount_cents"]})
    stmts = [{
        "statement_id": r["statement_id"], "shift_id": r["shift_id"], "version": r["version"],
        "rulebook": r["rulebook"], "work_day": _iso(r["work_day"]), "total_cents": r["total_cents"],
        "flags": [f for f in (r["flags"] or "").split(",") if f], "due_at": _iso(r["due_at"]),
        "computed_at": _iso(r["computed_at"]), "computed_by": r["computed_by"], "digest": r["digest"],
        "hold_reason": r["hold_reason"], "paid_at": _iso(r["paid_at"]), "paid_ref": r["paid_ref"],
        "superseded_at": _iso(r["superseded_at"]), "superseded_by": r["superseded_by"],
        "superseded_reason": r["superseded_reason"], "lines": line_rows.get(r["statement_id"], [])}
        for r in st_rows]
    return stmts


def _shift_records(shifts) -> list[dict]:
    """The shifts as the bundle's ``shifts.json`` records (times as ISO 8601 text)."""
    shift_rows = [{
        "shift_id": s.shift_id, "registration": s.registration, "ship": s.ship, "work_date": _iso(s.work_date),
        "period": s.period, "function": s.function, "berth": s.berth, "gate_id": s.gate_id,
        "period_start": _iso(s.period_start), "period_end": _iso(s.period_end), "admit_at": _iso(s.admit_at),
        "exit_at": _iso(s.exit_at), "closed_by": s.closed_by, "admit_event_id": s.admit_event_id,
        "exit_event_id": s.exit_event_id, "meal_worked": s.meal_worked,
        "flags": [f"{f.code}: {f.detail}" for f in s.flags]}
        for s in shifts]
    return shift_rows


def _write_bundle(out: str | Path, keys_dir: str | Path, files: dict[str, bytes], registration: str,
                  date_from: dt.date, date_to: dt.date, now: dt.datetime, n_receipts: int,
                  gates: dict[str, tuple[int, int]], force: bool) -> Path:
    """Add the office's public key to ``files``, sign the manifest of every file's SHA-256 with the
    office key and write the zip to ``out`` (``central.evidence.bundle_out.write_out``: a new file
    unless ``force``); returns its path."""
    office = office_key(keys_dir)
    files["keys/office.pem"] = chain.public_pem(office.public_key()).encode("ascii")
    manifest = {"format": FORMAT, "registration": registration, "from": date_from.isoformat(),
                "to": date_to.isoformat(), "created_at": _iso(now),
                "office_key": chain.fingerprint(office.public_key()), "receipts_in_ledger": n_receipts,
                "gates": {g: {"seq_from": a, "seq_to": b} for g, (a, b) in gates.items()},
                "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())}}
    body = _json(manifest)
    out = Path(out)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("manifest.json", body)
        zf.writestr("manifest.sig", office.sign(body).hex() + "\n")
        for name, data in sorted(files.items()):
            zf.writestr(name, data)
    write_out(out, buf.getvalue(), force)
    return out


def _with_anchors(conn, mine: list[tuple[str, int]], ranges: dict[str, list[int]]) -> None:
    """Add to ``ranges`` (gate -> seqs) the seqs of the trusted events of the same boot just
    before and just after each of the worker's untrusted-clock events: the ledger places such an
    event's time from the nearest trusted event of its boot (``central.ledger.shifts.place_times``),
    so ``verify`` needs that event in the bundle to place it the same way."""
    for gate, seq in mine:
        row = conn.execute(select(events.c.boot_id, events.c.clock_trusted).where(
            events.c.gate_id == gate, events.c.seq == seq).order_by(events.c.id).limit(1)).first()
        if row is None or row[1]:
            continue
        same = (events.c.gate_id == gate) & (events.c.boot_id == row[0]) & events.c.clock_trusted.is_(True)
        below = conn.execute(select(func.max(events.c.seq)).where(same, events.c.seq < seq)).scalar()
        above = conn.execute(select(func.min(events.c.seq)).where(same, events.c.seq > seq)).scalar()
        ranges[gate].extend(s for s in (below, above) if s is not None)


def calendar_record(calendar: HolidayCalendar) -> dict:
    """``calendar.json``: the port's time zone, the years the calendar covers (first, last) and
    every holiday of them (``YYYY-MM-DD`` -> name): what pay read (P4, P5; RULES.md Holiday)."""
    return {"timezone": calendar.timezone, "years": [calendar.years.start, calendar.years.stop - 1],
            "holidays": {d.isoformat(): n for d, n in sorted(calendar.days.items())}}


def _pay_rulebook(rulebook_id: str, port_rulebook: str | Path | None) -> bytes:
    """The bytes of the pay rulebook whose id is ``rulebook_id``: the port's own file if it is that
    rulebook, else the shipped ``config/rulebooks/<id>.toml``. Raises ``BadInput`` if neither is."""
    from central.pay.loading import load_rulebook  # lazy: pay's loader

    for path in ([Path(port_rulebook)] if port_rulebook else []) + [RULEBOOKS / f"{rulebook_id}.toml"]:
        try:
            if path.exists() and load_rulebook(path).id == rulebook_id:
                return path.read_bytes()
        except PortgateError:
            continue
    raise BadInput(f"pay rulebook {rulebook_id!r} (named by a statement) not found: give the port "
                   "configuration whose rulebook it is (--port-config)", where="--port-config")


def _json(value) -> bytes:
    return json.dumps(value, sort_keys=True, indent=1, ensure_ascii=False).encode("utf-8") + b"\n"


def _decode_row(row_id: int, gate: str, seq: int, raw: bytes):
    """The stored event's ``Event``. Raises ``BadInput`` naming its ledger id, gate and seq."""
    try:
        return decode(raw)
    except BadInput as exc:
        raise BadInput(str(exc), where=f"ledger event id {row_id} (gate {gate}, seq {seq})") from exc

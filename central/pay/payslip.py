"""Payslips: one per worker and period, from the stored statements (``statements_read``), with a
verification code the office can check against the ledger (``verify``).

The code is HMAC-SHA256, under the office's payslip key, of the slip's canonical content: a
compact JSON of the registration, name, category, CPF and PIS/NIS, period, the names of its ships,
and per statement its id, shift, work day, rulebook id, due time, every line (rule, article, cents)
and total, then the slip's total, and the header printed above it (``SlipHeader``: the paying
entity's name, CNPJ and address, the verification page's address) when there is one.
It is printed on the slip and named in the PDF's metadata; ``verify`` recomputes the slip from the
ledger, so a PDF whose figures were edited, or whose ledger rows changed since, fails.

Formats are pt-BR: ``R$ 1.234,56``, ``dd/mm/aaaa``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import hashlib
import hmac
import json
from collections import defaultdict
from decimal import Decimal
from zoneinfo import ZoneInfo

from sqlalchemy import column, select, table
from sqlalchemy.engine import Connection

from portgate.gctune import paused as no_cyclic_gc
from portgate.l10n import money
from central.pay.statements_read import StatementView, read_statements
from central.registry.schema import workers

# the ship calls' and the escala's ship names, read as plain table clauses: the ships' tables live in
# central.calls and central.rotation, which sit above pay (rotation -> production -> pay)
_SHIP_CALLS = table("ship_calls", column("ship"), column("ship_name"), column("arrival"))
_ESCALA = table("escala", column("ship"), column("ship_name"), column("date"))

CODE_HEX = 24  # 96 bits of the HMAC, printed in groups of four


def brl(amount: Decimal, lang: str = "pt") -> str:
    """``Decimal('1234.56')`` -> ``'R$ 1.234,56'`` (negative: ``'-R$ 1,00'``); Babel's locale
    formatting (``portgate.l10n.money``), English ``'R$1,234.56'``."""
    return money(amount, lang)


def date_br(day: dt.date) -> str:
    return day.strftime("%d/%m/%Y")


def time_br(at: dt.datetime, tz: ZoneInfo) -> str:
    return at.astimezone(tz).strftime("%d/%m/%Y %H:%M")


@dataclasses.dataclass(frozen=True, slots=True)
class SlipHeader:
    """What a payslip prints above and below the worker's lines besides the ledger's figures: the
    paying entity (``[employer]`` of the port configuration: name, CNPJ as 14 bare characters,
    address; empty when not configured) and ``verify_base``, the office application's address the
    slip's QR code and short URL point to (``https://office.example``; empty: no QR code)."""

    employer: str = ""
    cnpj: str = ""
    address: str = ""
    verify_base: str = ""

    def as_json(self) -> dict[str, str]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True, slots=True)
class Slip:
    """One worker's payslip for work days [date_from, date_to]: its statements and total, the
    worker's CPF and PIS/NIS (bare digits, None when the registry has none) and the names of the
    ships of its shifts (``ships``: ``((IMO, name), ...)`` sorted; a ship no call or escala names
    has no entry)."""

    registration: str
    name: str
    category: str
    date_from: dt.date
    date_to: dt.date
    statements: tuple[StatementView, ...]
    cpf: str | None = None
    pis: str | None = None
    ships: tuple[tuple[str, str], ...] = ()

    def ship_name(self, ship: str) -> str:
        return dict(self.ships).get(ship, "")

    @property
    def total(self) -> Decimal:
        return sum((s.total for s in self.statements), Decimal("0.00"))

    @property
    def rulebooks(self) -> tuple[str, ...]:
        return tuple(sorted({s.rulebook for s in self.statements}))


def build_slips(conn: Connection, date_from: dt.date, date_to: dt.date, *,
                registration: str | None = None) -> list[Slip]:
    """The payslips of the period (one per worker with statements), by registration."""
    with no_cyclic_gc(long_lived=True):  # ~10^5 acyclic statements kept: no collector passes over them
        found = read_statements(conn, date_from, date_to, registration=registration)
    by_reg: dict[str, list[StatementView]] = defaultdict(list)
    for st in found:
        by_reg[st.registration].append(st)
    people = {}
    regs = list(by_reg)
    for chunk in range(0, len(regs), 900):
        for reg, name, cat, cpf, pis in conn.execute(
                select(workers.c.registration, workers.c.name, workers.c.category, workers.c.cpf, workers.c.pis)
                .where(workers.c.registration.in_(regs[chunk:chunk + 900]))):
            people[reg] = (name, cat, cpf, pis)
    names = ship_names(conn, {ship_of(st.shift_id) for st in found} - {""})
    out = []
    for reg, sts in sorted(by_reg.items()):
        name, cat, cpf, pis = people.get(reg, ("", "", None, None))
        ships = tuple(sorted({(s, names[s]) for s in map(ship_of, (st.shift_id for st in sts)) if s in names}))
        out.append(Slip(reg, name, cat, date_from, date_to, tuple(sts), cpf, pis, ships))
    return out


def ship_of(shift_id: str) -> str:
    """The ship (IMO number) of a shift id ``registration/ship/YYYY-MM-DD/HH-HH``; ``""`` if none."""
    parts = shift_id.split("/")
    return parts[1] if len(parts) > 1 else ""


def ship_names(conn: Connection, ships: set[str]) -> dict[str, str]:
    """``{IMO: name}``: each ship's name as its latest ship call gives it, else as the escala
    last dispatched to it gives it; a ship neither names is left out."""
    out: dict[str, str] = {}
    wanted = sorted(ships)
    for source, order in ((_SHIP_CALLS, _SHIP_CALLS.c.arrival), (_ESCALA, _ESCALA.c.date)):
        missing = [s for s in wanted if s not in out]
        for chunk in range(0, len(missing), 900):
            for ship, name in conn.execute(select(source.c.ship, source.c.ship_name)
                                           .where(source.c.ship.in_(missing[chunk:chunk + 900]),
                                                  source.c.ship_name != "")
                                           .order_by(order)):
                out[ship] = name  # ordered: the latest wins
    return out


def canonical(slip: Slip, header: SlipHeader | None = None) -> bytes:
    """The slip's canonical content (UTF-8 JSON, sorted keys, no spaces), with ``header`` when given:
    the bytes of ``json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` of
    the body below, written key by key in sorted order (a batch of 5,000 slips: json.dumps of the
    whole body was 15 % of the PDF's time), each statement's lines once per distinct lines; a
    field of another type than the schema's (a str where the ledger has one) takes ``json.dumps``."""
    try:
        return _canonical_text(slip, header).encode()
    except (TypeError, AttributeError):
        return json.dumps(canonical_body(slip, header), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode()


def _canonical_text(slip: Slip, header: SlipHeader | None) -> str:
    text, number = _JSON_STRING, _JSON
    statements = ",".join([
        f'{{"day":{text(s.work_day.isoformat())},"due":{text(s.due_at.isoformat())},"id":{text(s.statement_id)},'
        f'"lines":{_lines_json(s.lines)},"rulebook":{text(s.rulebook)},"shift":{text(s.shift_id)},'
        f'"total":{int(s.total * 100)}}}' for s in slip.statements])
    head = ""
    if header is not None and header != SlipHeader():
        head = f'"header":{number(header.as_json())},'
    return (f'{{"category":{text(slip.category)},"cpf":{text(slip.cpf or "")},'
            f'"from":{text(slip.date_from.isoformat())},{head}"name":{text(slip.name)},'
            f'"pis":{text(slip.pis or "")},"registration":{text(slip.registration)},'
            f'"ships":{number([list(s) for s in slip.ships])},"statements":[{statements}],'
            f'"to":{text(slip.date_to.isoformat())},"total":{int(slip.total * 100)},"v":2}}')


def canonical_body(slip: Slip, header: SlipHeader | None = None) -> dict:
    """The slip's canonical content as a dict (``canonical`` writes it as JSON)."""
    body = {
        "v": 2, "registration": slip.registration, "name": slip.name, "category": slip.category,
        "cpf": slip.cpf or "", "pis": slip.pis or "", "ships": [list(s) for s in slip.ships],
        "from": slip.date_from.isoformat(), "to": slip.date_to.isoformat(),
        "statements": [{
            "id": s.statement_id, "shift": s.shift_id, "day": s.work_day.isoformat(), "rulebook": s.rulebook,
            "due": s.due_at.isoformat(), "total": int(s.total * 100),
            "lines": [[x.rule, x.article, int(x.amount * 100)] for x in s.lines]} for s in slip.statements],
        "total": int(slip.total * 100),
    }
    if header is not None and header != SlipHeader():
        body["header"] = header.as_json()
    return body


_JSON_STRING = json.encoder.encode_basestring  # what json.dumps(..., ensure_ascii=False) writes a str as
_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode


@functools.lru_cache(maxsize=4096)
def _lines_json(lines: tuple) -> str:
    """A statement's lines as canonical JSON ``[[rule,article,cents],...]`` (equal lines: one text)."""
    return _JSON([[x.rule, x.article, int(x.amount * 100)] for x in lines])


def code(key: bytes, slip: Slip, header: SlipHeader | None = None) -> str:
    """The verification code: the first ``CODE_HEX`` hex digits of HMAC-SHA256(key, canonical)."""
    return hmac.new(key, canonical(slip, header), hashlib.sha256).hexdigest()[:CODE_HEX].upper()


PARTICLES = frozenset({"da", "das", "de", "do", "dos", "e", "di", "del", "van", "von"})


def initials(name: str) -> str:
    """``'Quitéria Almeida da Silva'`` -> ``'Q. A. S.'``: what the public verification page shows
    of the worker (the particles ``da``, ``de``, ``dos``, ``e``... left out)."""
    return " ".join(f"{w[0].upper()}." for w in name.split() if w.lower() not in PARTICLES)


def grouped(c: str) -> str:
    """``'ABCD1234...'`` -> ``'ABCD-1234-...'`` as printed."""
    return "-".join(c[i:i + 4] for i in range(0, len(c), 4))

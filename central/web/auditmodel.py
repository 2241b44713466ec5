"""The audit-log page's read (issue 34 item 12): who changed what and when, newest first, filtered
by who (``actor``, e.g. ``web:escritorio``, ``inspector:F001``; a part of it), what (``action``,
e.g. ``worker.add``; its beginning: ``worker.`` gives every worker change), the subject (a
registration, a card, an entry id: exactly) and a range of port-local days; pages of ``PAGE`` rows
by keyset on the id (``before``), never OFFSET. Read-only; times are aware UTC datetimes."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Mapping

from sqlalchemy import func, select
from sqlalchemy.engine import Connection

from central.audit import audit_log
from central.cli_args import FIRST_DAY, LAST_DAY
from central.web.forms import iso_date_text
from portgate.errors import BadInput
from portgate.timeutil import as_utc

PAGE = 50
DETAIL_CHARS = 400


@dataclasses.dataclass(frozen=True, slots=True)
class AuditFilters:
    """What the page was asked for; ``first``/``last`` port-local days (inclusive), ``before`` the
    id the page starts below (the next page's keyset), None for the newest."""

    actor: str = ""
    action: str = ""
    subject: str = ""
    first: dt.date | None = None
    last: dt.date | None = None
    before: int | None = None

    def query(self, **change) -> dict[str, str]:
        """The filters as query parameters (dd/mm/aaaa days), with ``change`` applied."""
        f = dataclasses.replace(self, **change)
        out = {"actor": f.actor, "action": f.action, "subject": f.subject,
               "from": f.first.strftime("%d/%m/%Y") if f.first else "",
               "to": f.last.strftime("%d/%m/%Y") if f.last else "",
               "before": str(f.before) if f.before else ""}
        return {k: v for k, v in out.items() if v}


def _day(text: str, where: str) -> dt.date | None:
    text = (text or "").strip()
    if not text:
        return None
    try:
        day = dt.date.fromisoformat(iso_date_text(text))
    except ValueError:
        raise BadInput(f"{where} {text[:40]!r} is not a day written dd/mm/aaaa", where=where) from None
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadInput(f"the day {day} is outside {FIRST_DAY}..{LAST_DAY}", where=where)
    return day


def parse_filters(params: Mapping[str, str]) -> AuditFilters:
    """The page's query parameters (``actor``, ``action``, ``subject``, ``from``, ``to`` as
    dd/mm/aaaa or ISO, ``before`` an id) -> ``AuditFilters``. ``BadInput`` naming the field
    (``from``, ``to``, ``before``) for a day that is not one or a range that ends before it starts."""
    first, last = _day(params.get("from", ""), "from"), _day(params.get("to", ""), "to")
    if first and last and last < first:
        raise BadInput("the period ends before it starts", where="to")
    before = (params.get("before") or "").strip()
    if before and (not before.isdigit() or len(before) > 12):
        raise BadInput(f"before {before[:20]!r} is not a whole number", where="before")
    return AuditFilters(actor=(params.get("actor") or "").strip()[:128],
                        action=(params.get("action") or "").strip()[:64],
                        subject=(params.get("subject") or "").strip()[:128],
                        first=first, last=last, before=int(before) if before else None)


def _like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def search(conn: Connection, f: AuditFilters, tz, limit: int = PAGE) -> tuple[list[dict], int | None]:
    """One page of ``audit_log`` rows matching ``f``, newest first: ``{id, at, actor, action,
    subject, detail}`` (``detail`` compact JSON, cut to ``DETAIL_CHARS`` with an ellipsis), and
    the id the next page starts below (None on the last page). Days are ``tz``'s (the port's)."""
    q = select(audit_log)
    if f.actor:
        q = q.where(func.lower(audit_log.c.actor).like(f"%{_like(f.actor.lower())}%", escape="\\"))
    if f.action:
        q = q.where(audit_log.c.action.like(f"{_like(f.action)}%", escape="\\"))
    if f.subject:
        q = q.where(audit_log.c.subject == f.subject)
    if f.first:
        q = q.where(audit_log.c.at >= dt.datetime.combine(f.first, dt.time(), tz).astimezone(dt.UTC))
    if f.last:
        end = dt.datetime.combine(f.last + dt.timedelta(days=1), dt.time(), tz).astimezone(dt.UTC)
        q = q.where(audit_log.c.at < end)
    if f.before:
        q = q.where(audit_log.c.id < f.before)
    rows = conn.execute(q.order_by(audit_log.c.id.desc()).limit(limit + 1)).all()
    out = []
    for r in rows[:limit]:
        detail = json.dumps(r.detail, ensure_ascii=False, sort_keys=True, default=str)
        if len(detail) > DETAIL_CHARS:
            detail = detail[:DETAIL_CHARS] + "…"
        out.append({"id": r.id, "at": as_utc(r.at), "actor": r.actor, "action": r.action,
                    "subject": r.subject, "detail": detail})
    return out, (out[-1]["id"] if len(rows) > limit else None)

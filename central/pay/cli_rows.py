"""How ``portgate pay`` prints statements: one row per statement line and a TOTAL row per shift
(``statement_rows``), a HELD row per shift held back (``held_row``), as JSON lines or CSV
(``emit``), and the stderr line naming payments the statements no longer show (``warn_lost``).
Changes when a printed column or the format changes, not when pay is computed differently."""

from __future__ import annotations

import json
import sys

import click

from central.pay.lines import money_str
from central.pay.watchmen import Statement
from portgate import csvout
from portgate.clitext import tr
from portgate.timeutil import as_utc

FIELDS = ("registration", "work_day", "shift_id", "rule", "article", "amount", "due_at", "flags",
          "hold", "released")


def statement_rows(st: Statement, release: tuple | None = None) -> list[dict]:
    """The printed rows of one statement: its lines, then the TOTAL row. ``release``: the office's
    release of its hold, ``(hold reason, released_at, note)`` (``ledger.hold_releases``): printed
    as ``released: {at, note, hold}`` instead of ``hold`` when it released this same hold."""
    base = {"registration": st.registration, "work_day": st.work_day.isoformat(),
            "shift_id": st.shift_id}
    rows = [{**base, "rule": line.rule, "article": line.article, "amount": money_str(line.amount)}
            for line in st.lines]
    total = {**base, "rule": "TOTAL", "article": "", "amount": money_str(st.total),
             "due_at": st.due_at.isoformat(), "flags": list(st.flags)}
    if st.hold_reason and release is not None and release[0] == st.hold_reason:
        at = as_utc(release[1])
        total["released"] = {"at": at.isoformat(), "note": release[2], "hold": st.hold_reason}
    elif st.hold_reason:
        total["hold"] = st.hold_reason
    rows.append(total)
    return rows


def held_row(shift, reasons) -> dict:
    """The printed row of a shift held back: ``rule: "HELD"``, no amount, its reasons as ``flags``."""
    return {"registration": shift.registration, "work_day": shift.work_date.isoformat(),
            "shift_id": shift.shift_id, "rule": "HELD", "article": "", "amount": None,
            "flags": list(reasons)}


def emit(rows: list[dict], fmt: str) -> None:
    """Print ``rows`` on stdout: one JSON line each (``fmt`` ``json``) or CSV with the ``FIELDS``
    columns (``csv``: flags joined by ``;``, no amount empty, a release as its time and note)."""
    if fmt == "json":
        for row in rows:
            click.echo(json.dumps(row, ensure_ascii=False))
        return
    writer = csvout.dict_writer(sys.stdout, FIELDS, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        out = dict(row)
        out["flags"] = ";".join(row.get("flags") or [])
        out["amount"] = "" if row["amount"] is None else row["amount"]
        if isinstance(row.get("released"), dict):
            out["released"] = f"{row['released']['at']} {row['released']['note'] or ''}".strip()
        writer.writerow(out)


def warn_lost(saved) -> None:
    """One stderr line naming the shifts held for a payment the statements no longer show."""
    if saved is not None and saved.lost:
        more = tr("cli.pay.and_more", n=len(saved.lost) - 5) if len(saved.lost) > 5 else ""
        click.echo(tr("cli.pay.payment_record_lost", n=len(saved.lost), shifts=", ".join(saved.lost[:5]), more=more),
                   err=True)

"""Render a ``crew_hours.HoursBook`` as the two books of art. 4 (K5): ``overtime_book.csv``,
``transgressions.csv`` and one printable ``book.html`` (A4, no scripts, no external files).
Pure: text in, text out. Durations are written as minutes and as ``HhMM``; times in the ship's
zone."""

from __future__ import annotations

import csv
import datetime as dt
import functools
import html
import io
from zoneinfo import ZoneInfo

from central.inspection.crew_hours import HoursBook

OVERTIME_COLUMNS = (
    "ship",
    "crew_id",
    "name",
    "role",
    "date",
    "worked_min",
    "normal_min",
    "overtime_min",
    "overtime_hours",
    "port_traffic_overtime_min",
    "compensation",
)
TRANSGRESSION_COLUMNS = (
    "ship",
    "crew_id",
    "name",
    "date",
    "rule",
    "article",
    "start",
    "end",
    "amount_min",
    "detail_pt",
    "detail_en",
    "source",
)


# Durations and days repeat all through a book (a few hundred distinct values for tens of
# thousands of cells): each is formatted once.
@functools.lru_cache(maxsize=8192)
def _min(span: dt.timedelta) -> int:
    return int(span.total_seconds() // 60)


@functools.lru_cache(maxsize=8192)
def _day(day: dt.date) -> str:
    return day.isoformat()


@functools.lru_cache(maxsize=8192)
def _hm(span: dt.timedelta) -> str:
    m = _min(span)
    return f"{m // 60}h{m % 60:02d}"


def _local(value: dt.datetime | None, zone: ZoneInfo) -> str:
    return value.astimezone(zone).isoformat() if value else ""


def _csv(columns, rows) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue()


def overtime_csv(book: HoursBook) -> str:
    """The overtime book (livro de horas extraordinárias), one row per crew member and civil day."""
    return _csv(
        OVERTIME_COLUMNS,
        [
            (
                book.ship,
                e.crew_id,
                e.name,
                e.role,
                _day(e.date),
                _min(e.worked),
                _min(e.normal),
                _min(e.overtime),
                e.overtime_hours,
                _min(e.port_traffic_overtime),
                e.compensation,
            )
            for e in book.overtime
        ],
    )


def transgressions_csv(book: HoursBook) -> str:
    """The transgressions book (livro de transgressões), one row per transgression."""
    zone = ZoneInfo(book.tz)
    return _csv(
        TRANSGRESSION_COLUMNS,
        [
            (
                book.ship,
                t.crew_id,
                t.name,
                _day(t.date),
                t.rule,
                t.article,
                _local(t.start, zone),
                _local(t.end, zone),
                _min(t.amount),
                t.detail_pt,
                t.detail_en,
                t.where,
            )
            for t in book.transgressions
        ],
    )


_STYLE = """
@page { size: A4; margin: 15mm; }
body { font-family: sans-serif; font-size: 10pt; }
h1 { font-size: 14pt; } h2 { font-size: 12pt; page-break-before: always; }
h2.first { page-break-before: auto; }
table { border-collapse: collapse; width: 100%; margin-bottom: 1em; }
th, td { border: 1px solid #444; padding: 2px 4px; text-align: left; }
td.n { text-align: right; } tr.over td { font-weight: bold; }
.sign { margin-top: 3em; } thead { display: table-header-group; }
"""


@functools.lru_cache(maxsize=65536)
def _esc(value: str) -> str:
    return html.escape(value)  # book cells repeat a lot (names, dates, rules): escape each once


def _table(headers: list[str], rows: list[list[str]], numeric: set[int], marked=()) -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    opens = ["<td class=n>" if j in numeric else "<td>" for j in range(len(headers))]
    body = []
    for i, row in enumerate(rows):
        cls = ' class="over"' if i in marked else ""
        cells = "".join([f"{o}{_esc(str(c))}</td>" for o, c in zip(opens, row)])
        body.append(f"<tr{cls}>{cells}</tr>")
    if not rows:
        body.append(f'<tr><td colspan="{len(headers)}">Nenhum lançamento / no entries</td></tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def book_html(book: HoursBook) -> str:
    """The printable book: header (ship, period, zone), the overtime book, the weekly port-traffic
    totals and the transgressions book, with a signature line for the master (art. 4 sole
    paragraph)."""
    zone = ZoneInfo(book.tz)
    esc = html.escape
    title = f"Navio {esc(book.ship)} — {book.date_from.isoformat()} a {book.date_to.isoformat()}"
    overtime = _table(
        [
            "Tripulante",
            "Nome",
            "Função",
            "Dia",
            "Trabalho",
            "Normal",
            "Extra (exato)",
            "Extra (horas, K4)",
            "Extra tráfego porto",
            "Compensação",
        ],
        [
            [
                e.crew_id,
                e.name,
                e.role,
                _day(e.date),
                _hm(e.worked),
                _hm(e.normal),
                _hm(e.overtime),
                str(e.overtime_hours),
                _hm(e.port_traffic_overtime),
                e.compensation,
            ]
            for e in book.overtime
        ],
        {4, 5, 6, 7, 8},
    )
    weeks = _table(
        [
            "Tripulante",
            "Nome",
            "Semana ISO",
            "Extra tráfego porto",
            "Extra (horas)",
            "Limite 30h00",
        ],
        [
            [
                w.crew_id,
                w.name,
                f"{w.iso_year}-W{w.iso_week:02d}",
                _hm(w.port_traffic_overtime),
                str(w.overtime_hours),
                "EXCEDIDO / exceeded" if w.exceeds_cap else "ok",
            ]
            for w in book.weeks
        ],
        {3, 4},
        marked={i for i, w in enumerate(book.weeks) if w.exceeds_cap},
    )
    trans = _table(
        ["Tripulante", "Nome", "Dia", "Regra", "Artigo", "Início", "Fim", "Descrição", "Origem"],
        [
            [
                t.crew_id,
                t.name,
                _day(t.date),
                t.rule,
                t.article,
                _local(t.start, zone),
                _local(t.end, zone),
                f"{t.detail_pt} / {t.detail_en}",
                t.where,
            ]
            for t in book.transgressions
        ],
        set(),
    )
    return f"""<!DOCTYPE html>
<html lang="pt-BR"><head><meta charset="utf-8"><title>{title}</title><style>{_STYLE}</style></head>
<body>
<h1>Livro de horas extraordinárias e de transgressões — {title}</h1>
<p>Decreto-Lei de 29/06/1939, art. 4. Dias civis no fuso {esc(book.tz)}.
Overtime book and transgressions book (rules K1-K5).</p>
<h2 class="first">Horas extraordinárias / overtime (art. 2, art. 3)</h2>
{overtime}
<h2>Tráfego no porto por semana / weekly port-traffic overtime (art. 2 §2)</h2>
{weeks}
<h2>Transgressões / transgressions (art. 1 §3, §4; art. 2 §2)</h2>
{trans}
<p class="sign">Comandante / master: ______________________________ Data: ____/____/______</p>
</body></html>
"""

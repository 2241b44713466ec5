"""Render a ``hours_book.HoursBook`` as the two books of art. 4 (K5): ``overtime_book.csv``,
``transgressions.csv`` and one printable ``book.html`` (A4, no scripts, no external files).
Pure: text in, text out. Durations (seconds in the book) are written as whole minutes and as
``HhMM``; times in the ship's zone. Each table row is one ``%`` format of its escaped cells."""

from __future__ import annotations

import datetime as dt
import functools
import html
import io
from zoneinfo import ZoneInfo

from central.inspection.hours_book import HoursBook
from portgate import csvout
from portgate.gctune import paused

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
def _day(day: dt.date) -> str:
    return day.isoformat()


@functools.lru_cache(maxsize=8192)
def _hm(seconds: int) -> str:
    m = seconds // 60
    return f"{m // 60}h{m % 60:02d}"


def _local_times(book: HoursBook) -> dict[int | None, str]:
    """Each transgression instant (epoch seconds) as an ISO time in the ship's zone; None -> ''."""
    zone = ZoneInfo(book.tz)
    out: dict[int | None, str] = {None: ""}
    for t in book.transgressions:
        for s in (t.start_s, t.end_s):
            if s not in out:
                out[s] = dt.datetime.fromtimestamp(s, zone).isoformat()
    return out


def _csv(columns, rows) -> str:
    buf = io.StringIO()
    writer = csvout.writer(buf, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return buf.getvalue()


@paused()
def overtime_csv(book: HoursBook) -> str:
    """The overtime book (livro de horas extraordinárias), one row per crew member and civil day;
    durations in whole minutes (seconds cut)."""
    ship = book.ship
    return _csv(
        OVERTIME_COLUMNS,
        [
            (ship, crew_id, name, role, _day(day), worked // 60, normal // 60, over // 60, hours,
             port // 60, comp)
            for crew_id, name, role, day, worked, normal, over, hours, port, comp in book.overtime
        ],
    )


@paused()
def transgressions_csv(book: HoursBook) -> str:
    """The transgressions book (livro de transgressões), one row per transgression."""
    local = _local_times(book)
    ship = book.ship
    return _csv(
        TRANSGRESSION_COLUMNS,
        [
            (ship, t.crew_id, t.name, _day(t.date), t.rule, t.article, local[t.start_s],
             local[t.end_s], t.amount_s // 60, t.detail_pt, t.detail_en, t.where)
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


def _table(headers: list[str], numeric: set[int], rows: list[tuple], marked=()) -> str:
    """An HTML table; ``rows`` hold each row's cells as text already escaped, one ``%`` format
    per row fills them in."""
    head = "".join(f"<th>{_esc(h)}</th>" for h in headers)
    row = "".join(
        "<td class=n>%s</td>" if j in numeric else "<td>%s</td>" for j in range(len(headers))
    )
    plain, over = f"<tr>{row}</tr>", f'<tr class="over">{row}</tr>'
    if marked:
        body = [(over if i in marked else plain) % cells for i, cells in enumerate(rows)]
    else:
        body = [plain % cells for cells in rows]
    if not rows:
        body.append(f'<tr><td colspan="{len(headers)}">Nenhum lançamento / no entries</td></tr>')
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _overtime_table(book: HoursBook) -> str:
    """The overtime book (art. 2, art. 3): a row per crew member and day."""
    e_ = _esc
    return _table(
        ["Tripulante", "Nome", "Função", "Dia", "Trabalho", "Normal", "Extra (exato)", "Extra (horas, K4)",
         "Extra tráfego porto", "Compensação"],
        {4, 5, 6, 7, 8},
        [
            (e_(crew_id), e_(name), e_(role), _day(day), _hm(worked), _hm(normal), _hm(over),
             hours, _hm(port), e_(comp))
            for crew_id, name, role, day, worked, normal, over, hours, port, comp in book.overtime
        ],
    )


def _weeks_table(book: HoursBook) -> str:
    """The weekly port-traffic overtime against its 30 h cap (art. 2 §2); weeks over it marked."""
    e_ = _esc
    return _table(
        ["Tripulante", "Nome", "Semana ISO", "Extra tráfego porto", "Extra (horas)", "Limite 30h00"],
        {3, 4},
        [
            (e_(w.crew_id), e_(w.name), f"{w.iso_year}-W{w.iso_week:02d}",
             _hm(w.port_traffic_overtime_s), w.overtime_hours,
             "EXCEDIDO / exceeded" if w.exceeds_cap else "ok")
            for w in book.weeks
        ],
        marked={i for i, w in enumerate(book.weeks) if w.exceeds_cap},
    )


def _transgressions_table(book: HoursBook) -> str:
    """The transgressions book (art. 1 §3, §4; art. 2 §2), times in the book's zone."""
    e_ = _esc
    local = _local_times(book)
    return _table(
        ["Tripulante", "Nome", "Dia", "Regra", "Artigo", "Início", "Fim", "Descrição", "Origem"],
        set(),
        [
            (e_(t.crew_id), e_(t.name), _day(t.date), e_(t.rule), e_(t.article),
             e_(local[t.start_s]), e_(local[t.end_s]), e_(f"{t.detail_pt} / {t.detail_en}"),
             e_(t.where))
            for t in book.transgressions
        ],
    )


@paused()
def book_html(book: HoursBook) -> str:
    """The printable book: header (ship, period, zone), the overtime book, the weekly port-traffic
    totals and the transgressions book, with a signature line for the master (art. 4 sole
    paragraph)."""
    esc = html.escape
    title = f"Navio {esc(book.ship)} — {book.date_from.isoformat()} a {book.date_to.isoformat()}"
    overtime, weeks, trans = _overtime_table(book), _weeks_table(book), _transgressions_table(book)
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

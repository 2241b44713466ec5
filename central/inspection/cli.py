"""``portgate crew``: the crew hours book (K1-K5), the Brazilian crew share of foreign vessels
(N1-N6), the inspection checklist and who is aboard according to the gangway gate.

Thin layer: parse options and files, call the pure cores, render, write atomically. Errors are
``PortgateError`` (``BadInput`` naming file and line, ``ConfigError`` naming the key), turned into a
one-line message and exit status 2 by ``app.cli.main``.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import click
import msgspec

from central.inspection import book_render
from central.inspection.aboard import AboardReport, who_is_aboard
from central.inspection.checklist import checklist as checklist_items
from central.inspection.crew_hours import compute_book
from central.inspection.crew_share import (
    Operation,
    ShareReport,
    assess,
    check_days,
    parse_operation,
)
from central.inspection.files import read_crew, read_periods, write_all
from portgate.cells import parse_aware
from portgate.clitext import tr
from portgate.config import load_toml
from portgate.errors import BadInput, ConfigError


class Vessel(msgspec.Struct, forbid_unknown_fields=True):
    """vessel.toml: the foreign vessel under inspection."""

    kind: Operation
    days: Annotated[int, msgspec.Meta(ge=0)]  # days of operation in Brazilian waters
    name: str = ""
    imo: str = ""
    flag: str = ""  # ISO 3166 two-letter flag state


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"unknown time zone {name!r}", key="--tz") from exc


def _date(value: str, option: str) -> dt.date:
    try:
        return dt.date.fromisoformat(value)
    except ValueError as exc:
        raise BadInput(f"{value!r} is not a date (YYYY-MM-DD)", where=option) from exc


@click.group()
def crew() -> None:
    """Crew hours book (K1-K5) and foreign-vessel crew share (N1-N6)."""


@crew.command()
@click.option(
    "--periods",
    "periods_path",
    required=True,
    type=click.Path(path_type=Path),
    help="periods.csv: work periods of each crew member.",
)
@click.option("--ship", required=True, help="Ship (as in the ship column).")
@click.option("--from", "date_from", required=True, help="First civil day (YYYY-MM-DD).")
@click.option("--to", "date_to", required=True, help="Last civil day, inclusive.")
@click.option(
    "--out",
    "out_dir",
    required=True,
    type=click.Path(path_type=Path),
    help="Output directory (overtime_book.csv, transgressions.csv, book.html).",
)
@click.option(
    "--tz",
    default="America/Sao_Paulo",
    show_default=True,
    help="The ship's time zone: civil days are counted there.",
)
def hours(
    periods_path: Path, ship: str, date_from: str, date_to: str, out_dir: Path, tz: str
) -> int:
    """Overtime book and transgressions book of a ship for a period (K1-K5, DL 1939 art. 1-4)."""
    zone = _zone(tz)
    book = compute_book(
        read_periods(periods_path),
        ship=ship,
        tz=zone,
        date_from=_date(date_from, "--from"),
        date_to=_date(date_to, "--to"),
    )
    written = write_all(
        out_dir,
        {
            "overtime_book.csv": book_render.overtime_csv(book),
            "transgressions.csv": book_render.transgressions_csv(book),
            "book.html": book_render.book_html(book),
        },
    )
    over = sum(1 for e in book.overtime if e.overtime_s)
    click.echo(tr("cli.crew.book", ship=ship, days=len(book.overtime), over=over,
                  transgressions=len(book.transgressions)))
    for path in written:
        click.echo(f"  {path}")
    return 0


def _share_json(report: ShareReport, vessel: Vessel | None) -> dict:
    frac = lambda f: str(f) if f is not None else None  # noqa: E731
    return {
        "vessel": msgspec.to_builtins(vessel) if vessel else None,
        "kind": report.kind.value,
        "days": report.days,
        "tier": (
            {
                "from_days": report.tier.from_days,
                "share": frac(report.tier.share),
                "article": report.tier.item,
            }
            if report.tier
            else None
        ),
        "complies": report.complies,
        "note_pt": report.note_pt,
        "note_en": report.note_en,
        "checks": [
            {
                "rule": c.rule,
                "article": c.article,
                "group": c.group,
                "crew": c.crew,
                "share": frac(c.share),
                "required": c.required,
                "brazilians": c.brazilians,
                "complies": c.complies,
            }
            for c in report.checks
        ],
        "not_counted": [m.crew_id for m in report.not_counted],
        "checklist": [
            {"key": i.key, "article": i.article, "pt": i.pt, "en": i.en}
            for i in checklist_items(report.kind)
        ],
    }


def _share_text(report: ShareReport, vessel: Vessel | None) -> str:
    lines = []
    if vessel and (vessel.name or vessel.imo):
        lines.append(f"Embarcação / vessel: {vessel.name} {vessel.imo}".rstrip())
    lines.append(f"Operação / kind: {report.kind.value}; {report.note_pt} / {report.note_en}")
    lines.append(f"{'rule':<5}{'group':<32}{'crew':>5}{'share':>7}{'req.':>6}{'BR':>5}  result")
    for c in report.checks:
        share = str(c.share) if c.share is not None else "-"
        verdict = "cumpre / complies" if c.complies else "NÃO CUMPRE / DOES NOT COMPLY"
        lines.append(
            f"{c.rule:<5}{c.group:<32}{c.crew:>5}{share:>7}{c.required:>6}"
            f"{c.brazilians:>5}  {verdict}"
        )
    if report.not_counted:
        ids = ", ".join(m.crew_id for m in report.not_counted)
        lines.append(f"Fora dos grupos de convés e máquinas / not counted (branch other): {ids}")
    lines.append(
        "Resultado / result: "
        + ("CUMPRE / COMPLIES" if report.complies else "NÃO CUMPRE / DOES NOT COMPLY")
    )
    lines.append("")
    lines.append(_checklist_text(report.kind))
    return "\n".join(lines)


def _checklist_text(kind: Operation | None) -> str:
    lines = ["Documentos a solicitar / documents to request (N6):"]
    lines += [f"[ ] {i.pt} / {i.en} ({i.article})" for i in checklist_items(kind)]
    return "\n".join(lines)


@crew.command()
@click.option(
    "--vessel",
    "vessel_path",
    type=click.Path(path_type=Path),
    help="vessel.toml with kind, days, name, imo, flag.",
)
@click.option("--kind", help="offshore_support|exploration|cabotage|fishing_leased|cruise")
@click.option("--days", type=int, help="Days of operation in Brazilian waters.")
@click.option(
    "--crew",
    "crew_path",
    required=True,
    type=click.Path(path_type=Path),
    help="crew.csv: crew_id, name, nationality, level, branch, role.",
)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def share(
    vessel_path: Path | None, kind: str | None, days: int | None, crew_path: Path, fmt: str
) -> int:
    """Brazilian crew required vs on board, per rule (N1-N5), and the inspection checklist (N6).

    Exit status 0 if the vessel complies, 1 if it does not, 2 for bad input."""
    vessel = None
    if vessel_path is not None:
        if kind is not None or days is not None:
            raise click.UsageError(tr("cli.crew.vessel_or_kind"))
        vessel = load_toml(vessel_path, Vessel)
        op, n = vessel.kind, vessel.days
    else:
        if kind is None or days is None:
            raise click.UsageError(tr("cli.crew.give_vessel"))
        op, n = parse_operation(kind), check_days(days)
    report = assess(op, n, read_crew(crew_path))
    if fmt == "json":
        click.echo(json.dumps(_share_json(report, vessel), ensure_ascii=False, indent=2))
    else:
        click.echo(_share_text(report, vessel))
    return 0 if report.complies else 1


@crew.command()
@click.option("--kind", help="Add the art. 13 documents for this kind of foreign vessel.")
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def checklist(kind: str | None, fmt: str) -> int:
    """The documents an inspector asks for on board (N6, instruction art. 7 and art. 13)."""
    op = parse_operation(kind) if kind else None
    if fmt == "json":
        click.echo(
            json.dumps(
                [
                    {"key": i.key, "article": i.article, "pt": i.pt, "en": i.en}
                    for i in checklist_items(op)
                ],
                ensure_ascii=False,
                indent=2,
            )
        )
    else:
        click.echo(_checklist_text(op))
    return 0


def _aboard_rows(report: AboardReport) -> list[dict]:
    return [
        {
            "crew_id": x.crew_id,
            "name": x.name,
            "on_crew_list": x.on_crew_list,
            "state": x.state.value,
            "last_tap_at": x.last_tap.at.isoformat() if x.last_tap else None,
            "last_tap_seq": x.last_tap.seq if x.last_tap else None,
            "clock_trusted": x.last_tap.clock_trusted if x.last_tap else None,
        }
        for x in report.lines
    ]


@crew.command()
@click.option("--db", "db_url", required=True, help="Ledger database URL (sqlite:///ledger.db).")
@click.option("--gate", "gate_id", required=True, help="The gangway gate's id.")
@click.option("--at", "at_text", required=True, help="ISO 8601 time with offset.")
@click.option("--crew", "crew_path", required=True, type=click.Path(path_type=Path))
@click.option(
    "--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True
)
def aboard(db_url: str, gate_id: str, at_text: str, crew_path: Path, fmt: str) -> int:
    """Who is aboard at --at according to the gangway gate's taps, against the crew list."""
    from central.db import make_engine  # the office database is imported only here  # lazy: CLI start-up
    from central.inspection.aboard_db import gate_taps  # lazy: CLI start-up

    at = parse_aware(at_text, "--at")
    crew_list = read_crew(crew_path)
    engine = make_engine(db_url)
    try:
        report = who_is_aboard(
            gate_taps(engine, gate_id, until=at), crew_list, at=at, gate_id=gate_id
        )
    finally:
        engine.dispose()
    rows = _aboard_rows(report)
    if fmt == "json":
        click.echo(
            json.dumps(
                {"gate_id": gate_id, "at": at.isoformat(), "lines": rows},
                ensure_ascii=False,
                indent=2,
            )
        )
        return 0
    # the aboard list is read by the Brazilian inspector and the foreign master alike: both languages
    click.echo(f"Portaló / gate {gate_id} em / at {at.isoformat()}")  # both languages
    labels = {
        "aboard": "a bordo / aboard",
        "ashore": "em terra / ashore",
        "presumed_aboard": "a bordo (sem registro no portaló) / presumed aboard (no tap)",
    }
    for r in rows:
        extra = "" if r["on_crew_list"] else "  FORA DA LISTA / NOT ON CREW LIST"
        when = f"  (último / last {r['last_tap_at']})" if r["last_tap_at"] else ""
        click.echo(f"{r['crew_id']:<12}{r['name']:<28}{labels[r['state']]}{when}{extra}")  # both languages
    n_aboard = len(report.aboard)
    click.echo(  # both languages
        f"A bordo / aboard: {n_aboard}; em terra / ashore: {len(report.ashore)}; "
        f"fora da lista / not on list: {len(report.not_on_list)}"
    )
    return 0

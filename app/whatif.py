"""``portgate replay``: the gate rules over CSV files (edge.replay), or with ``--from-ledger`` the
presentations a gate recorded on a past day through another gate rulebook (a safe what-if).

    portgate replay --workers W --cards C --escala E --taps T [--rulebook R] [--isolated]
    portgate replay --from-ledger --db URL --date D [--gate G] --rulebook R
                    --workers W --cards C --escala E [--reader-direction READER=in|out ...]

From the ledger: every recorded tap event of the local day ``D`` (the rulebook's port time zone),
in time order, is decided again by the gate rules with rulebook ``R`` against the gate's copies
(workers, cards, escala CSV as the office published them; reader directions are not in the events:
``--reader-direction``). Without ``--gate`` every gate is decided again with ``R``. With ``--gate G``
only G's taps are: the other gates' recorded admits, exits and confiscations stand, and reach G as
the office relays them (presence, blocklist: G2, G5), so G is replayed against what the port really
did. Nothing is stored and nothing is sent.
Output: one JSON line per read ``{at, gate_id, seq, uid, registration, recorded: {decision,
rules_failed}, what_if: {decision, rules_failed, message}, changed, rules_changed}`` (``changed``:
the decision differs; ``rules_changed``: same decision, other rules failed, e.g. a knock-on of an
earlier change), then ``{"summary": {reads, changed, rules_changed, by_gate, changes: {"deny ->
admit": n, ...}}}``. A badge the rulebook would not wait for is not paired (``badge_unpaired``).
This lives in ``app`` because it joins the ledger (central) with the gate rules (edge); the office
web application's "what if" page gets ``web_gate_what_if`` handed in (central never imports edge).
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import sys

import click

from edge.cli import replay as csv_replay
from portgate.clitext import refusal, tr, use_lang_of
from portgate.config import nesting_guard
from portgate.errors import BadInput, PortgateError


def recorded_taps(engine, day: dt.date, tz, gate: str | None) -> list:
    """The events a what-if of the local ``day`` reads from the ledger, in time order: every
    gate's taps, and with ``gate`` the other gates' confiscations too (what the office relays to
    that gate: ``what_if``)."""
    from sqlalchemy import or_, select

    from central.ledger.schema import events
    from wire.events import decode

    start = dt.datetime.combine(day, dt.time(0), tz)
    end = start + dt.timedelta(days=1)
    kinds = events.c.type == "tap"
    if gate:
        kinds = or_(kinds, (events.c.type == "confiscation") & (events.c.gate_id != gate))
    q = select(events.c.raw).where(kinds, events.c.occurred_at >= start.astimezone(dt.UTC),
                                   events.c.occurred_at < end.astimezone(dt.UTC))
    with engine.connect() as conn:
        found = [decode(r) for r in conn.execute(q.order_by(events.c.occurred_at, events.c.gate_id,
                                                           events.c.seq)).scalars()]
    return sorted(found, key=lambda e: (e.occurred_at, e.mono_ns, e.gate_id, e.seq))


def known_gates(engine) -> set[str]:
    """Gate ids the ledger knows: those with events or with a sequence progress row."""
    from sqlalchemy import select, union

    from central.ledger.schema import events, gate_progress

    q = union(select(events.c.gate_id).distinct(), select(gate_progress.c.gate_id))
    with engine.connect() as conn:
        return set(conn.execute(q).scalars())


def what_if(found: list, replay, directions: dict[str, str], gate: str | None = None) -> tuple[list[dict], dict]:
    """Decide each recorded tap again (pure apart from ``replay``'s in-memory views); return the
    rows and the summary. With ``gate``, only that gate's taps are decided again and reported; the
    other gates' taps and confiscations are applied as recorded (``Replay.apply_recorded``)."""
    from edge.replay import mono_of
    from edge.rules.model import Presentation
    from wire.events import ConfiscationPayload

    rows: list[dict] = []
    changes: collections.Counter = collections.Counter()
    by_gate: collections.Counter = collections.Counter()
    n_rules = 0
    for ev in found:
        p = ev.payload
        if gate and ev.gate_id != gate:
            at = ev.occurred_at.astimezone(dt.UTC)
            if isinstance(p, ConfiscationPayload):
                replay.apply_recorded(ev.gate_id, at, confiscated_uid=p.uid)
            else:
                replay.apply_recorded(ev.gate_id, at, registration=p.registration, decision=p.decision,
                                      flags=p.flags, dispatch=p.dispatch)
            continue
        mono = mono_of(ev.occurred_at.astimezone(dt.UTC))
        pres = Presentation(uid=p.uid, reader_id=p.reader_id, reader_kind=p.reader_kind, mono_ns=mono,
                            badge_uid=p.badge_uid, badge_mono_ns=mono if p.badge_uid else None,
                            direction=directions.get(p.reader_id, "both"))
        new = replay.decide_recorded(ev.gate_id, pres)
        changed = new["decision"] != p.decision
        rules_changed = not changed and sorted(new["rules_failed"]) != sorted(p.rules_failed)
        if changed:
            changes[f"{p.decision} -> {new['decision']}"] += 1
            by_gate[ev.gate_id] += 1
        elif rules_changed:
            n_rules += 1
        rows.append({"at": ev.occurred_at.astimezone(dt.UTC).isoformat(), "gate_id": ev.gate_id, "seq": ev.seq,
                     "uid": p.uid, "registration": p.registration or new["registration"],
                     "recorded": {"decision": p.decision, "rules_failed": list(p.rules_failed)},
                     "what_if": {"decision": new["decision"], "rules_failed": new["rules_failed"],
                                 "message": new["message"]},
                     "changed": changed, "rules_changed": rules_changed,
                     **({"badge_unpaired": True} if new.get("badge_unpaired") else {})})
    summary = {"reads": len(rows), "changed": sum(changes.values()), "rules_changed": n_rules,
               "by_gate": dict(by_gate), "changes": dict(changes)}
    return rows, summary


@click.command()
@click.option("--from-ledger", "from_ledger", is_flag=True, help="Replay a past day recorded in the ledger.")
@click.option("--db", "db_url", help="Ledger database URL (with --from-ledger).")
@click.option("--date", "day", help="Local day to replay (YYYY-MM-DD, with --from-ledger).")
@click.option("--gate", "gate_id", help="Only this gate (with --from-ledger).")
@click.option("--reader-direction", "reader_dirs", multiple=True, help="READER_ID=in|out (with --from-ledger).")
@click.option("--workers", help="workers.csv")
@click.option("--cards", help="cards.csv")
@click.option("--escala", help="escala.csv")
@click.option("--taps", help="taps.csv (streamed; not with --from-ledger)")
@click.option("--rulebook", default=None, help="gate rulebook TOML (default: built-in gate-default)")
@click.option("--isolated", is_flag=True, help="replay each gate alone (partitioned, offline)")
@click.option("--lang", type=click.Choice(["pt", "en"]), default="pt", show_default=True)
@click.pass_context
def replay(ctx, from_ledger, db_url, day, gate_id, reader_dirs, workers, cards, escala, taps, rulebook,
           isolated, lang) -> None:
    """Replay taps.csv, or a past day from the ledger, through the gate rules; one JSON line per read."""
    use_lang_of(ctx)
    if not from_ledger:
        if not all((workers, cards, escala, taps)):
            raise click.UsageError(tr("cli.replay.give_files"))
        ctx.invoke(csv_replay, workers=workers, cards=cards, escala=escala, taps=taps, rulebook=rulebook,
                   isolated=isolated, lang=lang)
        return
    if taps:
        raise click.UsageError(tr("cli.replay.taps_not_with_ledger"))
    if not all((db_url, day, rulebook, workers, cards, escala)):
        raise click.UsageError(tr("cli.replay.from_ledger_needs"))
    try:
        _from_ledger(db_url, day, gate_id, reader_dirs, workers, cards, escala, rulebook, isolated, lang)
    except PortgateError as exc:
        click.echo(f"portgate: {refusal(exc)}", err=True)
        ctx.exit(getattr(exc, "exit_code", 2))  # 1: a ledger server not reachable yet


def _from_ledger(db_url, day, gate_id, reader_dirs, workers, cards, escala, rulebook, isolated, lang) -> None:
    from central.cli_args import db_url_arg, work_day_arg
    from sqlalchemy.exc import SQLAlchemyError

    from central.db import make_engine, read_failure
    from edge.memview import Roster
    from edge.replay import Replay
    from edge.rules.rulebook import load_gate_rulebook
    from portgate.records import Card, EscalaEntry, Worker, load_csv

    the_day = work_day_arg(day, "--date")
    directions = {}
    for item in reader_dirs:
        reader, _, direction = item.partition("=")
        if direction not in ("in", "out", "both") or not reader:
            raise BadInput(f"{item!r} is not READER_ID=in|out|both", where="--reader-direction")
        directions[reader] = direction
    books = load_gate_rulebook(rulebook)
    roster = Roster(load_csv(workers, Worker), load_csv(cards, Card), load_csv(escala, EscalaEntry))
    db_url_arg(db_url, must_exist=True)
    engine = make_engine(db_url)
    try:
        if gate_id and gate_id not in known_gates(engine):
            raise BadInput(f"gate {gate_id[:64]!r} is not a known gate", where="--gate")
        found = recorded_taps(engine, the_day, books.version[0].tz, gate_id)
    except SQLAlchemyError as exc:
        where = engine.url.render_as_string(hide_password=True)
        raise read_failure(where, engine.dialect.name, exc) from exc
    finally:
        engine.dispose()
    rows, summary = what_if(found, Replay(roster, books, isolated=isolated, lang=lang), directions, gate_id)
    out = sys.stdout
    for row in rows:
        out.write(json.dumps(row, ensure_ascii=False) + "\n")
    out.write(json.dumps({"summary": summary}, ensure_ascii=False) + "\n")
    changes = ", ".join(f"{k}: {v}" for k, v in summary["changes"].items()) or tr("cli.evidence.no_gates")
    click.echo(tr("cli.replay.what_if", rulebook=rulebook, changed=summary["changed"], reads=summary["reads"],
                  changes=changes, rules_changed=summary["rules_changed"]), err=True)


def _parse_rulebook(rulebook_toml: str) -> dict:
    """The rulebook's TOML text as a dict; ``BadInput`` naming ``rulebook`` for text that is not
    TOML, nested too deeply, holds a number too long, or has no ``[[version]]``."""
    import tomllib

    with nesting_guard("rulebook"):
        try:
            raw = tomllib.loads(rulebook_toml)
        except tomllib.TOMLDecodeError as exc:
            raise BadInput(f"not TOML: {exc}", where="rulebook") from exc
        except ValueError as exc:  # an integer of more than 4300 digits (sys.get_int_max_str_digits)
            raise BadInput(f"a number has more than {sys.get_int_max_str_digits()} digits", where="rulebook") from exc
    if not raw.get("version"):
        raise BadInput("the rulebook has no version", where="rulebook")
    return raw


def _books(raw: dict):
    from edge.rules.rulebook import gate_rulebook_from

    with nesting_guard("rulebook"):
        return gate_rulebook_from(raw, "rulebook")


def _in_force_index(raw: dict, books, day: dt.date) -> int:
    """The index in ``raw["version"]`` of the version in force on local ``day``."""
    chosen = books.for_date(day).effective_from
    return next(i for i, v in enumerate(raw["version"]) if isinstance(v, dict) and v.get("effective_from") == chosen)


PARAM_KINDS = ("bool", "int", "choice", "list", "text")


def _param_kind(info) -> tuple[str, dict] | None:
    import msgspec

    ti = msgspec.inspect
    if isinstance(info, ti.BoolType):
        return "bool", {}
    if isinstance(info, ti.IntType):
        return "int", {"min": info.ge, "max": info.le}
    if isinstance(info, ti.LiteralType):
        return "choice", {"choices": [str(v) for v in info.values]}
    if isinstance(info, ti.VarTupleType) and isinstance(info.item_type, ti.StrType):
        return "list", {}
    if isinstance(info, ti.StrType):
        return "text", {}
    return None  # tables (g3 months by category, g12 categories): the raw TOML's advanced mode


def _shown(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple | list):
        return ", ".join(str(v) for v in value)
    return str(value)


def gate_parameters(rulebook_toml: str, day: dt.date) -> list[dict]:
    """The gate rulebook's settable parameters in the version in force on local ``day``, in rule
    order: ``{key: "g6.early_tolerance_min", rule: "g6", name, kind, value, min, max, choices}``
    (``kind`` one of ``PARAM_KINDS``; ``value`` the value in force as the form shows it: ``true`` /
    ``false``, a whole number, a comma-separated list; ``min``/``max`` for a whole number, None when
    unbounded; ``choices`` for a choice). Tables (category lists) are left to the raw TOML.
    ``BadInput``/``ConfigError`` as ``web_gate_what_if``'s run for a rulebook that does not load."""
    import msgspec

    from edge.rules.rulebook import GateRulebook

    version = _books(_parse_rulebook(rulebook_toml)).for_date(day)
    out = []
    for rule in msgspec.inspect.type_info(GateRulebook).fields:
        if not isinstance(rule.type, msgspec.inspect.StructType):
            continue
        settings = getattr(version, rule.name)
        for f in rule.type.fields:
            kind = _param_kind(f.type)
            if kind is None:
                continue
            out.append({"key": f"{rule.name}.{f.name}", "rule": rule.name, "name": f.name, "kind": kind[0],
                        "value": _shown(getattr(settings, f.name)), "min": kind[1].get("min"),
                        "max": kind[1].get("max"), "choices": kind[1].get("choices", [])})
    return sorted(out, key=lambda p: (int(p["rule"][1:]), p["name"] != "enabled", p["name"]))


TRUE_WORDS, FALSE_WORDS = ("true", "sim", "yes", "s", "1"), ("false", "não", "nao", "no", "n", "0")


def parse_parameter(param: dict, typed: str):
    """The value ``typed`` in the form for ``param`` (as ``gate_parameters`` gives it), as the
    rulebook holds it: a bool (true/false, sim/não), an int, one of the choices, a list of texts
    (comma-separated), a text. ``BadInput`` naming ``value`` with the reason otherwise (range and
    the rest are the rulebook's own check, ``gate_rulebook_from``, when the what-if runs)."""
    text = typed.strip()
    kind, name = param["kind"], param["name"]
    if not text and kind != "list":
        raise BadInput("type a value", where="value")
    if kind == "bool":
        if text.lower() in TRUE_WORDS:
            return True
        if text.lower() in FALSE_WORDS:
            return False
        raise BadInput(f"{text[:40]!r} is not true or false (sim or não)", where="value")
    if kind == "int":
        if not text.lstrip("-").isdigit() or len(text) > 12:
            raise BadInput(f"{name} {text[:40]!r} is not a whole number", where="value")
        number = int(text)
        low, high = param.get("min"), param.get("max")
        if low is not None and high is not None and not low <= number <= high:
            raise BadInput(f"{name} {number} is outside {low}..{high}", where="value")
        return number
    if kind == "choice":
        if text not in param["choices"]:
            raise BadInput(f"{name} {text[:40]!r} is not one of {', '.join(param['choices'])}", where="value")
        return text
    if kind == "list":
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def with_parameter(rulebook_toml: str, day: dt.date, key: str, value) -> dict:
    """The rulebook (parsed TOML) with parameter ``key`` (``g6.early_tolerance_min``) set to
    ``value`` in the version in force on ``day``, checked as a whole (``gate_rulebook_from``).
    ``BadInput`` naming ``param`` for a key the version has not; ``BadInput`` naming ``value`` for
    a value the rulebook refuses (the reason as the rulebook's check words it)."""
    raw = _parse_rulebook(rulebook_toml)
    books = _books(raw)
    known = {p["key"] for p in gate_parameters(rulebook_toml, day)}
    if key not in known:
        raise BadInput(f"{key[:60]!r} is not a parameter of the rulebook", where="param")
    rule, name = key.split(".", 1)
    version = raw["version"][_in_force_index(raw, books, day)]
    section = version.setdefault(rule, {})
    if not isinstance(section, dict):
        raise BadInput(f"{rule} is not a table in the rulebook", where="param")
    section[name] = value
    try:
        _books(raw)
    except PortgateError as exc:
        raise BadInput(getattr(exc, "reason", None) or str(exc), where="value") from None
    return raw


class GateWhatIf:
    """The gate what-if for the office web application (``web_gate_what_if``): called as
    ``run(engine, day, gate_id | None, rulebook_toml, directions, lang, change=None, gates=None)`` ->
    ``(rows, summary)`` as ``what_if``; ``change``: ``(key, value)`` set in the version in force
    (``with_parameter``) before the run; ``gates``: ``gate_id -> bool``, the gates read (None: all). ``parameters(rulebook_toml, day)`` and ``parse(param,
    typed)`` are ``gate_parameters`` and ``parse_parameter``."""

    parameters = staticmethod(gate_parameters)
    parse = staticmethod(parse_parameter)

    def __init__(self, publish) -> None:
        self.publish = publish

    def __call__(self, engine, day: dt.date, gate_id: str | None, rulebook_toml: str,
                 directions: dict[str, str], lang: str, change: tuple[str, object] | None = None,
                 gates=None) -> tuple[list[dict], dict]:
        from edge.replay import Replay

        if change is not None:
            raw = with_parameter(rulebook_toml, day, *change)
        else:
            raw = _parse_rulebook(rulebook_toml)
        books = _books(raw)
        if gate_id and gate_id not in known_gates(engine):
            raise BadInput(f"gate {gate_id[:64]!r} is not a known gate", where="gate")
        roster = _copies(engine, self.publish, day)
        found = recorded_taps(engine, day, books.version[0].tz, gate_id)
        found = found if gates is None else [e for e in found if gates(e.gate_id)]  # a port's view
        return what_if(found, Replay(roster, books, lang=lang), directions, gate_id)


def web_gate_what_if(publish) -> GateWhatIf:
    """The gate what-if for the office web application, over the gates' copies as the office
    publishes them (``publish``: central.toml's ``[publish]``): with ``source = "csv"`` its
    ``workers_csv``/``cards_csv``/``escala_csv``, with ``source = "registry"`` the registry as it is
    now and the stored escala of the day and the days around it. Returns a ``GateWhatIf``: called
    as ``run(engine, day, gate_id | None, rulebook_toml, directions, lang) -> (rows, summary)`` as
    ``what_if``; ``run`` raises ``BadInput`` for a
    rulebook that is not TOML, is nested too deeply or has no ``[[version]]``, and for a gate id the
    ledger does not know (``known_gates``), ``ConfigError`` for one that is not a valid gate rulebook or for
    copies that are not configured. Nothing is stored."""
    return GateWhatIf(publish)


def _copies(engine, publish, day: dt.date):
    from edge.memview import Roster
    from portgate.errors import ConfigError
    from portgate.records import Card, EscalaEntry, Worker, load_csv

    if publish.source == "registry":
        from sqlalchemy.orm import Session

        from central.registry.api import roster_snapshot
        from central.rotation.service import escala_snapshot

        with Session(engine) as s:
            _v, ws, cs = roster_snapshot(s)
            entries = [e for d in (-1, 0, 1) for e in escala_snapshot(s, day + dt.timedelta(days=d))[1]]
        return Roster(ws, cs, entries)
    files = (publish.workers_csv, publish.cards_csv, publish.escala_csv)
    if not all(files):
        raise ConfigError("the gates' copies are not named: give workers_csv, cards_csv and escala_csv "
                          "(or source = \"registry\")", key="publish", path="central.toml")
    return Roster(load_csv(files[0], Worker), load_csv(files[1], Card), load_csv(files[2], EscalaEntry))

"""requisitions.csv: the requisitioners' requests for workers, one row per ship, post and period.

Columns (header row, UTF-8): ``ref`` (optional, the requisitioner's reference; default
``requisitions.csv:LINE``), ``date`` (local date, YYYY-MM-DD), ``period`` (``07-13``...),
``operator`` (who requisitioned: the port operator / shipping agent), ``ship`` (IMO),
``ship_name`` (optional), ``voyage`` (``long_haul|cabotage``), ``berth`` (``berthed|anchored``),
``gate_id`` (an id the gate accepts, ``wire.topics.check_id``), ``post`` (e.g. ``portalo``), ``function`` (``vigia``, ``vigia_chefe``...),
``workers`` (how many, 1 to ``MAX_WORKERS`` = 200: one post of one ship and period), ``category`` (optional; default from the function:
``vigia_chefe`` -> ``vigia``, ``contramestre`` -> ``estivador``); and the optional
``DETAIL_COLUMNS`` of stevedoring requisitions. Any other header column is refused. Every text
must fit its column of the ``requisitions`` table (``central.bounds``: ``post`` at most 64
characters, ``operator`` 128 ...); the escala's columns are as wide.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
import dataclasses
from pathlib import Path

from central import bounds
from central.rotation.engine import Requisition, category_of, function_problem
from central.rotation.schema import requisitions
from portgate import cells
from portgate.errors import BadInput
from portgate.records import Berth, EscalaEntry, Voyage, build_each
from portgate.tables import read_rows as read_table
from wire.topics import check_id

COLUMNS = ("ref", "date", "period", "operator", "ship", "ship_name", "voyage", "berth", "gate_id",
           "post", "function", "workers", "category")
# the DL 2.032 art. 9 and gang-composition columns (``central.rotation.requisition_checks``)
DETAIL_COLUMNS = ("made_at", "start_time", "cargo", "holds", "place", "unit", "units")
MAX_WORKERS = 200  # workers per requisition: more than any post of one ship and period needs
REQUIRED = ("date", "period", "operator", "ship", "voyage", "berth", "gate_id", "post", "function",
            "workers")


def _build(source: str, functions: frozenset[str] | None):
    line = {"n": 1}

    def build(row: Mapping[str, str]) -> Requisition:
        line["n"] += 1
        probe = EscalaEntry.from_row(dict(row) | {"registration": "-"})  # validates shared columns
        check_id(probe.gate_id, "gate_id")  # one MQTT topic level, as the gate's own check
        operator = (row.get("operator") or "").strip()
        if not operator:
            raise BadInput("operator is required")
        try:
            count = cells.whole(row.get("workers"), "workers")  # ASCII digits only: int() takes "٣"
        except BadInput as exc:
            raise BadInput(f"workers {row.get('workers')!r} is not a whole number") from exc
        if not 1 <= count <= MAX_WORKERS:
            raise BadInput(f"workers must be between 1 and {MAX_WORKERS}, not {count}")
        function = probe.function
        problem = None if functions is None else function_problem(function, functions)
        if problem:
            raise BadInput(problem)
        category = (cells.term(row["category"], "category") if (row.get("category") or "").strip()
                    else category_of(function))
        req = Requisition(
            ref=(row.get("ref") or "").strip() or f"{source}:{line['n']}", date=probe.date,
            period=probe.period, operator=operator, ship=probe.ship, ship_name=probe.ship_name,
            voyage=Voyage(probe.voyage), berth=Berth(probe.berth), gate_id=probe.gate_id,
            post=probe.post, function=function, workers=count, category=category)
        bounds.check(requisitions, dataclasses.asdict(req), columns=COLUMNS)
        return req

    return build


def load_requisitions(path: str | Path, functions: Collection[str] | None = None) -> list[Requisition]:
    """Read requisitions.csv. ``functions``: the functions a row may name (the office's,
    ``central.rotation.service.known_functions``); None: any. Raises ``BadInput`` naming every bad
    row ``file:line`` (an unknown function included; nothing is returned if any row is bad), or
    the missing header columns, or a header column outside ``COLUMNS`` and ``DETAIL_COLUMNS``
    (``requisitions.csv:1``), or a missing/non-UTF-8 file."""
    build = _build(Path(path).name, None if functions is None else frozenset(functions))

    def checked(row, where):
        missing = [c for c in REQUIRED if row.get(c) is None]
        if missing:
            raise BadInput(f"missing column(s) {', '.join(missing)}")
        return where, build(row)

    placed, errors = build_each(read_table(path, REQUIRED, known=COLUMNS + DETAIL_COLUMNS), checked)
    if errors:  # the good rows' repeats too, so one run names every row to fix
        errors = sorted(errors + _repeats(placed), key=lambda e: int(e.split(": ", 1)[0].rsplit(":", 1)[-1]))
        raise BadInput("\n".join(errors))
    return [r for _where, r in placed]


def _repeats(placed: list[tuple[str, Requisition]]) -> list[str]:
    """``file:line: repeats requisition REF (period/ship/gate/post/function)`` for each good row
    whose date and key (``central.rotation.service.requisition_key``) an earlier row has."""
    seen: dict[tuple, Requisition] = {}
    out = []
    for where, r in placed:
        key = (r.date, r.period, r.ship, r.gate_id, r.post, r.function)
        if key in seen:
            out.append(f"{where}: repeats requisition {seen[key].ref} ({'/'.join(key[1:])})")
        seen.setdefault(key, r)
    return out

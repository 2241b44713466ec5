"""The rotation engine (rodízio): fill requisitions from the rotation queue. Pure: no clock, no DB.

R1 (83.611 art. 10; DL 2.032 art. 14; Lei 9.719 art. 5): each requisition takes the next eligible
workers of its category in rotation order. The queue of a category is ordered by
``(last_turn, rotation_number)``: ``last_turn`` is the category's turn counter when the worker was
last taken (0 = never). Taking a worker gives them the next turn number, so they go to the back.

R2 (83.611 arts. 21, 22; Lei 9.719 arts. 7, 8): a worker whose registration is not valid on the date
(G3), who is already dispatched in an overlapping period, or who would have less than 11 h of rest
(G7) before or after the requisition's period is passed over and *keeps their place*: their
``last_turn`` does not change, so they stay ahead of everybody taken and get the first job they are
eligible for — one job, not a catch-up of every turn missed.

Requisitions are filled in order of period start, then input order. With every worker eligible the
queue is a plain round robin: shift counts differ by at most one.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections import OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from statistics import mean
from zoneinfo import ZoneInfo

from central.rotation.eligibility import Ineligible, ValiditySettings, registration_problems
from portgate.records import Berth, EscalaEntry, Voyage, Worker
from portgate.rest import MIN_REST_HOURS, rest_between
from portgate.timeutil import require_aware

Interval = tuple[dt.datetime, dt.datetime]  # aware UTC [start, end)

# A requisition names a function; the rotation is per category. The office's functions: the gate's
# default G12 table (category -> functions, edge/rules/rulebook.py ``DEFAULT_CATEGORY_FUNCTIONS``;
# 83.611 art. 1, DL 2.032 art. 12 §1, DL 3.844 art. 4) read the other way (a test keeps the two
# equal). A category registered in the registry is also a function of its own (a port's
# ``arrumador``); any other function is refused at dispatch (``known_functions``). A
# requisitions.csv ``category`` column overrides the category.
FUNCTION_CATEGORY: dict[str, str] = {
    "vigia": "vigia",
    "vigia_chefe": "vigia",
    "estivador": "estivador",
    "contramestre": "estivador",
    "contramestre_geral": "estivador",
    **{f: "capatazia" for f in ("trabalhador", "motorista_armazem", "feitor", "ajudante_feitor",
                                "motorista_guindaste", "conferente")},
}


def category_of(function: str) -> str:
    """The rotation category that serves ``function`` (``vigia_chefe`` -> ``vigia``)."""
    return FUNCTION_CATEGORY.get(function, function)


def known_functions(categories: Iterable[str]) -> frozenset[str]:
    """The functions a requisition may name: ``FUNCTION_CATEGORY``'s and each of ``categories``
    (the categories registered: a category is its own function). Pure."""
    return frozenset(FUNCTION_CATEGORY) | frozenset(categories)


def function_problem(function: str, known: frozenset[str]) -> str | None:
    """Why a requisition's ``function`` cannot be dispatched (a function no category fills: nobody
    in the rotation could take it and the gate would refuse whoever came, G12), or None. Pure."""
    if function in known:
        return None
    return (f"function {function!r} is unknown to the office (no category fills it): the functions are "
            f"{', '.join(sorted(known))}")


@dataclasses.dataclass(frozen=True, slots=True)
class Requisition:
    """A requisitioner's request for ``workers`` workers of ``function`` on one ship, post and
    period of local date ``date`` (a row of requisitions.csv)."""

    ref: str
    date: dt.date
    period: str
    operator: str
    ship: str
    ship_name: str
    voyage: Voyage
    berth: Berth
    gate_id: str
    post: str
    function: str
    workers: int
    category: str

    def entry(self, registration: str) -> EscalaEntry:
        """The escala entry dispatching ``registration`` to this requisition."""
        return EscalaEntry(date=self.date, period=self.period, ship=self.ship,
                           ship_name=self.ship_name, voyage=self.voyage, berth=self.berth,
                           gate_id=self.gate_id, post=self.post, function=self.function,
                           registration=registration)


@dataclasses.dataclass(frozen=True, slots=True)
class RotationSettings:
    tz: str = "America/Sao_Paulo"
    rest_hours: float = MIN_REST_HOURS  # G7 / Lei 9.719 art. 8
    validity: ValiditySettings = ValiditySettings()


def ended_at(entry: EscalaEntry, now: dt.datetime, tz: str) -> dt.datetime | None:
    """When ``entry``'s period has ended at ``now`` (aware; the caller's clock, never read here):
    its end in the port's time ``tz`` (aware, for the message); None while it has not ended (it is
    still to come or under way: a late requisition or a substitution during the period is fine).
    A dispatch of an ended period is the record of who was called (R5, Lei 9.719 art. 7): it is
    neither dispatched nor changed afterwards (docs/office.md, "A past escala"). Pure.
    ``ValueError`` for a naive ``now`` (a programming error)."""
    end = entry.bounds(tz)[1]
    return end.astimezone(ZoneInfo(tz)) if require_aware(now, "now") >= end else None


@dataclasses.dataclass(frozen=True, slots=True)
class Assignment:
    requisition: Requisition
    entry: EscalaEntry
    turn: int  # the turn number the worker took


@dataclasses.dataclass(frozen=True, slots=True)
class Skip:
    """A worker passed over for a requisition because of a rest or overlap conflict (R2)."""

    requisition_ref: str
    registration: str
    reason: Ineligible


@dataclasses.dataclass(frozen=True, slots=True)
class Shortfall:
    requisition: Requisition
    missing: int


@dataclasses.dataclass(frozen=True, slots=True)
class DispatchResult:
    assignments: tuple[Assignment, ...]
    skips: tuple[Skip, ...]
    shortfalls: tuple[Shortfall, ...]
    turns: dict[str, int]  # new last_turn of every worker taken
    ineligible: dict[str, tuple[Ineligible, ...]]  # G3 problems of workers whose turn came


def _conflict(interval: Interval, busy: Iterable[Interval], rest: dt.timedelta) -> Ineligible | None:
    start, end = interval
    worst = None
    for b_start, b_end in busy:
        if start < b_end and b_start < end:
            return Ineligible.OVERLAP
        gap = rest_between(b_end, start) if b_end <= start else rest_between(end, b_start)
        if gap < rest:
            worst = Ineligible.REST
    return worst


def dispatch(
    requisitions: Sequence[Requisition],
    workers: Iterable[Worker],
    turns: Mapping[str, int],
    busy: Mapping[str, Sequence[Interval]],
    settings: RotationSettings = RotationSettings(),
    *,
    exclude: frozenset[str] = frozenset(),
) -> DispatchResult:
    """Fill ``requisitions`` from the rotation queue (R1, R2). Pure.

    ``workers``: the registry (workers without a ``rotation_number`` are not in the rotation).
    ``turns``: each worker's ``last_turn`` (missing = 0). ``busy``: each worker's already dispatched
    periods (aware UTC intervals, any day) for the overlap and rest checks. ``exclude``: workers not
    to take (e.g. the one being substituted). Returns the assignments, the rest/overlap skips, the
    positions that could not be filled (shortfalls), the new turns and the G3 problems found.
    """
    queues, counters = _queues(workers, turns)
    taken_busy: dict[str, list[Interval]] = {}
    validity: dict[tuple[str, dt.date], list[Ineligible]] = {}  # G3 problems per worker and day, found once
    ineligible: dict[str, tuple[Ineligible, ...]] = {}
    assignments: list[Assignment] = []
    skips: list[Skip] = []
    shortfalls: list[Shortfall] = []
    new_turns: dict[str, int] = {}

    bounds = [r.entry("").bounds(settings.tz) for r in requisitions]
    order = sorted(range(len(requisitions)), key=lambda i: (bounds[i][0], i))
    for index in order:
        req = requisitions[index]
        interval = bounds[index]
        queue = queues.get(req.category, OrderedDict())
        chosen = _choose(req, interval, queue, exclude, settings, busy, taken_busy, validity, ineligible, skips)
        for reg in chosen:
            counters[req.category] += 1
            new_turns[reg] = counters[req.category]
            queue.move_to_end(reg)
            taken_busy.setdefault(reg, []).append(interval)
            assignments.append(Assignment(req, req.entry(reg), new_turns[reg]))
        if len(chosen) < req.workers:
            shortfalls.append(Shortfall(req, req.workers - len(chosen)))
    return DispatchResult(tuple(assignments), tuple(skips), tuple(shortfalls), new_turns, ineligible)


def merge(results: Iterable[DispatchResult]) -> DispatchResult:
    """One result of several ``dispatch`` runs over disjoint worker pools (one per port: each port's
    requisitions from its own workers, Lei 12.815 arts. 32-33), in the runs' order. Pure."""
    results = list(results)
    ineligible: dict[str, tuple[Ineligible, ...]] = {}
    turns: dict[str, int] = {}
    for r in results:
        turns.update(r.turns)
        ineligible.update(r.ineligible)
    return DispatchResult(tuple(a for r in results for a in r.assignments), tuple(k for r in results for k in r.skips),
                          tuple(s for r in results for s in r.shortfalls), turns, ineligible)


def _choose(req: Requisition, interval: Interval, queue: OrderedDict[str, Worker], exclude: frozenset[str],
            settings: RotationSettings, busy: Mapping[str, Sequence[Interval]], taken_busy: dict[str, list[Interval]],
            validity: dict, ineligible: dict, skips: list[Skip]) -> list[str]:
    """The first ``req.workers`` of ``queue`` (in order) who may take ``interval``: not excluded,
    no G3 problem on the day (recorded in ``ineligible``), no overlap or short rest against what
    they were dispatched before or in this run (each a ``Skip``, R2)."""
    rest = dt.timedelta(hours=settings.rest_hours)
    chosen: list[str] = []
    for reg, worker in queue.items():
        if len(chosen) == req.workers:
            break
        if reg in exclude:
            continue
        key = (reg, req.date)
        problems = validity.get(key)
        if problems is None:
            problems = validity[key] = registration_problems(worker, req.date, settings.validity)
        if problems:
            ineligible[reg] = tuple(problems)
            continue
        conflict = _conflict(interval, busy.get(reg, ()), rest) or _conflict(interval, taken_busy.get(reg, ()), rest)
        if conflict is not None:
            skips.append(Skip(req.ref, reg, conflict))
            continue
        chosen.append(reg)
    return chosen


def _queues(workers: Iterable[Worker], turns: Mapping[str, int]
            ) -> tuple[dict[str, OrderedDict[str, Worker]], dict[str, int]]:
    """Per category, the rotation queue (R1: fewest turns first, then rotation number, then
    registration; workers without a rotation number are not in it) and the category's turn counter
    (its highest ``last_turn``)."""
    by_category: dict[str, list[Worker]] = {}
    for worker in workers:
        if worker.rotation_number is not None:
            by_category.setdefault(worker.category, []).append(worker)
    queues: dict[str, OrderedDict[str, Worker]] = {}
    counters: dict[str, int] = {}
    for category, members in by_category.items():
        members.sort(key=lambda w: (turns.get(w.registration, 0), w.rotation_number, w.registration))
        queues[category] = OrderedDict((w.registration, w) for w in members)
        counters[category] = max((turns.get(w.registration, 0) for w in members), default=0)
    return queues, counters


@dataclasses.dataclass(frozen=True, slots=True)
class Fairness:
    """Shifts per worker over a month against the R6 target (25 shifts, 83.611 art. 13)."""

    shifts: dict[str, int]  # registration -> shifts in the month (0 for those with none)
    average: float
    spread: int  # max - min shifts
    fairest_spread: int  # 0 if the total divides evenly among the workers, else 1
    target: int

    def distance(self, registration: str) -> int:
        """Shifts of ``registration`` minus the target (negative: fewer than 25)."""
        return self.shifts[registration] - self.target


def fairness(counts: Mapping[str, int], registered: Iterable[str], target: int = 25) -> Fairness:
    """Fairness figures for ``registered`` workers given their shift ``counts``. Pure."""
    shifts = {reg: counts.get(reg, 0) for reg in registered}
    if not shifts:
        return Fairness({}, 0.0, 0, 0, target)
    total = sum(shifts.values())
    values = shifts.values()
    return Fairness(shifts, mean(values), max(values) - min(values),
                    0 if total % len(shifts) == 0 else 1, target)

"""Property tests: ``decide`` returns a Decision for any state and any read, never raises."""

from __future__ import annotations

import datetime as dt

from hypothesis import given, settings
from hypothesis import strategies as st

from edge.memview import MemoryGateView, Presence, Roster
from edge.display.said import decide  # the rules with their words (edge.rules.engine.decide: none)
from edge.rules.model import Decision, InspectorSession, Now, OpenShift, Outcome, Presentation
from edge.rules.rulebook import (
    G4Settings, G7Settings, G8Settings, GateRulebook,
)
from portgate.records import (
    Berth, Card, CardKind, CardStatus, EscalaEntry, Voyage, Worker, WorkerStatus,
)

UIDS = st.sampled_from(["AA000001", "AA000002", "BB000001", "CC000001"])
ANY_UID = st.one_of(UIDS, st.text(max_size=30), st.from_regex(r"[0-9A-Fa-f:]{0,24}", fullmatch=True))
REGS = st.sampled_from(["1001", "1002", "9001", ""])
GATES = st.sampled_from(["GA", "GB", "GC"])
DATES = st.dates(min_value=dt.date(1990, 1, 1), max_value=dt.date(2100, 12, 31))
AWARE = st.datetimes(min_value=dt.datetime(1971, 1, 1), max_value=dt.datetime(2099, 1, 1),
                     timezones=st.just(dt.UTC))
PERIODS = st.one_of(st.sampled_from(["07-13", "13-19", "19-01", "01-07"]), st.text(max_size=6))

workers = st.builds(
    Worker, registration=REGS, name=st.text(max_size=5), category=st.sampled_from(["vigia", "estivador", ""]),
    status=st.sampled_from(WorkerStatus), suspended_from=st.none() | DATES,
    suspended_until=st.none() | DATES, health_exam_date=st.none() | DATES,
    booklet_revalidated_year=st.none() | st.integers(-5, 9999), rotation_number=st.none() | st.integers(),
)
cards = st.builds(Card, uid=ANY_UID, kind=st.sampled_from(CardKind), registration=REGS,
                  status=st.sampled_from(CardStatus))
entries = st.builds(
    EscalaEntry, date=DATES, period=PERIODS, ship=st.sampled_from(["S1", "S2"]), ship_name=st.text(max_size=3),
    voyage=st.sampled_from(Voyage), berth=st.sampled_from(Berth), gate_id=GATES,
    post=st.sampled_from(["portalo", "x"]), function=st.sampled_from(["vigia", "estivador"]),
    registration=REGS,
)
shifts = st.builds(OpenShift, registration=REGS, gate_id=GATES, ship=st.sampled_from(["S1", "S2"]),
                   admitted_at=AWARE, dispatch=st.none() | entries)
rulebooks = st.builds(
    GateRulebook,
    g4=st.builds(G4Settings, card_and_badge_required=st.booleans(), enabled=st.booleans()),
    g7=st.builds(G7Settings, mode=st.sampled_from(["deny", "warn"]), rest_hours=st.integers(0, 48)),
    g8=st.builds(G8Settings, stale_mode=st.sampled_from(["admit_flagged", "deny"])),
)


@st.composite
def scenarios(draw):
    roster = Roster(draw(st.lists(workers, max_size=4)), draw(st.lists(cards, max_size=6)),
                    draw(st.lists(entries, max_size=8)))
    presence = Presence()
    for shift in draw(st.lists(shifts, max_size=3)):
        presence.open_shifts[shift.registration] = shift
    for reg, end in draw(st.dictionaries(REGS, AWARE | st.datetimes(), max_size=3)).items():
        presence.last_end[reg] = end
    for uid, flags in draw(st.dictionaries(UIDS, st.lists(st.sampled_from(
            ["ROTATION_JUMP", "BORROWED_CARD", "WHATEVER"]), max_size=2), max_size=2)).items():
        presence.pending[uid] = flags
    view = MemoryGateView(draw(GATES), roster, presence, tz="America/Sao_Paulo",
                          ship=draw(st.none() | st.sampled_from(["S1", "S2"])),
                          data_updated_at=draw(st.none() | AWARE | st.datetimes()))
    if draw(st.booleans()):
        view.session = InspectorSession("CC000001", "9001", draw(st.integers(-10**18, 10**18)))
    mono = draw(st.integers(-10**18, 10**18))
    presentation = Presentation(
        uid=draw(ANY_UID), reader_id="r", reader_kind=draw(st.sampled_from(["control", "badge", "??"])),
        mono_ns=mono, badge_uid=draw(st.none() | ANY_UID),
        badge_mono_ns=draw(st.none() | st.integers(-10**18, 10**18)),
    )
    now = Now(wall=draw(AWARE), mono_ns=mono, clock_trusted=draw(st.booleans()))
    return view, presentation, now, draw(rulebooks)


@settings(max_examples=150, deadline=None)
@given(scenarios())
def test_decide_never_raises_and_is_consistent(scenario):
    view, presentation, now, rulebook = scenario
    d = decide(view, presentation, now, rulebook)
    assert isinstance(d, Decision)
    assert list(d.rules_failed) == sorted(set(d.rules_failed), key=lambda r: int(r[1:]))
    assert d.message_pt and d.message_en
    if d.outcome is Outcome.ADMIT:
        assert not d.confiscate and all(r in ("G7", "G8") for r in d.rules_failed)
    if d.confiscate:
        assert d.outcome is Outcome.DENY and d.confiscation_article


@settings(max_examples=60, deadline=None)
@given(scenarios(), st.integers(1, 10**12))
def test_clock_jumping_backwards_still_decides(scenario, back_ns):
    view, presentation, now, rulebook = scenario
    first = decide(view, presentation, now, rulebook)
    earlier = Now(wall=now.wall - dt.timedelta(hours=3), mono_ns=now.mono_ns - back_ns,
                  clock_trusted=now.clock_trusted)
    second = decide(view, presentation, earlier, rulebook)
    assert isinstance(first, Decision) and isinstance(second, Decision)


@settings(max_examples=40, deadline=None)
@given(scenarios())
def test_decide_is_a_pure_function_of_its_inputs(scenario):
    view, presentation, now, rulebook = scenario
    assert decide(view, presentation, now, rulebook) == decide(view, presentation, now, rulebook)

"""Issue 8 end to end: registry and rotation changes reach the gates' stores as deltas within seconds
(real mosquitto, real SQLite office, real gate Store + Sync), and the gate rules act on them."""

from __future__ import annotations

import datetime as dt
import time

from sqlalchemy.orm import Session

from central.registry import confiscation, store
from central.registry.api import roster_snapshot
from central.registry.changes import utcnow
from central.rotation import service
from edge.display.said import decide  # the rules with their words (edge.rules.engine.decide: none)
from edge.rules.model import Now, Outcome, Presentation
from edge.rules.rulebook import GateRulebook
from portgate.records import CardStatus, WorkerStatus
from tests.central.broadcast.conftest import ACTOR, TZ, control_uid, day_start, now, today
from testkit.wait import wait_until
from wire.connection import MqttConfig
from wire.events import ConfiscationPayload

RB = GateRulebook()


def present(view, uid: str, wall: dt.datetime):
    mono = time.monotonic_ns()
    return decide(view, Presentation(uid=uid, reader_id="r1", reader_kind="control", mono_ns=mono),
                  Now(wall=wall, mono_ns=mono), RB)


def local_noon(day: dt.date) -> dt.datetime:
    return dt.datetime.combine(day, dt.time(12), TZ).astimezone(dt.UTC)


def test_a_suspension_reaches_the_gate_and_g3_denies_from_its_start_date(broker, office, make_gate):
    regs = office.add_workers(2)
    ingest = office.start(broker)
    g1 = make_gate("g1")
    g1.start(broker, store=g1.store)
    wait_until(lambda: g1.store.worker(regs[0]) is not None, what="roster snapshot at g1")
    # the gate's roster can come from the answer to its snapshot request before the publisher's
    # first poll (a loaded machine): that poll's snapshots would then carry the suspension, no delta
    wait_until(lambda: ingest.publisher.stats["polls"] >= 1, what="the publisher's first poll")
    start = today() + dt.timedelta(days=1)
    with Session(office.engine) as s, s.begin():
        store.suspend(s, regs[0], start=start, days=10, reason="R4 test", article="83.611 art. 21 a",
                      actor=ACTOR)
    w = wait_until(lambda: (w := g1.store.worker(regs[0])) and w.suspended_from and w, what="suspension at g1")
    assert (w.status, w.suspended_from, w.suspended_until) == (
        WorkerStatus.SUSPENDED, start, start + dt.timedelta(days=9))
    # the publisher counts a delta after sending it: on a loaded machine the gate can apply it first
    wait_until(lambda: ingest.publisher.stats["deltas"] >= 1, what="the suspension published as a delta")
    uid = control_uid(regs[0])
    assert "G3.suspended" not in present(g1.store, uid, local_noon(today())).reasons
    on_start = present(g1.store, uid, local_noon(start))
    assert on_start.outcome is Outcome.DENY and "G3.suspended" in on_start.reasons
    assert "G3.suspended" in present(g1.store, uid, local_noon(start + dt.timedelta(days=9))).reasons
    assert "G3.suspended" not in present(g1.store, uid, local_noon(start + dt.timedelta(days=10))).reasons


def test_replace_card_blocks_the_old_card_and_makes_the_new_one_known(broker, office, make_gate):
    regs = office.add_workers(1)
    office.start(broker)
    g1 = make_gate("g1")
    g1.start(broker, store=g1.store)
    old = control_uid(regs[0])
    wait_until(lambda: g1.store.card(old) is not None, what="roster snapshot at g1")
    with Session(office.engine) as s, s.begin():
        store.replace_card(s, old, "BB000001", actor=ACTOR)
    wait_until(lambda: g1.store.card("BB000001") is not None, what="new card at g1")
    assert g1.store.card("BB000001").status is CardStatus.ACTIVE
    assert g1.store.card(old).status is not CardStatus.ACTIVE
    decision = present(g1.store, old, dt.datetime.now(dt.UTC))
    assert decision.outcome is Outcome.DENY and "G2" in decision.rules_failed


def test_a_late_substitution_is_republished_at_once(broker, office, make_gate):
    office.add_workers(3)
    (entry_id,) = office.dispatch(today())
    office.start(broker)
    g1 = make_gate("g1")
    g1.start(broker, store=g1.store)
    at = local_noon(today())
    first = wait_until(lambda: g1.store.gate_dispatches(at), what="escala at g1")
    out = first[0].registration
    with Session(office.engine) as s, s.begin():
        new_id = service.substitute(s, entry_id, reason="sick", actor=ACTOR, now=day_start(today()))
    assert new_id is not None
    wait_until(lambda: [e.registration for e in g1.store.gate_dispatches(at)] not in ([out], []),
               what="substitute at g1")
    (entry,) = g1.store.gate_dispatches(at)
    assert entry.registration != out and (entry.ship, entry.period) == (first[0].ship, first[0].period)
    assert g1.store.dispatches(out, at) == []


def test_escala_of_tomorrow_is_published_and_later_days_are_not(broker, office, make_gate):
    office.add_workers(3)
    office.start(broker)
    g1 = make_gate("g1")
    g1.start(broker, store=g1.store)
    tomorrow, later = today() + dt.timedelta(days=1), today() + dt.timedelta(days=3)
    office.dispatch(tomorrow)
    office.dispatch(later)
    wait_until(lambda: g1.store.gate_dispatches(local_noon(tomorrow)), what="tomorrow's escala at g1")
    assert g1.store.gate_dispatches(local_noon(later)) == []


def test_yesterdays_escala_stays_at_the_gate_for_its_period_past_midnight(broker, office, make_gate):
    """The 19-01 period of yesterday runs until 01:00 today: the snapshot keeps yesterday's entries,
    so a worker of that period tapping after midnight is dispatched (G6), not refused."""
    office.add_workers(3)
    office.start(broker)
    g1 = make_gate("g1")
    g1.start(broker, store=g1.store)
    yesterday = today() - dt.timedelta(days=1)
    office.dispatch(yesterday)
    wait_until(lambda: g1.store.gate_dispatches(local_noon(yesterday)), what="yesterday's escala at g1")
    assert {e.date for e in g1.store.gate_dispatches(local_noon(yesterday))} == {yesterday}


def confiscate(gate, uid: str, registration: str):
    gate.journal.append(ConfiscationPayload(uid=uid, registration=registration, inspector_uid="FF000001",
                                            inspector_registration="F1", reason_flag="BORROWED_CARD",
                                            article="83.611 art. 20 j/l"), now=now(), priority=1)
    gate.sync.notify()


def test_a_confiscation_opens_a_case_and_blocks_the_card_at_another_gate(broker, office, make_gate):
    regs = office.add_workers(2)
    ingest = office.start(broker)
    g1, g2 = make_gate("g1"), make_gate("g2")
    g1.start(broker, store=g1.store)
    g2.start(broker, store=g2.store)
    uid = control_uid(regs[0])
    wait_until(lambda: g2.store.card(uid) is not None, what="roster at g2")
    confiscate(g1, uid, regs[0])
    wait_until(lambda: g2.store.card(uid).status is CardStatus.CONFISCATED, what="card blocked at g2")
    with Session(office.engine) as s:
        (case,) = confiscation.list_cases(s)
        assert (case["card_uid"], case["status"], case["gate_id"]) == (uid, "open", "g1")
        assert store.get_card(s, uid).status is CardStatus.CONFISCATED
    assert ingest.workers[0].stats["cases_opened"] == 1
    assert present(g2.store, uid, dt.datetime.now(dt.UTC)).outcome is Outcome.DENY


def test_a_returned_card_is_admitted_again_at_every_gate(broker, office, make_gate):
    """A card confiscated at g1 and returned by the office (the DTM decided) is active again at both
    gates within seconds: the office's blocklist no longer lists it, and the block g1 made itself
    was taken over by the office's copy once the office listed the card. (It used to stay blocked
    at the gates until their store was reset: a wrong "no" at every gangway.)"""
    regs = office.add_workers(2)
    office.start(broker)
    g1, g2 = make_gate("g1"), make_gate("g2")
    g1.start(broker, store=g1.store)
    g2.start(broker, store=g2.store)
    uid = control_uid(regs[0])
    wait_until(lambda: g1.store.card(uid) is not None and g2.store.card(uid) is not None, what="roster at the gates")
    g1.store.block_card(uid, "confiscated: BORROWED_CARD", dt.datetime.now(dt.UTC))  # as g1's loop does
    confiscate(g1, uid, regs[0])
    wait_until(lambda: g2.store.card(uid).status is CardStatus.CONFISCATED, what="card blocked at g2")

    def registry_status():
        with Session(office.engine) as s:
            return store.get_card(s, uid).status

    wait_until(lambda: registry_status() is CardStatus.CONFISCATED, what="case opened")
    time.sleep(1.0)  # let every downlink of the confiscation reach the gates first
    with Session(office.engine) as s, s.begin():
        confiscation.return_card(s, uid, decision="devolvido pela DTM", actor=ACTOR)
    for gate in (g1, g2):
        wait_until(lambda gate=gate: gate.store.card(uid).status is CardStatus.ACTIVE, timeout=60,
                   what=f"card active again at {gate.gate_id}")
        assert gate.store.block_reason(uid) is None
        assert "G2" not in present(gate.store, uid, dt.datetime.now(dt.UTC)).rules_failed


def test_an_unknown_card_confiscated_is_blocked_through_the_ledger(broker, office, make_gate):
    office.add_workers(1)
    office.start(broker)
    g1, g2 = make_gate("g1"), make_gate("g2")
    g1.start(broker, store=g1.store)
    g2.start(broker, store=g2.store)
    wait_until(lambda: g2.store.versions()["roster"][0] > 0, what="roster at g2")
    confiscate(g1, "CC000009", "X999")
    wait_until(lambda: g2.store.block_reason("CC000009") is not None, what="unknown card blocked at g2")
    with Session(office.engine) as s:
        (case,) = confiscation.list_cases(s)
        assert case["card_uid"] == "CC000009"


def test_a_gate_that_missed_deltas_asks_for_a_snapshot_and_catches_up(broker, office, make_gate):
    office.publish = {"poll_s": 0.1, "snapshot_min_s": 3600, "snapshot_every_s": 3600}
    regs = office.add_workers(3)
    office.start(broker)
    g2 = make_gate("g2")
    mqtt = MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=0.2, reconnect_max_s=1,
                      session_expiry_s=0)  # no session kept: what is published meanwhile is lost
    g2.start(broker, store=g2.store, mqtt=mqtt)
    wait_until(lambda: g2.store.worker(regs[1]) is not None, what="roster at g2")
    held = g2.store.versions()["roster"][0]
    g2.stop()
    with Session(office.engine) as s, s.begin():
        store.suspend(s, regs[1], start=today(), days=10, reason="missed", article="83.611 art. 21 a",
                      actor=ACTOR)
    time.sleep(0.5)  # published while g2 is away
    sync = g2.start(broker, store=g2.store, mqtt=mqtt)
    time.sleep(0.5)
    assert g2.store.versions()["roster"][0] == held  # the stale retained snapshot changed nothing
    with Session(office.engine) as s, s.begin():
        store.cancel(s, regs[2], on=today(), reason="next change", article="83.611 art. 21 b", actor=ACTOR)
    wait_until(lambda: g2.store.worker(regs[2]).status is WorkerStatus.CANCELLED, what="g2 caught up")
    assert g2.store.worker(regs[1]).suspended_from == today()
    assert sync.downlink.requested >= 1
    with Session(office.engine) as s:
        assert g2.store.versions()["roster"][0] == 10**15 + roster_snapshot(s)[0]


def test_a_confiscation_the_registry_refuses_still_blocks_the_card(broker, office, make_gate):
    """An inconsistent event (known card, unknown registration): no case, logged; the ledger blocks."""
    regs = office.add_workers(1)
    ingest = office.start(broker)
    g1, g2 = make_gate("g1"), make_gate("g2")
    g1.start(broker, store=g1.store)
    g2.start(broker, store=g2.store)
    uid = control_uid(regs[0])
    wait_until(lambda: g2.store.card(uid) is not None, what="roster at g2")
    confiscate(g1, uid, "NOBODY")
    wait_until(lambda: g2.store.card(uid).status is CardStatus.CONFISCATED, what="card blocked at g2")
    with Session(office.engine) as s:
        assert confiscation.list_cases(s) == []
    assert ingest.workers[0].stats["cases_opened"] == 0
    assert len(office.events("g1")) == 1

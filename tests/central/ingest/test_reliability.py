"""Outages and crashes: broker down during taps, ingest killed before commit, a big backlog, a gap."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from app.demo.mosquitto import Mosquitto
from testkit.sink import Sink
from tests.central.ingest.conftest import PORT, now, process_alive
from testkit.wait import wait_until
from tests.central.ingest.payloads import tap

pytestmark = pytest.mark.mqtt


@pytest.mark.slow
def test_broker_down_during_taps_then_restarted_everything_arrives_in_order(broker, office, make_gate):
    office.start(broker)
    gates = [make_gate("g1"), make_gate("g2")]
    for g in gates:
        g.start(broker, window=20)
    stop = threading.Event()

    def tapping(g):
        i = 0
        while not stop.is_set():
            i += 1
            g.journal.append(tap(i), now=now())
            g.sync.notify()
            time.sleep(0.01)

    threads = [threading.Thread(target=tapping, args=(g,)) for g in gates]
    for t in threads:
        t.start()
    time.sleep(0.5)
    broker.stop()  # graceful: the broker saves the ledger's queued messages
    time.sleep(2.0)  # taps continue while the broker is down
    broker.start()
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    for g in gates:
        last = g.journal.last_seq()
        office.wait_all_of(g, last, timeout=90)  # a lost PUBACK is republished after ack_timeout_s
        seqs = [r.seq for r in office.events(g.gate_id)]  # in ledger insertion order
        assert sorted(seqs) == list(range(1, last + 1)), "every event once, no gap"
        # Per-gate order is the gate's sequence: QoS 1 redelivery after a broker restart may let
        # some events arrive after later ones, so the office keeps each gate's order by seq and
        # knows the gapless prefix (gate_progress.contiguous_seq), which is what shifts are built on.
        wait_until(lambda g=g, last=last: office.contiguous(g.gate_id) == last, what="contiguous")
        wait_until(lambda g=g: g.journal.outbox_depth() == 0, what="outbox empty")


def test_events_nobody_subscribed_to_stay_in_the_outbox_until_the_office_subscribes(broker, office, make_gate):
    """The broker answers PUBACK "No matching subscribers" while no office is subscribed: the gate
    keeps those rows unsent and tries again (doubling pauses), so they reach the office when it
    comes; a gate that marked them sent would have lost them for good."""
    gate = make_gate("g1")
    sync = gate.start(broker, window=5, unrouted_backoff_s=0.2, unrouted_backoff_max_s=0.4)
    gate.journal.append_many([tap(i) for i in range(1, 13)], now=now())
    sync.notify()
    wait_until(lambda: sync.stats["unrouted"] + sync.stats["acked"] >= 12, what="PUBACKs for every row")
    assert gate.journal.outbox_depth() == 12 and sync.stats["acked"] == 0, "nobody has them yet"
    office.start(broker)
    wait_until(lambda: len(office.events("g1")) == 12, what="every event once the office subscribed")
    assert sorted(r.seq for r in office.events("g1")) == list(range(1, 13))
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="outbox empty")
    assert sync.stats["pump_errors"] == 0


@pytest.mark.slow
def test_a_gate_back_before_the_office_after_a_broker_restart_loses_nothing(broker, office, make_gate):
    """mosquitto 2.0 restores the office's session from its persistence file but not its
    ``$share`` subscription: until the office reconnects and subscribes again, the broker routes a
    gate's events to nobody. A gate that reconnects first keeps them in its outbox (the tail of a
    stream: no later event would ever reveal the gap to the office)."""
    office.start(broker)
    gate = make_gate("g1")
    sync = gate.start(broker, unrouted_backoff_s=0.2, unrouted_backoff_max_s=0.5)
    gate.journal.append_many([tap(i) for i in range(1, 6)], now=now())
    sync.notify()
    wait_until(lambda: len(office.events("g1")) == 5, what="1..5 before the restart")
    office.stop_all()  # a clean stop: the session stays on the broker
    broker.stop()
    broker.start()
    wait_until(lambda: sync.connected.is_set(), what="the gate reconnected")
    gate.journal.append_many([tap(i) for i in range(6, 11)], now=now())
    sync.notify()
    wait_until(lambda: sync.stats["unrouted"] + sync.stats["acked"] >= 10, what="PUBACKs for 6..10")
    office.start(broker)
    wait_until(lambda: len(office.events("g1")) == 10, what="6..10 after the office subscribed again")
    assert sorted(r.seq for r in office.events("g1")) == list(range(1, 11))
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="outbox empty")


def _central_toml(tmp_path, office, broker, **ingest) -> str:
    lines = [
        f'database_url = "{office.url}"', f'port = "{PORT}"', f'keys_dir = "{office.keys_dir}"', "workers = 1",
        "[mqtt]", f'host = "{broker.host}"', f"port = {broker.port}", "[ingest]",
        *[f"{k} = {v}" for k, v in ingest.items()],
    ]
    path = tmp_path / "central.toml"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def _descendants(pid: int) -> list[int]:
    """Every living process below ``pid`` (from /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    parents[int(entry)] = int(f.read().rsplit(")", 1)[1].split()[1])
            except (FileNotFoundError, ProcessLookupError, ValueError):
                continue
    found, frontier = [], [pid]
    while frontier:
        below = [p for p, pp in parents.items() if pp in frontier]
        found += below
        frontier = below
    return found


def _run_central(config: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "app.cli", "central", "run", "--config", config],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=str(Path(__file__).resolve().parents[3]),
    )


@pytest.mark.slow
def test_ingest_killed_between_receive_and_commit_redelivers_exactly_one_row(tmp_path, broker, office, make_gate):
    # a long batch window keeps received messages uncommitted in the process when we kill it
    config = _central_toml(tmp_path, office, broker, batch_size=100000, batch_time_s=30.0)
    proc = _run_central(config)
    wait_until(lambda: "ledger-santos-0" in broker.log(), what="ingest connected")
    time.sleep(0.3)  # its SUBSCRIBE follows the CONNECT
    gate = make_gate("g1")
    for i in range(200):
        gate.journal.append(tap(i), now=now())
    gate.start(broker)
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="broker acked all 200")
    time.sleep(0.5)  # delivered to the ingest, waiting in its batch
    helpers = _descendants(proc.pid)  # the writer process (and multiprocessing's fork server)
    assert helpers, "the ledger writer runs in a process of its own"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert office.events() == [], "nothing was committed before the kill"
    wait_until(lambda: not any(process_alive(p) for p in helpers), timeout=60, what="no writer left behind")
    config = _central_toml(tmp_path, office, broker, batch_size=50, batch_time_s=0.05)
    proc = _run_central(config)
    try:
        wait_until(lambda: len(office.events()) == 200, what="redelivered")
        time.sleep(1.0)  # any extra copy would show up now
        rows = office.events()
        assert len(rows) == 200 and len({r.event_id for r in rows}) == 200
        assert sorted(r.seq for r in rows) == list(range(1, 201))
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)


def test_commit_then_crash_before_ack_redelivers_and_dedupes(broker, office, make_gate, mocker):
    ingest = office.start(broker)
    worker = ingest.workers[0]
    mocker.patch.object(worker.client, "ack")  # the process "dies" after the commit, before any PUBACK
    mocker.patch.object(worker.client, "ack_many")
    gate = make_gate("g1")
    for i in range(30):
        gate.journal.append(tap(i), now=now())
    gate.start(broker)
    wait_until(lambda: len(office.events()) == 30, what="committed")
    office.stop_all()
    again = office.start(broker)  # same client id: the broker redelivers the unacknowledged messages
    wait_until(lambda: again.workers[0].stats["duplicates"] >= 30, what="redelivery seen as duplicates")
    assert len(office.events()) == 30


@pytest.mark.slow
def test_a_gate_offline_for_hours_drains_its_big_backlog(broker, office, make_gate):
    office.start(broker, batch_size=500)
    gate = make_gate("g1")
    gate.journal.append_many([tap(i) for i in range(10_000)], now=now())
    gate.start(broker, window=200, rate=0)
    wait_until(lambda: len(office.events("g1")) == 10_000, timeout=120, what="backlog drained")
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="outbox empty")
    assert [r.seq for r in office.events("g1")] == list(range(1, 10_001))


def test_a_gap_is_detected_and_repaired_by_a_replay_request(tmp_path, office, make_gate):
    # autosave never: a SIGKILL of the broker loses messages it had already acknowledged
    broker = Mosquitto(tmp_path / "fragile", autosave_interval=3600).start()
    try:
        ingest = office.start(broker)
        office.stop_all()  # the ledger's session now queues messages in the broker's memory
        gate = make_gate("g1")
        gate.start(broker)
        for i in range(20):
            gate.journal.append(tap(i), now=now())
        gate.sync.notify()
        wait_until(lambda: gate.journal.outbox_depth() == 0, what="acked by the broker")
        broker.kill()  # ...and lost with it
        broker.start()
        wait_until(lambda: gate.sync.connected.is_set(), what="gate reconnected")
        ingest = office.start(broker)
        for i in range(20, 30):
            gate.journal.append(tap(i), now=now())
        gate.sync.notify()
        wait_until(lambda: len(office.events("g1")) == 30, timeout=30, what="gap repaired")
        assert sorted(r.seq for r in office.events("g1")) == list(range(1, 31))
        assert ingest.workers[0].stats["replay_requests"] >= 1
        assert gate.sync.stats["replayed"] >= 20
    finally:
        broker.kill()


def _tail_lost_in_a_broker_crash(broker, office, make_gate, **settings):
    """Gate g1's events 1..20, acknowledged by ``broker`` (autosave never) and queued for an office
    that was away, lost when the broker is killed and started again; returns the gate, reconnected."""
    office.start(broker)
    office.stop_all()
    gate = make_gate("g1")
    gate.start(broker, **settings)
    gate.journal.append_many([tap(i) for i in range(1, 21)], now=now())
    gate.sync.notify()
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="acked by the broker")
    broker.kill()  # the 20 events queued for the office are lost
    broker.start()
    wait_until(lambda: gate.sync.stats["connects"] >= 2, what="gate reconnected")
    return gate


def test_a_tail_the_broker_lost_in_a_crash_is_replayed_without_any_later_event(tmp_path, office, make_gate):
    """The broker acknowledged 20 events, queued them for the office in memory and was killed
    before its autosave. No later event follows to reveal a gap; the gate's status says
    ``sent_seq`` 20 (its birth status on reconnecting), so the office asks for the tail."""
    broker = Mosquitto(tmp_path / "fragile", autosave_interval=3600).start()
    try:
        gate = _tail_lost_in_a_broker_crash(broker, office, make_gate, status_every_s=0.2)
        ingest = office.start(broker, tail_grace_s=0.5)
        office.wait_all_of(gate, 20)
        assert sorted(r.seq for r in office.events("g1")) == list(range(1, 21))
        assert ingest.workers[0].stats["tail_replays"] >= 1
    finally:
        broker.kill()


def test_a_tail_routed_to_another_subscriber_while_the_office_was_away_is_replayed(broker, office, make_gate):
    """After a broker restart the office's ``$share`` subscription is missing until it comes back;
    a monitoring client subscribed to the gates' events makes the broker acknowledge them as
    routed, so the gate marks them sent. Its progress status (``sent_seq``) brings them back."""
    office.start(broker)
    gate = make_gate("g1")
    sync = gate.start(broker, status_every_s=0.2)
    gate.journal.append_many([tap(i) for i in range(1, 6)], now=now())
    sync.notify()
    office.wait_all_of(gate, 5)
    office.stop_all()
    broker.stop()
    broker.start()
    wait_until(lambda: sync.stats["connects"] >= 2, what="gate reconnected")
    monitor = Sink(broker.host, broker.port, "portgate/v1/santos/gate/+/events").__enter__()
    try:
        gate.journal.append_many([tap(i) for i in range(6, 11)], now=now())
        sync.notify()
        wait_until(lambda: gate.journal.outbox_depth() == 0, what="acknowledged as routed (to the monitor)")
        assert sync.stats["unrouted"] == 0
        time.sleep(0.5)  # the progress status (sent_seq 10) goes out
        ingest = office.start(broker, tail_grace_s=0.5)
        office.wait_all_of(gate, 10)
        assert sorted(r.seq for r in office.events("g1")) == list(range(1, 11))
        assert ingest.workers[0].stats["tail_replays"] >= 1
    finally:
        monitor.__exit__()


def test_a_gate_whose_tail_is_refused_is_not_asked_again_and_again(tmp_path, office, make_gate):
    """A gate's signed status claims a tail; then its key changes at the office (rotated, the gate
    not yet given the new file), so the replayed events are dead-lettered and the ledger never
    reaches the claim: one tail round shows the replayed events refused, and the office stops asking
    for an hour (it made the gate republish its whole tail every round, a flood of dead letters).
    With its key back at the office (no restart), the next event brings everything."""
    from sqlalchemy import select

    from central.ingest.keys import KeyRing, add_gate, key_path
    from central.ledger.schema import gate_status
    from portgate.config import write_secret

    recheck_s = KeyRing(office.keys_dir).recheck_s
    broker = Mosquitto(tmp_path / "fragile", autosave_interval=3600).start()
    try:
        gate = _tail_lost_in_a_broker_crash(broker, office, make_gate, status_every_s=0.1)
        ingest = office.start(broker, tail_grace_s=recheck_s + 1.0, replay_every_s=0.5)

        def claimed():
            with office.engine.connect() as c:
                return c.execute(select(gate_status.c.sent_seq).where(gate_status.c.gate_id == "g1")).scalar()

        wait_until(lambda: claimed() == 20, what="the gate's signed status taken")
        add_gate(office.keys_dir, "g1", overwrite=True)  # the office no longer has the gate's key
        wait_until(lambda: ingest.workers[0].stats["tail_refused"] >= 1, timeout=30, what="the tail given up")
        dead = len(office.dead())
        time.sleep(2.0)  # four more replay_every_s: nothing more is asked
        assert ingest.workers[0].stats["tail_replays"] == 1 and len(office.dead()) == dead == 20
        assert office.events("g1") == []
        write_secret(key_path(office.keys_dir, "g1"), gate.key)  # the office gets the gate's key back
        time.sleep(recheck_s + 0.5)  # the writer looks at the file again
        gate.journal.append(tap(21), now=now())
        gate.sync.notify()
        office.wait_all_of(gate, 21)  # the gap repair asks for 1..20
    finally:
        broker.kill()


def test_a_restarted_ledger_writer_still_knows_the_gates_claims(tmp_path, office, make_gate):
    """The claims live in the writer's memory; the statuses come through worker 0's session and are
    not sent again when only the writer process dies. The worker hands the newest status of each
    gate to the new writer, so the tail is still replayed."""
    import os

    broker = Mosquitto(tmp_path / "fragile", autosave_interval=3600).start()
    try:
        gate = _tail_lost_in_a_broker_crash(broker, office, make_gate)
        ingest = office.start(broker, tail_grace_s=4.0)
        worker = ingest.workers[0]
        time.sleep(1.0)  # the gate's status reached the writer
        os.kill(worker.link.pid, signal.SIGKILL)
        wait_until(lambda: worker.link.restarts >= 1, what="writer restarted")
        office.wait_all_of(gate, 20)
        assert worker.stats["tail_replays"] >= 1
    finally:
        broker.kill()


def test_no_tail_replay_while_the_gate_is_in_step(broker, office, make_gate):
    """A gate whose every acknowledged event is in the ledger is never asked for a replay."""
    ingest = office.start(broker, tail_grace_s=0.2)
    gate = make_gate("g1")
    sync = gate.start(broker, status_every_s=0.1)
    for i in range(1, 41):
        gate.journal.append(tap(i), now=now())
        sync.notify()
        time.sleep(0.02)
    office.wait_all_of(gate, 40)
    time.sleep(1.5)  # several progress statuses and tail scans
    assert ingest.workers[0].stats["tail_replays"] == 0 and sync.stats["replayed"] == 0


def test_a_puback_that_never_comes_does_not_stall_the_outbox(broker, office, make_gate):
    """Fault a real broker cannot produce on demand: PUBACKs lost on the way to the gate. After
    ack_timeout_s the rows are published again; every event reaches the ledger once, and each row
    is marked sent only on a PUBACK of its own."""
    office.start(broker)
    gate = make_gate("g1")
    sync = gate.start(broker, window=5, ack_timeout_s=1.0)
    real = sync.client.on_publish
    dropped = []

    def lossy(client, userdata, mid, reason_code, properties):
        if len(dropped) < 5:
            dropped.append(mid)
            return
        real(client, userdata, mid, reason_code, properties)

    sync.client.on_publish = lossy  # paho's property: swapped, not patched
    gate.journal.append_many([tap(i) for i in range(1, 41)], now=now())
    sync.notify()
    wait_until(lambda: len(office.events("g1")) == 40, what="all events in the ledger")
    wait_until(lambda: gate.journal.outbox_depth() == 0, what="outbox empty")
    assert len(dropped) == 5 and sync.stats["ack_timeouts"] >= 1
    assert sync.stats["pump_errors"] == 0
    sync.client.on_publish = real

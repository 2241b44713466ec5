"""The publisher's own paths (real SQLite, no gate): configuration errors, the id watermark over
uncommitted ids, bodies that cannot be a delta, the escala day change, and the version chain."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session

from central.config import CentralConfig, PublishSettings
from central.broadcast.registry_source import DAY_SHIFT, REGISTRY_BASE, DownlinkPublisher, Watermark
from central.registry import store
from central.registry.changes import record_change, utcnow
from central.registry.schema import downlink_changes
from portgate.errors import ConfigError
from tests.central.broadcast.conftest import ACTOR, TZ, RegistryOffice, today
from wire.signed_downlink import body_of


@pytest.fixture
def reg(tmp_path):
    o = RegistryOffice(tmp_path, tmp_path)
    yield o
    o.engine.dispose()


def publisher(office, **publish) -> DownlinkPublisher:
    cfg = CentralConfig(database_url=office.url, port="santos", keys_dir=str(office.keys_dir),
                        publish=PublishSettings(source="registry", **publish))
    return DownlinkPublisher(cfg, office.engine)


def test_an_unknown_time_zone_is_a_config_error(reg):
    with pytest.raises(ConfigError) as exc:
        publisher(reg, tz="Mars/Olympus")
    assert exc.value.key == "publish.tz"


def test_the_watermark_waits_for_a_hole_then_takes_it_as_a_rollback(reg):
    with Session(reg.engine) as s, s.begin():
        for i in (1, 2, 4):
            s.execute(insert(downlink_changes).values(id=i, kind="roster", op="upsert", key=str(i),
                                                      body={}, created_at=utcnow(), actor=ACTOR))
    mark = Watermark(0)
    with Session(reg.engine) as s:
        assert mark.advance(s, 100.0) == 2  # id 3 may still commit
        assert mark.advance(s, 104.0) == 2
        s.execute(insert(downlink_changes).values(id=3, kind="cards", op="upsert", key="x", body={},
                                                  created_at=utcnow(), actor=ACTOR))
        assert mark.advance(s, 104.5) == 4  # it did
        s.execute(insert(downlink_changes).values(id=6, kind="roster", op="upsert", key="6", body={},
                                                  created_at=utcnow(), actor=ACTOR))
        assert mark.advance(s, 200.0) == 4
        assert mark.advance(s, 205.1) == 6  # id 5 never came: rolled back


def test_deltas_chain_by_version_and_a_bad_body_falls_back_to_a_snapshot(reg):
    regs = reg.add_workers(2)
    pub = publisher(reg)
    first = {k: v for k, f, v in pub.poll_once() if f == "snapshot"}
    assert set(first) == {"roster", "cards", "escala"} and first["roster"] > REGISTRY_BASE
    with Session(reg.engine) as s, s.begin():
        store.transition_card(s, "AA000001", "lost", actor=ACTOR, now=utcnow())
    second = pub.poll_once()
    kinds = {(k, f) for k, f, _v in second}
    assert {("roster", "delta"), ("cards", "delta")} <= kinds
    versions = {k: v for k, _f, v in second}
    assert versions["roster"] > first["roster"] and versions["cards"] > first["cards"]
    with Session(reg.engine) as s, s.begin():
        record_change(s, "roster", "upsert", regs[0], {"registration": regs[0]}, actor=ACTOR, now=utcnow())
    third = pub.poll_once()
    assert ("roster", "snapshot") in {(k, f) for k, f, _v in third}
    assert pub.poll_once() == []  # nothing new, snapshots not due


def test_the_escala_version_grows_with_the_day_and_republishes_the_snapshot(reg):
    reg.add_workers(2)
    reg.dispatch(today() + dt.timedelta(days=1))
    pub = publisher(reg)
    noon = dt.datetime.combine(today(), dt.time(12), TZ)
    (escala,) = [v for k, _f, v in pub.poll_once(noon) if k == "escala"]
    assert escala // DAY_SHIFT == today().toordinal()
    published = pub.poll_once(noon + dt.timedelta(days=1))
    (nxt,) = [(f, v) for k, f, v in published if k == "escala"]
    assert nxt[0] == "snapshot" and nxt[1] > escala
    snap = pub.snapshot("escala", noon + dt.timedelta(days=1))
    assert snap.version == nxt[1] and [e.date for e in snap.entries] == [today() + dt.timedelta(days=1)]
    assert pub.snapshot("presence", noon) is None
    assert msgspec.json.decode(msgspec.json.encode(snap))["version"] == nxt[1]


def test_a_card_found_again_is_unblocked_unless_a_confiscation_without_a_case_still_blocks_it(reg):
    """Cards delta ``unblocked``: a card back to ``active`` is lifted at the gates, except one the
    ledger still blocks (a confiscation the registry opened no case for), as the snapshot says."""
    from central.ledger.schema import events
    from wire import downlink as dl

    reg.add_workers(2)
    pub = publisher(reg)
    sent: list[tuple[str, bytes]] = []
    real = pub.client.publish
    pub.client.publish = lambda topic, payload, **kw: (sent.append((topic, payload)), real(topic, payload, **kw))[1]
    pub.poll_once()
    at = utcnow()
    with Session(reg.engine) as s, s.begin():
        for uid in ("AA000001", "AA000002"):
            store.transition_card(s, uid, "lost", actor=ACTOR, now=at)
        s.execute(insert(events).values(  # confiscated at a gate; no case (the registry refused it)
            event_id="00000000-0000-4000-8000-000000000001", port="santos", gate_id="g1", boot_id="b",
            seq=1, occurred_at=at, clock_trusted=True, mono_ns=1, type="confiscation", registration=None,
            decision=None, payload={"uid": "AA000002"}, mac="m", raw=b"{}", received_at=at))
    pub.poll_once()
    with Session(reg.engine) as s, s.begin():
        for uid in ("AA000001", "AA000002"):
            store.transition_card(s, uid, "returned", actor=ACTOR, now=utcnow())  # found again
    sent.clear()
    pub.poll_once()
    (delta,) = [dl.decode_downlink(body_of(p), "cards", "delta", where=t) for t, p in sent if t.endswith("cards/delta")]
    assert delta.unblocked == ["AA000001"] and delta.blocked == []
    snapshot = pub.snapshot("cards", utcnow())
    assert [b.uid for b in snapshot.blocked] == ["AA000002"]  # the delta and the snapshot agree


def test_the_roster_snapshot_names_the_active_union_inspectors(reg):
    from central.registry.schema import inspectors

    reg.add_workers(1)
    with Session(reg.engine) as s, s.begin():
        s.execute(insert(inspectors).values(registration="F001", name="Helena Duarte Rocha", active=1, updated_at=utcnow()))
        s.execute(insert(inspectors).values(registration="F002", name="Aposentado", active=0, updated_at=utcnow()))
    snap = publisher(reg).snapshot("roster", utcnow())
    assert [(i.registration, i.name) for i in snap.inspectors] == [("F001", "Helena Duarte Rocha")]

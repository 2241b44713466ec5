"""Fixtures for the registry-sourced downlink: a real mosquitto, the office (ingest + the
``DownlinkPublisher``) on a real SQLite database holding the registry and the ledger, and gates with
the real ``edge.store.Store`` and ``edge.sync.Sync`` (the MQTT tests' fixtures)."""

from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

import msgspec
import pytest
from sqlalchemy.orm import Session

from central.config import PublishSettings
from central.registry.changes import utcnow
from central.registry.store import save_card, save_worker
from central.rotation.engine import Requisition
from central.rotation.service import dispatch_day
from portgate.records import Berth, Card, CardKind, CardStatus, Voyage, Worker, WorkerStatus
from tests.central.ingest.conftest import PORT, Office, broker, keys_dir, make_gate, now  # noqa: F401

TZ = ZoneInfo("America/Sao_Paulo")
ACTOR = "clerk"


def today() -> dt.date:
    return dt.datetime.now(dt.UTC).astimezone(TZ).date()


def day_start(day: dt.date) -> dt.datetime:
    """The office's clock for a change of ``day``'s escala: its local midnight (aware UTC), before
    any of its periods has ended, whatever the machine's time of day."""
    return dt.datetime.combine(day, dt.time(), TZ).astimezone(dt.UTC)


def control_uid(reg: str) -> str:
    return f"AA{int(reg[1:]):06d}"


class RegistryOffice(Office):
    """The MQTT tests' office with ``[publish] source = "registry"`` and registry helpers."""

    publish = {"poll_s": 0.1, "snapshot_min_s": 0.5}

    def config(self, broker, **kw):
        cfg = super().config(broker, **kw)
        return msgspec.structs.replace(cfg, publish=PublishSettings(source="registry", **self.publish))

    def session(self) -> Session:
        return Session(self.engine)

    def add_workers(self, n: int) -> list[str]:
        regs = [f"V{i:03d}" for i in range(1, n + 1)]
        with self.session() as s, s.begin():
            for i, reg in enumerate(regs, 1):
                save_worker(s, Worker(reg, f"Vigia {i}", "vigia", WorkerStatus.ACTIVE,
                                      health_exam_date=today() - dt.timedelta(days=30),
                                      booklet_revalidated_year=today().year, rotation_number=i),
                            actor=ACTOR, now=utcnow(), action="worker.import")
                save_card(s, Card(control_uid(reg), CardKind.CONTROL, reg, CardStatus.ACTIVE),
                          event="issued", actor=ACTOR, now=utcnow())
        return regs

    def dispatch(self, day: dt.date, *, workers: int = 1, gate_id: str = "g1") -> tuple[int, ...]:
        req = Requisition(ref=f"r-{day}", date=day, period="07-13", operator="Op A", ship="9123456",
                          ship_name="Ship A", voyage=Voyage.LONG_HAUL, berth=Berth.BERTHED,
                          gate_id=gate_id, post="portalo", function="vigia", workers=workers,
                          category="vigia")
        with self.session() as s, s.begin():
            return dispatch_day(s, day, [req], actor=ACTOR, now=day_start(day)).entry_ids


@pytest.fixture
def office(tmp_path, keys_dir):  # noqa: F811
    o = RegistryOffice(tmp_path, keys_dir)
    yield o
    o.stop_all()
    o.engine.dispose()

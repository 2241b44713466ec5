"""One form of time on the wire (issue 21 item 3): every time a message carries is UTC, written
``…Z``; the schemas say ``format: date-time``; a time without an offset is malformed. Checked over
every message type of the contract (``wire.generate.MESSAGES``), each built with times at -03:00
(what a PostgreSQL session in the port's time zone returns)."""

from __future__ import annotations

import datetime as dt
import json
import re

import msgspec
import pytest

from portgate.errors import BadInput
from wire import downlink as dl
from wire import events, generate

BRT = dt.timezone(dt.timedelta(hours=-3))
LOCAL = dt.datetime(2026, 3, 14, 19, 5, 7, 250000, tzinfo=BRT)  # 22:05:07.25 UTC
TIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d")


def sample(info: msgspec.inspect.Type):
    """A value of the inspected type, times at -03:00, one element in each list."""
    i = msgspec.inspect
    if isinstance(info, i.DateTimeType):
        return LOCAL
    if isinstance(info, i.DateType):
        return LOCAL.date()
    if isinstance(info, i.Metadata):
        return sample(info.type)
    if isinstance(info, i.StrType):
        if info.pattern is None:
            return "x"
        # a constrained text (an event id, a hex digest): the first candidate its pattern takes
        return next(c for c in ("x", "", "0f7b3c2e-5d1a-4c7e-9b2a-1e6f0d9c8b7a", "0" * 64)
                    if re.fullmatch(info.pattern, c))
    if isinstance(info, i.BoolType):
        return True
    if isinstance(info, i.IntType):
        return max(1, info.ge or 1)
    if isinstance(info, i.BytesType):
        return b"x"
    if isinstance(info, i.LiteralType):
        return info.values[0]
    if isinstance(info, i.UnionType):
        return sample(next(t for t in info.types if not isinstance(t, i.NoneType)))
    if isinstance(info, i.ListType):
        item = info.item_type
        return [] if isinstance(item, i.DataclassType) else [sample(item)]  # CSV records carry dates only
    if isinstance(info, i.StructType):
        return info.cls(**{f.name: sample(f.type) for f in info.fields if f.name not in ("schema", "mac", "prev", "sig")})
    raise AssertionError(f"no sample for {info!r}")


def _kinds():
    for name, kind in generate.MESSAGES.items():
        info = msgspec.inspect.type_info(kind)
        if isinstance(info, msgspec.inspect.UnionType):
            yield from ((f"{name}.{t.cls.__name__}", t) for t in info.types)
        else:
            yield name, info


KINDS = dict(_kinds())


def _times(value) -> list[str]:
    if isinstance(value, dict):
        return [t for v in value.values() for t in _times(v)]
    if isinstance(value, list):
        return [t for v in value for t in _times(v)]
    return [value] if isinstance(value, str) and TIME.match(value) else []


@pytest.mark.parametrize("name", [n for n in KINDS if n != "Event"])
def test_every_time_a_message_carries_is_written_in_utc_with_z(name):
    message = sample(KINDS[name])
    times = _times(json.loads(dl.encode(message)))
    assert times, f"{name} carries no time"
    assert all(t.endswith("Z") for t in times), times
    assert "2026-03-14T22:05:07.250000Z" in times
    again = dl.decode(dl.encode(message).replace(b"Z\"", b"-00:00\""), type(message))
    assert _times(json.loads(dl.encode(again))) == times  # decoded times are UTC too


def test_a_gate_status_signed_with_a_local_time_still_verifies_at_the_office():
    status = dl.sign_status(sample(KINDS["GateStatus"]), b"k" * 64)
    assert status.at.tzinfo is dt.UTC
    assert dl.verify_status(dl.decode(dl.encode(status), dl.GateStatus), b"k" * 64)


def test_the_gate_journals_events_in_utc(tmp_path):
    from edge.clock import FakeClock
    from edge.journal import Journal

    journal = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=b"k" * 64, boot_id="b")
    event = journal.append(sample(KINDS["Event"]).payload, now=FakeClock(LOCAL).now())
    times = _times(json.loads(events.encode(event)))
    assert times and all(t.endswith("Z") for t in times)
    journal.close()


@pytest.mark.parametrize("name", sorted(generate.MESSAGES))
def test_every_time_field_of_the_schemas_is_a_date_time(name):
    text = generate.render()[f"schemas/{name}.json"]
    defs = json.loads(text)["$defs"]
    times = [(d, p, s) for d, spec in defs.items() for p, s in spec.get("properties", {}).items()
             if p in ("at", "occurred_at", "admitted_at", "due_at", "period_end", "oldest_unsent_at",
                      "copies_updated_at")]
    assert times
    for d, p, s in times:
        options = s.get("anyOf", [s])
        assert {"type": "string", "format": "date-time"} in [{k: o[k] for k in ("type", "format") if k in o}
                                                                for o in options], (d, p, s)


def test_a_time_without_an_offset_is_malformed():
    text = dl.encode(sample(KINDS["RosterSnapshot"])).replace(b"Z\"", b"\"")
    with pytest.raises(BadInput, match="malformed"):
        dl.decode(text, dl.RosterSnapshot)
    with pytest.raises(ValueError, match="no UTC offset"):
        dl.ReplayCommand(seq_from=1, seq_to=2, at=dt.datetime(2026, 1, 1))


def test_a_gate_status_with_a_naive_copies_time_leaves_it_unsaid_instead_of_failing(tmp_path, mocker):
    """A copies time without an offset (a store written by hand, a fault) must not stop the gate
    building its statuses (its Last Will is built before it connects): the field is left unsaid."""
    from edge.journal import Journal
    from edge.store import Store
    from edge.sync import Sync
    from wire.connection import MqttConfig

    journal = Journal(tmp_path / "j.db", port="santos", gate_id="g1", key=b"k" * 64, boot_id="b")
    store = Store(tmp_path / "s.db", gate_id="g1")
    mocker.patch.object(store, "data_updated_at", return_value=dt.datetime(2026, 3, 14, 19, 0))
    sync = Sync(MqttConfig(host="127.0.0.1", port=1), journal, store, port="santos", gate_id="g1")
    status = dl.decode(sync._status("online", "birth"), dl.GateStatus)
    assert status.copies_updated_at is None and dl.verify_status(status, b"k" * 64)
    mocker.patch.object(store, "data_updated_at", return_value=LOCAL)
    status = dl.decode(sync._status("online", "birth"), dl.GateStatus)
    assert status.copies_updated_at == LOCAL and status.copies_updated_at.tzinfo is dt.UTC
    journal.close()
    store.close()

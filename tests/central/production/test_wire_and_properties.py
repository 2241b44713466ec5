"""Production reports from the bus (wire.production) reuse the CSV validation; Hypothesis
properties of the engine; the engine stays pure."""

import datetime as dt
import subprocess
import sys
from decimal import Decimal

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from central.db import make_engine
from central.production.engine import pay_gang
from central.production.ingest import ingest_report, work_from_message
from central.production.model import GangWork, Interruption, Member, TallyRow
from central.production.store import count_rows, ensure_tables, stored_gangs
from portgate.errors import BadInput
from wire.production import ProductionReport, ReportInterruption, ReportMember, ReportTally, encode, topic


def report(**changes):
    base = dict(message_id="m1", terminal_id="tecon", gang_id="T1", ship="9123456", date=dt.date(2026, 3, 10),
                period="07-13", members=[ReportMember("E1", "stevedore", "300"), ReportMember("E2", "stevedore", "300")],
                tally=[ReportTally("bagged", "100")],
                interruptions=[ReportInterruption("tide", start=dt.datetime(2026, 3, 10, 11, 0, tzinfo=dt.UTC),
                                                  end=dt.datetime(2026, 3, 10, 13, 1, tzinfo=dt.UTC))])
    base.update(changes)
    return ProductionReport(**base)


def test_topic_names_port_and_terminal():
    assert topic("santos", "tecon") == "portgate/v1/santos/production/tecon/report"


def test_a_bus_report_is_paid_and_stored_like_the_csv_files(tmp_path, stevedoring, tariffs):
    engine = make_engine(f"sqlite:///{tmp_path / 'l.db'}")
    ensure_tables(engine)
    result = ingest_report(encode(report()), engine, stevedoring, tariffs, received_at=dt.datetime.now(dt.UTC))
    # 100 t × 3.20 = 320.00 → 160.00 each ; 300 min, 100 t → full day 180.00 → top-up 20.00
    # tide 121 min → 22.50 × 0.5 × 121/60 = 22.6875 → 22.69
    assert [str(x.amount) for x in result.members[0].lines] == ["160.00", "20.00", "22.69"]
    assert stored_gangs(engine) == [("T1", dt.date(2026, 3, 10))]
    engine.dispose()


@pytest.mark.parametrize(("changes", "message"), [
    (dict(tally=[ReportTally("bagged", "-1")]), "message m1 tally\\[0\\]: quantity '-1' must not be negative"),
    (dict(tally=[ReportTally("bagged", "lots")]), "message m1 tally\\[0\\]: quantity 'lots' is not a number"),
    (dict(members=[ReportMember("E1", "stevedore", boarded=False)]), "nobody of that gang boarded"),
    (dict(members=[ReportMember("E1", "captain", "300")]), "message m1 members\\[0\\]: role 'captain'"),
    (dict(tally=[]), "message m1: tally is empty"),
    (dict(interruptions=[ReportInterruption("rain", start=dt.datetime(2026, 3, 11, 11, 0, tzinfo=dt.UTC),
                                            end=dt.datetime(2026, 3, 11, 11, 30, tzinfo=dt.UTC))]),
     "message m1 interruptions\\[0\\]: start 2026-03-11 08:00 is outside gang T1's period 07-13 of 2026-03-10"),
])
def test_a_bad_bus_report_names_the_field(stevedoring, tariffs, changes, message):
    with pytest.raises(BadInput, match=message):
        pay_gang(work_from_message(encode(report(**changes))), stevedoring, tariffs)


@pytest.mark.parametrize("raw", [b"{not json", b'{"message_id": "m1"}', b"[]"])
def test_malformed_bus_payload_is_bad_input(raw):
    with pytest.raises(BadInput, match="malformed production report"):
        work_from_message(raw)


def test_unknown_field_in_bus_report_is_refused():
    raw = msgspec.json.encode(dict(msgspec.to_builtins(report()), extra=1))
    with pytest.raises(BadInput, match="extra"):
        work_from_message(raw)


def test_a_bad_bus_report_writes_nothing(tmp_path, stevedoring, tariffs):
    engine = make_engine(f"sqlite:///{tmp_path / 'l.db'}")
    ensure_tables(engine)
    with pytest.raises(BadInput):
        ingest_report(encode(report(tally=[ReportTally("nope", "1")])), engine, stevedoring, tariffs,
                      received_at=dt.datetime.now(dt.UTC))
    assert set(count_rows(engine).values()) == {0}
    engine.dispose()


def test_engine_imports_no_io_library():
    code = ("import sys, central.production.engine, central.production.csvio\n"
            "bad = [m for m in ('sqlalchemy', 'paho', 'click', 'smartcard', 'serial') if m in sys.modules]\n"
            "assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


quantities = st.decimals(min_value=0, max_value=2000, places=3, allow_nan=False, allow_infinity=False)
minutes = st.decimals(min_value=0, max_value=720, places=0)
ROLES = {"dl-2032-1940": ["stevedore", "hatch_foreman", "general_foreman"],
         "dl-3844-1941": ["worker", "warehouse_driver", "foreman", "assistant_foreman", "quay_crane_driver",
                          "tally_clerk"]}
KINDS = {"dl-2032-1940": ["late_start", "rain", "rough_water", "tide", "meal_worked"],
         "dl-3844-1941": ["late_start", "rain", "rough_water", "third_party", "meal_worked"]}


@st.composite
def gangs(draw, book):
    roles = ROLES[book]
    crew = draw(st.lists(st.tuples(st.sampled_from(roles), st.integers(1, 6), minutes, st.booleans()),
                         min_size=1, max_size=25))
    crew[0] = (*crew[0][:3], True)  # at least one boarded
    members = tuple(Member(f"R{i}", role, holds, boarded, mins, f"gang.csv:{i + 2}")
                    for i, (role, holds, mins, boarded) in enumerate(crew))
    tally = tuple(TallyRow(cls, q, f"tally.csv:{i + 2}") for i, (cls, q) in enumerate(draw(
        st.lists(st.tuples(st.sampled_from(["bagged", "general", "containers"]), quantities), min_size=1, max_size=5))))
    stops = tuple(Interruption(kind, m, f"interruptions.csv:{i + 2}") for i, (kind, m) in enumerate(draw(
        st.lists(st.tuples(st.sampled_from(KINDS[book]), st.decimals(min_value=1, max_value=300, places=2)),
                 max_size=4))))
    return GangWork("T1", "9123456", dt.date(2026, 3, 10), "07-13", dt.datetime(2026, 3, 10, 16, tzinfo=dt.UTC),
                    members, tally, stops)


@pytest.mark.parametrize("book", ["dl-2032-1940", "dl-3844-1941"])
def test_property_shares_sum_to_the_labour_amount_and_no_line_is_negative(book, tariffs):
    from central.production.rulebook import find_rulebook

    rulebook = find_rulebook(book)

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(gangs(book))
    def check(work):
        result = pay_gang(work, rulebook, tariffs)
        s = result.summary
        shares = [m.lines[0].amount for m in result.members]
        assert {m.lines[0].rule for m in result.members} == {rulebook.versions[0].shares.rule}
        # each share is rounded half up from the exact value: at most half a cent off per member
        assert abs(sum(shares) - s.labour_amount) <= Decimal("0.005") * len(shares)
        assert s.rounding_difference == s.labour_amount - sum(shares)
        for m in result.members:
            assert all(line.amount >= 0 for line in m.lines)
            assert m.total == sum(line.amount for line in m.lines)
            assert m.payable + m.disputed == m.total and m.payable >= 0
        assert all(line.amount >= 0 for line in (*s.labour_lines, *result.billing))
        assert result.billing_total == sum((x.amount for x in result.billing), Decimal(0))

    check()

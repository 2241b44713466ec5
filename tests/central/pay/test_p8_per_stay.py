"""RULES.md P8 as amended (83.611 art. 27 sole paragraph; issue 31 item 9), through the real
``portgate pay`` and ``portgate pay billing`` commands on the ledger: one round trip quay ↔ ship at
anchorage per continuous stay aboard (an extension into the next period, or a re-admit at the
period change, is the same stay); the shipped rulebook leaves the fare unset and billing a trip
with no fare is refused with a message naming ``anchorage_transport_fare``; a port whose transport
is free sets 0.00 explicitly and is billed 0.00.

Days (Sao Paulo), ship 9300002 at anchorage, watchman 200 (vigia), fare R$ 45.00 per round trip:

- 2026-03-15 07-13: admit 06:55, exit 13:00:00; 13-19: admit 13:00:40 (re-admitted at the period
  change, 40 s later: he never went ashore), exit 19:05. One stay: 1 trip.
- 2026-03-16 07-13: admit 06:58, exit 13:00; 13-19: admit 13:30 (30 min ashore, more than the
  10 min of ``STAY_GAP``), exit 19:00. Two stays: 2 trips.
- 2026-03-17 19-01: admit 18:57, exit 02:30 on the 18th (extension into 01-07): 1 trip.
- Watchman 201 on the berthed ship 9300001, 2026-03-15 07-13: no trip.

Expected: 4 P8 lines x 45.00 = 180.00 (today: one line per shift, 5 lines = 225.00).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from app.cli import main
from central.db import make_engine
from central.ledger.migrate import upgrade
from central.ledger.store import insert_events
from testkit.shift_events import ShiftEvents, dispatch

Z = ZoneInfo("America/Sao_Paulo")
ROOT = Path(__file__).resolve().parents[3]
SHIP = "9300002"
FARE_LINE = '# anchorage_transport_fare = "45.00"'


@pytest.fixture
def db_url(migrated_url):
    """This module's ledgers start migrated: each test gets a copy of the session's migrated ledger
    (``migrated_url``, tests/central/conftest.py) on SQLite and on PostgreSQL instead of running the
    migrations itself (they have their own tests: tests/central/ledger/test_migrations.py)."""
    return migrated_url


def _at(day: int, hour: int, minute: int = 0, second: int = 0) -> dt.datetime:
    return dt.datetime(2026, 3, day, hour, minute, second, tzinfo=Z).astimezone(dt.UTC)


def _port(tmp_path: Path, fare: str | None) -> Path:
    """A port TOML whose rulebook is the shipped one, with ``fare`` set (None: as shipped)."""
    book = (ROOT / "config/rulebooks/decreto-83611-1979.toml").read_text(encoding="utf-8")
    assert FARE_LINE in book  # shipped unset
    if fare is not None:
        book = book.replace(FARE_LINE, f'anchorage_transport_fare = "{fare}"')
    (tmp_path / "rulebook.toml").write_text(book, encoding="utf-8")
    port = (ROOT / "config/port.example.toml").read_text(encoding="utf-8")
    port = port.replace('rulebook = "rulebooks/decreto-83611-1979.toml"', 'rulebook = "rulebook.toml"')
    (tmp_path / "port.toml").write_text(port, encoding="utf-8")
    return tmp_path / "port.toml"


def _ledger(db_url: str, *, anchored: bool = True) -> None:
    upgrade(db_url)
    g = ShiftEvents("g-nordic")
    out = []

    def shift(reg, day, period, admit, exit_, ship=SHIP, berth="anchored"):
        d = dispatch(dt.date(2026, 3, day), period, ship, berth=berth)
        out.extend([g.tap("admit", reg, admit, d), g.tap("exit", reg, exit_, d)])

    if anchored:
        shift("200", 15, "07-13", _at(15, 6, 55), _at(15, 13))
        shift("200", 15, "13-19", _at(15, 13, 0, 40), _at(15, 19, 5))
        shift("200", 16, "07-13", _at(16, 6, 58), _at(16, 13))
        shift("200", 16, "13-19", _at(16, 13, 30), _at(16, 19))
        shift("200", 17, "19-01", _at(17, 18, 57), _at(18, 2, 30))
    shift("201", 15, "07-13", _at(15, 6, 50), _at(15, 13, 1), ship="9300001", berth="berthed")
    engine = make_engine(db_url)
    with engine.begin() as conn:
        insert_events(conn, out, dt.datetime(2026, 4, 1, tzinfo=dt.UTC))
    engine.dispose()


def _run(capsys, args: list[str]) -> tuple[int, str, str]:
    code = main(args)
    got = capsys.readouterr()
    return code, got.out, got.err


def _pay_and_bill(capsys, db_url: str, port: Path) -> tuple[int, str, str]:
    days = ["--from", "2026-03-15", "--to", "2026-03-18"]
    code, _out, err = _run(capsys, ["pay", "--db", db_url, *days, "--port-config", str(port)])
    assert code == 0, err
    return _run(capsys, ["pay", "billing", "--db", db_url, *days, "--port-config", str(port)])


def test_p8_one_round_trip_per_continuous_stay(db_url, tmp_path, capsys):
    _ledger(db_url)
    code, out, err = _pay_and_bill(capsys, db_url, _port(tmp_path, "45.00"))
    assert code == 0, err
    [st] = [json.loads(x) for x in out.splitlines()]
    lines = [(x["rule"], x["ref"], x["amount"]) for x in st["lines"]]
    assert lines == [
        ("P8", "200/9300002/2026-03-15/07-13", "45.00"),  # 07-13 + 13-19: one stay
        ("P8", "200/9300002/2026-03-16/07-13", "45.00"),  # 30 min ashore: two stays
        ("P8", "200/9300002/2026-03-16/13-19", "45.00"),
        ("P8", "200/9300002/2026-03-17/19-01", "45.00"),  # extension into 01-07: one stay
    ]
    assert "período 07-13 + 13-19" in st["lines"][0]["description"]
    assert st["total"] == "180.00"  # 4 x 45.00


def test_p8_billing_with_no_fare_set_is_refused_naming_the_setting(db_url, tmp_path, capsys):
    _ledger(db_url)
    code, out, err = _pay_and_bill(capsys, db_url, _port(tmp_path, None))
    assert code == 2 and out == ""  # today: exit 0, five lines of R$ 0.00
    assert "anchorage_transport_fare" in err and "'decreto-83611-1979'" in err
    assert "4 round trip(s)" in err and "rulebook.toml" in err
    # the default port config (the shipped rulebook) refuses as well
    code, _out, err = _run(capsys, ["pay", "billing", "--db", db_url, "--from", "2026-03-15",
                                    "--to", "2026-03-18"])
    assert code == 2 and "anchorage_transport_fare" in err


def test_p8_a_free_transport_set_explicitly_bills_0_00(db_url, tmp_path, capsys):
    _ledger(db_url)
    code, out, err = _pay_and_bill(capsys, db_url, _port(tmp_path, "0.00"))
    assert code == 0, err
    [st] = [json.loads(x) for x in out.splitlines()]
    assert [x["amount"] for x in st["lines"]] == ["0.00"] * 4 and st["total"] == "0.00"


def test_p8_no_trip_to_bill_needs_no_fare(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    _ledger(url, anchored=False)
    code, out, err = _pay_and_bill(capsys, url, _port(tmp_path, None))
    assert code == 0 and out == "", err


def test_p8_a_negative_fare_is_a_config_error(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'l.db'}"
    _ledger(url)
    code, _out, err = _run(capsys, ["pay", "billing", "--db", url, "--from", "2026-03-15", "--to",
                                    "2026-03-18", "--port-config", str(_port(tmp_path, "-1.00"))])
    assert code == 2 and "anchorage_transport_fare" in err and "non-negative" in err


@pytest.mark.parametrize("fare", ["45.001", "1e3", "0.005"])
def test_p8_a_fare_with_fractions_of_a_cent_or_an_exponent_is_refused_not_rounded(tmp_path, capsys, fare):
    """P8 (fresh tester): a fare of "45.001" was billed 45.00 a trip and "1e3" 1000.00; a money
    setting is written in reais with at most 2 decimals, never rounded or expanded by guess."""
    url = f"sqlite:///{tmp_path / 'l.db'}"
    _ledger(url)
    code, _out, err = _run(capsys, ["pay", "billing", "--db", url, "--from", "2026-03-15", "--to",
                                    "2026-03-18", "--port-config", str(_port(tmp_path, fare))])
    assert code == 2 and "anchorage_transport_fare" in err and "at most 2 decimals" in err, err

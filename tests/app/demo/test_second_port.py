"""The second port of ``portgate demo --cluster`` (``app.demo.second_port``): the demo scenario under
another port key with every id distinct, still a valid scenario with the same day and amounts; and
the missing-package line of ``app.cluster.tools``."""

from __future__ import annotations

import shutil

import pytest

from app.cluster.tools import PACKAGES, missing_package
from app.demo.scenario import Scenario
from app.demo.second_port import derive, ship_shifted, uid_shifted
from portgate import docbr
from portgate.records import Card, Worker, load_csv


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    first = Scenario()
    second, ids = derive(first, tmp_path_factory.mktemp("second") / "scenario", "paranagua")
    return first, second, ids


def test_the_second_port_has_its_own_key_and_ids(pair):
    first, second, _ids = pair
    assert (first.spec.port, second.spec.port) == ("santos", "paranagua")
    gates = [g.gate_id for g in second.spec.gates]
    assert gates == ["pr-aurora", "pr-nordic"]
    assert not set(gates) & {g.gate_id for g in first.spec.gates}
    w1, w2 = load_csv(first.workers_csv, Worker), load_csv(second.workers_csv, Worker)
    assert len(w1) == len(w2) and not {w.registration for w in w1} & {w.registration for w in w2}
    assert not {w.rotation_number for w in w1} & {w.rotation_number for w in w2}
    c1, c2 = load_csv(first.cards_csv, Card), load_csv(second.cards_csv, Card)
    assert len(c1) == len(c2) and not {c.uid for c in c1} & {c.uid for c in c2}
    assert {len(c.uid) for c in c2} == {len(c.uid) for c in c1}
    assert {c.registration for c in c2} <= {w.registration for w in w2} | {"PRF001"}  # F001: the inspector
    # every tap and expectation points at the second port's gates and cards
    assert {t.gate_id for _l, t in second.taps} <= set(gates)
    assert {e.gate_id for e in second.expected.values()} <= set(gates)
    assert {e.registration for e in second.expected.values()} <= {w.registration for w in w2} | {"", "PRF001"}


def test_the_day_and_the_amounts_are_the_same(pair):
    first, second, _ids = pair
    assert second.spec.day == first.spec.day and second.spec.timezone == first.spec.timezone
    assert [t.at for _l, t in second.taps] == [t.at for _l, t in first.taps]
    assert [e.decision for e in second.expected.values()] == [e.decision for e in first.expected.values()]
    assert second.expected_pay == {"PR" + reg: amount for reg, amount in first.expected_pay.items()}
    assert second.spec.expected_billing == {"9400002": "225.00"}
    assert second.anchored_ships() == {ship_shifted(s) for s in first.anchored_ships()}
    assert not (second.dir / "stevedores.csv").exists()  # the first port's only


def test_payroll_ids_are_valid_and_distinct(pair):
    first, second, _ids = pair
    import csv

    def ids(path):
        with path.open(encoding="utf-8", newline="") as f:
            return [(row["cpf"], row["pis"]) for row in csv.DictReader(f)]

    one, two = ids(first.workers_csv), ids(second.workers_csv)
    for cpf, pis in two:
        assert docbr.cpf(cpf) and docbr.pis(pis)  # check digits right (BadInput otherwise)
    assert not {c for c, _p in one} & {c for c, _p in two} and not {p for _c, p in one} & {p for _c, p in two}


def test_shifted_ids():
    assert uid_shifted("0A04A10001") == "1A04A10001" and uid_shifted("1F") == "0F"
    assert ship_shifted("9300001") == "9400001" and ship_shifted("9900001") == "9000001"
    assert ship_shifted("X1") == "P2X1"


@pytest.mark.parametrize("program,package", [p for p in PACKAGES if p[0] != "postgres"])
def test_the_missing_program_is_named_by_its_debian_package(program, package):
    """A lookup that does not find ``program`` (as ``shutil.which`` on a machine without it)."""
    assert missing_package(lambda name: None if program in name else shutil.which(name)) == (program, package)


def test_nothing_is_missing_here():
    assert missing_package() is None  # scripts/setup.sh installs them (as root)

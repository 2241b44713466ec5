"""A gate of no port on an office of several ports (issue 37 item 4): no event yet and no
``add-gate --port`` registration. Before, it counted as the home port's (a santos clerk saw it, the
rotation filled its requisitions from santos's workers); now it is shown to all-ports users only,
marked "sem porto registrado" on the live page, a requisition at it is refused with the reason, and
``portgate central add-gate`` on a config of several ports must name the gate's port, which is then
registered in the keys dir (``gate-ports.json``): the gate is that port's from then on. Its events
are stored as any gate's (the ingest does not ask for a registration:
``tests/central/ingest/test_ports.py``, unregistered gates of two ports), and they give it its port."""

from __future__ import annotations

import datetime as dt

import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session

from central.calls.schema import ship_calls
from central.ingest.event_store import update_progress, write_batch
from central.ingest.nats_users import registered_in
from central.ledger.schema import gate_status
from central.rotation import service
from central.rotation.ports import RotationPorts
from portgate.errors import BadInput
from testkit.cli import run_here
from tests.central.registry.conftest import DAY, DISPATCH_AT, requisition
from tests.central.web.test_ports_web import SANTOS, T0, _app, _client, _tap, two_ports  # noqa: F401

LOST = "g-lost"  # reported a status before 0035 (port not known: ""), never an event, registered nowhere


def _status(engine, gate_id: str) -> None:
    with engine.begin() as conn:
        conn.execute(insert(gate_status).values(port="", gate_id=gate_id, state="online", reason="birth", boot_id="b9",
                                                since=T0, at=T0, received_at=T0))


def _gates(html: str) -> dict[str, bool]:
    """gate id -> marked "sem porto registrado", of the live panel's gate cards."""
    import re

    cards = re.findall(r'<article class="gate[^"]*" data-gate="([^"]+)".*?</h3>', html, re.S)
    heads = re.findall(r'<article class="gate[^"]*" data-gate="[^"]+".*?(<h3>.*?</h3>)', html, re.S)
    return {g: 'data-port="none"' in h for g, h in zip(cards, heads)}


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_a_gate_of_no_port_is_shown_to_all_ports_users_only_and_marked(two_ports):
    _status(two_ports, LOST)
    app = _app(two_ports)
    seen = _gates(_client(app, "auditor-all").get("/").text)
    assert seen[LOST] is True and seen[SANTOS["gate"]] is False, seen
    assert "sem porto registrado" in _client(app, "admin-all").get("/").text
    clerk = _gates(_client(app, "clerk-santos").get("/").text)  # before: the home port's, shown to him
    assert LOST not in clerk and SANTOS["gate"] in clerk, clerk
    app.state.web.gate_registry = {LOST: "santos"}  # registered (add-gate --port santos): santos's
    assert _gates(_client(app, "clerk-santos").get("/").text).get(LOST) is False
    single = _app(two_ports, ports=("santos",))  # an office of one port: every gate is its own, unmarked
    assert _gates(_client(single, "legacy").get("/").text).get(LOST) is False


@pytest.mark.parametrize("migrated_url", ["sqlite", "postgresql"], indirect=True)
def test_a_requisition_at_a_gate_of_no_port_is_refused_with_the_reason(migrated_url):
    from central.db import make_engine
    from central.registry.schema import workers

    engine = make_engine(migrated_url)
    try:
        with engine.begin() as conn:
            conn.execute(insert(workers).values(
                registration="S001", name="Vigia S001", category="vigia", status="active", rotation_number=1,
                health_exam_date=dt.date(2026, 1, 5), booklet_revalidated_year=2026, updated_at=DISPATCH_AT))
        ports = RotationPorts(("santos", "rio"), {"s-reg": "santos"})
        with Session(engine) as s, s.begin(), pytest.raises(BadInput, match=(
                r"A: gate_id 'g-lost' has no registered port: register it with portgate central add-gate")):
            service.dispatch_day(s, DAY, [requisition("A", gate_id=LOST)], actor="t", now=DISPATCH_AT, ports=ports)
        with engine.begin() as conn:  # its ship: in port at g-lost; a requisition for it at santos's gate
            conn.execute(insert(ship_calls).values(
                ship="9400001", ship_name="LOST SHIP", voyage="long_haul", berth="berthed", gate_id=LOST,
                arrival=DISPATCH_AT - dt.timedelta(days=1), departure=None, updated_at=DISPATCH_AT, actor="t"))
        with Session(engine) as s, s.begin(), pytest.raises(BadInput, match=(
                r"B: ship 9400001 is in port at gate 'g-lost', which has no registered port: register it")):
            service.dispatch_day(s, DAY, [requisition("B", gate_id="s-reg", ship="9400001")], actor="t",
                                 now=DISPATCH_AT, ports=ports)
        at = DISPATCH_AT - dt.timedelta(days=3)  # its first event (santos's): the gate is santos's
        with engine.begin() as conn:
            write_batch(conn, [_tap("santos", {**SANTOS, "gate": LOST}, 1, at, [])], [], at)
            update_progress(conn, [LOST], at)
        with Session(engine) as s, s.begin():
            done = service.dispatch_day(s, DAY, [requisition("A", gate_id=LOST, ship="9400001")], actor="t",
                                        now=DISPATCH_AT, ports=ports)
        assert len(done.entry_ids) == 1
    finally:
        engine.dispose()


def test_add_gate_on_a_config_of_several_ports_names_the_port_and_registers_it(tmp_path):
    keys, rio_keys = tmp_path / "keys", tmp_path / "keys-rio"
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "l.db"}"\nport = "santos"\nports = ["santos", "rio"]\n'
                   f'keys_dir = "{keys}"\nport_keys_dirs = {{ rio = "{rio_keys}" }}\n')
    keys.mkdir()
    refused = run_here(["central", "add-gate", "--gate-id", "g1", "--config", str(cfg)], env={"PORTGATE_LANG": "pt"})
    assert refused.returncode == 2, refused
    assert "esta configuração atende vários portos (santos, rio): diga o porto do portaló com --port" in refused.stderr
    assert not (keys / "g1.key").exists()
    other = run_here(["central", "add-gate", "--gate-id", "g1", "--config", str(cfg), "--port", "recife"])
    assert other.returncode == 2 and "recife" in other.stderr, other
    done = run_here(["central", "add-gate", "--gate-id", "g1", "--config", str(cfg), "--port", "rio"])
    assert done.returncode == 0, done.stderr
    assert (keys / "g1.key").exists()
    assert registered_in([str(keys), str(rio_keys)]) == {"g1": "rio"}
    one = tmp_path / "one.toml"  # a config of one port: as before, no --port needed
    one.write_text(f'database_url = "sqlite:///{tmp_path / "l.db"}"\nport = "santos"\nkeys_dir = "{keys}"\n')
    assert run_here(["central", "add-gate", "--gate-id", "g2", "--config", str(one)]).returncode == 0
    assert registered_in([str(keys)]) == {"g1": "rio"}

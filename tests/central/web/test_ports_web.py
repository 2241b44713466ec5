"""Many ports, one ledger (issue 37 item 4): office users' port scope (central/web/ports.py).

A two-port ledger (santos and rio: each its gate, worker, ship, flags, alarms, ingested through the
ingest's own ``write_batch`` under its port) served by one office application. A santos clerk
walks every office page and export and must never see a rio identifier; an all-ports auditor gets
the selector and sees both; reports per port and consolidated with figures computed by hand; the
single-port office (no ``ports``) keeps no selector and every page as before."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import insert
from sqlalchemy.orm import Session
from starlette.testclient import TestClient

from central.calls.schema import coverage_alarms, ship_calls
from central.config import WebSettings
from central.ingest.event_store import Accepted, update_progress, write_batch
from central.ledger.schema import reader_alarms
from central.registry.schema import workers
from central.web.app import create_app, route_table
from central.web.ports import stored_ports, user_ports, view_ports
from central.web import users as users_module
from central.web.users import add_user
from portgate.errors import BadInput
from tests.central.web.conftest import PASSWORD, SECRET, _VerifyOnce, csrf_of, login
from wire.events import Dispatch, Event, TapPayload, encode, new_event_id, sign

# what each port's data is called: a santos page must show none of rio's
SANTOS = {"gate": "s-gate-1", "worker": "SAN001", "ship": "9300001", "ship_name": "SANTOS STAR", "reader": "s-reader"}
RIO = {"gate": "rio-gate-9", "worker": "RIO009", "ship": "9400002", "ship_name": "GUANABARA QUEEN", "reader": "rio-reader"}
MONTH = "2026-11"
T0 = dt.datetime(2026, 11, 10, 15, 0, tzinfo=dt.UTC)  # Tuesday of ISO week 2026-W46


def _tap(port: str, ids: dict, seq: int, at: dt.datetime, flags: list[str]) -> Accepted:
    payload = TapPayload(uid=f"AA{seq:06X}", reader_id=ids["reader"], reader_kind="control",
                         decision="deny" if flags else "admit", flags=flags, message="NEGADO" if flags else "",
                         rules_failed=["G4"] if flags else [], registration=ids["worker"], card_kind="control",
                         dispatch=Dispatch(date=at.date(), period="13-19", ship=ids["ship"], berth="berthed",
                                           voyage="long_haul", post="portalo", function="vigia"))
    event = sign(Event(event_id=new_event_id(), port=port, gate_id=ids["gate"], boot_id="b1", seq=seq,
                       occurred_at=at, clock_trusted=True, mono_ns=seq, payload=payload), b"k")
    return Accepted(f"portgate/v1/{port}/gate/{ids['gate']}/events", event, encode(event))


def _port_data(conn, port: str, ids: dict, flagged_days: list[int], alarm_hours: list[float]) -> None:
    """One port's ledger rows: an admit and flagged taps (BORROWED_CARD) of its worker at its gate,
    its worker in the registry (of the port, ``workers.port``), its ship's call and coverage alarms of the given lengths, an open
    reader alarm of its gate."""
    taps = [_tap(port, ids, 1, T0, [])]
    taps += [_tap(port, ids, 2 + i, T0 + dt.timedelta(days=d), ["BORROWED_CARD"]) for i, d in enumerate(flagged_days)]
    write_batch(conn, taps, [], T0)
    update_progress(conn, [ids["gate"]], T0)
    conn.execute(insert(workers).values(registration=ids["worker"], name=f"Worker {ids['worker']}", category="vigia",
                                        status="active", updated_at=T0, port=port))
    call_id = conn.execute(insert(ship_calls).values(
        ship=ids["ship"], ship_name=ids["ship_name"], voyage="long_haul", berth="berthed", gate_id=ids["gate"],
        arrival=T0 - dt.timedelta(days=1), departure=None, updated_at=T0, actor="test")).inserted_primary_key[0]
    for i, hours in enumerate(alarm_hours):
        start = T0 + dt.timedelta(days=i, hours=1)
        conn.execute(insert(coverage_alarms).values(
            call_id=call_id, ship=ids["ship"], gate_id=ids["gate"], period_start=start, raised_at=start,
            ended_at=start + dt.timedelta(hours=hours)))
    conn.execute(insert(reader_alarms).values(gate_id=ids["gate"], reader_id=ids["reader"], kind="control",
                                              raised_at=T0, ended_at=None, detail="leitor sem resposta"))


@pytest.fixture
def two_ports(engine, users):
    """The two-port ledger: santos 2 flagged taps and coverage alarms of 1.5 h and 0.5 h; rio 1
    flagged tap and one alarm of 2 h. Office users: a santos clerk and inspector, a legacy user
    (no ports: the home port), an auditor and an admin of all ports (and ``users``' four roles,
    which also makes logins verify each password once a session)."""
    with engine.begin() as conn:
        _port_data(conn, "santos", SANTOS, [0, 1], [1.5, 0.5])
        _port_data(conn, "rio", RIO, [0], [2.0])
    with pytest.MonkeyPatch.context() as mp, Session(engine) as s, s.begin():
        mp.setattr(users_module, "_hasher", _VerifyOnce(users_module._hasher))  # one argon2 hash a password
        add_user(s, "clerk-santos", role="office", password=PASSWORD, actor="test", ports="santos")
        add_user(s, "insp-santos", role="inspector", password=PASSWORD, actor="test", ports="santos")
        add_user(s, "legacy", role="office", password=PASSWORD, actor="test")
        add_user(s, "auditor-all", role="auditor", password=PASSWORD, actor="test", ports="*")
        add_user(s, "admin-all", role="admin", password=PASSWORD, actor="test", ports="*")
    return engine


def _app(engine, ports=("santos", "rio")):
    return create_app(engine, WebSettings(), SECRET, now=lambda: T0 + dt.timedelta(days=3), background=False,
                      ports=ports)


def _client(app, user: str) -> TestClient:
    c = TestClient(app, base_url="http://testserver", follow_redirects=False)
    assert login(c, user).status_code == 303
    return c


def _choose(c: TestClient, port: str) -> None:
    token = csrf_of(c.get("/reports").text)
    assert c.post("/port", data={"port": port, "csrf_token": token, "next": "/reports"}).status_code == 303


def _paths(app) -> list[str]:
    """Every GET address of the office (the worker's /w/ pages and the public ones aside), path
    parameters filled with rio's identifiers (a santos user asking for them directly)."""
    fill = {"event_id": None, "registration": RIO["worker"], "case_id": "1", "attachment_id": "1",
            "call_id": "1", "by": "ship", "request_id": "1", "session": "1"}
    out = []
    for route in route_table(app):
        if "GET" not in route.methods or route.path.startswith(("/w/", "/v")) or route.path == "/login":
            continue
        if "{name:str}" in route.path:
            out += [route.path.replace("{name:str}", n) + f"?month={MONTH}"
                    for n in ("sizing", "hours", "fairness", "coverage", "flags")]
            continue
        path = route.path
        for key, value in fill.items():
            path = re.sub(r"\{" + key + r"(:[a-z]+)?\}", value or "{event_id}", path)
        out.append(path)
    return out


def _rio_event_id(engine) -> str:
    from sqlalchemy import select

    from central.ledger.schema import events

    with engine.connect() as c:
        return c.execute(select(events.c.event_id).where(events.c.port == "rio", events.c.seq == 2)).scalar_one()


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
@pytest.mark.parametrize("user", ["clerk-santos", "insp-santos", "legacy"])
def test_a_one_port_user_never_sees_the_other_ports_data_on_any_page(two_ports, user):
    app = _app(two_ports)
    c = _client(app, user)
    rio_event = _rio_event_id(two_ports)
    seen_santos = False
    for path in _paths(app):
        path = path.replace("{event_id}", rio_event)
        if path == "/live/stream":
            continue  # an endless SSE stream: it sends only "changed" (the panel it asks for is tested)
        r = c.get(path)
        assert r.status_code != 500, (path, r.text[:300])
        body = r.text if "pdf" not in r.headers.get("content-type", "") else r.content.decode("latin-1")
        body = body.replace(path, "")  # the address asked for, echoed in the page's forms
        asked = [("event", rio_event)] if rio_event not in path else []  # "no event <id>" echoes the id asked
        if RIO["worker"] in path:  # "no worker with registration '<reg>'" echoes the registration asked
            assert r.status_code in (403, 404), (path, r.status_code)  # 403: not his role's page
            body = body.replace(f"matrícula &#39;{RIO['worker']}&#39;", "")
        for what, value in [*RIO.items(), *asked]:
            at = body.find(value)
            assert at < 0, f"{user} saw rio's {what} {value} on {path} ({r.status_code}): {body[at - 200:at + 50]!r}"
        seen_santos |= SANTOS["gate"] in body
    assert seen_santos  # the filtered pages did show santos (a walk of 403s alone proves nothing)
    assert c.get(f"/flags/{rio_event}").status_code == 404


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_one_port_pages_show_their_port_and_unsplit_pages_are_refused(two_ports):
    c = _client(_app(two_ports), "clerk-santos")
    for path in ("/", "/live/panel", "/flags", "/alarms", "/reads?from=2026-11-01&to=2026-11-30",
                 "/flags.csv", "/alarms.csv", "/ships", f"/reports?month={MONTH}"):
        r = c.get(path)
        shown = SANTOS["ship"] if path.startswith("/reports") else SANTOS["gate"]
        assert r.status_code == 200 and shown in r.text, path
    assert SANTOS["worker"] in c.get("/reads.csv?from=2026-11-01&to=2026-11-30").text
    assert SANTOS["worker"] in c.get("/workers").text and c.get("/cases").status_code == 403  # cases: inspectors'
    assert c.get("/pay").status_code == 200  # the statements of his port's workers (test_pay_ports_web)
    assert c.get("/audit").status_code == 200  # his port's entries (test_audit_ports_web)
    escala = c.get("/escala").text  # per port (test_escala_ports_web): his port's ship on the requisition form
    assert SANTOS["ship_name"] in escala and RIO["ship_name"] not in escala
    assert c.get("/escala.csv").status_code == 200
    assert 'id="port-form"' not in c.get("/").text  # one port: no selector


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_an_all_ports_user_chooses_a_port_or_all_and_sees_every_page(two_ports):
    c = _client(_app(two_ports), "auditor-all")
    home = c.get("/").text
    assert 'id="port-form"' in home and '<option value="rio"' in home and '<option value="*" selected' in home
    assert RIO["gate"] in home and SANTOS["gate"] in home  # all his ports at first
    assert c.get("/workers").status_code == 200  # pages not split by port: his, he sees every port
    _choose(c, "rio")
    page = c.get("/").text
    assert RIO["gate"] in page and SANTOS["gate"] not in page and '<option value="rio" selected' in page
    flags = c.get("/flags.csv").text
    assert RIO["gate"] in flags and SANTOS["gate"] not in flags
    _choose(c, "vitoria")  # not his: all of his ports
    assert SANTOS["gate"] in c.get("/").text and RIO["gate"] in c.get("/").text


def _coverage_csv(c) -> list[list[str]]:
    return [line.split(",") for line in c.get(f"/reports/coverage.csv?month={MONTH}").text.strip().splitlines()[1:]]


def _flags_csv(c) -> list[list[str]]:
    return [line.split(",") for line in c.get(f"/reports/flags.csv?month={MONTH}").text.strip().splitlines()[1:]]


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_reports_per_port_and_consolidated_with_hand_computed_figures(two_ports):
    """santos: ship 9300001 two alarms, 1.5 + 0.5 = 2.0 h; 2 BORROWED_CARD flags (10 and 11 Nov,
    week 2026-W46). rio: ship 9400002 one alarm of 2.0 h; 1 flag (10 Nov). Consolidated: both
    ships' rows and 3 flags in 2026-W46."""
    c = _client(_app(two_ports), "auditor-all")
    _choose(c, "santos")
    assert _coverage_csv(c) == [["9300001", "2", "2.0"]]
    assert _flags_csv(c) == [["2026-W46", "BORROWED_CARD", "2"]]
    assert c.get(f"/reports/sizing.csv?month={MONTH}").status_code == 200  # per port too (test_escala_ports_web)
    assert 'id="r-sizing"' in c.get(f"/reports?month={MONTH}").text
    _choose(c, "rio")
    assert _coverage_csv(c) == [["9400002", "1", "2.0"]]
    assert _flags_csv(c) == [["2026-W46", "BORROWED_CARD", "1"]]
    _choose(c, "*")
    assert _coverage_csv(c) == [["9300001", "2", "2.0"], ["9400002", "1", "2.0"]]
    assert _flags_csv(c) == [["2026-W46", "BORROWED_CARD", "3"]]
    assert c.get(f"/reports/sizing.csv?month={MONTH}").status_code == 200
    page = c.get(f"/reports?month={MONTH}").text
    assert 'id="r-sizing"' in page and 'id="r-hours"' in page


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_the_single_port_office_is_as_before(two_ports):
    """No ``ports`` given (one port): no selector, no page refused, nothing filtered (rio's rows,
    in a ledger the single-port office never has, are shown as every row always was)."""
    app = _app(two_ports, ports=())
    c = _client(app, "clerk-santos")
    home = c.get("/").text
    assert 'id="port-form"' not in home and RIO["gate"] in home
    assert c.get("/workers").status_code == 200
    assert _coverage_csv(c) == [["9300001", "2", "2.0"], ["9400002", "1", "2.0"]]
    assert _client(_app(two_ports, ports=("santos",)), "clerk-santos").get("/workers").status_code == 200


def test_scope_values():
    assert stored_ports() is None and stored_ports(all_ports=True) == "*"
    assert stored_ports(["rio", "santos", "rio"]) == "rio,santos"
    with pytest.raises(BadInput, match="not both"):
        stored_ports(["rio"], all_ports=True)
    with pytest.raises(BadInput):
        stored_ports(["a/b"])
    served = ("santos", "rio", "itajai")
    assert user_ports(None, served) == ("santos",)  # a user made before 0028: the home port
    assert user_ports("*", served) == served
    assert user_ports("itajai,santos,gone", served) == ("santos", "itajai")
    assert view_ports(("santos", "rio"), "rio") == ("rio",)
    assert view_ports(("santos",), "rio") == ("santos",) and view_ports(("santos", "rio"), "*") == ("santos", "rio")


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_new_ports_apply_to_an_open_session_at_its_next_request(two_ports):
    from central.web.users import set_ports

    c = _client(_app(two_ports), "clerk-santos")
    assert SANTOS["gate"] in c.get("/").text
    with Session(two_ports) as s, s.begin():
        set_ports(s, "clerk-santos", "rio", actor="test")
    home = c.get("/").text
    assert RIO["gate"] in home and SANTOS["gate"] not in home


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_the_users_page_shows_each_users_ports_on_an_office_of_several_ports(two_ports):
    page = _client(_app(two_ports), "admin-all").get("/users").text
    cells = dict(re.findall(r"<tr><td>([a-z-]+)</td>.*?<td class=\"ports\">([^<]*)</td>", page))
    assert cells["clerk-santos"] == "santos" and cells["legacy"] == "santos"  # legacy: the home port
    assert cells["auditor-all"] == "todos"
    assert 'class="ports"' not in _client(_app(two_ports, ports=()), "admin-all").get("/users").text


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
def test_a_one_port_inspector_cannot_review_another_ports_flag(two_ports):
    from sqlalchemy import func, select

    from central.registry.schema import flag_reviews

    c = _client(_app(two_ports), "insp-santos")
    token = csrf_of(c.get("/flags").text)
    rio_event = _rio_event_id(two_ports)
    for action in ("acknowledge", "close"):
        r = c.post(f"/flags/{rio_event}/{action}", data={"csrf_token": token, "comment": "visto"})
        assert r.status_code == 400 and "nenhum evento" in r.text, action
    r = c.post(f"/flags/{rio_event}/case", data={"csrf_token": token})  # as an unknown event
    assert r.status_code == 400 and "nenhum evento" in r.text
    with two_ports.connect() as conn:
        assert conn.execute(select(func.count()).select_from(flag_reviews)).scalar_one() == 0


# a gate registered but never connected (the demo's g-lagoa): no event, so no port from its events
QUIET = {"gate": "g-quiet", "ship": "9300077", "ship_name": "LAGOA QUIETA"}


def _quiet_gate_call(engine) -> None:
    """A long-haul call on ``QUIET``'s gate, which never sent an event, and the office coverage check
    (G11) run over it: its gangway has no watchman, so it raises open coverage alarms."""
    from zoneinfo import ZoneInfo

    from central.calls import coverage

    with engine.begin() as conn:
        conn.execute(insert(ship_calls).values(
            ship=QUIET["ship"], ship_name=QUIET["ship_name"], voyage="long_haul", berth="berthed",
            gate_id=QUIET["gate"], arrival=T0 - dt.timedelta(days=1), departure=None, updated_at=T0, actor="test"))
    with Session(engine) as s, s.begin():
        assert coverage.evaluate(s, T0 + dt.timedelta(days=3), ZoneInfo("America/Sao_Paulo")) > 0
    with engine.connect() as conn:
        from sqlalchemy import select

        open_quiet = conn.execute(select(coverage_alarms.c.id).where(
            coverage_alarms.c.gate_id == QUIET["gate"], coverage_alarms.c.ended_at.is_(None))).all()
    assert open_quiet  # the alarm the pages must show


def _sees_quiet(c: TestClient) -> dict[str, bool]:
    """Where ``c``'s user sees the quiet gate's ship and its coverage alarms."""
    return {"panel": QUIET["ship_name"] in c.get("/live/panel").text,
            "home": QUIET["ship_name"] in c.get("/").text,
            "alarms": QUIET["gate"] in c.get("/alarms").text,
            "alarms.csv": QUIET["ship"] in c.get("/alarms.csv").text,
            "ships": QUIET["ship"] in c.get("/ships").text,
            "report": QUIET["ship"] in "\n".join(",".join(r) for r in _coverage_csv(c))}


@pytest.mark.parametrize("engine", ["sqlite"], indirect=True)
@pytest.mark.parametrize("registered", [None, "santos", "rio"])
def test_a_gate_that_never_sent_an_event_is_of_its_registered_port_else_of_none(two_ports, registered):
    """The port of a gate without events: its ``add-gate --port`` registration, else none (before:
    the home port, santos; ``tests/central/web/test_portless_gate.py``). Its ship and coverage
    alarms are shown to that port's users and to every all-ports user, never to the other port's
    user; a gate of no port to the all-ports users' consolidated view only."""
    _quiet_gate_call(two_ports)
    with Session(two_ports) as s, s.begin():
        add_user(s, "clerk-rio", role="office", password=PASSWORD, actor="test", ports="rio")
    app = _app(two_ports)
    app.state.web.gate_registry = {QUIET["gate"]: registered} if registered else {}  # what office serve reads
    port = registered
    everywhere = dict.fromkeys(("panel", "home", "alarms", "alarms.csv", "ships", "report"), True)
    nowhere = dict.fromkeys(everywhere, False)
    for user, user_port in (("clerk-santos", "santos"), ("legacy", "santos"), ("clerk-rio", "rio")):
        assert _sees_quiet(_client(app, user)) == (everywhere if user_port == port else nowhere), user
    auditor = _client(app, "auditor-all")
    assert _sees_quiet(auditor) == everywhere  # consolidated: every gate, port known or not
    _choose(auditor, port or "santos")
    assert _sees_quiet(auditor) == (everywhere if port else nowhere)
    _choose(auditor, "rio" if port in ("santos", None) else "santos")
    assert _sees_quiet(auditor) == nowhere

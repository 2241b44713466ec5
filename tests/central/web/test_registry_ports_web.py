"""The registry side of many ports on one ledger (issue 37 item 4; ``central.web.registry_scope``):
on a two-port office (santos home, rio) a port's clerk lists, opens, edits and gives cards to his
port's workers only (another port's worker answers as no worker at all), adds and imports workers
of his port, and a port's inspector opens a case from his port's flag and sees his port's cases
only; an all-ports user sees every worker and case and narrows them with the port selector. On
SQLite and PostgreSQL (the filters are SQL)."""

from __future__ import annotations

import re

import pytest
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from central.registry.schema import audit_log, cards, cases, workers
from central.web.users import add_user
from tests.central.web.conftest import PASSWORD, csrf_of
from tests.central.web.test_ports_web import (  # noqa: F401 (two_ports: a fixture)
    RIO,
    SANTOS,
    _app,
    _choose,
    _client,
    _rio_event_id,
    two_ports,
)

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)


@pytest.fixture
def office(two_ports):
    """The two-port ledger with a rio clerk and a rio inspector too."""
    with Session(two_ports) as s, s.begin():
        add_user(s, "clerk-rio", role="office", password=PASSWORD, actor="test", ports="rio")
        add_user(s, "insp-rio", role="inspector", password=PASSWORD, actor="test", ports="rio")
        add_user(s, "insp-all", role="inspector", password=PASSWORD, actor="test", ports="*")
    return two_ports


def _unknown_alike(c, reg: str) -> str:
    """The body of ``reg``'s worker page with the registration taken out (to compare with an
    unknown registration's)."""
    r = c.get(f"/workers/{reg}")
    assert r.status_code == 404, (reg, r.status_code)
    return r.text.replace(reg, "REG")


def _main(html: str, case_id: int) -> str:
    """The page's ``<main>`` with the case id asked for taken out."""
    main = html[html.index("<main"):html.index("</main>")]
    return re.sub(rf"\b{case_id}\b", "N", main)


def _event(engine, port: str) -> str:
    from central.ledger.schema import events

    with engine.connect() as c:
        return c.execute(select(events.c.event_id).where(events.c.port == port, events.c.seq == 2)).scalar_one()


@BOTH
def test_a_ports_clerk_lists_and_opens_his_ports_workers_only(office):
    app = _app(office)
    for user, mine, other in (("clerk-santos", SANTOS, RIO), ("legacy", SANTOS, RIO), ("clerk-rio", RIO, SANTOS)):
        c = _client(app, user)
        page = c.get("/workers").text
        assert mine["worker"] in page and other["worker"] not in page, user
        found = c.get(f"/workers?q={other['worker']}").text  # nor by search (the box keeps the text typed)
        assert 'data-registration="' not in found and f'href="/workers/{other["worker"]}"' not in found
        assert c.get(f"/workers/{mine['worker']}").status_code == 200
        assert _unknown_alike(c, other["worker"]) == _unknown_alike(c, "NOBODY9")  # no leak of existence
        for sub in ("photo", "enrol"):
            assert c.get(f"/workers/{other['worker']}/{sub}").status_code == 404, (user, sub)


@BOTH
def test_a_ports_clerk_cannot_change_another_ports_worker_or_give_him_a_card(office):
    c = _client(_app(office), "clerk-santos")
    token = csrf_of(c.get("/workers").text)
    rio = RIO["worker"]
    assert c.post(f"/workers/{rio}", data={"csrf_token": token, "name": "Renamed"}).status_code == 404
    assert c.post(f"/workers/{rio}/cards", data={"csrf_token": token, "uid": "0A0B0C0D", "uid_form": "hex",
                                                 "kind": "control"}).status_code == 404
    assert c.post(f"/workers/{rio}/access-code", data={"csrf_token": token}).status_code == 404
    with office.connect() as conn:
        assert conn.execute(select(workers.c.name).where(workers.c.registration == rio)).scalar_one() == f"Worker {rio}"
        assert conn.execute(select(func.count()).select_from(cards)).scalar_one() == 0
    r = c.post(f"/workers/{SANTOS['worker']}/cards", data={"csrf_token": token, "uid": "0A0B0C0D", "uid_form": "hex",
                                                          "kind": "control"})
    assert r.status_code == 303  # his own port's worker: as before


@BOTH
def test_an_all_ports_user_sees_every_worker_and_narrows_them_by_port(office):
    c = _client(_app(office), "auditor-all")
    page = c.get("/workers").text
    assert SANTOS["worker"] in page and RIO["worker"] in page
    _choose(c, "rio")
    page = c.get("/workers").text
    assert RIO["worker"] in page and SANTOS["worker"] not in page
    assert c.get(f"/workers/{SANTOS['worker']}").status_code == 404  # the view shows rio
    _choose(c, "*")
    assert c.get(f"/workers/{SANTOS['worker']}").status_code == 200
    assert '<dd id="w-port">rio</dd>' in c.get(f"/workers/{RIO['worker']}").text  # the worker's port shown


def _new_worker(reg: str, **extra) -> dict:
    return {"registration": reg, "name": "Nova Pessoa", "category": "vigia", "health_exam_date": "01/06/2026",
            "booklet_revalidated_year": "2026", "rotation_number": "", "birth_date": "01/01/1990",
            "nationality": "BR", "registered_on": "01/11/2026", **_evidence(), **extra}


def _evidence() -> dict:
    from central.registry.enrol import ADMISSION_FIELDS

    return {f: ("01/10/2026" if f.endswith("_on") else "documento 1")
            for f in ADMISSION_FIELDS if f not in ("birth_date", "nationality", "registered_on")}


def _port_of(engine, reg: str):
    with engine.connect() as conn:
        return conn.execute(select(workers.c.port).where(workers.c.registration == reg)).first()


@BOTH
def test_a_worker_added_by_a_ports_clerk_is_of_his_port(office):
    app = _app(office)
    rio = _client(app, "clerk-rio")
    form = rio.get("/workers/new").text
    assert 'id="f-port"' not in form  # one port: nothing to choose
    token = csrf_of(form)
    r = rio.post("/workers/new", data={"csrf_token": token, **_new_worker("RIO100")})
    assert r.status_code == 303, re.findall(r'class="field-error"[^>]*>([^<]*)', r.text)
    assert _port_of(office, "RIO100").port == "rio"
    r = rio.post("/workers/new", data={"csrf_token": token, **_new_worker("RIO101", port="santos")})
    assert r.status_code == 400 and "porto &#39;santos&#39; não é um dos valores rio" in r.text
    assert _port_of(office, "RIO101") is None  # refused, nothing written
    assert rio.get("/workers/RIO100").status_code == 200
    assert _client(app, "clerk-santos").get("/workers/RIO100").status_code == 404
    with Session(office) as s, s.begin():
        add_user(s, "clerk-all", role="office", password=PASSWORD, actor="test", ports="*")
    every = _client(app, "clerk-all")  # every port: the form offers them, home first
    form = every.get("/workers/new").text
    assert re.search(r'<select id="f-port" name="port"[^>]*>\s*<option value="santos"', form)
    r = every.post("/workers/new", data={"csrf_token": csrf_of(form), **_new_worker("RIO102", port="rio")})
    assert r.status_code == 303 and _port_of(office, "RIO102").port == "rio"


@BOTH
def test_an_upload_by_a_ports_clerk_registers_his_ports_workers(office):
    c = _client(_app(office), "clerk-rio")
    token = csrf_of(c.get("/workers/upload").text)
    head = "registration,name,category,status,health_exam_date,booklet_revalidated_year,rotation_number\n"
    new = head + "RIO200,Nova Pessoa,vigia,active,2026-06-01,2026,\n"
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"workers": ("workers.csv", new.encode())})
    assert r.status_code == 200 and _port_of(office, "RIO200").port == "rio"
    theirs = head + f"{SANTOS['worker']},Outro Nome,vigia,active,2026-06-01,2026,\n"
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"workers": ("workers.csv", theirs.encode())})
    assert r.status_code == 400 and "workers.csv:2" in r.text
    named = head.replace("\n", ",port\n") + "RIO201,Nova Pessoa,vigia,active,2026-06-01,2026,,santos\n"
    r = c.post("/workers/upload", data={"csrf_token": token}, files={"workers": ("workers.csv", named.encode())})
    assert r.status_code == 400 and "workers.csv:2" in r.text and _port_of(office, "RIO201") is None
    with office.connect() as conn:
        assert conn.execute(select(workers.c.name).where(
            workers.c.registration == SANTOS["worker"])).scalar_one() == f"Worker {SANTOS['worker']}"
    ships = "ship,ship_name,voyage,berth,gate_id,arrival,departure\n"  # ship calls: users of every port
    r = c.post("/workers/upload", data={"csrf_token": token, "new_categories": "arrumador, conferente"},
               files={"ships": ("ships.csv", ships.encode())})
    assert r.status_code == 403 and "cadastradas por quem vê todos os portos" in r.text
    assert 'value="arrumador, conferente"' in r.text  # the refusal keeps the new categories typed


@BOTH
def test_a_ports_inspector_opens_a_case_from_his_ports_flag_and_sees_his_ports_cases(office):
    app = _app(office)
    rio_insp, santos_insp = _client(app, "insp-rio"), _client(app, "insp-santos")
    token = csrf_of(rio_insp.get("/flags").text)
    r = rio_insp.post(f"/flags/{_event(office, 'rio')}/case", data={"csrf_token": token})
    assert r.status_code == 303, r.text[:300]
    rio_case = int(r.headers["location"].rsplit("/", 1)[1])
    assert rio_insp.get(f"/cases/{rio_case}").status_code == 200
    assert f'href="/cases/{rio_case}"' in rio_insp.get("/cases").text
    s_token = csrf_of(santos_insp.get("/flags").text)
    r = santos_insp.post(f"/flags/{_event(office, 'santos')}/case", data={"csrf_token": s_token})
    assert r.status_code == 303
    santos_case = int(r.headers["location"].rsplit("/", 1)[1])
    with office.connect() as conn:
        assert dict(conn.execute(select(cases.c.id, cases.c.port)).all()) == {rio_case: "rio", santos_case: "santos"}
    # the other port's case: as a case that does not exist, on every address
    listed = santos_insp.get("/cases").text
    assert f'href="/cases/{santos_case}"' in listed and f'href="/cases/{rio_case}"' not in listed
    gone = santos_insp.get("/cases/999999")
    other = santos_insp.get(f"/cases/{rio_case}")
    assert other.status_code == gone.status_code == 404
    assert _main(other.text, rio_case) == _main(gone.text, 999999)
    r = santos_insp.post(f"/cases/{rio_case}/defence", data={"csrf_token": s_token, "defence": "não fui eu"})
    unknown = santos_insp.post("/cases/999999/defence", data={"csrf_token": s_token, "defence": "não fui eu"})
    assert r.status_code == unknown.status_code == 400
    assert _main(r.text, rio_case) == _main(unknown.text, 999999)
    assert santos_insp.get(f"/cases/{rio_case}/attachments/1").status_code == 404
    r = santos_insp.post("/cases", data={"csrf_token": s_token, "event_id": _event(office, "rio"),
                                         "flag": "BORROWED_CARD", "charge": "x"})
    assert r.status_code == 400 and "nenhum evento" in r.text
    with office.connect() as conn:
        assert conn.execute(select(cases.c.defence).where(cases.c.id == rio_case)).scalar_one() is None
        assert conn.execute(select(func.count()).select_from(audit_log).where(
            audit_log.c.action == "case.defence")).scalar_one() == 0
    every = _client(app, "insp-all")
    listed = every.get("/cases").text
    assert f'href="/cases/{santos_case}"' in listed and f'href="/cases/{rio_case}"' in listed
    _choose(every, "rio")
    listed = every.get("/cases").text
    assert f'href="/cases/{santos_case}"' not in listed and f'href="/cases/{rio_case}"' in listed


@BOTH
def test_the_single_port_office_shows_every_worker_and_case_as_before(office):
    c = _client(_app(office, ports=()), "clerk-santos")
    page = c.get("/workers").text
    assert SANTOS["worker"] in page and RIO["worker"] in page
    assert c.get(f"/workers/{RIO['worker']}").status_code == 200


def _health_request(engine, ids: dict) -> int:
    """A pending health refusal (R3) of ``ids``'s worker for a dispatch of his (written as the
    worker's page writes it: ``central.web.workerrequests``)."""
    import datetime as dt

    from sqlalchemy import insert

    from central.rotation.schema import escala
    from central.web.workerschema import worker_requests
    from tests.central.web.test_ports_web import T0

    with engine.begin() as conn:
        entry = conn.execute(insert(escala).values(
            date=T0.date(), period="13-19", ship=ids["ship"], ship_name=ids["ship_name"], voyage="long_haul",
            berth="berthed", gate_id=ids["gate"], post="portalo", function="vigia", registration=ids["worker"],
            operator="Op", start_at=T0, end_at=T0 + dt.timedelta(hours=6), status="active",
            created_at=T0)).inserted_primary_key[0]
        return conn.execute(insert(worker_requests).values(
            registration=ids["worker"], escala_id=entry, reason=f"gripe de {ids['worker']}", filename="atestado.png",
            content_type="image/png", photo=b"\x89PNG", created_at=T0, status="pending")).inserted_primary_key[0]


@BOTH
def test_a_ports_clerk_decides_his_ports_workers_health_requests_only(office):
    from central.web.workerschema import worker_requests

    santos, rio = _health_request(office, SANTOS), _health_request(office, RIO)
    c = _client(_app(office), "clerk-santos")
    listing = c.get("/worker-requests").text
    assert f'data-request="{santos}"' in listing and f'data-request="{rio}"' not in listing
    assert RIO["worker"] not in listing
    assert c.get(f"/worker-requests/{santos}/photo").status_code == 200
    assert c.get(f"/worker-requests/{rio}/photo").status_code == 404
    token = csrf_of(listing)
    r = c.post(f"/worker-requests/{rio}/decide", data={"csrf_token": token, "decision": "reject"})
    unknown = c.post("/worker-requests/999999/decide", data={"csrf_token": token, "decision": "reject"})
    assert r.status_code == unknown.status_code == 404
    assert _main(r.text, rio) == _main(unknown.text, 999999)
    with office.connect() as conn:
        assert conn.execute(select(worker_requests.c.status).where(worker_requests.c.id == rio)).scalar_one() == "pending"
    every = _client(_app(office), "admin-all")
    assert every.get("/worker-requests").status_code == 403  # office's page (role), as before

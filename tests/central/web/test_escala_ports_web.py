"""The escala screens on an office of two ports (issue 37 item 4; santos home, rio): a port's clerk
does the whole escala job for his port — the page, the requisition form (his port's ships only),
a requisitions.csv (another port's gate refused), refusals and substitutions (another port's row
answered exactly as a missing one), the exports — and the rotation fills his requisitions from his
port's workers only; an all-ports auditor sees both ports and narrows them with the selector. On
SQLite and PostgreSQL through the real app."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import func, insert, select
from sqlalchemy.orm import Session

from central.calls.schema import ship_calls
from central.registry.schema import workers
from central.rotation.schema import escala, requisitions
from central.web.users import add_user
from tests.central.web.conftest import PASSWORD, csrf_of
from tests.central.web.test_ports_web import (  # noqa: F401 (two_ports: a fixture)
    RIO,
    SANTOS,
    T0,
    _app,
    _choose,
    _client,
    two_ports,
)

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
DAY = "2026-11-14"  # the app's clock is 2026-11-13 12:00 port time: none of this day's periods has ended
# rio's vigias come first in rotation order: a dispatch blind to the port would take them
VIGIAS = {"VR1": ("rio", 1), "VR2": ("rio", 2), "VS1": (None, 3), "VS2": ("santos", 4), "VS3": ("santos", 5)}
RIO_IDS = [RIO["ship"], RIO["ship_name"], RIO["gate"], "VR1", "VR2"]


@pytest.fixture
def office(two_ports):
    """The two-port ledger with each port's vigias in one rotation numbering and a rio clerk."""
    with Session(two_ports) as s, s.begin():
        for reg, (port, n) in VIGIAS.items():
            s.execute(insert(workers).values(
                registration=reg, name=f"Vigia {reg}", category="vigia", status="active", rotation_number=n,
                health_exam_date=dt.date(2026, 6, 1), updated_at=T0, port=port))
        add_user(s, "clerk-rio", role="office", password=PASSWORD, actor="test", ports="rio")
    return two_ports


def _call(engine, ship: str) -> int:
    with engine.connect() as c:
        return c.execute(select(ship_calls.c.id).where(ship_calls.c.ship == ship)).scalar_one()


def _form(c, call_id, **extra) -> dict:
    token = csrf_of(c.get(f"/escala?date={DAY}").text)
    return {"csrf_token": token, "date": DAY, "call": str(call_id), "period": "07-13", "operator": "Op A",
            "post": "portalo", "function": "vigia", "workers": "2"} | extra


def _rows(engine) -> dict[str, list[str]]:
    with engine.connect() as c:
        got = c.execute(select(escala.c.gate_id, escala.c.registration).where(escala.c.status == "active")
                        .order_by(escala.c.id)).all()
    out: dict[str, list[str]] = {}
    for gate, reg in got:
        out.setdefault(gate, []).append(reg)
    return out


def _main(html: str) -> str:
    return html[html.index("<main"):html.index("</main>")]


@BOTH
def test_each_ports_clerk_dispatches_his_ports_ship_from_his_ports_workers_and_sees_only_it(office):
    app = _app(office)
    santos, rio = _client(app, "clerk-santos"), _client(app, "clerk-rio")
    page = santos.get(f"/escala?date={DAY}")
    assert page.status_code == 200 and SANTOS["ship_name"] in page.text and RIO["ship_name"] not in page.text
    r = santos.post("/escala/dispatch", data=_form(santos, _call(office, SANTOS["ship"])))
    assert r.status_code == 200 and "2 escalado(s) e publicado(s)" in r.text, r.text[-2000:]
    assert rio.post("/escala/dispatch", data=_form(rio, _call(office, RIO["ship"]))).status_code == 200
    assert _rows(office) == {SANTOS["gate"]: ["VS1", "VS2"], RIO["gate"]: ["VR1", "VR2"]}
    mine = _main(santos.get(f"/escala?date={DAY}").text)
    assert "VS1" in mine and "VS2" in mine and not [x for x in RIO_IDS if x in mine]
    theirs = _main(rio.get(f"/escala?date={DAY}").text)
    assert "VR1" in theirs and "VS1" not in theirs and SANTOS["ship_name"] not in theirs
    csv = santos.get(f"/escala.csv?date={DAY}").text
    assert "VS1" in csv and "VR1" not in csv
    ship = santos.get(f"/escala/export/ship?date={DAY}&name={SANTOS['ship']}")
    assert ship.status_code == 200 and "VS2" in ship.text
    other = santos.get(f"/escala/export/ship?date={DAY}&name={RIO['ship']}")
    nobody = santos.get(f"/escala/export/ship?date={DAY}&name=9999998")
    assert other.status_code == nobody.status_code == 404
    assert other.text.replace(RIO["ship"], "IMO") == nobody.text.replace("9999998", "IMO")
    assert "VS1" in santos.get(f"/escala/export/operator?date={DAY}&name=Op A").text
    assert "VS1" not in rio.get(f"/escala/export/operator?date={DAY}&name=Op A").text


@BOTH
def test_another_ports_call_is_refused_as_an_unknown_one_and_nothing_is_written(office):
    c = _client(_app(office), "clerk-santos")
    rio_call = _call(office, RIO["ship"])
    other = c.post("/escala/dispatch", data=_form(c, rio_call, workers="7"))
    unknown = c.post("/escala/dispatch", data=_form(c, 987654, workers="7"))
    assert other.status_code == unknown.status_code == 400
    assert "nenhuma escala de navio" in other.text
    def anon(html: str, call: int) -> str:  # the id asked for, in the refusal and the typed value
        return re.sub(rf'(navio |value="){call}"?\b', r"\1N", html)

    assert anon(other.text, rio_call) == anon(unknown.text, 987654)
    with office.connect() as conn:
        assert conn.execute(select(func.count()).select_from(requisitions)).scalar_one() == 0


def _csv(rows: list[tuple[str, str, str]]) -> bytes:
    head = "date,period,operator,ship,ship_name,voyage,berth,gate_id,post,function,workers\n"
    return (head + "".join(f"{DAY},07-13,Op A,{ship},Navio,long_haul,berthed,{gate},{post},vigia,1\n"
                           for ship, gate, post in rows)).encode()


@BOTH
def test_a_requisitions_file_with_another_ports_gate_is_refused_row_by_row(office):
    c = _client(_app(office), "clerk-rio")
    token = csrf_of(c.get(f"/escala?date={DAY}").text)
    bad = _csv([(RIO["ship"], RIO["gate"], "portalo"), (SANTOS["ship"], SANTOS["gate"], "proa"),
                (RIO["ship"], "never-seen-gate", "popa")])
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("req-rio.csv", bad, "text/csv")})
    assert r.status_code == 400
    assert f"req-rio.csv:3: o portaló (gate_id) &#39;{SANTOS['gate']}&#39; não é de um porto seu (rio)" in r.text
    assert "req-rio.csv:4: o portaló (gate_id) &#39;never-seen-gate&#39;" in r.text  # unknown: the home port's
    assert "req-rio.csv:2" not in r.text and _rows(office) == {}
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("req-rio.csv", bad, "text/csv")})
    assert f"req-rio.csv:3: gate_id &#39;{SANTOS['gate']}&#39; is not a gate of port(s) rio" in r.text
    good = _csv([(RIO["ship"], RIO["gate"], "portalo")])
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("req-rio.csv", good, "text/csv")})
    assert r.status_code == 200 and _rows(office) == {RIO["gate"]: ["VR1"]}


def _entry(engine, gate: str) -> int:
    with engine.connect() as c:
        return c.execute(select(escala.c.id).where(escala.c.gate_id == gate, escala.c.status == "active")
                         .order_by(escala.c.id)).scalars().first()


@BOTH
@pytest.mark.parametrize("action", ["refuse", "substitute"])
def test_another_ports_row_is_answered_exactly_as_a_missing_one(office, action):
    app = _app(office)
    rio = _client(app, "clerk-rio")
    assert rio.post("/escala/dispatch", data=_form(rio, _call(office, RIO["ship"]), workers="1")).status_code == 200
    santos = _client(app, "clerk-santos")
    assert santos.post("/escala/dispatch", data=_form(santos, _call(office, SANTOS["ship"]), workers="1")).status_code == 200
    theirs = _entry(office, RIO["gate"])
    token = csrf_of(santos.get(f"/escala?date={DAY}").text)
    form = {"csrf_token": token, "date": DAY, "reason": "doente"}
    other = santos.post(f"/escala/entry/{theirs}/{action}", data=form)
    missing = santos.post("/escala/entry/999999/" + action, data=form)
    assert other.status_code == missing.status_code == 400
    assert "nenhuma entrada de escala" in other.text
    def anon(html: str, entry: int) -> str:  # the id asked for: in the refusal and the address echoed
        return html.replace(f"escala {entry}", "escala N").replace(f"/escala/entry/{entry}/", "/escala/entry/N/")

    assert anon(other.text, theirs) == anon(missing.text, 999999)
    assert _rows(office)[RIO["gate"]] == ["VR1"]  # untouched
    mine = _entry(office, SANTOS["gate"])
    done = santos.post(f"/escala/entry/{mine}/{action}", data=form)
    assert done.status_code == 303
    assert _rows(office)[SANTOS["gate"]] == ["VS2"]  # the next santos vigia, never rio's VR2


@BOTH
def test_a_named_substitute_of_another_port_is_refused_as_an_unknown_registration(office):
    c = _client(_app(office), "clerk-santos")
    assert c.post("/escala/dispatch", data=_form(c, _call(office, SANTOS["ship"]), workers="1")).status_code == 200
    mine = _entry(office, SANTOS["gate"])
    token = csrf_of(c.get(f"/escala?date={DAY}").text)
    answers = [c.post(f"/escala/entry/{mine}/substitute",
                      data={"csrf_token": token, "date": DAY, "reason": "troca", "registration": reg})
               for reg in ("VR2", "NOBODY1")]
    assert [a.status_code for a in answers] == [400, 400]
    assert answers[0].text.replace("VR2", "REG") == answers[1].text.replace("NOBODY1", "REG")
    assert _rows(office) == {SANTOS["gate"]: ["VS1"]}


@BOTH
def test_an_all_ports_auditor_sees_both_ports_and_narrows_them_with_the_selector(office):
    app = _app(office)
    for clerk, ship in (("clerk-santos", SANTOS["ship"]), ("clerk-rio", RIO["ship"])):
        c = _client(app, clerk)
        assert c.post("/escala/dispatch", data=_form(c, _call(office, ship), workers="1")).status_code == 200
    a = _client(app, "auditor-all")
    both = _main(a.get(f"/escala?date={DAY}").text)
    assert "VS1" in both and "VR1" in both
    _choose(a, "rio")
    rio = a.get(f"/escala?date={DAY}").text
    assert '<option value="rio" selected' in rio and "VR1" in _main(rio) and "VS1" not in _main(rio)
    assert "VS1" not in a.get(f"/escala.csv?date={DAY}").text
    _choose(a, "*")
    assert "VS1" in a.get(f"/escala.csv?date={DAY}").text


@BOTH
def test_an_accepted_health_request_takes_the_next_worker_of_the_entrys_port(office):
    from central.web.workerschema import worker_requests

    c = _client(_app(office), "clerk-santos")
    assert c.post("/escala/dispatch", data=_form(c, _call(office, SANTOS["ship"]), workers="1")).status_code == 200
    entry = _entry(office, SANTOS["gate"])
    with office.begin() as conn:  # VS1's request, as his page writes it (central.web.workerrequests)
        request_id = conn.execute(insert(worker_requests).values(
            registration="VS1", escala_id=entry, reason="gripe", filename="atestado.png", content_type="image/png",
            photo=b"\x89PNG", created_at=T0, status="pending")).inserted_primary_key[0]
    token = csrf_of(c.get("/worker-requests").text)
    r = c.post(f"/worker-requests/{request_id}/decide", data={"csrf_token": token, "decision": "accept"})
    assert r.status_code == 303
    assert _rows(office) == {SANTOS["gate"]: ["VS2"]}  # santos's next, not rio's VR1 (first in numbers)


def _stevedores(engine) -> None:
    """A santos and a rio stevedore (no admission record: they count from the first gang's month)
    and one stevedoring gang of 2026-11-10: the santos one boarded 300 min, the rio one 120 min."""
    from central.production.hours import STEVEDORING
    from central.production.schema import production_gangs, production_members

    with engine.begin() as conn:
        for reg, port in (("ES1", None), ("ER1", "rio")):
            conn.execute(insert(workers).values(registration=reg, name=f"Estivador {reg}", category="estivador",
                                                status="active", updated_at=T0, port=port))
        gang = conn.execute(insert(production_gangs).values(
            gang_id="G1", work_date=dt.date(2026, 11, 10), ship=SANTOS["ship"], period="07-13", rulebook=STEVEDORING,
            rulebook_version=dt.date(2026, 1, 1), labour_cents=0, tonnes_milli=0, total_quotas="0", quota_value="0",
            rounding_difference_cents=0, billing_cents=0, service_end=T0, source="csv",
            imported_at=T0)).inserted_primary_key[0]
        for reg, minutes in (("ES1", "300"), ("ER1", "120")):
            conn.execute(insert(production_members).values(
                gang_row=gang, registration=reg, role="estivador", boarded="yes", quotas="1", minutes_worked=minutes,
                total_cents=0, disputed_cents=0, payable_cents=0))


def _report(c, name: str) -> list[list[str]]:
    lines = c.get(f"/reports/{name}.csv?month=2026-11").text.strip().splitlines()[1:]
    return [line.split(",") for line in lines]


@BOTH
def test_sizing_hours_and_fairness_per_port_with_hand_computed_figures(office):
    """November: santos's clerk dispatched VS1 and VS2, rio's VR1 and VR2 (the vigias' shifts);
    registered vigias santos 4 (VS1-3 and SAN001), rio 3 (VR1, VR2, RIO009). R6 for 2026-11: 2 shifts
    over 12 months / 12 / 4 = 0.04 a worker (santos), 2 / 12 / 3 = 0.06 (rio), 4 / 12 / 7 = 0.05
    consolidated. R8: santos 300 min = 5.00 h for 1 stevedore, rio 2.00 h for 1, both 7.00 h for 2."""
    app = _app(office)
    for clerk, ship in (("clerk-santos", SANTOS["ship"]), ("clerk-rio", RIO["ship"])):
        c = _client(app, clerk)
        assert c.post("/escala/dispatch", data=_form(c, _call(office, ship))).status_code == 200
    _stevedores(office)
    santos, rio, every = _client(app, "clerk-santos"), _client(app, "clerk-rio"), _client(app, "auditor-all")
    assert _report(santos, "fairness") == [["2026-11", r, n] for r, n in
                                           (("SAN001", "0"), ("VS1", "1"), ("VS2", "1"), ("VS3", "0"))]
    assert _report(rio, "fairness") == [["2026-11", r, n] for r, n in (("RIO009", "0"), ("VR1", "1"), ("VR2", "1"))]
    assert len(_report(every, "fairness")) == 7
    assert _report(santos, "sizing")[-1] == ["2026-11", "2", "4", "0.04", "0.0"]
    assert _report(rio, "sizing")[-1] == ["2026-11", "2", "3", "0.06", "0.0"]
    assert _report(every, "sizing")[-1] == ["2026-11", "4", "7", "0.05", "0.0"]
    assert _report(santos, "hours")[-1][:4] == ["2026-11", "5.0", "1", "5.0"]
    assert _report(rio, "hours")[-1][:4] == ["2026-11", "2.0", "1", "2.0"]
    assert _report(every, "hours")[-1][:4] == ["2026-11", "7.0", "2", "3.5"]
    page = santos.get("/reports?month=2026-11").text
    assert 'id="r-sizing"' in page and 'id="r-hours"' in page and "VS1" in page and "VR1" not in page
    assert santos.get("/reports/chart/fairness.svg?month=2026-11").status_code == 200

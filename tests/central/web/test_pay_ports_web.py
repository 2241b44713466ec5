"""Pay per port (issue 37 item 4): on a two-port office (santos home, rio) a statement follows its
worker's port (``workers.port``; a registration the registry does not hold is the home port's). A
port's clerk sees, exports, prints and marks paid his port's workers' statements only; another
port's statement id is refused as an unknown one and nothing is written. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from central.ledger.tables import statements
from central.registry.schema import workers
from central.registry.store import import_files
from central.web.users import add_user
from tests.central.web.conftest import DEMO, PASSWORD, csrf_of
from tests.central.web.paydata import seed_pay
from tests.central.web.test_pay_web import KEY, Q
from tests.central.web.test_ports_web import T0, _client, two_ports  # noqa: F401 (two_ports: a fixture)

BOTH = pytest.mark.parametrize("engine", ["sqlite", "postgresql"], indirect=True)
RIO_WORKER = "V001"  # the paydata statements of V001 are rio's; V003, V008, V017 santos's


@pytest.fixture
def pay_office(two_ports):
    with Session(two_ports) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t", now=T0)
        s.execute(update(workers).where(workers.c.registration == RIO_WORKER).values(port="rio"))
        add_user(s, "clerk-rio", role="office", password=PASSWORD, actor="test", ports="rio")
    seed_pay(two_ports)
    return two_ports


def _app(engine):
    import datetime as dt

    from central.config import WebSettings
    from central.web.app import create_app
    from tests.central.web.conftest import SECRET

    return create_app(engine, WebSettings(), SECRET, now=lambda: dt.datetime(2026, 4, 6, tzinfo=dt.UTC),
                      background=False, slip_key=KEY, ports=("santos", "rio"))


def _sid(engine, reg: str) -> str:
    with engine.connect() as c:
        return c.execute(select(statements.c.statement_id).where(statements.c.registration == reg)).scalars().first()


@BOTH
def test_a_ports_clerk_sees_and_pays_his_ports_statements_only(pay_office):
    app = _app(pay_office)
    santos, rio = _client(app, "clerk-santos"), _client(app, "clerk-rio")
    page = santos.get("/pay", params=Q)
    assert page.status_code == 200 and "V017" in page.text and RIO_WORKER not in page.text
    mine = rio.get("/pay", params=Q).text
    assert RIO_WORKER in mine and "V017" not in mine
    csv = santos.get("/pay/export.csv", params=Q).text
    assert "V017" in csv and f"\n{RIO_WORKER}," not in csv
    assert santos.get(f"/pay/slip/{RIO_WORKER}.pdf", params=Q).status_code == 404  # as no worker
    assert rio.get(f"/pay/slip/{RIO_WORKER}.pdf", params=Q).status_code == 200
    rio_sid = _sid(pay_office, RIO_WORKER)
    token = csrf_of(page.text)
    for confirm in ("", "yes"):
        r = santos.post("/pay/mark-paid", data={"csrf_token": token, "statement": rio_sid, "ref": "lote-1",
                                                "confirm": confirm, **Q})
        assert r.status_code == 400 and f"desconhecido(s): {rio_sid}" in r.text, confirm
    assert santos.get("/pay/reverse", params={"statement": rio_sid}).status_code == 404
    r = santos.post("/pay/release", data={"csrf_token": token, "statement": rio_sid, "note": "visto", **Q})
    assert r.status_code == 400 and f"desconhecido(s): {rio_sid}" in r.text
    with pay_office.connect() as c:
        assert c.execute(select(statements.c.paid_at).where(statements.c.statement_id == rio_sid)).scalar() is None
    everyone = _client(app, "auditor-all").get("/pay", params=Q).text
    assert RIO_WORKER in everyone and "V017" in everyone


def _marks(engine) -> list[tuple[str, str | None, list]]:
    from central.audit import audit_log

    with engine.connect() as c:
        return [(r.action, r.port, r.detail["statements"]) for r in c.execute(
            select(audit_log.c.action, audit_log.c.port, audit_log.c.detail)
            .where(audit_log.c.action.like("pay.%paid")).order_by(audit_log.c.id))]


@BOTH
def test_a_pay_mark_takes_its_statements_port_and_its_clerk_finds_it_in_the_audit_log(pay_office):
    """audit_log.port of pay.mark_paid / pay.reverse_paid (0031): the statements' workers' port (rio,
    or NULL for the home port's), ``*`` for a mark spanning ports; the rio clerk finds his own mark."""
    import datetime as dt

    from central.audit import ALL
    from central.pay.statements_store import mark_paid, reverse_paid

    app = _app(pay_office)
    rio, santos = _client(app, "clerk-rio"), _client(app, "clerk-santos")
    rio_sid, santos_sid = _sid(pay_office, RIO_WORKER), _sid(pay_office, "V017")
    token = csrf_of(rio.get("/pay", params=Q).text)
    r = rio.post("/pay/mark-paid", data={"csrf_token": token, "statement": rio_sid, "ref": "lote-rio",
                                         "confirm": "yes", **Q})
    assert r.status_code == 303, r.text
    audit_q = {"from": "2026-04-01", "to": "2026-04-30"}
    assert "lote-rio" in rio.get("/audit.csv", params=audit_q).text  # his own mark, in his port's log
    assert "lote-rio" not in santos.get("/audit.csv", params=audit_q).text
    now = dt.datetime(2026, 4, 6, tzinfo=dt.UTC)
    reverse_paid(pay_office, [rio_sid], "wrong batch", at=now, actor="t")
    mark_paid(pay_office, [santos_sid], now, "lote-santos", now=now, actor="t")  # V017: no port, the home port
    reverse_paid(pay_office, [santos_sid], "wrong batch", at=now, actor="t")
    mark_paid(pay_office, [rio_sid, santos_sid], now, "lote-both", now=now, actor="t")  # two ports: every port's
    assert _marks(pay_office) == [("pay.mark_paid", "rio", [rio_sid]), ("pay.reverse_paid", "rio", [rio_sid]),
                                  ("pay.mark_paid", None, [santos_sid]), ("pay.reverse_paid", None, [santos_sid]),
                                  ("pay.mark_paid", ALL, [rio_sid, santos_sid])]
    assert "lote-santos" in santos.get("/audit.csv", params=audit_q).text
    assert "lote-both" not in santos.get("/audit.csv", params=audit_q).text



@BOTH
def test_a_release_takes_its_statements_port(pay_office):
    """pay.release (the pay page's release of a held statement): its statement's worker's port."""
    from central.audit import audit_log

    with pay_office.begin() as c:  # V008's statement is on hold (EARLY_EXIT): made a rio worker's
        c.execute(update(workers).where(workers.c.registration == "V008").values(port="rio"))
    rio = _client(_app(pay_office), "clerk-rio")
    token = csrf_of(rio.get("/pay", params=Q).text)
    r = rio.post("/pay/release", data={"csrf_token": token, "statement": _sid(pay_office, "V008"),
                                       "note": "saída autorizada", **Q})
    assert r.status_code == 303, r.text
    with pay_office.connect() as c:
        assert c.execute(select(audit_log.c.port).where(audit_log.c.action == "pay.release")).scalar_one() == "rio"
    assert "saída autorizada" in rio.get("/audit.csv", params={"from": "2026-04-01", "to": "2026-04-30"}).text

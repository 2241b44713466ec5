"""A fresh tester's findings on the office pages and the worker's phone (issues 33 and 34), in a real
browser (Playwright driving Debian's chromium) against the real app served by uvicorn over a real
SQLite ledger holding the demo registry (tests/central/web/live.py), on the office's clock:

- the worker list finds a name without regard to accents or case (``joao``, ``JOAO``,
  ``conceicao``, ``fabio``);
- a cards.csv with a bad UID row names every other bad row too, in one refusal;
- the ships' departure field and the ships import refused: the same page, the typed departure kept
  and each error beside its field;
- the escala offers no refusal or substitution on a row whose period has ended (and a change sent
  from a page opened before the end is refused in pt-BR);
- the worker's phone offers no health refusal for a dispatch that has ended, refuses one sent from
  a page opened before the end in pt-BR, and the office is not offered to accept it any more.

The same searches on PostgreSQL: tests/central/web/test_name_search.py."""

from __future__ import annotations

import datetime as dt
import io
from zoneinfo import ZoneInfo

import pytest
from PIL import Image
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.calls.schema import ship_calls
from central.calls.service import ShipCall, save_call
from central.registry.schema import cards
from central.registry.store import save_worker
from central.rotation.engine import RotationSettings
from central.rotation.schema import escala
from central.rotation.service import _store_entry
from central.web.workeraccounts import add_account
from central.web.workerschema import worker_requests
from portgate.records import Berth, EscalaEntry, Voyage, Worker, WorkerStatus
from tests.central.web.live import LiveOffice, log_in

TZ = ZoneInfo("America/Sao_Paulo")
DAY = dt.date(2026, 12, 10)
MORNING_NOON = dt.datetime(2026, 12, 10, 12, 0, tzinfo=TZ)  # 07-13 under way, 19-01 to come
AFTERNOON = dt.datetime(2026, 12, 10, 15, 0, tzinfo=TZ)  # 07-13 over at 13:00, 19-01 to come
WORKER_PASSWORD = "senha do vigia 5"


class Clock:
    def __init__(self) -> None:
        self.at = MORNING_NOON

    def __call__(self) -> dt.datetime:
        return self.at


@pytest.fixture(scope="module")
def clock():
    return Clock()


@pytest.fixture(scope="module")
def office(tmp_path_factory, clock):
    o = LiveOffice(tmp_path_factory.mktemp("findings"), now=clock).start()
    try:
        with Session(o.engine) as s, s.begin():
            for reg, name in (("V901", "João Conceição"), ("V902", "JOÃO DA SILVA")):
                save_worker(s, Worker(reg, name, "vigia", WorkerStatus.ACTIVE, rotation_number=int(reg[1:])),
                            actor="test", now=clock(), action="worker.add")
            o.entries = {}
            for period in ("07-13", "19-01"):
                entry = EscalaEntry(DAY, period, "9300002", "Nordic Star", Voyage.LONG_HAUL, Berth.BERTHED,
                                    "g-b", "portalo", "vigia", "V005")
                o.entries[period] = _store_entry(s, entry, operator="Op B", requisition_id=None,
                                                 settings=RotationSettings(), actor="test", now=clock())
            o.call_id = save_call(s, ShipCall("9300002", "Nordic Star", "long_haul", "berthed", "g-b",
                                              dt.datetime(2026, 12, 9, 12, tzinfo=dt.UTC), None), actor="test")
            add_account(s, "V005", password=WORKER_PASSWORD, actor="test")
        yield o
    finally:
        o.stop()


@pytest.fixture
def desk(browser, office):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(20_000)
    log_in(page, office)
    yield page
    context.close()


@pytest.fixture
def phone(browser, office):
    context = browser.new_context(viewport={"width": 390, "height": 800}, locale="pt-BR")
    page = context.new_page()
    page.set_default_timeout(20_000)
    page.goto(office.url + "/login")
    page.get_by_label("Usuário").fill("V005")
    page.get_by_label("Senha").fill(WORKER_PASSWORD)
    page.get_by_role("button", name="Entrar").click()
    page.wait_for_url(office.url + "/w/")
    yield page
    context.close()


def _search(page, office, text: str) -> list[str]:
    page.goto(office.url + "/workers")
    page.get_by_label("Nome, matrícula ou UID do cartão").fill(text)
    page.get_by_role("button", name="Buscar").click()
    page.wait_for_load_state()
    return sorted(page.locator("#hits tr[data-registration]").evaluate_all(
        "rows => rows.map(r => r.dataset.registration)"))


def test_the_worker_list_finds_a_name_whatever_its_accents_and_case(office, desk):
    for text in ("joao", "JOAO", "João", "joão da"):
        found = _search(desk, office, text)
        assert {"V901", "V902"} <= set(found) if text != "joão da" else found == ["V902"], (text, found)
    assert _search(desk, office, "conceicao") == ["V901"]
    assert _search(desk, office, "CONCEIÇAO") == ["V901"]
    assert "V006" in _search(desk, office, "fabio")  # the demo's Fábio Ferreira
    row = desk.locator('#hits tr[data-registration="V006"]')
    assert "Fábio Ferreira" in row.inner_text()


CARDS = ("uid,kind,registration,status\n"
         "0A04A1ZZ01,control,V001,active\n"  # a UID that is not hexadecimal
         "0A04A19901,control,V999,active\n"  # a registration nobody has
         "0A04A19902,chave,V001,active\n"  # a kind that does not exist
         "0A04A10003,control,V003,active\n"  # good: V003's card as registered
         "0A04A1990,control,V002,active\n"  # an odd number of hex digits
         "0A04A19904,control,V004,dormindo\n")  # a status that does not exist


def test_a_cards_file_with_a_bad_uid_names_every_bad_row_in_one_refusal(office, desk, tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text(CARDS, encoding="utf-8")
    desk.goto(office.url + "/workers/upload")
    desk.locator("#u-cards").set_input_files(str(path))
    with desk.expect_navigation():  # the refusal's page loaded: all_inner_texts does not wait
        desk.get_by_role("button", name="Enviar").click()
    errors = desk.locator("#upload-errors li").all_inner_texts()
    assert [e.split(":")[1] for e in errors] == ["2", "3", "4", "6", "7"], errors
    assert errors[0].startswith("cards.csv:2:") and "0A04A1ZZ01" in errors[0]
    assert errors[1].startswith("cards.csv:3:") and "V999" in errors[1] and "não" in errors[1], errors[1]
    assert "chave" in errors[2] and "0A04A1990" in errors[3] and "dormindo" in errors[4]
    with Session(office.engine) as s:  # nothing written
        assert s.execute(select(cards.c.uid).where(cards.c.uid.like("0A04A199%"))).first() is None


def test_a_refused_departure_is_the_same_page_with_the_typed_value_beside_its_error(office, desk):
    desk.goto(office.url + "/ships")
    field = desk.locator(f"#dep-{office.call_id}")
    for typed, says in (("31/12/2026 25:00", "não é uma data e hora (dd/mm/aaaa hh:mm)"),
                        ("08/12/2026 10:00", "a saída não é depois da chegada")):
        field.fill(typed)
        field.locator("xpath=..").get_by_role("button", name="Salvar").click()
        error = desk.locator(f"#dep-{office.call_id}-error")
        error.wait_for()
        assert says in error.inner_text(), error.inner_text()
        assert field.input_value() == typed
        assert field.get_attribute("aria-invalid") == "true"
        assert field.get_attribute("aria-describedby") == f"dep-{office.call_id}-error"
        assert says in desk.locator("#form-refused").inner_text()
    with Session(office.engine) as s:
        assert s.execute(select(ship_calls.c.departure).where(ship_calls.c.id == office.call_id)).scalar() is None
    field.fill("11/12/2026 18:30")
    with desk.expect_navigation():  # the POST's redirect: the same URL, so wait_for_url alone would not wait
        field.locator("xpath=..").get_by_role("button", name="Salvar").click()
    desk.wait_for_url(office.url + "/ships")
    assert desk.locator(f"#dep-{office.call_id}").count() == 0  # departed: the field is gone


def test_a_refused_ships_import_names_every_bad_row_beside_the_file_field(office, desk, tmp_path):
    path = tmp_path / "ships.csv"
    path.write_text("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                    "93,Curto,long_haul,berthed,g-c,2026-12-10T10:00:00-03:00,\n"
                    "9300003,Bom,long_haul,berthed,g-c,2026-12-10T10:00:00-03:00,\n"
                    "9300004,Lento,a_remo,berthed,g-d,2026-12-10T10:00:00-03:00,\n", encoding="utf-8")
    desk.goto(office.url + "/ships")
    desk.locator("#s-file").set_input_files(str(path))
    desk.get_by_role("button", name="Importar ships.csv").click()
    box = desk.locator("#s-file-error")
    box.wait_for()
    lines = box.locator("li").all_inner_texts()
    assert [line.split(":")[1] for line in lines] == ["2", "4"], lines
    assert "não é um número IMO" in lines[0] and "a_remo" in lines[1], lines
    assert desk.locator("#s-file").get_attribute("aria-describedby") == "s-file-error"
    assert desk.locator("#call-form").count() == 1  # the page itself, not a bare error page
    with Session(office.engine) as s:
        assert s.execute(select(ship_calls.c.id).where(ship_calls.c.ship == "9300003")).first() is None


def test_the_escala_offers_no_change_on_a_row_whose_period_has_ended(office, desk, clock):
    clock.at = MORNING_NOON
    desk.goto(office.url + f"/escala?date={DAY.isoformat()}")
    morning = desk.locator(f'tr[data-entry="{office.entries["07-13"]}"]')
    assert morning.locator("details.row-menu").count() == 1  # under way: still changed
    morning.locator("summary").click()  # the clerk opens the menu, then the period ends
    clock.at = AFTERNOON
    form = morning.locator("form.substitute-form")
    form.get_by_label("Motivo").fill("substituição tardia")
    form.get_by_role("button", name="Substituir").click()
    alert = desk.locator("#row-error")
    alert.wait_for()
    assert "terminou em 10/12/2026 13:00 (hora do porto)" in alert.inner_text(), alert.inner_text()
    # the page as it is now: the ended row offers nothing, the night's row its menu
    desk.goto(office.url + f"/escala?date={DAY.isoformat()}")
    morning = desk.locator(f'tr[data-entry="{office.entries["07-13"]}"]')
    night = desk.locator(f'tr[data-entry="{office.entries["19-01"]}"]')
    assert morning.locator("details, form, button").count() == 0
    assert morning.locator(".row-ended").inner_text() == "Período encerrado: sem alterações"
    assert night.locator("details.row-menu").count() == 1 and night.locator(".row-ended").count() == 0
    with Session(office.engine) as s:
        assert s.execute(select(escala.c.status).where(escala.c.id == office.entries["07-13"])).scalar() == "active"


def _png() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(out, "PNG")
    return out.getvalue()


def test_no_health_refusal_for_a_dispatch_that_has_ended_on_the_phone_or_at_the_office(
        office, phone, browser, clock, tmp_path):
    photo = tmp_path / "atestado.png"
    photo.write_bytes(_png())
    clock.at = MORNING_NOON
    phone.goto(office.url + "/w/")
    morning = phone.locator('article.dispatch[data-period="07-13"]')
    night = phone.locator('article.dispatch[data-period="19-01"]')
    morning.locator("summary").click()  # the form opened while the period is under way ...
    morning.get_by_label("Motivo").fill("febre")
    morning.get_by_label("Foto do atestado médico").set_input_files(str(photo))
    clock.at = AFTERNOON  # ... and sent after it ended
    morning.get_by_role("button", name="Enviar recusa").click()
    phone.wait_for_load_state()
    said = phone.locator("main").inner_text()
    assert (f"a escalação {office.entries['07-13']} (10/12/2026 07-13) já terminou: a recusa por saúde é feita "
            "antes do fim do período") in said, said
    phone.goto(office.url + "/w/")
    morning = phone.locator('article.dispatch[data-period="07-13"]')
    assert morning.locator("form, details").count() == 0
    assert "Período encerrado: a recusa por saúde é feita antes do fim do período." in morning.inner_text()
    assert night.locator("details.health-form").count() == 1  # still to come: offered
    with Session(office.engine) as s:
        assert s.execute(select(worker_requests.c.id)).first() is None

    # the office side: a request sent in time, its period over before the office decides
    clock.at = dt.datetime(2026, 12, 10, 20, 0, tzinfo=TZ)  # 19-01 under way
    night.locator("summary").click()
    night.get_by_label("Motivo").fill("dor nas costas")
    night.get_by_label("Foto do atestado médico").set_input_files(str(photo))
    night.get_by_role("button", name="Enviar recusa").click()
    phone.wait_for_url(office.url + "/w/?done=health")
    desk_context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="pt-BR")
    try:
        desk = desk_context.new_page()
        desk.set_default_timeout(20_000)
        log_in(desk, office)
        desk.goto(office.url + "/worker-requests")
        pending = desk.locator('article[data-status="pending"]')
        assert pending.get_by_role("button", name="Aceitar", exact=True).count() == 1
        clock.at = dt.datetime(2026, 12, 11, 2, 0, tzinfo=TZ)  # 19-01 ended at 01:00
        desk.goto(office.url + "/worker-requests")
        pending = desk.locator('article[data-status="pending"]')
        assert pending.get_by_role("button", name="Aceitar", exact=True).count() == 0
        assert pending.get_by_role("button", name="Não aceitar", exact=True).count() == 1
        assert "O período desta escalação já terminou: o pedido não pode mais ser aceito" in pending.inner_text()
        with desk.expect_navigation():  # the POST's redirect back to the same URL
            pending.get_by_role("button", name="Não aceitar", exact=True).click()
        desk.wait_for_url(office.url + "/worker-requests")
        assert desk.locator('article[data-status="rejected"]').count() == 1
    finally:
        desk_context.close()

"""The ship-calls form as a clerk types it (issue 34 item 4), over the real app: arrival and
departure in port time as ``dd/mm/aaaa hh:mm`` or a ``datetime-local`` value (a full ISO instant
with offset still taken); a refused call is the same form again, every typed value kept and the
error beside its field, and nothing written."""

from __future__ import annotations

import datetime as dt
import re

import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session

from central.calls.schema import ship_calls
from tests.central.web.conftest import logged_in

FORM = {"ship": "9300009", "ship_name": "Aurora", "voyage": "cabotage", "berth": "anchored", "gate_id": "g9",
        "departure": ""}


def _calls(app) -> list[tuple]:
    with Session(app.state.web.engine) as s:
        rows = s.execute(select(ship_calls.c.ship, ship_calls.c.arrival, ship_calls.c.departure)).all()
    return [(ship, a.replace(tzinfo=a.tzinfo or dt.UTC), d and d.replace(tzinfo=d.tzinfo or dt.UTC))
            for ship, a, d in rows]


@pytest.mark.parametrize("arrival", ["06/12/2026 10:00", "2026-12-06T10:00", "2026-12-06T10:00:00-03:00",
                                     "2026-12-06T13:00:00+00:00"])
def test_a_call_s_arrival_is_read_as_a_clerk_types_it_in_port_time(app, arrival):
    c, token = logged_in(app, "office")
    r = c.post("/ships", data=FORM | {"arrival": arrival, "departure": "07/12/2026 18:30", "csrf_token": token})
    assert r.status_code == 303, r.text[-800:]
    assert _calls(app) == [("9300009", dt.datetime(2026, 12, 6, 13, 0, tzinfo=dt.UTC),
                            dt.datetime(2026, 12, 7, 21, 30, tzinfo=dt.UTC))]  # the port: UTC-3


@pytest.mark.parametrize("typed, field, says", [
    ({"arrival": "31/02/2026 10:00"}, "arrival",
     "&#39;31/02/2026 10:00&#39; não é uma data e hora (dd/mm/aaaa hh:mm)"),
    ({"arrival": "amanhã"}, "arrival", "&#39;amanhã&#39; não é uma data e hora (dd/mm/aaaa hh:mm)"),
    ({"arrival": "06/12/2026 10:00", "departure": "06/12/2026 09:00"}, "departure",
     "a saída não é depois da chegada"),
    ({"arrival": "06/12/2026 10:00", "ship": "93"}, "ship", "navio &#39;93&#39; não é um número IMO"),
    ({"arrival": ""}, "arrival", "falta o horário"),
    ({"arrival": "16/03/9999 06:00"}, "arrival", "o ano 9999 está fora de 2000..2100"),
    ({"arrival": "06/12/2026 10:00", "departure": "16/03/9999 10:00"}, "departure",
     "o ano 9999 está fora de 2000..2100"),
    ({"arrival": "31/12/1999 10:00"}, "arrival", "o ano 1999 está fora de 2000..2100"),
])
def test_a_refused_call_is_the_same_form_with_the_typed_values_and_the_error_beside_its_field(
        app, typed, field, says):
    c, token = logged_in(app, "office")
    values = FORM | typed
    r = c.post("/ships", data=values | {"csrf_token": token})
    assert r.status_code == 400 and 'class="error-summary"' in r.text
    form = r.text.split('id="call-form"')[1].split("</form>")[0]
    errors = dict(re.findall(r'<span class="field-error" id="[\w-]+-error" data-field="(\w+)">([^<]*)</span>', form))
    assert errors == {field: says}, errors
    tag = form.split(f'name="{field}"')[1].split(">")[0] if field not in ("voyage", "berth") else ""
    assert 'aria-invalid="true" aria-describedby="s-' in tag
    for name in ("ship", "ship_name", "gate_id", "arrival", "departure"):
        assert f'value="{values[name]}"' in form.split(f'name="{name}"')[1].split(">")[0], name
    assert '<option value="cabotage" selected>' in form and '<option value="anchored" selected>' in form
    assert _calls(app) == []


def test_the_english_form_says_it_in_english(app):
    c, token = logged_in(app, "office")
    c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/ships"})
    r = c.post("/ships", data=FORM | {"arrival": "12/31/2026 10:00", "csrf_token": token})
    assert r.status_code == 400
    assert ('<span class="field-error" id="s-arrival-error" data-field="arrival">&#39;12/31/2026 10:00&#39; '
            "is not a date and time (dd/mm/yyyy hh:mm)</span>") in r.text
    assert "dd/mm/yyyy hh:mm, port time" in r.text


def test_a_departure_is_typed_in_port_time_too(app):
    c, token = logged_in(app, "office")
    assert c.post("/ships", data=FORM | {"arrival": "06/12/2026 10:00", "csrf_token": token}).status_code == 303
    with Session(app.state.web.engine) as s:
        call_id = s.execute(select(ship_calls.c.id)).scalar_one()
    r = c.post(f"/ships/{call_id}/departure", data={"departure": "31/12/2026 25:00", "csrf_token": token})
    assert r.status_code == 400 and "não é uma data e hora (dd/mm/aaaa hh:mm)" in r.text
    r = c.post(f"/ships/{call_id}/departure", data={"departure": "2026-12-07T18:30", "csrf_token": token})
    assert r.status_code == 303
    assert _calls(app)[0][2] == dt.datetime(2026, 12, 7, 21, 30, tzinfo=dt.UTC)


def test_a_departure_or_an_import_in_year_9999_is_refused_beside_its_field(app):
    """The tester's 9999: the escala and pay pages' 2000..2100, on the departure form and the import."""
    c, token = logged_in(app, "office")
    assert c.post("/ships", data=FORM | {"arrival": "06/12/2026 10:00", "csrf_token": token}).status_code == 303
    with Session(app.state.web.engine) as s:
        call_id = s.execute(select(ship_calls.c.id)).scalar_one()
    r = c.post(f"/ships/{call_id}/departure", data={"departure": "16/03/9999 10:00", "csrf_token": token})
    assert r.status_code == 400 and "o ano 9999 está fora de 2000..2100" in r.text
    assert 'value="16/03/9999 10:00"' in r.text
    r = c.post(f"/ships/{call_id}/departure", data={"departure": "05/12/2026 10:00", "csrf_token": token})
    assert r.status_code == 400 and "a saída não é depois da chegada" in r.text
    csv = ("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
           "9300010,Nordic,long_haul,anchored,g10,9999-03-16T01:00:00-03:00,\n")
    r = c.post("/ships/import", data={"csrf_token": token}, files={"file": ("ships.csv", csv.encode())})
    assert r.status_code == 400 and "o ano 9999 está fora de 2000..2100" in r.text
    assert _calls(app) == [("9300009", dt.datetime(2026, 12, 6, 13, 0, tzinfo=dt.UTC), None)]


def test_every_bad_field_of_a_call_is_reported_beside_its_own_field(app):
    """The tester's form: IMO 12, gate 'g x', arrival 30/02/2026, departure abc: four errors, not one."""
    c, token = logged_in(app, "office")
    values = FORM | {"ship": "12", "gate_id": "g x", "arrival": "30/02/2026", "departure": "abc"}
    r = c.post("/ships", data=values | {"csrf_token": token})
    assert r.status_code == 400
    form = r.text.split('id="call-form"')[1].split("</form>")[0]
    errors = dict(re.findall(r'<span class="field-error" id="[\w-]+-error" data-field="(\w+)">([^<]*)</span>', form))
    assert set(errors) == {"ship", "gate_id", "arrival", "departure"}, errors
    assert errors["ship"] == "navio &#39;12&#39; não é um número IMO"
    assert errors["arrival"] == "&#39;30/02/2026&#39; não é uma data e hora (dd/mm/aaaa hh:mm)"
    assert errors["departure"] == "&#39;abc&#39; não é uma data e hora (dd/mm/aaaa hh:mm)"
    assert "g x" in errors["gate_id"]
    for name in ("ship", "gate_id", "arrival", "departure"):
        assert 'aria-invalid="true"' in form.split(f'name="{name}"')[1].split(">")[0], name
    assert _calls(app) == []


def test_a_refused_import_lists_one_line_per_bad_row_named_by_the_uploaded_file(app):
    """The tester's import: every bad row its own list item, ``ships-marco.csv:2``, not a temporary name."""
    c, token = logged_in(app, "office")
    csv = ("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
           "12,Nordic,long_haul,anchored,g x,2026-03-15T06:00:00-03:00,\n"
           "9300011,Aurora,long_haul,anchored,g10,2026-03-15T06:00:00-03:00,\n"
           "9300012,Boreal,cabotage,berthed,g11,9999-03-16T01:00:00-03:00,\n")
    r = c.post("/ships/import", data={"csrf_token": token}, files={"file": ("ships-marco.csv", csv.encode())})
    assert r.status_code == 400
    box = r.text.split('id="s-file-error"')[1].split("</div>")[0]
    items = re.findall(r"<li>(.*?)</li>", box, re.S)
    assert len(items) == 2, box
    assert items[0].startswith("ships-marco.csv:2: ") and "navio &#39;12&#39; não é um número IMO" in items[0]
    assert "g x" in items[0] and "; " in items[0]  # both bad fields of the row, on the row's line
    assert items[1].startswith("ships-marco.csv:4: ") and "o ano 9999 está fora de 2000..2100" in items[1]
    assert "tmp" not in box
    assert _calls(app) == []


def test_an_imports_time_not_iso_8601_and_a_field_over_the_csv_limit_read_in_one_language(app):
    """The fresh tester's import: "chegada: time '...' não é um instante ISO 8601", and Python's
    csv module's "field larger than field limit" in English on a pt-BR page."""
    from portgate.tables import FIELD_LIMIT

    c, token = logged_in(app, "office")
    head = "ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
    csv = head + "9300013,Aurora,long_haul,berthed,g13,15/03/2026 06:00,2026-03-16T06:00\n"
    long_name = head + f"9300014,{'A' * (FIELD_LIMIT + 1)},long_haul,berthed,g14,2026-03-15T06:00:00-03:00,\n"

    def items(text: str, name: str = "ships.csv") -> list[str]:
        r = c.post("/ships/import", data={"csrf_token": token}, files={"file": (name, text.encode())})
        assert r.status_code == 400
        return re.findall(r"<li>(.*?)</li>", r.text.split('id="s-file-error"')[1].split("</div>")[0], re.S)

    assert items(csv) == ["ships.csv:2: chegada: &#39;15/03/2026 06:00&#39; não é uma data e hora ISO 8601 com fuso "
                          "(AAAA-MM-DDThh:mm±hh:mm); saída: &#39;2026-03-16T06:00&#39; não tem fuso horário "
                          "(±hh:mm no fim, como -03:00)"]
    assert items(long_name) == [f"ships.csv:2: não é um arquivo CSV válido: um campo tem mais de {FIELD_LIMIT} caracteres"]
    c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/ships"})
    assert items(csv) == ["ships.csv:2: arrival: time &#39;15/03/2026 06:00&#39; is not an ISO 8601 timestamp; "
                          "departure: time &#39;2026-03-16T06:00&#39; has no UTC offset"]
    assert items(long_name) == [f"ships.csv:2: not a valid CSV file: a field is longer than {FIELD_LIMIT} characters"]
    assert _calls(app) == []

"""The escala page's requisition form and upload, as a fresh tester found them (2026-12-06): the
"Trabalhadores" field took the Arabic-Indic digit "٣" (Python's ``int`` takes any Unicode digit;
``portgate.cells.whole`` takes ASCII 0-9 only, for the form and the requisitions CSV); a badly typed
date answered "não é AAAA-MM-DD" on a form that asks dd/mm/aaaa; an upload of another day's
requisitions answered with the command line's "--date:". Real office application (test client),
SQLite ledger, pt-BR and English."""

from __future__ import annotations

import re

import pytest

from central.rotation.schema import escala
from tests.central.web.conftest import logged_in
from tests.central.web.test_escala_menu_web import DAY, HEADER, _call, _counts, _n, engine, reg  # noqa: F401 - fixtures


def _form(c, token, **typed) -> tuple[int, dict[str, str]]:
    r = c.post("/escala/dispatch", data={"csrf_token": token} | typed)
    if r.status_code != 400:
        return r.status_code, {}
    form = r.text.split('id="req-form"')[1].split("</form>")[0]
    return 400, dict(re.findall(r'<span class="field-error" id="q-\w+-error" data-field="(\w+)">([^<]*)</span>', form))


@pytest.mark.parametrize("lang, workers_says, date_says", [
    ("pt", "número de trabalhadores &#39;٣&#39; não é um número inteiro", "a data &#39;16-03-2026&#39; não é uma data (dd/mm/aaaa)"),
    ("en", "workers &#39;٣&#39; is not a whole number", "date &#39;16-03-2026&#39; is not a date (dd/mm/yyyy)"),
])
def test_the_form_takes_ascii_digits_only_and_names_its_own_date_format(app, reg, lang, workers_says, date_says):
    aurora = _call(reg, "9300001", "MSC Aurora", "g-a")
    c, token = logged_in(app, "office")
    if lang == "en":
        c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/escala"})
    before = _counts(reg)
    typed = {"date": "02/12/2026", "period": "13-19", "operator": "Operadora Sul", "post": "proa",
             "function": "vigia", "workers": "٣", "call": str(aurora)}
    status, errors = _form(c, token, **typed)
    assert status == 400 and errors.get("workers") == workers_says, errors
    status, errors = _form(c, token, **typed | {"date": "16-03-2026", "workers": "3"})
    assert status == 400 and errors.get("date") == date_says, errors
    assert "AAAA-MM-DD" not in errors["date"] and "YYYY-MM-DD" not in errors["date"]
    assert _counts(reg) == before


@pytest.mark.parametrize("lang, says", [
    ("pt", "data: requisição(ões) que não são de 02/12/2026: R1"),
    ("en", "date: requisition(s) not for Dec 2, 2026: R1"),
])
def test_an_upload_of_another_days_requisitions_names_the_pages_date_field(app, reg, lang, says):
    c, token = logged_in(app, "office")
    if lang == "en":
        c.post("/lang", data={"csrf_token": token, "lang": "en", "next": "/escala"})
    rows = "2026-12-03,07-13,Op A,9300001,MSC Aurora,long_haul,berthed,g-a,portalo,vigia,1\n"
    r = c.post("/escala/dispatch", data={"csrf_token": token, "date": DAY},
               files={"requisitions": ("r.csv", (HEADER + rows).encode())})
    assert r.status_code == 400
    errors = r.text.split('id="escala-errors"')[1].split("</div>")[0]
    assert "--date" not in errors, errors
    assert says.split(": R1")[0] in errors, errors
    assert _n(reg, escala) == 0

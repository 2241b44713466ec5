"""The what-if's parameter form over the real app (SQLite and PostgreSQL; issue 34): the parameters
offered are those of the gate rulebook in force (the shipped default, or the one a gate journaled);
a typed value that is not one is refused beside its field with what was typed kept; the value in
force typed again says "nothing changed" and runs nothing; a changed one is run and shows the
parameter's old and new value with the decisions' difference."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
import uuid
from pathlib import Path

import pytest

from app.whatif import web_gate_what_if
from central.config import PublishSettings, WebSettings
from central.ledger.schema import events
from central.web.app import create_app
from tests.central.web.conftest import SECRET, logged_in

GOOD = (Path(__file__).resolve().parents[3] / "config" / "rulebooks" / "gate-default.toml").read_text(encoding="utf-8")
DAY = "2026-03-15"


@pytest.fixture
def gate_app(engine, users, clock):
    """The app with the gate what-if over the registry's copies (empty: no reads to decide)."""
    return create_app(engine, WebSettings(), SECRET, now=clock, background=False,
                      gate_what_if=web_gate_what_if(PublishSettings(source="registry")))


def _post(app, lang_en: bool = False, **data):
    c, csrf = logged_in(app, "office")
    if lang_en:
        assert c.post("/lang", data={"csrf_token": csrf, "lang": "en"}).status_code == 303
    return c.post("/whatif/param", data={"csrf_token": csrf, "day": DAY, "gate": "", "directions": ""} | data)


def _journal(app, gate: str, text: str) -> None:
    at = dt.datetime(2026, 3, 15, 2, 0, tzinfo=dt.UTC)
    with app.state.web.engine.begin() as conn:
        conn.execute(events.insert().values(
            event_id=str(uuid.uuid4()), port="santos", gate_id=gate, boot_id="b", seq=1, occurred_at=at,
            clock_trusted=True, mono_ns=0, type="rulebook", registration=None, decision=None,
            payload={"type": "rulebook", "name": "porto", "toml": text,
                     "sha256": hashlib.sha256(text.encode()).hexdigest()},
            mac="00", raw=b"{}", received_at=at))


def _options(page: str) -> dict[str, str]:
    select = page.split('<select id="p-param"')[1].split("</select>")[0]
    return dict(re.findall(r'<option value="([^"]+)"[^>]*>([^<]*)</option>', select))


def test_the_form_offers_the_parameters_of_the_rulebook_in_force(gate_app):
    c, _ = logged_in(gate_app, "office")
    shipped = _options(c.get("/whatif").text)
    assert shipped["g6.early_tolerance_min"] == "G6 · early_tolerance_min = 30 (número inteiro 0..1440)"
    assert shipped["g7.mode"] == "G7 · mode = deny (um de: deny, warn)"
    assert shipped["g4.card_and_badge_required"].startswith("G4 · card_and_badge_required = false (sim ou não)")
    _journal(gate_app, "g-a", GOOD.replace("card_and_badge_required = false", "card_and_badge_required = true"))
    in_force = _options(c.get("/whatif", params={"gate": "g-a", "day": DAY}).text)
    assert in_force["g4.card_and_badge_required"].startswith("G4 · card_and_badge_required = true")
    # the raw TOML is the advanced mode, closed until used
    assert '<details class="advanced" id="advanced">' in c.get("/whatif").text


@pytest.mark.parametrize("param, typed, says", [
    ("g6.early_tolerance_min", "trinta", "early_tolerance_min &#39;trinta&#39; não é um número inteiro"),
    ("g6.early_tolerance_min", "5000", "early_tolerance_min 5000 está fora do intervalo 0..1440"),
    ("g7.mode", "talvez", "mode &#39;talvez&#39; não é um dos valores deny, warn"),
    ("g4.card_and_badge_required", "talvez", "&#39;talvez&#39; não é sim nem não"),
    ("g6.early_tolerance_min", "", "digite um valor"),
    ("g1.enabled", "não", "G1 não pode ser desligada"),
])
def test_a_value_that_is_not_one_is_refused_beside_the_field_and_kept(gate_app, param, typed, says):
    r = _post(gate_app, param=param, value=typed)
    assert r.status_code == 400
    error = r.text.split('id="p-value-error" data-field="value">')[1].split("</span>")[0]
    assert says in error, error
    assert f'id="p-value" name="value" value="{typed.replace(chr(39), "&#39;")}"' in r.text
    assert f'<option value="{param}" data-kind=' in r.text and re.search(
        rf'<option value="{re.escape(param)}" data-kind="\w+" selected>', r.text)
    assert 'aria-describedby="p-value-error"' in r.text
    assert 'id="gate-summary"' not in r.text and 'id="param-changed"' not in r.text


def test_a_parameter_not_offered_is_refused_beside_the_select(gate_app):
    r = _post(gate_app, param="g12.categories", value="x")
    assert r.status_code == 400
    assert 'id="p-param-error" data-field="param">escolha um dos parâmetros listados</span>' in r.text
    assert 'id="p-value" name="value" value="x"' in r.text


def test_the_value_in_force_typed_again_says_nothing_changed_and_runs_nothing(gate_app):
    for typed in ("30", " 30 "):
        r = _post(gate_app, param="g6.early_tolerance_min", value=typed)
        assert r.status_code == 200
        said = r.text.split('id="param-nothing">')[1].split("</p>")[0]
        assert said.startswith("Nada mudou: o valor digitado é o que já está em vigor: G6 · early_tolerance_min = 30")
        assert 'id="gate-summary"' not in r.text and "decisões mudam" not in r.text
    r = _post(gate_app, param="g4.card_and_badge_required", value="não")  # false in force, typed in pt
    assert 'id="param-nothing"' in r.text
    r = _post(gate_app, lang_en=True, param="g6.early_tolerance_min", value="30")
    assert "Nothing changed: the value typed is the one in force" in r.text


def test_a_changed_value_is_run_and_shows_the_old_and_new_value(gate_app):
    r = _post(gate_app, param="g6.early_tolerance_min", value="0")
    assert r.status_code == 200, r.text[-2000:]
    changed = r.text.split('id="param-changed">')[1].split("</p>")[0]
    assert '<span class="was">30</span> → <strong class="now">0</strong>' in changed
    summary = r.text.split('id="gate-summary">')[1].split("</p>")[0]
    assert summary.startswith("Nenhuma decisão muda (0 leituras)")  # no reads recorded that day
    assert 'id="param-nothing"' not in r.text
    # the form keeps the chosen parameter and value for the next try
    assert re.search(r'<option value="g6\.early_tolerance_min" data-kind="int" selected>', r.text)
    assert 'id="p-value" name="value" value="0"' in r.text


def test_a_gate_what_if_without_parameters_refuses_the_form(engine, users, clock):
    def plain(engine, day, gate, rulebook, directions, lang):
        return [], {"reads": 0, "changed": 0, "rules_changed": 0, "by_gate": {}, "changes": {}}

    app = create_app(engine, WebSettings(), SECRET, now=clock, background=False, gate_what_if=plain)
    c, csrf = logged_in(app, "office")
    assert 'id="param-form"' not in c.get("/whatif").text
    r = c.post("/whatif/param", data={"csrf_token": csrf, "day": DAY, "param": "g6.early_tolerance_min", "value": "0"})
    assert r.status_code == 400 and 'id="gate-error"' in r.text


def test_a_bad_day_is_refused_with_the_typed_values_kept(gate_app):
    r = _post(gate_app, day="15/03/2026", param="g6.early_tolerance_min", value="0")
    assert r.status_code == 400 and 'id="gate-error"' in r.text
    assert 'id="p-value" name="value" value="0"' in r.text and 'id="gate-summary"' not in r.text

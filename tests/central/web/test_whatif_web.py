"""The "what if" page without a browser: who may open it, what it says without the gate side,
refused inputs as one message, and the ``portgate`` command handing the gate what-if to ``office
serve``."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import click
import pytest

from app.cli import cli
from app.whatif import web_gate_what_if
from central.config import PublishSettings, WebSettings
from central.ledger.schema import gate_progress
from central.web.app import create_app
from central.web.cli import GATE_WHAT_IF
from central.web.routes.whatif import MAX_RULEBOOK_CHARS
from tests.central.web.conftest import SECRET, logged_in


def test_the_page_is_for_office_auditor_and_admin(app):
    for role in ("office", "auditor", "admin"):
        c, _ = logged_in(app, role)
        assert c.get("/whatif").status_code == 200, role
    c, _ = logged_in(app, "inspector")
    assert c.get("/whatif").status_code == 403


def test_without_the_gate_what_if_the_page_says_so_and_the_post_is_refused(app):
    c, csrf = logged_in(app, "office")
    page = c.get("/whatif").text
    assert 'id="gate-unavailable"' in page and 'id="gate-form"' not in page
    r = c.post("/whatif/gate", data={"csrf_token": csrf, "day": "2026-03-15", "rulebook": "x = 1"})
    assert r.status_code == 400 and "não está disponível" in r.text


def test_a_pay_what_if_with_a_rulebook_not_listed_or_a_reversed_period_is_refused(app):
    c, csrf = logged_in(app, "office")
    page = c.get("/whatif").text
    assert '<option value="example-cct-2026"' in page and 'value="gate-default"' not in page
    r = c.post("/whatif/pay", data={"csrf_token": csrf, "from": "2026-03-01", "to": "2026-03-31",
                                    "rulebook": "../../etc/passwd"})
    assert r.status_code == 400 and "escolha uma das tabelas de pagamento listadas" in r.text
    r = c.post("/whatif/pay", data={"csrf_token": csrf, "from": "2026-03-31", "to": "2026-03-01",
                                    "rulebook": "example-cct-2026"})
    assert r.status_code == 400 and "o período termina antes de começar" in r.text


def test_only_watchmen_pay_rulebooks_are_offered_and_others_are_refused_without_a_path(app):
    """The stevedoring and dock-work rulebooks are not watchmen's pay tables: the page does not
    offer them, and one posted anyway is refused as unlisted, naming no file on the server."""
    c, csrf = logged_in(app, "office")
    page = c.get("/whatif").text
    assert '<option value="decreto-83611-1979"' in page
    assert 'value="dl-2032-1940"' not in page and 'value="dl-3844-1941"' not in page
    r = c.post("/whatif/pay", data={"csrf_token": csrf, "from": "2026-03-01", "to": "2026-03-31",
                                    "rulebook": "dl-2032-1940"})
    assert r.status_code == 400 and "escolha uma das tabelas de pagamento listadas" in r.text
    assert "config/rulebooks" not in r.text and ".toml" not in r.text


def test_an_empty_period_computes_nothing_and_says_nothing_stored(app):
    c, csrf = logged_in(app, "auditor")
    r = c.post("/whatif/pay", data={"csrf_token": csrf, "from": "2026-03-01", "to": "2026-03-02",
                                    "rulebook": "example-cct-2026"})
    assert r.status_code == 200 and "0 de 0" in r.text and "nada gravado" in r.text


def test_the_portgate_command_hands_office_serve_the_gate_what_if():
    with click.Context(cli) as ctx:
        cli.callback()
        factory = ctx.meta[GATE_WHAT_IF]
    run = factory(PublishSettings())
    assert callable(run)


@pytest.fixture
def gate_app(engine, users, clock):
    """The app with the gate what-if wired (no gate copies named: a rulebook that passes every
    check ends on the ConfigError about the copies)."""
    return create_app(engine, WebSettings(), SECRET, now=clock, background=False,
                      gate_what_if=web_gate_what_if(PublishSettings()))


GOOD = (Path(__file__).resolve().parents[3] / "config" / "rulebooks" / "gate-default.toml").read_text(encoding="utf-8")


def _gate(app, **data):
    c, csrf = logged_in(app, "office")
    return c.post("/whatif/gate", data={"csrf_token": csrf, "day": "2026-03-15", "rulebook": GOOD, **data})


@pytest.mark.parametrize("text", ["a = " + "[" * 1000 + "]" * 1000,
                                  "a = " + "{b = " * 1000 + "1" + "}" * 1000])
def test_a_deeply_nested_rulebook_is_refused_not_a_500(gate_app, text):
    r = _gate(gate_app, rulebook=text)
    assert r.status_code == 400 and "aninhada em profundidade demais" in r.text


def test_a_rulebook_over_the_limit_is_refused_not_cut(gate_app):
    r = _gate(gate_app, rulebook=GOOD + "#" * 300_000)
    assert r.status_code == 400 and f"caracteres (no máximo {MAX_RULEBOOK_CHARS})" in r.text


@pytest.mark.parametrize("text", ["", "# nothing\n", "id = 'x'\n"])
def test_a_rulebook_without_a_version_is_refused(gate_app, text):
    r = _gate(gate_app, rulebook=text)
    assert r.status_code == 400 and "não tem versão" in r.text


@pytest.mark.parametrize("gate", ["../../etc", "g-nope"])
def test_an_unknown_gate_is_refused(gate_app, gate):
    r = _gate(gate_app, gate=gate)
    assert r.status_code == 400 and "não é conhecido" in r.text and "Nenhuma decisão muda" not in r.text


def test_a_gate_the_ledger_knows_passes_the_gate_check(gate_app, engine):
    with engine.begin() as conn:
        conn.execute(gate_progress.insert().values(gate_id="g1", highest_seq=1, contiguous_seq=1,
                                                   updated_at=dt.datetime.now(dt.UTC)))
    r = _gate(gate_app, gate="g1")
    assert r.status_code == 400 and "não é conhecido" not in r.text and "workers_csv" in r.text


@pytest.mark.parametrize("day, shown", [("0001-01-01", "01/01/0001"), ("1999-12-31", "31/12/1999"),
                                        ("2101-01-01", "01/01/2101")])
def test_a_day_outside_the_range_is_refused(gate_app, day, shown):
    r = _gate(gate_app, day=day)
    assert r.status_code == 400 and f"o dia {shown} está fora de 01/01/2000..31/12/2100" in r.text


@pytest.mark.parametrize(("edit", "pt"), [
    (("port_timezone = \"America/Sao_Paulo\"", "port_timezone = 3"),
     "$.version[0].port_timezone: esperado `str`, veio `int`"),
    (("mode = \"deny\"", "mode = \"talvez\""), "$.version[0].g7.mode: o valor &#39;talvez&#39; não é um dos permitidos"),
    (("rest_hours = 11", "rest_hours = 11\nrest_hourz = 3"), "chave desconhecida (grafia errada, ou não vale aqui)"),
    (("port_timezone = \"America/Sao_Paulo\"", "port_timezone = \"Mars/Olympus\""),
     "fuso horário desconhecido &#39;Mars/Olympus&#39;"),
    (("effective_from = 2026-01-01\n", ""), "obrigatório: a data a partir da qual esta versão vale"),
])
def test_a_rulebook_the_schema_refuses_is_named_by_its_key_in_portuguese(gate_app, edit, pt):
    assert edit[0] in GOOD
    r = _gate(gate_app, rulebook=GOOD.replace(edit[0], edit[1], 1))
    assert r.status_code == 400 and pt in r.text, r.text[-2000:]
    assert "Expected" not in r.text and "unknown key" not in r.text and "required:" not in r.text


def test_in_english_the_refusals_keep_the_english_wording(engine, users, clock):
    app = create_app(engine, WebSettings(lang="en"), SECRET, now=clock, background=False,
                     gate_what_if=web_gate_what_if(PublishSettings()))
    assert "the rulebook has no version" in _gate(app, rulebook="").text
    assert "gate &#39;g-nope&#39; is not a known gate" in _gate(app, gate="g-nope").text


def test_a_rulebook_that_is_not_toml_is_named_by_line_and_column_in_portuguese(gate_app):
    r = _gate(gate_app, rulebook="[[version]]\neffective_from 2026-01-01\n")
    assert r.status_code == 400
    assert "não é TOML: linha 2, coluna 16: falta &#39;=&#39; depois da chave (chave = valor)" in r.text
    assert "Expected" not in r.text and "(at line" not in r.text
    r = _gate(gate_app, rulebook='[[version]]\nport_timezone = "America/Sao_Paulo')
    assert "não é TOML: no fim do texto: texto (string) sem as aspas de fechamento" in r.text


def test_in_english_a_rulebook_that_is_not_toml_keeps_tomllib_s_wording(engine, users, clock):
    app = create_app(engine, WebSettings(lang="en"), SECRET, now=clock, background=False,
                     gate_what_if=web_gate_what_if(PublishSettings()))
    r = _gate(app, rulebook="[[version]]\neffective_from 2026-01-01\n")
    assert r.status_code == 400
    assert ("not TOML: Expected &#39;=&#39; after a key in a key/value pair (at line 2, column 16)"
            in r.text)


def _one_changed_read(engine, day, gate, rulebook, directions, lang):
    """A gate what-if (``create_app``'s ``gate_what_if`` shape) that finds one read denied under G4
    and admitted under the new rulebook."""
    row = {"at": "2026-03-15T10:00:00+00:00", "gate_id": "g-aurora", "seq": 7,
           "uid": "04A1", "registration": "V008", "changed": True, "rules_changed": False,
           "recorded": {"decision": "deny", "rules_failed": ["G4"]},
           "what_if": {"decision": "admit", "rules_failed": [], "message": "Bom trabalho"}}
    return [row], {"reads": 1, "changed": 1, "rules_changed": 0, "by_gate": {"g-aurora": 1},
                   "changes": {"deny -> admit": 1}}


@pytest.mark.parametrize(("lang", "recorded", "what_if", "change"), [
    ("pt", "negado (G4)", "liberado", "negado → liberado: 1"),
    ("en", "denied (G4)", "admitted", "denied → admitted: 1"),
])
def test_each_read_s_outcome_is_named_in_the_page_s_language(engine, users, clock, lang, recorded, what_if,
                                                              change):
    app = create_app(engine, WebSettings(lang=lang), SECRET, now=clock, background=False,
                     gate_what_if=_one_changed_read)
    r = _gate(app)
    assert r.status_code == 200
    assert f'data-decision="deny">{recorded}</td>' in r.text
    assert f'data-decision="admit">{what_if}</td>' in r.text
    assert change in r.text and "deny -&gt; admit" not in r.text


def test_the_rulebook_in_force_is_the_last_one_the_gate_journaled_before_the_days_end(gate_app):
    """Issue 34 item 11: ``/whatif?gate=G&day=D`` fills the form with the ``rulebook`` event G
    journaled last before the end of D (port time); a later one is not yet in force; the built-in
    default (empty text) shows the shipped default's text; a gate that never reported one says so."""
    import hashlib
    import uuid

    from central.ledger.schema import events

    book = GOOD.replace("card_and_badge_required = false", "card_and_badge_required = true")

    def journal(at, text, seq):
        with gate_app.state.web.engine.begin() as conn:
            conn.execute(events.insert().values(
                event_id=str(uuid.uuid4()), port="santos", gate_id="g-a", boot_id="b", seq=seq, occurred_at=at,
                clock_trusted=True, mono_ns=0, type="rulebook", registration=None, decision=None,
                payload={"type": "rulebook", "name": "porto", "toml": text,
                         "sha256": hashlib.sha256(text.encode()).hexdigest()},
                mac="00", raw=b"{}", received_at=at))

    journal(dt.datetime(2026, 3, 10, 12, 0, tzinfo=dt.UTC), "", 1)  # the built-in default
    journal(dt.datetime(2026, 3, 15, 2, 0, tzinfo=dt.UTC), book, 2)  # 23:00 of 14/03 in São Paulo
    journal(dt.datetime(2026, 3, 16, 3, 30, tzinfo=dt.UTC), "# later\n" + book, 3)  # 00:30 of 16/03
    c, _ = logged_in(gate_app, "office")
    page = c.get("/whatif", params={"gate": "g-a", "day": "2026-03-15"})
    assert page.status_code == 200 and 'data-found="yes"' in page.text
    textarea = page.text.split('id="g-book"')[1].split("</textarea>")[0]
    assert "card_and_badge_required = true" in textarea and "# later" not in textarea
    assert "14/03/2026 23:00:00" in page.text.split('id="in-force"')[1].split("</p>")[0]
    old = c.get("/whatif", params={"gate": "g-a", "day": "2026-03-12"}).text
    assert "card_and_badge_required = false" in old.split('id="g-book"')[1].split("</textarea>")[0]
    none = c.get("/whatif", params={"gate": "g-zz", "day": "2026-03-15"}).text
    assert 'data-found="no"' in none and "não informou seu regulamento" in none
    assert c.get("/whatif", params={"gate": "g-a", "day": "15/03/2026"}).status_code == 400

"""The "what if" page without a browser: who may open it, what it says without the gate side,
refused inputs as one message, and the ``portgate`` command handing the gate what-if to ``office
serve``."""

from __future__ import annotations

import click

from app.cli import cli
from central.config import PublishSettings
from central.web.cli import GATE_WHAT_IF
from tests.central.web.conftest import logged_in


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

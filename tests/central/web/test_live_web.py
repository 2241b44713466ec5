"""The home page (live port view) in the page's language, through the test client."""

from __future__ import annotations

from central.web.event_texts import event_text
from tests.central.web.conftest import logged_in
from tests.central.web.events import add_flag_event


def _last_event(html: str, gate: str) -> str:
    return html.split(f'data-gate="{gate}"')[1].split('class="last-event">')[1].split("</dd>")[0]


def test_a_gates_last_event_is_named_in_the_pages_language(app):
    add_flag_event(app.state.web.engine, flags=[], registration="V016", gate_id="g-exit", decision="exit")
    add_flag_event(app.state.web.engine, flags=[], registration="V009", gate_id="g-deny", decision="deny")
    c, token = logged_in(app, "office")
    for path in ("/", "/live/panel"):
        html = c.get(path).text
        assert _last_event(html, "g-exit").endswith(" leitura: saída V016"), path
        assert _last_event(html, "g-deny").endswith(" leitura: negado V009"), path
        assert "tap exit" not in html
    assert c.post("/lang", data={"csrf_token": token, "lang": "en"}).status_code == 303
    assert _last_event(c.get("/").text, "g-exit").endswith(" tap: exit V016")  # the catalog's English words


def test_every_event_type_and_detail_reads_in_portuguese():
    assert event_text("pt", ("tap", "admit", "V001")) == "leitura: liberado V001"
    assert event_text("pt", ("tap", "aboard", "V001")) == "leitura: já a bordo V001"
    assert event_text("pt", ("confiscation", "BORROWED_CARD", "V008")) == \
        "apreensão de cartão: cartão emprestado (G4) V008"
    assert event_text("pt", ("coverage", "ended", "V001")) == "cobertura de vigia: falta encerrada V001"
    assert event_text("pt", ("reader", "fault", "")) == "leitor: com defeito"
    assert event_text("pt", ("alert", "STORE_QUARANTINED", "")) == "alerta: STORE_QUARANTINED"
    assert event_text("pt", None) == ""
    assert event_text("en", ("alert", "OUTBOX_HIGH_WATER", "")) == "alert: OUTBOX_HIGH_WATER"
    assert event_text("en", ("tap", "admit", "V001")) == "tap: admitted V001"

"""The payslip verification codes and page (issue 34 item 9) over the real app (SQLite and
PostgreSQL): tokens of 100 random bits that a person may type loosely, the same token for the same
slip printed twice, the page reachable without login showing total, period and initials only, a
wrong or malformed code answered 404 without anything else, a slip whose ledger changed since it
was printed refused, and the per-client limit (429 with Retry-After after N look-ups a minute)."""

from __future__ import annotations

import io
import re

import pytest
from pypdf import PdfReader
from sqlalchemy import func, select, update
from starlette.testclient import TestClient

from central.config import WebSettings
from central.ledger.tables import statement_lines, statements
from central.pay.payslip import initials
from central.pay.slip_codes import ALPHABET, TOKEN_CHARS, new_token, read_token, slip_codes
from central.web.app import create_app
from tests.central.web.conftest import SECRET, engine_of, logged_in

KEY = b"s" * 32
Q = {"from": "2026-03-01", "to": "2026-03-31"}


def test_tokens_are_100_random_bits_in_crockford_base32():
    tokens = {new_token() for _ in range(2000)}
    assert len(tokens) == 2000
    assert all(len(t) == TOKEN_CHARS and set(t) <= set(ALPHABET) for t in tokens)
    assert len(ALPHABET) ** TOKEN_CHARS == 2 ** 100
    # every character place takes every value: nothing fixed, nothing derived
    assert all(len({t[i] for t in tokens}) == 32 for i in range(TOKEN_CHARS))


@pytest.mark.parametrize("typed, read", [
    ("ABCD-EFGH-JKMN-PQRS-TVWX", "ABCDEFGHJKMNPQRSTVWX"),
    (" abcd efgh jkmn pqrs tvwx ", "ABCDEFGHJKMNPQRSTVWX"),
    ("OOOO-IIII-LLLL-0000-1111", "00001111111100001111"),
    ("ABCD-EFGH-JKMN-PQRS-TVW", None),  # 19 characters
    ("ABCD-EFGH-JKMN-PQRS-TVWU", None),  # U is not in the alphabet
    ("x" * 100, None),
])
def test_a_token_is_read_as_a_person_types_it(typed, read):
    assert read_token(typed) == read


def test_initials_leave_out_the_particles():
    assert initials("Quitéria Almeida") == "Q. A."
    assert initials("ana maria da silva e souza") == "A. M. S. S."


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path, ledgers):
    """The web suite's ``engine``; a test that uses ``payapp`` starts with the demo registry and
    paydata.py's March 2026 paid in it (a copy of a ledger the session filled once:
    tests/central/web/conftest.py's FILLS, issue 32)."""
    yield from engine_of(request, tmp_path, ledgers, "demo_pay" if "payapp" in request.fixturenames else None)


@pytest.fixture
def payapp(engine, users, clock):
    def make(**settings):
        return create_app(engine, WebSettings(**settings), SECRET, now=clock, background=False, slip_key=KEY)
    return make


def _token(pdf: bytes) -> str:
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf)).pages)
    return re.search(r"/v/([0-9A-Z]{20})", text).group(1)


def test_the_same_slip_printed_twice_keeps_its_token_and_the_page_needs_no_login(payapp, engine):
    app = payapp(public_url="https://escritorio.porto.example/")
    c, _ = logged_in(app, "office")
    first = c.get("/pay/slip/V017.pdf", params=Q)
    assert first.status_code == 200
    token = _token(first.content)
    assert "https://escritorio.porto.example/v/" + token in PdfReader(io.BytesIO(first.content)).pages[0].extract_text()
    assert _token(c.get("/pay/slip/V017.pdf", params=Q).content) == token
    c.get("/pay/slips.pdf", params=Q)  # the batch: V017's slip is the same, its token too
    with engine.connect() as conn:
        rows = conn.execute(select(slip_codes.c.registration, func.count()).group_by(slip_codes.c.registration)).all()
    assert dict(rows)["V017"] == 1 and len(rows) == 4
    with TestClient(app, base_url="http://testserver", follow_redirects=False) as anon:
        r = anon.get(f"/v/{token}")
        assert r.status_code == 200 and 'data-state="valid"' in r.text
        assert "R$ 696,60" in r.text and "Q. A." in r.text
        assert "Quitéria" not in r.text and "V017" not in r.text and "00000001759" not in r.text


@pytest.mark.parametrize("path", ["/v/ABCDEFGHJKMNPQRSTVWX", "/v/not-a-code", "/v/" + "9" * 20])
def test_a_wrong_code_is_not_found_and_says_nothing_else(payapp, path):
    app = payapp()
    with TestClient(app, base_url="http://testserver", follow_redirects=False) as anon:
        r = anon.get(path)
    assert r.status_code == 404 and 'data-state="unknown"' in r.text
    assert "Código não encontrado" in r.text and "R$" not in r.text


def test_a_slip_whose_ledger_changed_since_it_was_printed_is_refused_without_figures(payapp, engine):
    app = payapp()
    c, _ = logged_in(app, "office")
    token = _token(c.get("/pay/slip/V017.pdf", params=Q).content)
    with engine.begin() as conn:
        sid = conn.execute(select(statements.c.statement_id).where(statements.c.registration == "V017")).scalar_one()
        conn.execute(update(statement_lines).where(statement_lines.c.statement_id == sid,
                                                   statement_lines.c.position == 0).values(amount_cents=1))
    with TestClient(app, base_url="http://testserver") as anon:
        r = anon.get(f"/v/{token}")
    assert r.status_code == 200 and 'data-state="changed"' in r.text and "R$" not in r.text


def test_lookups_beyond_the_limit_per_client_are_answered_429(payapp):
    app = payapp(verify_per_minute=3)
    with TestClient(app, base_url="http://testserver") as anon:
        codes = [anon.get(f"/v/{new_token()}").status_code for _ in range(4)]
        limited = anon.get("/v/ABCDEFGHJKMNPQRSTVWX")
    assert codes == [404, 404, 404, 429]
    assert limited.status_code == 429 and 0 < int(limited.headers["retry-after"]) <= 60
    assert 'data-state="limited"' in limited.text

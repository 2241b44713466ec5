"""The demo's billing lines under ``portgate demo --lang en`` (a tester read Portuguese there): the
billing document's own pt-BR words, ``navio <ship>`` for an unlisted shipowner and the P8 trip's
description as ``central.pay.billing`` writes it, are shown in English; pt-BR shows them as written."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import msgspec

from app.demo.console import billing_words
from central.pay.billing import AnchoredShift, billing_statements, watchmen_billing
from central.pay.loading import load_rulebook

ROOT = Path(__file__).resolve().parents[3]
T = dt.datetime(2026, 3, 15, 22, 0, tzinfo=dt.UTC)


def _statement():
    book = load_rulebook(ROOT / "config" / "rulebooks" / "decreto-83611-1979.toml")
    book = msgspec.structs.replace(book, anchorage_transport_fare=Decimal("45.00"))
    shift = AnchoredShift("V017/9300002/2026-03-15/19-01", "V017", "9300002", dt.date(2026, 3, 15), "19-01",
                          T, T + dt.timedelta(hours=6))
    (st,) = billing_statements(watchmen_billing([shift], book), {}, dt.date(2026, 3, 15), dt.date(2026, 3, 15))
    return st


def test_the_p8_line_and_an_unlisted_shipowner_read_in_english_under_lang_en():
    st = _statement()
    (line,) = st.lines
    owner, said = billing_words("en", st.shipowner, line.ship, line.description)
    assert owner == "ship 9300002"
    assert said == "Transport quay ↔ ship at anchorage 9300002 (round trip), watchman V017, period 19-01"


def test_pt_br_keeps_the_document_s_words():
    st = _statement()
    (line,) = st.lines
    assert billing_words("pt", st.shipowner, line.ship, line.description) == (st.shipowner, line.description)
    assert st.shipowner == "navio 9300002" and line.description.startswith("Transporte cais ↔ navio ao largo")

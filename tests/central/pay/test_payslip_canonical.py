"""A payslip's canonical content (``central.pay.payslip.canonical``, what its HMAC verification code
covers) is written key by key for speed: it must stay the exact bytes of ``json.dumps`` of the slip's
body with sorted keys, no spaces and UTF-8 (``canonical_body``), or every printed slip would stop
verifying. Slips with awkward texts (quotes, backslashes, control characters, non-Latin letters),
a header, ships, shared and repeated lines, amounts with other exponents, and fields of unexpected
types (they take ``json.dumps`` itself)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from decimal import Decimal

import pytest

from central.pay.payslip import Slip, SlipHeader, canonical, canonical_body, code
from central.pay.statements_read import StatementView, StoredLine

DAY = dt.date(2026, 3, 15)
DUE = dt.datetime(2026, 3, 18, 5, 30, tzinfo=dt.UTC)
BASE = StoredLine("P1", "83.611 art. 25", "salário-dia (base)", Decimal("270.00"))
ODD = StoredLine('R"1\\', "art. \u00a71\n\t\x01", "descrição “longa” 王", Decimal("-1234567.89"))
HEADER = SlipHeader('OGMO "Santos" \\ Órgão', "12345678000195", "Av. Portuária, 100\n— Santos", "https://office.example")


def _statement(sid: str, lines: tuple, total: Decimal, **kw) -> StatementView:
    return StatementView(sid, f"V017/9300002/{DAY}/19-01", "V017", "dl-2032-1940", DAY, total, (), DUE, None, None,
                         None, None, None, lines, **kw)


def _slips() -> list[Slip]:
    plain = _statement("S1@book", (BASE,), Decimal("270.00"))
    odd = _statement('S"2\\@book', (BASE, ODD, BASE), Decimal("-1233757.89"))
    exponent = _statement("S3@book", (BASE._replace(amount=Decimal("270.0")),), Decimal("270"))
    worker = Slip("V017", "Quitéria Almeida", "vigia", dt.date(2026, 3, 1), dt.date(2026, 3, 31),
                  (plain, odd, plain, exponent), cpf="12345678909", pis="12345678919",
                  ships=(("9300002", 'Navio "Um" \\ Ç\u2028'),))
    return [worker, dataclasses.replace(worker, name='José "Zé" d\'Ávila\x00', cpf=None, pis=None, ships=()),
            dataclasses.replace(worker, statements=())]


@pytest.mark.parametrize("header", [None, SlipHeader(), HEADER])
def test_canonical_is_the_json_dumps_of_the_body(header):
    for slip in _slips():
        want = json.dumps(canonical_body(slip, header), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        assert canonical(slip, header) == want.encode()
        json.loads(canonical(slip, header))  # and it is JSON


def test_a_field_of_another_type_takes_json_dumps():
    slip = dataclasses.replace(_slips()[0], category=None, cpf=12345678909)
    body = canonical_body(slip, HEADER)
    assert body["category"] is None and body["cpf"] == 12345678909
    assert canonical(slip, HEADER) == json.dumps(body, sort_keys=True, separators=(",", ":"),
                                                 ensure_ascii=False).encode()


def test_the_codes_of_printed_slips_do_not_change():
    """Known answers, computed with the json.dumps writer before this one (a printed slip keeps
    verifying only if its code is recomputed the same)."""
    worker, other, empty = _slips()
    codes = [code(b"k" * 32, s, h) for s, h in ((worker, None), (worker, HEADER), (other, HEADER), (empty, None))]
    assert codes == EXPECTED


EXPECTED = ['AA14F06AEF246E6CA5A98071', 'EB7843D143A1F5B8546EDA6A', 'ECF3A3F059C37F8F15BBB41A',
            '52C9DB3AC1982E726BF8117C']

"""The short verification codes printed on payslips (QR code and short URL, issue 34 item 9).

A payslip's HMAC code (``central.pay.payslip.code``) proves its content to whoever holds the key; a
person holding the paper needs something to type or scan instead. Each printed slip gets a
*token*: 100 random bits (``secrets``, never derived from a registration, statement id or date),
written as 20 characters of Crockford's base32 (``0-9 A-Z`` without ``I L O U``; a reader's ``O``
is read as ``0``, ``I``/``L`` as ``1``, dashes and blanks ignored), kept in ``slip_codes`` with what
the public page may show and what it needs to recheck the slip: the registration, the period, the
HMAC code, the total (centavos), the header the code covers and when it was first issued.

The same content (same HMAC code) keeps its token: printing a slip again, or ``portgate pay
verify-slip`` rendering it again to compare, prints the same address.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import secrets
from collections.abc import Iterable

from sqlalchemy import BigInteger, Column, Date, DateTime, String, Table, Text, select
from sqlalchemy.engine import Connection

from central.db import metadata

ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"  # Crockford's base32
TOKEN_CHARS = 20  # 100 bits
_READ_AS = str.maketrans({"O": "0", "I": "1", "L": "1", "-": None, " ": None})

slip_codes = Table(
    "slip_codes",
    metadata,
    Column("token", String(TOKEN_CHARS), primary_key=True),
    Column("code", String(32), nullable=False, unique=True),  # the slip's HMAC code (payslip.code)
    Column("registration", String(64), nullable=False),
    Column("date_from", Date, nullable=False),
    Column("date_to", Date, nullable=False),
    Column("total_cents", BigInteger, nullable=False),
    Column("header", Text, nullable=False),  # JSON of the SlipHeader the code covers
    Column("issued_at", DateTime(timezone=True), nullable=False),
)


def new_token() -> str:
    """20 characters of ``ALPHABET`` from 100 random bits (``secrets.randbits``)."""
    n = secrets.randbits(5 * TOKEN_CHARS)
    return "".join(ALPHABET[(n >> (5 * i)) & 31] for i in reversed(range(TOKEN_CHARS)))


def read_token(text: str) -> str | None:
    """A token as a person typed or a scanner read it (any case, dashes, ``O`` for ``0``), as
    stored; None when it cannot be one (wrong length or characters): the caller answers "unknown"
    without a database look-up."""
    if not isinstance(text, str) or len(text) > 64:
        return None
    bare = text.strip().upper().translate(_READ_AS)
    return bare if len(bare) == TOKEN_CHARS and all(c in ALPHABET for c in bare) else None


def grouped_token(token: str) -> str:
    """``'ABCDEFGH...'`` -> ``'ABCD-EFGH-...'`` as printed under the QR code."""
    return "-".join(token[i:i + 4] for i in range(0, len(token), 4))


def tokens_of(conn: Connection, codes: Iterable[str]) -> dict[str, str]:
    """``{HMAC code: token}`` of the codes already issued (chunks of 900)."""
    wanted = sorted(set(codes))
    out: dict[str, str] = {}
    for i in range(0, len(wanted), 900):
        out |= dict(conn.execute(select(slip_codes.c.code, slip_codes.c.token)
                                 .where(slip_codes.c.code.in_(wanted[i:i + 900]))).all())
    return out


def issue(conn: Connection, slips: Iterable[tuple[str, str, dt.date, dt.date, int]], header: dict, *,
          now: dt.datetime) -> dict[str, str]:
    """The token of each ``(code, registration, date_from, date_to, total_cents)``: the one already
    issued for that code, else a new one written now (``header``: the ``SlipHeader`` JSON its code
    covers). Runs in the caller's transaction; returns ``{code: token}``."""
    rows = {c: (c, reg, first, last, cents) for c, reg, first, last, cents in slips}
    found = tokens_of(conn, rows)
    fresh = [{"token": new_token(), "code": c, "registration": reg, "date_from": first, "date_to": last,
              "total_cents": cents, "header": json.dumps(header, sort_keys=True), "issued_at": now}
             for c, (c, reg, first, last, cents) in rows.items() if c not in found]
    if fresh:
        conn.execute(slip_codes.insert(), fresh)
    return found | {r["code"]: r["token"] for r in fresh}


def lookup(conn: Connection, token: str):
    """The ``slip_codes`` row of ``token`` (as ``read_token`` gives it), or None."""
    return conn.execute(select(slip_codes).where(slip_codes.c.token == token)).first()


_URL_BASE = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")


def check_base(url: str) -> str:
    """``url`` (``[web] public_url``) without a trailing slash; ``ValueError`` unless it is an
    ``http(s)://host[/path]`` address (no query, no blanks)."""
    url = url.strip().rstrip("/")
    if not _URL_BASE.fullmatch(url):
        raise ValueError(f"{url!r} is not an http(s)://host[/path] address")
    return url


def verify_url(base: str, token: str) -> str:
    """The short URL a slip prints and its QR code holds: ``<base>/v/<token>``."""
    return f"{base}/v/{token}"

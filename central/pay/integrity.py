"""Stored statements checked against their own digest before they are shown as proof of pay.

``altered(conn, views)`` (``views``: ``central.pay.statements_read.StatementView``) names the
statements whose stored row and lines no longer hash to the statement's ``digest``
(``central.pay.versions.stored_digest_matches``; the adjustment line taken off first): a line, the
total, the flags or the hold reason edited outside the ledger. A payslip of such a statement is
not verified (``portgate pay verify-slip``) and not printed (``central.web``); ``portgate pay
close`` supersedes the statement with a recomputed one. A statement stored without a digest is
not checked (nothing to check against).
"""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.engine import Connection

from central.ledger.tables import statements
from central.pay.versions import stored_digest_matches

#: Statement ids per digest query (one bound parameter each).
CHUNK = 900


def altered(conn: Connection, views) -> list[str]:
    """The ids, in ``views`` order, of the statements whose row and lines do not match their
    stored digest. Raises ``SQLAlchemyError`` (the caller's)."""
    ids = [v.statement_id for v in views]
    digests: dict[str, str | None] = {}
    for chunk in range(0, len(ids), CHUNK):
        digests.update(conn.execute(select(statements.c.statement_id, statements.c.digest).where(
            statements.c.statement_id.in_(ids[chunk:chunk + CHUNK]))).all())
    out = []
    for v in views:
        digest = digests.get(v.statement_id)
        if digest is None:
            continue
        lines = [(ln.rule, ln.article, ln.description, int(ln.amount * 100)) for ln in v.lines]
        if not stored_digest_matches(v.rulebook, int(v.total * 100), ",".join(v.flags) or None,
                                     v.hold_reason, lines, digest):
            out.append(v.statement_id)
    return out

"""A worker's defence or appeal sent twice is recorded once (R7: the phone resends a draft when the
connection dropped after the server saved it).

Each case form carries a one-time send id (``new_send_id``: 24 random URL-safe characters, the
hidden field ``send_id``), kept in the ``audit_log`` row of what it sent (``case.defence`` /
``case.appeal``, ``detail["send"]``; no table of its own). A POST is the same send as an earlier one
(``already_sent``) when an audit row of the same action, case and actor holds the same send id,
or holds the same text (stripped) and is at most ``SAME_TEXT_S`` seconds old: a page reloaded
from the phone's draft renders a new send id but the same text. The caller records nothing and
answers as the first time (303 ``?saved=``).
"""

from __future__ import annotations

import datetime as dt
import re
import secrets

from sqlalchemy import select

from central.audit import audit_log
from portgate.timeutil import as_utc

SAME_TEXT_S = 600  # seconds during which the same text by the same worker on the same case is one send
LOOK_BACK = 50  # the actor's newest audit rows of that action on that case looked at
_SEND_ID = re.compile(r"[A-Za-z0-9_-]{16,64}")


def new_send_id() -> str:
    """A fresh one-time send id for a case form (24 URL-safe characters)."""
    return secrets.token_urlsafe(18)


def send_id_of(value: object) -> str | None:
    """The form's ``send_id`` when it is one (16-64 of ``[A-Za-z0-9_-]``), else None (ignored)."""
    return value if isinstance(value, str) and _SEND_ID.fullmatch(value) else None


def already_sent(session, *, action: str, case_id: int, actor: str, send_id: str | None, text: str,
                 now: dt.datetime) -> bool:
    """Whether ``actor`` already sent this (see the module doc): ``action`` ``case.defence`` or
    ``case.appeal``; ``now`` aware."""
    rows = session.execute(
        select(audit_log.c.at, audit_log.c.detail)
        .where(audit_log.c.action == action, audit_log.c.subject == str(case_id), audit_log.c.actor == actor)
        .order_by(audit_log.c.id.desc()).limit(LOOK_BACK))
    text = (text or "").strip()
    since = now - dt.timedelta(seconds=SAME_TEXT_S)
    for at, detail in rows:
        detail = detail if isinstance(detail, dict) else {}
        if send_id and detail.get("send") == send_id:
            return True
        if text and detail.get("text") == text and as_utc(at) >= since:
            return True
    return False

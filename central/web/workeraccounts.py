"""Worker accounts (issue 35): a user of role ``worker`` bound to one registration, who sees only his
own escala, shifts, pay, cases and card on his phone (``central.web.routes.worker``).

The office issues an activation code (``issue_code``): 20 random base32 characters (100 bits,
``secrets``), shown once on a printable page or by ``portgate office add-user --role worker``;
only its SHA-256 is stored. It is single use and expires ``CODE_DAYS`` (7) days after it was issued;
a new code replaces the unused ones. The worker sets his password with it (``activate``): argon2id
and the office users' rules (``central.web.users``: at least ``MIN_PASSWORD`` characters); wrong
codes count as failed logins of that login (the same rate limit as the login page).

The login of a worker is his registration in lower case (``V017`` logs in as ``v017``; the login
form lower-cases what is typed). A cancelled registration (R4, ``workers.status = cancelled``)
disables the account: refused at login (``may_log_in``, called by ``users.check_login``) and at every
request (``registration_of``). Every change is an ``audit_log`` row naming the actor. Functions work
inside the caller's transaction and raise ``BadInput`` (one line); the caller rolls back.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime as dt
import hashlib
import secrets

from sqlalchemy import delete, select, update
from sqlalchemy.orm import Session

from central.registry.changes import audit, utcnow
from central.registry.schema import workers
from central.web import users
from central.web.schema import login_failures, office_users
from central.web.workerschema import worker_accounts, worker_activations
from portgate.errors import BadInput
from portgate.timeutil import as_utc

ROLE = "worker"
CODE_DAYS = 7


@dataclasses.dataclass(frozen=True, slots=True)
class Issued:
    """An activation code as issued: ``code`` (show it once), its login and expiry (aware UTC)."""

    login: str
    registration: str
    code: str
    expires_at: dt.datetime


def login_of(registration: str) -> str:
    """The login of ``registration``'s account: the registration in lower case."""
    return (registration or "").strip().lower()


def _digest(code: str) -> str:
    return hashlib.sha256(_normal(code).encode("utf-8", "replace")).hexdigest()


def _normal(code: str) -> str:
    """The code as compared: upper case, without spaces and dashes (the printed groups); a 0 or 1
    typed for the letter O or I (base32 has no digits 0, 1) reads as that letter."""
    return "".join(ch for ch in (code or "").upper() if ch.isalnum()).replace("0", "O").replace("1", "I")


def new_code() -> str:
    """20 base32 characters (100 random bits) in groups of 4: ``ABCD-EFGH-...``."""
    raw = base64.b32encode(secrets.token_bytes(13)).decode("ascii")[:20]
    return "-".join(raw[i:i + 4] for i in range(0, 20, 4))


def _worker_row(session: Session, registration: str):
    reg = (registration or "").strip()
    row = session.execute(select(workers.c.registration, workers.c.name, workers.c.status)
                          .where(workers.c.registration == reg)).first()
    if row is None:
        raise BadInput(f"no worker with registration {reg[:64]!r}", where="--registration")
    if row.status == "cancelled":
        raise BadInput(f"registration {reg} is cancelled (R4): no account", where="--registration")
    return row


def account_of(session: Session, registration: str):
    """The ``office_users`` row of ``registration``'s account, or None."""
    return session.execute(select(office_users).join(worker_accounts, worker_accounts.c.user_id == office_users.c.id)
                           .where(worker_accounts.c.registration == registration)).first()


def add_account(session: Session, registration: str, *, password: str | None = None, actor: str,
                now: dt.datetime | None = None) -> Issued | None:
    """Create the account of ``registration`` (login: the registration in lower case).

    With ``password`` (office rules), the account is ready and None is returned; without one, its
    password is unusable until the worker activates it, and the activation code is returned.
    ``BadInput`` for an unknown or cancelled registration, an existing account or a short password."""
    now = now or utcnow()
    worker = _worker_row(session, registration)
    if account_of(session, worker.registration) is not None:
        raise BadInput(f"registration {worker.registration} already has an account", where="--registration")
    login = login_of(worker.registration)
    secret = password if password is not None else secrets.token_urlsafe(32)
    login = users.check_login_name(login)
    users.check_password(secret)
    if session.execute(select(office_users.c.id).where(office_users.c.login == login)).first():
        raise BadInput(f"user {login!r} already exists", where="--registration")
    user_id = session.execute(office_users.insert().values(
        login=login, name=worker.name, role=ROLE, password_hash=users.hash_password(secret), disabled=False,
        created_at=now, updated_at=now)).inserted_primary_key[0]
    session.execute(worker_accounts.insert().values(user_id=user_id, registration=worker.registration,
                                                    created_at=now))
    audit(session, actor=actor, action="worker_account.add", subject=worker.registration,
          detail={"login": login, "activation": password is None}, now=now)
    if password is None:
        return issue_code(session, worker.registration, actor=actor, now=now)
    return None


def issue_code(session: Session, registration: str, *, actor: str, now: dt.datetime | None = None) -> Issued:
    """A new activation code for ``registration``. The account is made if missing; an existing one
    (also a disabled one: access given again) loses its password and sessions until the worker
    activates it with the new code; the earlier unused codes stop working. ``BadInput`` for an unknown or cancelled
    registration."""
    now = now or utcnow()
    worker = _worker_row(session, registration)
    row = account_of(session, worker.registration)
    if row is None:
        return add_account(session, worker.registration, actor=actor, now=now)
    session.execute(update(worker_activations).where(worker_activations.c.user_id == row.id,
                                                     worker_activations.c.used_at.is_(None))
                    .values(used_at=now))
    # a new code resets access: the old password stops working, open sessions end
    session.execute(update(office_users).where(office_users.c.id == row.id).values(
        password_hash=users.hash_password(secrets.token_urlsafe(32)), disabled=False, updated_at=now))
    users.end_sessions_of(session, row.id, now)
    code = new_code()
    expires = now + dt.timedelta(days=CODE_DAYS)
    session.execute(worker_activations.insert().values(user_id=row.id, code_hash=_digest(code), created_at=now,
                                                       expires_at=expires, used_at=None, actor=actor))
    audit(session, actor=actor, action="worker_account.code", subject=worker.registration,
          detail={"login": row.login, "expires_at": expires.isoformat()}, now=now)
    return Issued(row.login, worker.registration, code, expires)


def activate(session: Session, login: str, code: str, password: str, *, address: str,
             now: dt.datetime | None = None, throttle_at: dt.datetime | None = None) -> str:
    """Set the password of ``login``'s worker account with an activation code; return the login.

    ``BadInput`` for a code that is unknown, used, expired or another login's, a disabled account or
    a cancelled registration (each a failed login for the rate limit: the caller commits also on
    refusal), a short password, or a login or address locked by too many failures. ``throttle_at``:
    the rate limit's clock reading (``WebState.throttle_now``, the wall clock; default ``now``)."""
    now = now or utcnow()
    throttle_at = throttle_at or now
    login = (login or "").strip().lower()[:64]
    address = (address or "?")[:64]
    if users.locked(session, login, address, throttle_at):
        raise BadInput("too many wrong attempts: try again later", where="locked")
    users.check_password(password)
    row = session.execute(
        select(worker_activations.c.id, worker_activations.c.expires_at, worker_accounts.c.registration,
               office_users.c.id.label("user_id"), office_users.c.disabled)
        .join(office_users, office_users.c.id == worker_activations.c.user_id)
        .join(worker_accounts, worker_accounts.c.user_id == office_users.c.id)
        .where(worker_activations.c.code_hash == _digest(code), office_users.c.login == login,
               worker_activations.c.used_at.is_(None))).first()
    if (row is None or as_utc(row.expires_at) < now or row.disabled
            or not _registration_valid(session, row.registration)):
        session.execute(login_failures.insert().values(login=login, address=address, at=throttle_at))
        raise BadInput("the activation code is wrong, used or expired: ask the office for a new one", where="code")
    session.execute(update(worker_activations).where(worker_activations.c.id == row.id).values(used_at=now))
    session.execute(update(office_users).where(office_users.c.id == row.user_id)
                    .values(password_hash=users.hash_password(password), updated_at=now))
    session.execute(delete(login_failures).where(login_failures.c.login == login))
    users.end_sessions_of(session, row.user_id, now)
    audit(session, actor=f"worker:{login}", action="worker_account.activate", subject=row.registration,
          detail={"login": login}, now=now)
    return login


def _registration_valid(session: Session, registration: str) -> bool:
    status = session.execute(select(workers.c.status).where(workers.c.registration == registration)).scalar()
    return status is not None and status != "cancelled"


def registration_of(session: Session, user_id: int) -> str | None:
    """The registration of worker account ``user_id`` when it may be used now (bound to a
    registration that is not cancelled, R4), else None."""
    reg = session.execute(select(worker_accounts.c.registration).where(worker_accounts.c.user_id == user_id)).scalar()
    if reg is None or not _registration_valid(session, reg):
        return None
    return reg


def may_log_in(session: Session, user_id: int, role: str) -> bool:
    """False for a worker account whose registration is missing or cancelled (R4); True otherwise."""
    return role != ROLE or registration_of(session, user_id) is not None


def pending_code(session: Session, registration: str, now: dt.datetime) -> dt.datetime | None:
    """When the newest unused, unexpired code of ``registration`` expires, or None."""
    row = account_of(session, registration)
    if row is None:
        return None
    found = session.execute(select(worker_activations.c.expires_at)
                            .where(worker_activations.c.user_id == row.id, worker_activations.c.used_at.is_(None))
                            .order_by(worker_activations.c.expires_at.desc())).scalar()
    return as_utc(found) if found is not None and as_utc(found) >= now else None

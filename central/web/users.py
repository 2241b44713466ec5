"""Office web users: add, set a password, disable, and check a login with a rate limit.

Passwords are hashed with argon2id (``argon2-cffi``'s ``PasswordHasher`` defaults). Every change is
one ``audit_log`` row naming the actor (``central.registry.changes.audit``). Functions work inside
the caller's transaction (``with session.begin():``) and raise ``BadInput`` (one line) for a bad
login, role or password; the caller rolls back.

Rate limit (``check_login``): more than ``MAX_FAILURES`` wrong passwords for one login, or from one
client address, within ``LOCK_WINDOW`` lock that login (or address) until the window has passed
since the last failure counted; a locked attempt is refused without checking the password.

Sessions are held server-side (``office_sessions``): ``start_session`` gives the token the cookie
carries, ``session_user`` answers only for a session not ended, of an enabled user; logout
(``end_session``), ``set_password`` and ``disable_user`` end them, so a copied cookie stops working.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import re
import secrets

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from central.registry.changes import audit, utcnow
from central.web.schema import login_failures, office_sessions, office_users
from portgate.errors import BadInput
from portgate.timeutil import as_utc

ROLES = ("office", "inspector", "auditor", "admin")
MAX_FAILURES = 20  # wrong passwords within LOCK_WINDOW before the login (or address) is locked
LOCK_WINDOW = dt.timedelta(minutes=15)
MIN_PASSWORD = 10
_LOGIN = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
_hasher = PasswordHasher()
_DUMMY = _hasher.hash("not a password of anyone")  # equal work for an unknown login


@dataclasses.dataclass(frozen=True, slots=True)
class User:
    id: int
    login: str
    name: str
    role: str


class LoginRefused(Exception):
    """A login that did not succeed. ``locked`` says whether it was the rate limit."""

    def __init__(self, locked: bool) -> None:
        super().__init__("locked" if locked else "wrong login or password")
        self.locked = locked


def _check_login_name(login: str) -> str:
    login = (login or "").strip().lower()
    if not _LOGIN.match(login):
        raise BadInput(f"login {login!r} must be 2-64 of a-z 0-9 . _ - (starting with a letter or digit)",
                       where="--login")
    return login


def _check_password(password: str) -> None:
    if len(password or "") < MIN_PASSWORD:
        raise BadInput(f"a password has at least {MIN_PASSWORD} characters", where="--password")


def add_user(session: Session, login: str, *, role: str, password: str, name: str = "", actor: str,
             now: dt.datetime | None = None) -> User:
    """Create a user. ``BadInput`` if the login exists or is malformed, the role is not one of
    ``ROLES`` or the password is shorter than ``MIN_PASSWORD``."""
    now = now or utcnow()
    login = _check_login_name(login)
    if role not in ROLES:
        raise BadInput(f"role {role!r} is not one of {', '.join(ROLES)}", where="--role")
    _check_password(password)
    if session.execute(select(office_users.c.id).where(office_users.c.login == login)).first():
        raise BadInput(f"user {login!r} already exists", where="--login")
    new_id = session.execute(office_users.insert().values(
        login=login, name=name, role=role, password_hash=_hasher.hash(password), disabled=False,
        created_at=now, updated_at=now)).inserted_primary_key[0]
    audit(session, actor=actor, action="user.add", subject=login, detail={"role": role, "name": name}, now=now)
    return User(int(new_id), login, name, role)


def _existing(session: Session, login: str):
    row = session.execute(select(office_users).where(office_users.c.login == _check_login_name(login))).first()
    if row is None:
        raise BadInput(f"no user {login!r}", where="--login")
    return row


def set_password(session: Session, login: str, password: str, *, actor: str,
                 now: dt.datetime | None = None) -> None:
    """Replace the user's password (and clear its failed logins). ``BadInput`` if unknown or short."""
    now = now or utcnow()
    row = _existing(session, login)
    _check_password(password)
    session.execute(update(office_users).where(office_users.c.id == row.id)
                    .values(password_hash=_hasher.hash(password), updated_at=now))
    session.execute(delete(login_failures).where(login_failures.c.login == row.login))
    end_sessions_of(session, row.id, now)
    audit(session, actor=actor, action="user.set_password", subject=row.login, detail={}, now=now)


def disable_user(session: Session, login: str, *, actor: str, now: dt.datetime | None = None) -> None:
    """Disable the user: no new login, and its open sessions are refused at their next request."""
    now = now or utcnow()
    row = _existing(session, login)
    session.execute(update(office_users).where(office_users.c.id == row.id).values(disabled=True, updated_at=now))
    end_sessions_of(session, row.id, now)
    audit(session, actor=actor, action="user.disable", subject=row.login, detail={}, now=now)


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "replace")).hexdigest()


def start_session(session: Session, user_id: int, now: dt.datetime | None = None) -> str:
    """A new server-side session of ``user_id``; returns its token (32 random bytes, URL-safe)."""
    token = secrets.token_urlsafe(32)
    session.execute(office_sessions.insert().values(id=_digest(token), user_id=user_id,
                                                    created_at=now or utcnow(), ended_at=None))
    return token


def end_session(session: Session, token: str, now: dt.datetime | None = None) -> None:
    """End the session of ``token`` (logout); nothing if unknown."""
    session.execute(update(office_sessions).where(office_sessions.c.id == _digest(token),
                                                  office_sessions.c.ended_at.is_(None))
                    .values(ended_at=now or utcnow()))


def end_sessions_of(session: Session, user_id: int, now: dt.datetime | None = None) -> int:
    """End every open session of ``user_id``; returns how many."""
    return session.execute(update(office_sessions).where(office_sessions.c.user_id == user_id,
                                                         office_sessions.c.ended_at.is_(None))
                           .values(ended_at=now or utcnow())).rowcount


def session_user(session: Session, token: str) -> User | None:
    """The enabled user of the open session ``token``, or None (unknown, ended, user disabled)."""
    row = session.execute(select(office_users).join(office_sessions, office_sessions.c.user_id == office_users.c.id)
                          .where(office_sessions.c.id == _digest(token), office_sessions.c.ended_at.is_(None),
                                 office_users.c.disabled.is_(False))).first()
    return None if row is None else User(row.id, row.login, row.name, row.role)


def active_user(session: Session, user_id: int) -> User | None:
    """The enabled user with ``user_id``, or None (unknown or disabled)."""
    row = session.execute(select(office_users).where(office_users.c.id == user_id,
                                                     office_users.c.disabled.is_(False))).first()
    return None if row is None else User(row.id, row.login, row.name, row.role)


def list_users(session: Session) -> list[dict]:
    """Every user (no hashes), by login."""
    rows = session.execute(select(office_users.c.login, office_users.c.name, office_users.c.role,
                                  office_users.c.disabled).order_by(office_users.c.login))
    return [dict(r._mapping) for r in rows]


def _failures(session: Session, column, value: str, since: dt.datetime) -> tuple[int, dt.datetime | None]:
    n, last = session.execute(select(func.count(), func.max(login_failures.c.at))
                              .where(column == value, login_failures.c.at > since)).one()
    return int(n), as_utc(last)


def locked(session: Session, login: str, address: str, now: dt.datetime) -> bool:
    """True when ``login`` or ``address`` has ``MAX_FAILURES`` failures within ``LOCK_WINDOW``."""
    since = now - LOCK_WINDOW
    for column, value in ((login_failures.c.login, login), (login_failures.c.address, address)):
        n, _last = _failures(session, column, value, since)
        if n >= MAX_FAILURES:
            return True
    return False


def _worker_may_log_in(session: Session, row) -> bool:
    """False for a worker account whose registration is cancelled (R4, ``central.web.workeraccounts``)."""
    from central.web.workeraccounts import may_log_in  # lazy: workeraccounts builds on this module

    return may_log_in(session, row.id, row.role)


def check_login(session: Session, login: str, password: str, *, address: str,
                now: dt.datetime | None = None) -> User:
    """The user whose ``login`` and ``password`` match, or ``LoginRefused``.

    Refused (``locked=True``) without looking at the password while the login or the address is
    locked; a wrong password, an unknown or a disabled login each count one failure (the same
    argon2 work is done for an unknown login, so timing does not tell which). A success clears the
    login's failures. Failures are written in the caller's transaction: commit it also on refusal.
    """
    now = now or utcnow()
    login = (login or "").strip().lower()[:64]
    address = (address or "?")[:64]
    if locked(session, login, address, now):
        raise LoginRefused(locked=True)
    row = session.execute(select(office_users).where(office_users.c.login == login)).first()
    ok = False
    try:
        ok = _hasher.verify(row.password_hash if row is not None else _DUMMY, password or "")
    except (VerificationError, InvalidHashError):
        ok = False
    if not ok or row is None or row.disabled or not _worker_may_log_in(session, row):
        session.execute(login_failures.insert().values(login=login, address=address, at=now))
        raise LoginRefused(locked=locked(session, login, address, now))
    session.execute(delete(login_failures).where(login_failures.c.login == login))
    if _hasher.check_needs_rehash(row.password_hash):
        session.execute(update(office_users).where(office_users.c.id == row.id)
                        .values(password_hash=_hasher.hash(password)))
    return User(row.id, row.login, row.name, row.role)

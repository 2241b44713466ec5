"""Office web users: add, set a password, disable, and check a login with a rate limit.

Passwords are hashed with argon2id (``argon2-cffi``'s ``PasswordHasher`` defaults). Every change is
one ``audit_log`` row naming the actor (``central.registry.changes.audit``). Functions work inside
the caller's transaction (``with session.begin():``) and raise ``BadInput`` (one line) for a bad
login, role or password; the caller rolls back.

Throttle (``check_login``), per account AND address, never per account alone, so that nobody
can lock the owner out from another address: after ``FREE_PAIR`` wrong passwords for one login
from one client address within ``FAILURE_WINDOW``, the next attempt of that login from that
address must wait 1 s after the last failure, then 2, 4, 8 s... (at most ``MAX_DELAY``); after
``FREE_ADDRESS`` failures from one address (any logins: guessing many accounts) every attempt from
it waits the same growing delay. An attempt made before its wait is over is refused
(``LoginRefused.retry_after`` seconds) without checking the password and without counting. The
same login from the owner's own address is not slowed by failures from other addresses. Which
address a request comes from is the TCP peer, or ``X-Forwarded-For`` only from a proxy listed in
``[web] trusted_proxies`` (``central.web.cli.uvicorn_config``).

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
from sqlalchemy import bindparam, delete, func, select, update
from sqlalchemy.engine import Connection
from sqlalchemy.orm import Session

from central.registry.changes import audit, utcnow
from central.web.schema import login_failures, office_sessions, office_users
from portgate.errors import BadInput
from portgate.timeutil import as_utc

ROLES = ("office", "inspector", "auditor", "admin")
FREE_PAIR = 5  # wrong passwords for one login from one address before its attempts are slowed
FREE_ADDRESS = 30  # wrong passwords from one address (any logins) before its attempts are slowed
FAILURE_WINDOW = dt.timedelta(hours=1)  # failures older than this count no more
MAX_DELAY = dt.timedelta(minutes=15)  # the longest wait between two attempts
MIN_PASSWORD = 10
_LOGIN = re.compile(r"^[a-z0-9][a-z0-9._-]{1,63}$")
_hasher = PasswordHasher()
# Equal work for an unknown login: a hash of "not a password of anyone" made with ``_hasher``'s
# parameters, written here rather than hashed at import (~0.2 s of CPU in every process importing
# this module: each ``office serve``, each demo); hashed again if these argon2-cffi defaults change.
_DUMMY = "$argon2id$v=19$m=65536,t=3,p=4$n65/PJXkhj0tRQ345pocIA$Q4mrtGdiqBMJcaglbDawEajKKnbC1rfPh/RBI++x+mo"
if _hasher.check_needs_rehash(_DUMMY):
    _DUMMY = _hasher.hash("not a password of anyone")


@dataclasses.dataclass(frozen=True, slots=True)
class User:
    id: int
    login: str
    name: str
    role: str
    ports: str | None = None  # office_users.ports (central.web.ports): None the home port, "*" all


class LoginRefused(Exception):
    """A login that did not succeed. ``locked`` says whether it was the throttle; ``retry_after``:
    whole seconds until this login may be tried again from this address (0 when not throttled)."""

    def __init__(self, locked: bool, retry_after: int = 0) -> None:
        super().__init__("locked" if locked else "wrong login or password")
        self.locked = locked
        self.retry_after = retry_after


def check_login_name(login: str) -> str:
    """``login`` stripped and in lower case; ``BadInput`` (``--login``) unless 2-64 of a-z 0-9 . _ -."""
    login = (login or "").strip().lower()
    if not _LOGIN.match(login):
        raise BadInput(f"login {login!r} must be 2-64 of a-z 0-9 . _ - (starting with a letter or digit)",
                       where="--login")
    return login


def check_password(password: str) -> None:
    """``BadInput`` (``--password``) for a password shorter than ``MIN_PASSWORD`` characters."""
    if len(password or "") < MIN_PASSWORD:
        raise BadInput(f"a password has at least {MIN_PASSWORD} characters", where="--password")


def hash_password(password: str) -> str:
    """``password``'s argon2id hash, as ``office_users.password_hash`` stores it (the module's hasher,
    looked up at each call: the tests put a faster one in its place)."""
    return _hasher.hash(password)


def check_new_login(session: Session, login: str) -> str:
    """``login`` as it would be stored (stripped, lower case) when no user has it yet: what the
    command line checks before it asks for a password. ``BadInput`` (``where="--login"``) if it
    is malformed or taken. Read-only."""
    login = check_login_name(login)
    if session.execute(select(office_users.c.id).where(office_users.c.login == login)).first():
        raise BadInput(f"user {login!r} already exists", where="--login")
    return login


def check_user(session: Session, login: str) -> str:
    """The stored login of the user ``login`` names; ``BadInput`` (``where="--login"``) if there
    is none (what the command line checks before it asks for a new password). Read-only."""
    return _existing(session, login).login


def add_user(session: Session, login: str, *, role: str, password: str, name: str = "", actor: str,
             now: dt.datetime | None = None, ports: str | None = None) -> User:
    """Create a user. ``ports``: the ports he may see (``central.web.ports.stored_ports``: None the
    office's home port, ``*`` all). ``BadInput`` if the login exists or is malformed, the role is
    not one of ``ROLES`` or the password is shorter than ``MIN_PASSWORD``."""
    now = now or utcnow()
    login = check_login_name(login)
    if role not in ROLES:
        raise BadInput(f"role {role!r} is not one of {', '.join(ROLES)}", where="--role")
    check_password(password)
    check_new_login(session, login)
    new_id = session.execute(office_users.insert().values(
        login=login, name=name, role=role, password_hash=_hasher.hash(password), disabled=False,
        created_at=now, updated_at=now, ports=ports)).inserted_primary_key[0]
    detail = {"role": role, "name": name} | ({"ports": ports} if ports is not None else {})
    audit(session, actor=actor, action="user.add", subject=login, detail=detail, now=now)
    return User(int(new_id), login, name, role, ports)


def _existing(session: Session, login: str):
    row = session.execute(select(office_users).where(office_users.c.login == check_login_name(login))).first()
    if row is None:
        raise BadInput(f"no user {login!r}", where="--login")
    return row


def set_password(session: Session, login: str, password: str, *, actor: str,
                 now: dt.datetime | None = None) -> None:
    """Replace the user's password (and clear its failed logins). ``BadInput`` if unknown or short."""
    now = now or utcnow()
    row = _existing(session, login)
    check_password(password)
    session.execute(update(office_users).where(office_users.c.id == row.id)
                    .values(password_hash=_hasher.hash(password), updated_at=now))
    session.execute(delete(login_failures).where(login_failures.c.login == row.login))
    end_sessions_of(session, row.id, now)
    audit(session, actor=actor, action="user.set_password", subject=row.login, detail={}, now=now)


def set_ports(session: Session, login: str, ports: str | None, *, actor: str, now: dt.datetime | None = None) -> None:
    """Set the ports the user sees (``central.web.ports.stored_ports``: None the home port, ``*``
    all); one audit row. ``BadInput`` for an unknown login."""
    now = now or utcnow()
    row = _existing(session, login)
    session.execute(update(office_users).where(office_users.c.id == row.id).values(ports=ports, updated_at=now))
    audit(session, actor=actor, action="user.set_ports", subject=row.login,
          detail={"from": row.ports, "to": ports}, now=now)


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


#: ``session_user``'s statement, built once: every signed-in request runs it, and building and
#: caching a statement per request cost ~0.1 ms, several times the query itself (docs/performance.md)
_SESSION_USER = (select(office_users.c.id, office_users.c.login, office_users.c.name, office_users.c.role,
                        office_users.c.ports)
                 .join(office_sessions, office_sessions.c.user_id == office_users.c.id)
                 .where(office_sessions.c.id == bindparam("sid"), office_sessions.c.ended_at.is_(None),
                        office_users.c.disabled.is_(False)))


def session_user(session: Session | Connection, token: str) -> User | None:
    """The enabled user of the open session ``token``, or None (unknown, ended, user disabled);
    ``session`` an ORM session or a plain connection (a read: nothing is written)."""
    row = session.execute(_SESSION_USER, {"sid": _digest(token)}).first()
    return None if row is None else User(row.id, row.login, row.name, row.role, row.ports)


def active_user(session: Session, user_id: int) -> User | None:
    """The enabled user with ``user_id``, or None (unknown or disabled)."""
    row = session.execute(select(office_users).where(office_users.c.id == user_id,
                                                     office_users.c.disabled.is_(False))).first()
    return None if row is None else User(row.id, row.login, row.name, row.role, row.ports)


def list_users(session: Session) -> list[dict]:
    """Every user (no hashes), by login, with his ``ports`` (``central.web.ports``)."""
    rows = session.execute(select(office_users.c.login, office_users.c.name, office_users.c.role,
                                  office_users.c.disabled, office_users.c.ports).order_by(office_users.c.login))
    return [dict(r._mapping) for r in rows]


def _failures(session: Session, column, value: str, since: dt.datetime) -> tuple[int, dt.datetime | None]:
    n, last = session.execute(select(func.count(), func.max(login_failures.c.at))
                              .where(column == value, login_failures.c.at > since)).one()
    return int(n), as_utc(last)


def _delay(failures: int, free: int) -> dt.timedelta:
    """The wait after the last failure once ``failures`` reached ``free``: 1 s, 2 s, 4 s... at most
    ``MAX_DELAY``; none before."""
    if failures < free:
        return dt.timedelta(0)
    return min(dt.timedelta(seconds=2 ** min(failures - free, 20)), MAX_DELAY)


def wait_before_attempt(session: Session, login: str, address: str, now: dt.datetime) -> dt.timedelta:
    """How long ``login`` from ``address`` must still wait (zero: it may be tried now): the longer
    of the per login-and-address and the per-address waits (module doc), each at most the delay
    its count of failures calls for (never above ``MAX_DELAY``).

    ``now`` is the wall clock (``WebState.throttle_now``), which an administrator or NTP may step
    back: a failure stamped after ``now`` is restamped ``now`` (in the caller's transaction, which
    commits also on refusal), so the wait runs from the moment the clock was corrected and never
    grows by the step (otherwise a clock put back an hour locks the login out for that hour)."""
    since = now - FAILURE_WINDOW
    n_pair, last_pair = session.execute(
        select(func.count(), func.max(login_failures.c.at))
        .where(login_failures.c.login == login, login_failures.c.address == address,
               login_failures.c.at > since)).one()
    n_addr, last_addr = _failures(session, login_failures.c.address, address, since)
    if last_addr is not None and last_addr > now:  # the clock went back: the address's later failures
        session.execute(update(login_failures).where(login_failures.c.address == address,
                                                     login_failures.c.at > now).values(at=now))
    waits = [dt.timedelta(0)]
    for n, last, free in ((int(n_pair), as_utc(last_pair), FREE_PAIR), (n_addr, last_addr, FREE_ADDRESS)):
        if last is not None:  # a later stamp counts as now (restamped above): at most the delay itself
            waits.append(min(last, now) + _delay(n, free) - now)
    return max(waits)


def locked(session: Session, login: str, address: str, now: dt.datetime) -> bool:
    """True when ``login`` may not be tried from ``address`` now (``wait_before_attempt``)."""
    return wait_before_attempt(session, login, address, now) > dt.timedelta(0)


def _seconds(wait: dt.timedelta) -> int:
    return max(1, int(-(-wait.total_seconds() // 1)))


def _worker_may_log_in(session: Session, row) -> bool:
    """False for a worker account whose registration is cancelled (R4, ``central.web.workeraccounts``)."""
    from central.web.workeraccounts import may_log_in  # lazy: workeraccounts builds on this module

    return may_log_in(session, row.id, row.role)


def check_login(session: Session, login: str, password: str, *, address: str,
                now: dt.datetime | None = None) -> User:
    """The user whose ``login`` and ``password`` match, or ``LoginRefused``.

    Refused (``locked=True``, ``retry_after`` seconds) without looking at the password while the
    login must wait from this address (module doc); a wrong password, an unknown or a disabled
    login each count one failure (the same argon2 work is done for an unknown login, so timing
    does not tell which). A success clears the login's failures. Failures are written in the
    caller's transaction: commit it also on refusal.
    """
    now = now or utcnow()
    login = (login or "").strip().lower()[:64]
    address = (address or "?")[:64]
    wait = wait_before_attempt(session, login, address, now)
    if wait > dt.timedelta(0):
        raise LoginRefused(locked=True, retry_after=_seconds(wait))
    row = session.execute(select(office_users).where(office_users.c.login == login)).first()
    ok = False
    try:
        ok = _hasher.verify(row.password_hash if row is not None else _DUMMY, password or "")
    except (VerificationError, InvalidHashError):
        ok = False
    if not ok or row is None or row.disabled or not _worker_may_log_in(session, row):
        session.execute(login_failures.insert().values(login=login, address=address, at=now))
        wait = wait_before_attempt(session, login, address, now)
        raise LoginRefused(locked=wait > dt.timedelta(0), retry_after=_seconds(wait) if wait > dt.timedelta(0) else 0)
    session.execute(delete(login_failures).where(login_failures.c.login == login))
    if _hasher.check_needs_rehash(row.password_hash):
        session.execute(update(office_users).where(office_users.c.id == row.id)
                        .values(password_hash=_hasher.hash(password)))
    return User(row.id, row.login, row.name, row.role, row.ports)

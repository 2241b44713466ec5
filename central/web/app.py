"""The office web application's factory: ``create_app(engine, settings, secret)``.

One ``WebState`` on ``app.state.web`` holds the ledger engine (the same database as
``central run``), the ``[web]`` settings and the port's time zone; endpoints run their database
work in the thread pool through ``WebState.with_session`` / ``WebState.read``. Middleware, outer
first: security headers (outside Starlette's error middleware too: a 500 carries them; HSTS over
TLS), the signed session cookie (``SessionMiddleware``: itsdangerous, HttpOnly,
SameSite=Lax, Secure when ``secure``). Static files (``static/``, vendored htmx with its licence)
are public; every other route is wrapped by ``central.web.security.guarded``. Errors (bad input,
out-of-range numbers, a value the database refuses, a NUL in the address, a busy database, an
oversized body) answer a page, never a traceback
(``central.web.errors``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar
from zoneinfo import ZoneInfo

from sqlalchemy import text
from sqlalchemy.engine import Engine
from sqlalchemy.orm import Session
from sqlalchemy.pool import QueuePool
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.sessions import SessionMiddleware
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from central.config import WebSettings
from central.pay.loading import DEFAULT_PORT_CONFIG, load_port_config
from central.registry.sanctions import load_suspension_limits
from central.web.answer_wait import watch_answers
from central.web.commit_wait import commit_within
from central.web.background import start_coverage
from central.web.errors import BodyLimit, HANDLERS, NoNul
from central.web.photos import gate_photo
from central.web.routes import auth, cases, enrol_gate, escala, flags, live, pay, photos, registry, reports, ships
from central.web.routes import pay_export, users, whatif
from central.web.routes import exports, logs, verify, worker as worker_routes, worker_office
from central.web.shared_limit import SharedRateLimiter
from central.pay.payslip import SlipHeader

STATIC = Path(__file__).resolve().parent / "static"
T = TypeVar("T")

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")


def suspension_limits(settings: WebSettings):
    """R4 limits for case decisions: the ``[suspension]`` table of ``[web] rulebook``, or of the
    rulebook the example port configuration names (as ``portgate registry suspend`` does).
    Raises ``ConfigError`` naming the file when it cannot be read."""
    rulebook = settings.rulebook or load_port_config(DEFAULT_PORT_CONFIG).rulebook
    return load_suspension_limits(rulebook)[1]


class WebState:
    """What every request needs: the engine (each statement bounded by ``[web] read_wait_s``,
    ``central.web.answer_wait``), the settings, the clock and time zone."""

    def __init__(self, engine: Engine, settings: WebSettings, now: Callable[[], dt.datetime] | None = None):
        self.engine = engine
        watch_answers(engine, settings.read_wait_s)  # a frozen ledger server: 503, not a request that hangs
        self.settings = settings
        self.tz = ZoneInfo(settings.tz)
        self.now = now or (lambda: dt.datetime.now(dt.UTC))
        # the login throttle's clock (``central.web.users.check_login``): the machine's wall clock,
        # never ``now`` (the business clock: a demo's stands still, and its waits would never end)
        self.throttle_now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)
        self.suspension_limits = suspension_limits(settings)
        self.photos_dir = Path(settings.photos_dir) if settings.photos_dir else None
        self.slip_key: bytes | None = None  # set by the server (``office serve``) or a test
        self.port_config: str | None = None  # port TOML (pay calendar) for the pay what-if; None: the example
        # the gate what-if (``app.whatif.web_gate_what_if``): central does not import the gate rules
        self.gate_what_if: Callable | None = None
        # ``publish(photos_dir) -> dict`` sends the photos to the gates (``central.web.photo_publish``)
        self.publish_photos: Callable | None = None
        # ``send(gate_id, command)`` tells one gate at once (``central.web.gate_commands``: enrol mode)
        self.send_command: Callable | None = None
        self.streams: dict[str, int] = {}  # open /live/stream connections per session (routes/live.py)
        # /v/<token> look-ups (routes/verify.py), counted in the ledger by every web process of the office
        self.verify_limiter = SharedRateLimiter(engine, "verify", settings.verify_per_minute)
        self._employer = None  # the port configuration's [employer], read once (slip_header)
        # the ports the office serves (central.toml ``ports``, home first; central/web/ports.py);
        # () or one port: no port scope, no selector (the office of one port)
        self.ports: tuple[str, ...] = ()
        # gate id -> port of the gates registered by ``add-gate --nats-users ... --port``: the port of
        # a gate that has sent no event yet (``central.web.ports.port_of``); set by ``office serve`` or a test
        self.gate_registry: dict[str, str] = {}

    def slip_header(self, asked_from: str) -> SlipHeader:
        """The payslips' header: the paying entity of the port configuration (``[web] port_config``,
        default the example's ``[employer]``) and the verification address (``[web] public_url``,
        else ``asked_from``, the address the PDF was asked from). ``ConfigError`` when the port
        configuration cannot be read."""
        if self._employer is None:
            port = load_port_config(self.port_config or DEFAULT_PORT_CONFIG)
            self._employer = port.employer or False
        emp = self._employer or None
        base = (self.settings.public_url or asked_from).rstrip("/")
        return SlipHeader(emp.name if emp else "", emp.cnpj if emp else "", emp.address if emp else "", base)

    def photo_exists(self, registration: str) -> bool:
        """True when the office's photos directory holds a photo of ``registration``."""
        return self.photos_dir is not None and gate_photo(self.photos_dir, registration) is not None

    def with_session(self, fn: Callable[[Session], T]) -> T:
        """Run ``fn(session)`` in one transaction (committed if it returns, rolled back if it raises).
        On PostgreSQL a lock held by another writer longer than ``[web] write_lock_timeout_s`` ends
        the transaction with a lock timeout (answered 503 by ``central.web.errors``), never a
        request that hangs. A database error raised by the commit itself carries ``at_commit =
        True`` (its outcome is unknown: ``central.web.errors.ledger_unreachable``); a commit still
        unanswered after ``[web] commit_wait_s`` (a primary waiting for its synchronous replicas)
        raises ``CommitPending`` and goes on (``central.web.commit_wait``)."""
        if self.engine.dialect.name != "postgresql":
            with Session(self.engine) as session, session.begin():
                return fn(session)
        session = Session(self.engine)
        try:
            session.begin()
            ms = int(self.settings.write_lock_timeout_s * 1000)
            session.execute(text(f"SET LOCAL lock_timeout = {ms}"))
            result = fn(session)
        except BaseException:
            session.close()  # rolled back
            raise
        commit_within(session, self.settings.commit_wait_s)  # CommitPending: it may still be saved
        return result

    def read(self, fn: Callable[..., T], *args) -> T:
        """Run ``fn(connection, *args)`` on a read connection."""
        with self.engine.connect() as conn:
            return fn(conn, *args)

    def quick_read_here(self) -> bool:
        """True when a read of a few tens of microseconds (the session's user) costs less on the
        event loop than handed to a thread and back: a SQLite ledger file (a local read, never a
        server to wait for; WAL: a writer does not block it) whose pool can give a connection
        without waiting (fewer checked out than its size). PostgreSQL, or every pooled connection
        in use: False (the thread pool, as every other read)."""
        pool = self.engine.pool
        return self.engine.dialect.name == "sqlite" and isinstance(pool, QueuePool) and \
            pool.checkedout() < pool.size()


HSTS = b"max-age=31536000"  # one year; sent only on a TLS connection (RFC 6797: never over plain HTTP)


class SecurityHeaders:
    """Adds CSP, no-sniff, no framing and a same-origin referrer to every response, and
    ``Strict-Transport-Security`` to every response served over TLS (uvicorn's own TLS, or a
    proxy's ``X-Forwarded-Proto: https`` from an address uvicorn trusts). It wraps the whole
    application, Starlette's error middleware included (``_App``), so a 500 carries them too."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message):
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(k == b"content-security-policy" for k, _v in headers):  # an SVG sets its own
                    headers.append((b"content-security-policy", CSP.encode()))
                headers += [
                    (b"x-content-type-options", b"nosniff"),
                    (b"x-frame-options", b"DENY"),
                    (b"referrer-policy", b"same-origin"),
                ]
                if not any(k == b"cache-control" for k, _v in headers):
                    headers.append((b"cache-control", b"no-store"))
                if scope.get("scheme") == "https":
                    headers.append((b"strict-transport-security", HSTS))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)


class _App(Starlette):
    """Starlette with ``SecurityHeaders`` outside its error middleware: a 500 (an unexpected
    exception) also carries the security headers."""

    def build_middleware_stack(self) -> ASGIApp:
        return SecurityHeaders(super().build_middleware_stack())


def routes() -> list:
    return [
        *auth.ROUTES, *live.ROUTES, *flags.ROUTES, *cases.ROUTES, *ships.ROUTES, *users.ROUTES,
        *photos.ROUTES, *registry.ROUTES, *pay.ROUTES, *pay_export.ROUTES, *escala.ROUTES, *reports.ROUTES, *whatif.ROUTES,
        *worker_routes.ROUTES, *worker_office.ROUTES, *verify.ROUTES, *logs.ROUTES, *enrol_gate.ROUTES,
        *exports.ROUTES,
        Mount("/static", app=StaticFiles(directory=STATIC), name="static"),
    ]


def create_app(engine: Engine, settings: WebSettings, secret: bytes, *, secure: bool = False,
               now: Callable[[], dt.datetime] | None = None, background: bool = True,
               slip_key: bytes | None = None, port_config: str | None = None,
               gate_what_if: Callable | None = None, publish_photos: Callable | None = None,
               send_command: Callable | None = None, ports: tuple[str, ...] = ()) -> Starlette:
    """The ASGI application over ``engine``. ``secret``: the session signing key (>= 32 bytes);
    ``secure``: Secure cookies (TLS). ``background``: run the office coverage check (G11) in the
    server's lifespan. ``port_config``: the port TOML of the pay what-if (holidays); ``gate_what_if``:
    ``run(engine, day, gate, rulebook_toml, directions, lang) -> (rows, summary)`` for the "what
    if" page's gate side (without it that side says it is not available); ``publish_photos``:
    ``publish(photos_dir)`` run after a photo upload (``central.web.photo_publish``; without it the
    photo waits for ``portgate central publish --photos``); ``send_command``: ``send(gate_id,
    command)`` for enrol mode on a gate (``central.web.gate_commands``; without it the worker page
    refuses to start one); ``ports``: the served ports, home first (``central.web.ports``).
    ``ValueError`` for a short secret."""
    if len(secret) < 32:
        raise ValueError("the session secret must have at least 32 bytes")
    state = WebState(engine, settings, now)
    state.slip_key = slip_key
    state.port_config = port_config or settings.port_config
    state.gate_what_if = gate_what_if
    state.publish_photos = publish_photos
    state.send_command, state.ports = send_command, tuple(ports)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        task = None
        if background:
            task = start_coverage(state)
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task

    app = _App(
        routes=routes(),
        middleware=[
            Middleware(SessionMiddleware, secret_key=secret.hex(), session_cookie="portgate_session",
                       max_age=int(settings.session_hours * 3600), same_site="lax", https_only=secure),
            Middleware(BodyLimit, max_bytes=int(settings.max_body_mb * 1024 * 1024)),
            Middleware(NoNul),
        ],
        exception_handlers=HANDLERS,
        lifespan=lifespan,
    )
    app.state.web = state
    return app


def route_table(app: Starlette) -> list[Route]:
    """Every ``Route`` of ``app`` (not the static mount): what the security tests enumerate."""
    return [r for r in app.routes if isinstance(r, Route)]

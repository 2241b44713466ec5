"""``portgate edge display``: the watchman's screen as a small web server on loopback.

One process, separate from the gate (its own systemd unit): a Starlette app under uvicorn (h11, one
asyncio loop, no workers). A background task reads the journal read-only when the gate writes it
(inotify, ``edge.display.wake``) and at least every ``poll_ms`` (``edge.display.follower``), turns
each tap into a ``Shown`` (``edge.display.board``) with the worker's name, category and photo from
the gate's state directory (``edge.display.lookup``), and wakes the browsers. The page
(``templates/page.html``) is server-rendered Jinja2; htmx's SSE extension (vendored,
``static/VENDORED.md``) swaps the fragments ``screen`` (current read + last 10) and ``status``
(status bar, inspector countdown; every second) pushed on ``GET /sse``.

Never in the gate's decision path: the gate does not know this process exists. Killing it, hanging
it or never starting it changes nothing at the gate; restarted, it shows the last reads again from
the journal (``JournalFollower.tail``).

Privacy: the server binds a loopback address only (``DisplayConfig.host``), answers only
``Host: 127.0.0.1`` / ``localhost`` (no DNS rebinding), and ``GET /photo/<sha256>`` serves only the
photos of the reads on the screen now (nobody can page through the roster's photos), and only while
their bytes hash to their name (else the placeholder).

The main area shows the newest read for ``[display] idle_after_s`` (default 5 s), then returns to
"Aproxime o cartão" (the read stays in the history list); a read that asks the watchman to act
(``board.HOLD_ACTIONS``: retain the card, call the inspector or the supervisor) stays until he
touches "Ciente" (``POST /ack?seq=N``) or the next read comes. A reader in fault (the gate's
heartbeat, ``edge.reader_health``) turns the idle area into "LEITOR SEM SINAL"; the office's enrol mode
(issue 34, the heartbeat's ``enrol``) into "CARTÃO EM CADASTRO" with its countdown. The status bar says
the office link, the outbox, the copies and the clock in plain words; a full-width strip "Sem rede —
continue; os registros serão enviados" shows only while the link is down or the oldest unsent event
is older than ``outbox_warn_after_s``.

What is on the board and the status bar (following the journal and the heartbeat) is
``edge.display.screen_state`` (a mixin of ``Display``); here the web app, its pushes and serving.

Routes: ``/`` (the page, ``?lang=pt|en``), ``/sse`` (event stream), ``/photo/<sha256>``,
``POST /ack?seq=N`` (the watchman acknowledges the read held on the main area),
``/state.json`` (what is on the screen, for tests and the benchmark), ``/static/...``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import re
import socket
import time
from pathlib import Path

import structlog
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from edge.config import GateConfig
from edge.heartbeat import FILE
from edge.display.board import Board, Status, age_text
from edge.display.follower import JournalFollower
from edge.display.lookup import Lookup, photo_intact
from edge.display.pages import environment
from edge.display.screen_state import ScreenState
from edge.display.texts import labels
from edge.display.wake import Waiter

log = structlog.get_logger(__name__)

HERE = Path(__file__).resolve().parent
STATUS_EVERY_S = 1.0
KEEPALIVE_S = 15.0
_SHA = re.compile(r"^[0-9a-f]{64}$")
STATIC_TYPES = {".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml", ".md": "text/plain",
                "": "text/plain"}
MAX_PHOTO_BYTES = 4 * 1024 * 1024  # never more than DisplayConfig's highest cap is read into memory


def _static_files() -> dict[str, tuple[bytes, str]]:
    """The vendored files, read once (about 60 KB): served from memory, no thread pool."""
    out = {}
    for path in (HERE / "static").iterdir():
        if path.is_file():
            out[path.name] = (path.read_bytes(), STATIC_TYPES.get(path.suffix, "application/octet-stream"))
    return out


def _rulebook(cfg: GateConfig):
    from edge.rules.rulebook import GateRulebooks, load_gate_rulebook

    books = load_gate_rulebook(cfg.rulebook) if cfg.rulebook else GateRulebooks()
    return books.version[-1]


class Display(ScreenState):
    """The screen's state and its web app. ``cfg``: the gate's configuration (read, never
    written). ``gate_now()`` is the gate's wall clock as seen from here (the scripted clock's file
    for a demo gate, else the system clock). Raises ``ConfigError`` for an unreadable rulebook."""

    def __init__(self, cfg: GateConfig) -> None:
        self.cfg = cfg
        self.lang = cfg.display.lang or cfg.lang
        state = Path(cfg.state_dir)
        self.follower = JournalFollower(state / "journal.db")
        self.waiter = Waiter(state / "journal.db", self.follower)  # woken by the gate's writes
        self.lookup = Lookup(state)
        self.board = Board()
        rb = _rulebook(cfg)
        self.tz = rb.tz
        self.inspector_mode_s = rb.g10.inspector_mode_s
        self.max_age = dt.timedelta(hours=rb.g8.data_max_age_hours)
        self._scripted = None
        if cfg.clock == "scripted" and cfg.clock_file:
            from edge.scripted_clock import ScriptedClock

            self._scripted = ScriptedClock(cfg.clock_file)
        self._media: dict[str, str] = {}  # sha256 -> media type of photos on the screen
        self.screen_version = 0
        self.status_version = 0
        self.status = Status("unknown", None, None, False, False, False, gate_running=False)
        self._changed: asyncio.Event | None = None
        self._alive_path = state / FILE
        self._refused_seen: tuple[int | None, int] = (None, 0)  # (gate pid, last refusal number shown)
        self.idle_after_s = cfg.display.idle_after_s
        self._main_key: int | None = None  # id() of the read on the main area when last pushed
        self._faults: tuple = ()  # (reader id, since) of the readers in fault when last pushed
        self._enrol_shown = False  # the idle area showed the office's enrol mode when last pushed
        self._stopped_shown = False  # the idle area said the gate process is not running when last pushed
        self.env = environment()  # compiled once per process (edge.display.pages)
        self._static = _static_files()
        self.app = Starlette(
            routes=[
                Route("/", self.page), Route("/sse", self.sse), Route("/photo/{sha}", self.photo),
                Route("/ack", self.ack, methods=["POST"]),
                Route("/state.json", self.state), Route("/static/{name}", self.static),
            ],
            middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost"])],
            lifespan=self._lifespan,
        )

    # -- following the journal: edge.display.screen_state, the pushes here --------------------------

    def _notify(self) -> None:
        if self._changed is not None:
            ev, self._changed = self._changed, asyncio.Event()
            ev.set()

    async def _follow(self) -> None:
        poll_s = self.cfg.display.poll_ms / 1000
        next_status = 0.0
        while True:
            try:
                if self.poll_once():
                    self.screen_version += 1
                    self._notify()
                if self.main_changed():  # idle after idle_after_s, or the read held ended
                    self.screen_version += 1
                    self._notify()
                mono = time.monotonic()
                if mono >= next_status:
                    next_status = mono + STATUS_EVERY_S
                    self.refresh_status()
                    self.status_version += 1
                    self._notify()
            except Exception:  # noqa: BLE001 - the screen keeps following whatever one read does
                log.exception("display_follow_failed")
            await self.waiter.wait(poll_s)

    @contextlib.asynccontextmanager  # (an async generator function alone: Starlette warns it is deprecated)
    async def _lifespan(self, app):
        self._changed = asyncio.Event()
        self.load_tail()
        self.refresh_status()
        self.waiter.start()
        task = asyncio.create_task(self._follow())
        log.info("display_started", gate_id=self.cfg.gate_id, last_seq=self.follower.last_seq)
        try:
            yield
        finally:
            task.cancel()
            self.waiter.close()
            self.follower.close()
            self.lookup.close()

    # -- rendering -------------------------------------------------------------------------------

    def _lang(self, request: Request) -> str:
        lang = request.query_params.get("lang", self.lang)
        return "en" if lang == "en" else "pt"

    def gate_ship(self) -> str | None:
        """The ship this gate serves, as ``name (IMO)`` when the escala copy names it."""
        if not self.cfg.ship:
            return None
        name = self.lookup.ship_name(self.cfg.ship)
        return f"{name} ({self.cfg.ship})" if name else self.cfg.ship

    def render(self, name: str, lang: str) -> str:
        return self.env.get_template(name).render(
            board=self.board, main=self.main_read(), status=self.status, t=labels(lang), lang=lang,
            gate_id=self.cfg.gate_id, gate_ship=self.gate_ship(), age=age_text, local_hms=self.local_hms)

    async def page(self, request: Request) -> Response:
        return HTMLResponse(self.render("page.html", self._lang(request)),
                            headers={"Cache-Control": "no-store"})

    async def sse(self, request: Request) -> Response:
        lang = self._lang(request)

        async def stream():
            seen = (-1, -1)
            while True:
                waiter = self._changed
                if seen[0] != self.screen_version:
                    yield _sse("screen", self.render("_now.html", lang))
                if seen[1] != self.status_version:
                    yield _sse("status", self.render("_status.html", lang))
                seen = (self.screen_version, self.status_version)
                if waiter is self._changed:
                    try:
                        await asyncio.wait_for(waiter.wait(), KEEPALIVE_S)
                    except TimeoutError:
                        yield b": keepalive\n\n"

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    async def ack(self, request: Request) -> Response:
        """The watchman touched "Ciente" on the held read ``?seq=N``: the main area goes idle.
        204 when it was held, 409 when it no longer is (a newer read came), 400 for a bad seq, 403
        for a request from another page's origin."""
        origin = request.headers.get("origin")
        if origin is not None and origin.split("://", 1)[-1].split(":")[0] not in ("127.0.0.1", "localhost"):
            return Response(status_code=403)
        try:
            seq = int(request.query_params.get("seq", ""))
        except ValueError:
            return Response(status_code=400)
        if not self.board.acknowledge(seq):
            return Response(status_code=409)
        log.info("display_acknowledged", seq=seq)
        self.screen_version += 1
        self._notify()
        return Response(status_code=204)

    async def photo(self, request: Request) -> Response:
        sha = request.path_params["sha"]
        if not _SHA.match(sha) or sha not in self.board.photos():
            return Response(status_code=404)
        path = Path(self.cfg.state_dir) / "photos" / sha
        # a small local file, read and hashed in the loop (no thread pool: the screen's RSS stays small)
        data = photo_intact(path, sha, MAX_PHOTO_BYTES)
        if data is None:  # gone, or its bytes no longer match its hash: never show another picture
            log.warning("display_photo_refused", sha256=sha)
            body, media = self._static["placeholder.svg"]
            return Response(body, media_type=media, headers={"Cache-Control": "no-store"})
        return Response(data, media_type=self._media.get(sha, "image/jpeg"), headers={"Cache-Control": "no-store"})

    async def static(self, request: Request) -> Response:
        found = self._static.get(request.path_params["name"])
        if found is None:
            return Response(status_code=404)
        return Response(found[0], media_type=found[1], headers={"Cache-Control": "max-age=3600"})

    async def state(self, request: Request) -> Response:
        cur = self.board.current
        main = self.main_read()
        return JSONResponse({
            "seq": self.follower.last_seq, "current": cur.seq if cur else None,
            "main": main.seq if main else None,
            "readers": [r.as_dict() for r in self.status.readers],
            "reads": [r.seq for r in self.board.reads], "status": {
                "broker": self.status.broker, "outbox_depth": self.status.outbox_depth,
                "stale": self.status.stale, "clock_untrusted": self.status.clock_untrusted,
                "inspector_left_s": self.status.inspector_left_s, "gate_running": self.status.gate_running,
                "disk_full": self.status.disk_full, "enrol_left_s": self.status.enrol_left_s},
            "unjournaled": [r.uid for r in self.board.reads if r.unjournaled],
        })


def _sse(event: str, html: str) -> bytes:
    lines = "".join(f"data: {line}\n" for line in html.splitlines() if line.strip())
    return f"event: {event}\n{lines}\n".encode()


def bind(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` (port 0: any free port). Raises ``OSError``."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(16)
    sock.set_inheritable(True)
    return sock


def serve(cfg: GateConfig, *, port: int | None = None, url_file: str | None = None) -> None:
    """Run the screen until SIGTERM/SIGINT. Prints (and writes to ``url_file``) its URL once the
    socket is bound. Raises ``OSError`` if the address is taken."""
    import uvicorn

    sock = bind(cfg.display.host, cfg.display.port if port is None else port)
    host, bound = sock.getsockname()[:2]
    url = f"http://{'127.0.0.1' if host in ('127.0.0.1', '0.0.0.0') else 'localhost'}:{bound}/"
    display = Display(cfg)
    config = uvicorn.Config(display.app, log_config=None, access_log=False, lifespan="on", loop="asyncio",
                            http="h11", ws="none", timeout_graceful_shutdown=1)
    server = uvicorn.Server(config)
    log.info("display.listening", url=url)  # one JSON line like every other (journalctl | jq)
    if url_file:
        tmp = Path(url_file + ".tmp")
        tmp.write_text(url + "\n")
        tmp.replace(url_file)
    server.run(sockets=[sock])

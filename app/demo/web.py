"""The office web application during ``portgate demo``: a user, the registry, the escala and the
ship calls of the scripted day in the ledger, and the app served on a free loopback port in a
thread of the demo process, its clock following the gates' scripted clocks (the day plays in
minutes), so a new user can open the browser on a real day.

Logins printed by the demo, both with ``DEMO_PASSWORD``: ``demo`` (role inspector: flags and
cases) and ``escritorio`` (role office: registry, photos, escala, pay, payslips, the "what if"
page); the live view and the alarms are open to every role. ``V017`` is a worker's own account
(his escala, shifts, pay, cases and card on the phone, under ``/w/``; docs/worker.md). The workers' photos are in the
registry's photo directory (``[web] photos_dir``) and an upload there is sent to the gates.
The payslips are signed with the run directory's ``keys/payslip.key`` (made at start, as
``portgate office serve`` makes ``<keys_dir>/payslip.key``), so ``portgate pay verify-slip
--config RUN_DIR/central.toml SLIP.pdf`` verifies a slip downloaded from the demo.
"""

from __future__ import annotations

import datetime as dt
import secrets
import threading
import time
from pathlib import Path

from edge.scripted_clock import ScriptedClock
from portgate.records import EscalaEntry, load_csv

DEMO_USER = "demo"
OFFICE_USER = "escritorio"
DEMO_PASSWORD = "portgate-demo"
WORKER_REGISTRATION = "V017"  # a worker's own account (issue 35): login V017 (stored as v017), pages /w/
STEVEDORE_REGISTRATION = "E001"  # a stevedore's own account: his production pay and R8 hours on /w/
PRODUCTION_RULEBOOK = "dl-2032-1940"  # the demo's gangs are stevedoring gangs (RULES.md E)


def prepare_ledger(url: str, scenario, day_start: dt.datetime, *, actor: str = "demo", accounts: bool = True) -> None:
    """Migrate the ledger and put in it what the office keeps for the day: the registry
    (workers.csv, cards.csv), the escala (escala.csv), one ship call per ship (arrival at 01:00 of
    the day, still in port), the demo users and the account of worker V017; the stevedores of
    ``stevedores.csv``, the account of E001 and their gangs' production pay (``production/``).
    ``accounts=False`` (a second port on the same ledger, ``portgate demo --cluster``): the
    registry, escala and ship calls only. Every worker is stored with the scenario's port (never NULL:
    each port's clerk sees his own; a config of another home port cannot read them as its own)."""
    from sqlalchemy.orm import Session

    from central.calls.service import ShipCall, save_call
    from central.db import make_engine
    from central.ledger.migrate import upgrade_engine
    from central.registry.store import import_files
    from central.rotation.engine import RotationSettings
    from central.rotation.service import _store_entry
    from central.web.users import add_user
    from central.web.workeraccounts import add_account

    engine = make_engine(url)
    try:
        upgrade_engine(engine)
        # the day's start as aware UTC: a database column keeps no offset (SQLite stores the wall
        # time), so a port-time value would be read back three hours early, on the day before
        now = day_start.astimezone(dt.UTC)
        settings = RotationSettings(tz=scenario.spec.timezone)
        entries = load_csv(scenario.escala_csv, EscalaEntry)
        with Session(engine) as s, s.begin():
            import_files(s, workers_csv=scenario.workers_csv, cards_csv=scenario.cards_csv, actor=actor, now=now,
                         port=scenario.spec.port)
            ships = {}
            for entry in entries:
                _store_entry(s, entry, operator="demo", requisition_id=None, settings=settings, actor=actor, now=now)
                ships.setdefault(entry.ship, entry)
            arrival = (day_start + dt.timedelta(hours=1)).astimezone(dt.UTC)
            for ship, e in sorted(ships.items()):
                save_call(s, ShipCall(ship, e.ship_name, e.voyage.value, e.berth.value, e.gate_id, arrival, None),
                          actor=actor, now=now)
            if not accounts:
                return
            add_user(s, DEMO_USER, role="inspector", password=DEMO_PASSWORD, name="Demo", actor=actor)
            add_user(s, OFFICE_USER, role="office", password=DEMO_PASSWORD, name="Escritório", actor=actor)
            add_account(s, WORKER_REGISTRATION, password=DEMO_PASSWORD, actor=actor, now=now)
            if scenario.stevedores_csv.exists():
                import_files(s, workers_csv=scenario.stevedores_csv, actor=actor, now=now, port=scenario.spec.port)
                add_account(s, STEVEDORE_REGISTRATION, password=DEMO_PASSWORD, actor=actor, now=now)
        if (scenario.production_dir / "gang.csv").exists():
            import_production(engine, scenario.production_dir, scenario.spec.timezone, now)
    finally:
        engine.dispose()


def import_production(engine, directory: Path, tz: str, now: dt.datetime) -> list[int]:
    """Price and store the stevedoring gangs of ``directory`` (``gang.csv``, ``tally.csv``,
    ``tariffs.csv``, ``interruptions.csv``) as ``portgate production import`` without a ledger's
    gate taps (the demo's stevedores pass no gate): their statements for the worker's pay page
    and their hours for R8. Returns the gang row ids; ``BadInput`` / ``StoreError`` as the command."""
    from central.production import csvio
    from central.production.composition import load_composition
    from central.production.engine import pay_gangs
    from central.production.fromledger import noted
    from central.production.gate import from_gate
    from central.production.rulebook import find_rulebook
    from central.production.store import import_results
    from portgate.timeutil import zone

    works = csvio.read_gang_work(directory / "gang.csv", directory / "tally.csv",
                                 directory / "interruptions.csv", None, tz=tz)
    works, notes = from_gate(works, [], zone(tz, key="timezone"))  # R10 within the files
    results = [noted(r, notes.get(r.summary.gang_id, ())) for r in pay_gangs(
        works, find_rulebook(PRODUCTION_RULEBOOK, None), csvio.read_tariffs(directory / "tariffs.csv"),
        lang="pt-BR", composition=load_composition(None))]
    return import_results(engine, list(zip(works, results, strict=True)), imported_at=now, source="demo")


class DemoWeb:
    """``portgate office``'s app in a thread: ``start()`` returns the URL, ``stop()`` ends it."""

    def __init__(self, url: str, clock_files: list[Path], tz: str, central_toml: Path | None = None,
                 registry_dirs: list[Path] = ()) -> None:
        self.db_url = url
        self.central_toml = central_toml
        # keys dirs whose gates' registered ports the app reads besides central.toml's keys_dir
        self.registry_dirs = list(registry_dirs)
        self.clocks = [ScriptedClock(p) for p in clock_files]
        self.tz = tz
        self.server = None
        self.thread: threading.Thread | None = None
        self.engine = None

    def now(self) -> dt.datetime:
        return max(c.wall() for c in self.clocks)

    def start(self) -> str:
        import uvicorn

        from central.config import WebSettings
        from central.db import make_engine
        from central.web.app import create_app
        from app.demo.mosquitto import free_port

        self.engine = make_engine(self.db_url)
        extra = {}
        settings = WebSettings(tz=self.tz)
        key = None
        if self.central_toml is not None:  # as `portgate office serve --config central.toml` runs it
            from app.whatif import web_gate_what_if
            from central.config import load_central_config
            from central.web.cli import slip_key
            from central.broadcast.publisher import office_signer
            from central.web.photo_publish import photo_publisher

            config = load_central_config(str(self.central_toml))
            settings = config.web
            key = slip_key(config)  # <keys_dir>/payslip.key of the run directory, made if missing
            from central.web.gate_commands import command_sender

            extra = {"gate_what_if": web_gate_what_if(config.publish),
                     "publish_photos": photo_publisher(config.mqtt, config.port, office_signer(config.keys_dir))
                     if settings.photos_dir else None,
                     "send_command": command_sender(config.mqtt, config.port, office_signer(config.keys_dir))}
        ports = config.served_ports if self.central_toml is not None else ()
        app = create_app(self.engine, settings, secrets.token_bytes(32), now=self.now, slip_key=key, ports=ports,
                         **extra)
        if self.central_toml is not None:  # as office serve: gate id -> port of the registered gates
            from central.ingest.nats_users import registered_in

            # as office serve: keys_dir's and port_keys_dirs' (CentralConfig.registry_dirs), and any other given
            app.state.web.gate_registry.update(registered_in((*config.registry_dirs, *self.registry_dirs)))
        port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning",
                                                    timeout_graceful_shutdown=1,
                                                    # no proxy in front: X-Forwarded-For is not believed
                                                    # (the login and /v/ rate limits count the real client)
                                                    proxy_headers=False, forwarded_allow_ips=""))
        self.thread = threading.Thread(target=self.server.run, name="demo-web", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}/"

    def stop(self) -> None:
        if self.server is not None:
            self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(10)
        if self.engine is not None:
            self.engine.dispose()

"""``portgate office``: serve the office web application and manage its users.

- ``serve --config central.toml [--host 127.0.0.1] [--port 8080] [--ssl-certfile F --ssl-keyfile K]``:
  refuse a SQLite ledger file that does not exist (``portgate ledger migrate`` makes it) and a port
  it cannot listen on (exit 2, one line), migrate the ledger, then uvicorn on the app (``central.web.app.create_app``); TLS by uvicorn
  when both files are given (cookies Secure), or behind a reverse proxy with
  ``[web] secure_cookies = true`` (docs/operations.md).
- ``add-user / set-password / disable-user / set-ports``: users in the ledger database; the password is read
  from ``--password-file`` or asked on the terminal (never on the command line); the ports a user
  sees on an office of several ports (``--port``, ``--all-ports``: ``central.web.ports``).
- ``import-ships``: ``ships.csv`` into the ship calls (G11).

Errors in data or configuration: one line, exit status 2.
"""

from __future__ import annotations

import getpass
import os
from pathlib import Path

import click
import structlog

from central.cli_args import actor_arg
from central.web.key_files import check_key_dirs, session_secret, slip_key  # noqa: F401 (app.demo.web)
from portgate.clitext import cli_lang, tr
from portgate.errors import BadInput, ConfigError

log = structlog.get_logger("central.web")
# click context ``meta`` key: a factory ``(PublishSettings) -> run`` for the "what if" page's gate side
GATE_WHAT_IF = "portgate.web.gate_what_if"


def central_config(path: str):
    """central.toml as ``central run`` reads it: relative paths against the file, the PostgreSQL
    password from ``database_password_file`` (or PGPASSFILE). Raises ``ConfigError``."""
    from central.config import load_central_config  # lazy: CLI start-up

    return load_central_config(path)


def _photo_publisher(config):
    """What sends an uploaded photo to the gates: with ``[web] photos_dir`` set, the photo downlink
    over ``[mqtt]`` (``central.web.photo_publish``)."""
    if not config.web.photos_dir:
        return None
    from central.web.photo_publish import photo_publisher  # lazy: CLI start-up

    from central.broadcast.publisher import office_signer  # lazy: CLI start-up

    return photo_publisher(config.mqtt, config.port, office_signer(config.keys_dir))


def _command_sender(config):
    """What tells one gate a command at once (enrol mode, issue 34): over ``[mqtt]``, sealed with
    the office key (``central.web.gate_commands``)."""
    from central.web.gate_commands import command_sender  # lazy: CLI start-up

    from central.broadcast.publisher import office_signer  # lazy: CLI start-up

    return command_sender(config.mqtt, config.port, office_signer(config.keys_dir))


def _engine(config, existing_file: bool = False):
    """The office's ledger, migrated to the newest schema (a missing SQLite file becomes a new
    ledger; an existing 0-byte one, a failed copy or a wrong path, is refused: ``db_url_arg``).
    ``existing_file`` (the web server): no connection ever creates the SQLite file, and one to a
    file replaced or removed since is not reused (``central.db.make_engine``)."""
    from central.cli_args import db_url_arg  # lazy: CLI start-up
    from central.db import make_engine  # lazy: CLI start-up
    from central.ledger.migrate import upgrade_engine  # lazy: CLI start-up

    db_url_arg(config.database_url, must_exist=False, refuse_empty=True, name="database_url")
    engine = make_engine(config.database_url, existing_file=existing_file)
    upgrade_engine(engine)
    return engine


def _checked_engine(config_path: str):
    """``_engine`` of ``--config central.toml`` for a command that changes users, checked first
    against the ledger's ports as every command given ``--config`` is (``central.cli_args.
    config_ledger``: a config of another home port while workers without a port remain, or one not
    serving a port the ledger names, is refused, ``PortsRefused``, exit 2, nothing written)."""
    from central.cli_args import config_ledger  # lazy: CLI start-up

    config = central_config(config_path)
    engine = _engine(config)
    try:
        config_ledger(config, writes=True)
    except BadInput:
        engine.dispose()
        raise
    return engine


def _password(password_file: str | None, confirm: bool = True) -> str:
    if password_file:
        try:
            return Path(password_file).read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise BadInput(f"cannot read {password_file}: {exc.strerror}", where="--password-file") from exc
    env = os.environ.get("PORTGATE_PASSWORD")
    if env:
        return env
    first = getpass.getpass("password: ")
    if confirm and getpass.getpass("again: ") != first:
        raise BadInput("the two passwords differ", where="password")
    return first


def _actor(actor: str | None) -> str:
    return actor or f"cli:{getpass.getuser()}"


@click.group()
def office() -> None:
    """The office web application: serve it, manage its users, import ship calls."""


@office.command("serve")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False), help="central.toml")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8080, show_default=True, type=click.IntRange(1, 65535))
@click.option("--ssl-certfile", type=click.Path(dir_okay=False, exists=True), default=None)
@click.option("--ssl-keyfile", type=click.Path(dir_okay=False, exists=True), default=None)
def serve(config_path: str, host: str, port: int, ssl_certfile: str | None, ssl_keyfile: str | None) -> None:
    """Serve the web application on HOST:PORT until SIGTERM/SIGINT."""
    if bool(ssl_certfile) != bool(ssl_keyfile):
        raise click.UsageError(tr("cli.office.ssl_both_or_neither"))
    from central.cli_args import config_ledger, db_url_arg  # lazy: CLI start-up

    config = central_config(config_path)
    db_url_arg(config.database_url, must_exist=True, name="database_url")  # never a new empty ledger
    check_key_dirs(config)  # a key file is made, never its directory
    # after the refusals above: a refused config is one line without the web stack's imports (~0.8 s of CPU)
    import uvicorn  # lazy: CLI start-up

    from central.web.app import create_app  # lazy: CLI start-up
    from portgate.logs import configure_logging  # lazy: CLI start-up

    sock = _listen(host, port)  # before the migration: a port in use is one line, nothing else
    configure_logging(json=config.log_json, level=config.log_level,
                      fields={"service": "office-web", "port": config.port})
    engine = _engine(config, existing_file=True)  # the file is there; a request never makes a new one
    try:  # a config that does not fit the ledger's ports (central.ledger.home): no office, exit 2
        config_ledger(config, writes=True)
    except BadInput:
        sock.close()
        engine.dispose()
        raise
    from central.ingest.nats_users import registered_in  # lazy: CLI start-up (bcrypt)

    tls = bool(ssl_certfile)
    # the gate what-if joins the ledger with the gate rules (edge): the top layer hands it in
    gate_what_if = click.get_current_context().meta.get(GATE_WHAT_IF)
    app = create_app(engine, config.web, session_secret(config), secure=tls or config.web.secure_cookies,
                     slip_key=slip_key(config),
                     gate_what_if=gate_what_if(config.publish) if gate_what_if else None,
                     publish_photos=_photo_publisher(config), send_command=_command_sender(config),
                     ports=config.served_ports)
    app.state.web.gate_registry = registered_in(config.registry_dirs)  # every served port's gates
    log.info("office_web.listening", url=f"{'https' if tls else 'http'}://{host}:{port}/")
    server = uvicorn.Server(uvicorn_config(app, config.web, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
                                           log_level=config.log_level))
    from central.ledger.liveness import Liveness  # lazy: CLI start-up

    with Liveness(config.database_url, "office serve", config.port):  # ledger home-port --set refuses meanwhile
        server.run(sockets=[sock])


def uvicorn_config(app, web, **kwargs):
    """uvicorn's settings for the office application: ``X-Forwarded-For``/``-Proto`` believed only
    from the addresses of ``[web] trusted_proxies`` (none by default: the TCP peer is the client,
    whatever headers a local process sends); uvicorn's log lines go through structlog. ``kwargs``:
    more ``uvicorn.Config`` arguments (TLS files, host and port in tests)."""
    import uvicorn  # lazy: CLI start-up

    proxies = ",".join(web.trusted_proxies)
    return uvicorn.Config(app, log_config=None, timeout_graceful_shutdown=3, proxy_headers=bool(proxies),
                          forwarded_allow_ips=proxies or "", **kwargs)


def _listen(host: str, port: int):
    """A listening socket on ``host:port``; ``BadInput`` (one line, exit 2) if it cannot be bound
    (the port in use, an address not of this machine)."""
    import socket  # lazy: CLI start-up

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        from portgate.metrics import cannot_listen  # lazy: only on a refusal

        raise BadInput(cannot_listen(host, port, exc), where="--port") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def _session(config_path: str):
    from sqlalchemy.orm import Session  # lazy: CLI start-up

    return Session(_checked_engine(config_path))


@office.command("add-user")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False))
@click.option("--login", default=None, help="The login (a worker's is his registration in lower case).")
@click.option("--role", required=True, type=click.Choice(["office", "inspector", "auditor", "admin", "worker"]))
@click.option("--registration", default=None, help="role worker: the worker's registration.")
@click.option("--name", default="")
@click.option("--password-file", type=click.Path(dir_okay=False), default=None,
              help="Read the password from this file (else $PORTGATE_PASSWORD, else asked; a worker "
                   "without either gets an activation code).")
@click.option("--actor", default=None, callback=actor_arg, help="Who makes the change (default: your login).")
@click.option("--port", "ports", multiple=True, help="A port the user sees (repeatable; default: the office's "
              "home port, `port` of central.toml). For an office of several ports (`ports`).")
@click.option("--all-ports", is_flag=True,
              help="The user sees every port the office serves (an auditor, a federation).")
def add_user_cmd(config_path, login, role, registration, name, password_file, actor, ports, all_ports):
    """Add a user of the web application (role worker: an account bound to --registration)."""
    from sqlalchemy.orm import Session  # lazy: CLI start-up

    from central.web.users import add_user, check_new_login  # lazy: CLI start-up

    if role == "worker":
        if ports or all_ports:
            raise BadInput("--port and --all-ports are for office users", where="--port")
        _add_worker(config_path, login, registration, password_file, actor)
        return
    if registration is not None:
        raise BadInput("--registration is for --role worker", where="--registration")
    if not login:
        raise BadInput("--login is required", where="--login")
    scope = _scope(config_path, ports, all_ports)
    engine = _checked_engine(config_path)
    with Session(engine) as s:  # a login taken or malformed is said before a password is asked
        check_new_login(s, login)
    password = _password(password_file)
    with Session(engine) as s, s.begin():
        user = add_user(s, login, role=role, password=password, name=name, actor=_actor(actor), ports=scope)
    click.echo(tr("cli.office.user_added", login=user.login, role=user.role)
               + ("" if scope is None else tr("cli.office.user_ports", ports=_scope_words(scope))))


def _scope(config_path: str, ports, all_ports: bool) -> str | None:
    """``office_users.ports`` of ``--port``/``--all-ports`` (``central.web.ports.stored_ports``);
    ``BadInput`` for a port the office does not serve."""
    from central.web.ports import stored_ports  # lazy: CLI start-up

    scope = stored_ports(ports, all_ports=all_ports)
    served = central_config(config_path).served_ports
    unknown = [p for p in ports if p not in served]
    if unknown:
        raise BadInput(f"port {unknown[0]!r} is not served by this office (ports: {', '.join(served)})",
                       where="--port")
    return scope


@office.command("set-ports")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False))
@click.option("--login", required=True)
@click.option("--port", "ports", multiple=True, help="A port the user sees (repeatable).")
@click.option("--all-ports", is_flag=True, help="The user sees every port the office serves.")
@click.option("--home", is_flag=True, help="Back to the office's home port (as a user made without --port).")
@click.option("--actor", default=None, callback=actor_arg)
def set_ports_cmd(config_path, login, ports, all_ports, home, actor):
    """Set the ports an office user sees (an office of several ports, docs/operations.md); his open
    sessions see the new ports at their next request."""
    from central.web.users import set_ports  # lazy: CLI start-up

    if home == bool(ports or all_ports):
        raise BadInput("give exactly one of --port (repeatable), --all-ports or --home", where="--port")
    scope = None if home else _scope(config_path, ports, all_ports)
    with _session(config_path) as s, s.begin():
        set_ports(s, login, scope, actor=_actor(actor))
    click.echo(tr("cli.office.ports_set", login=login,
                  ports=tr("cli.office.home_port") if scope is None else _scope_words(scope)))


def _scope_words(scope: str) -> str:
    """A stored port scope as a person reads it: ``*`` is every port, else the ports as stored."""
    return tr("cli.office.all_ports") if scope == "*" else scope


def _add_worker(config_path, login, registration, password_file, actor) -> None:
    """``add-user --role worker``: the password from ``--password-file`` or $PORTGATE_PASSWORD, else an
    activation code printed (single use, 7 days; ``central.web.workeraccounts``)."""
    from central.web.workeraccounts import add_account, login_of  # lazy: CLI start-up

    if not registration:
        raise BadInput("--role worker needs --registration", where="--registration")
    if login and login.strip().lower() != login_of(registration):
        raise BadInput(f"a worker's login is his registration in lower case ({login_of(registration)})",
                       where="--login")
    password = _password(password_file) if password_file or os.environ.get("PORTGATE_PASSWORD") else None
    with _session(config_path) as s, s.begin():
        issued = add_account(s, registration, password=password, actor=_actor(actor))
    click.echo(tr("cli.office.worker_added", login=login_of(registration), registration=registration.strip()))
    if issued is not None:
        from portgate.l10n import moment  # lazy: CLI start-up

        click.echo(tr("cli.office.activation_code", code=issued.code, until=moment(issued.expires_at, cli_lang())))


@office.command("set-password")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False))
@click.option("--login", required=True)
@click.option("--password-file", type=click.Path(dir_okay=False), default=None)
@click.option("--actor", default=None, callback=actor_arg)
def set_password_cmd(config_path, login, password_file, actor):
    """Set a user's password (also unlocks a login locked by wrong passwords)."""
    from sqlalchemy.orm import Session  # lazy: CLI start-up

    from central.web.users import check_user, set_password  # lazy: CLI start-up

    engine = _checked_engine(config_path)
    with Session(engine) as s:  # an unknown login is said before a password is asked
        check_user(s, login)
    password = _password(password_file)
    with Session(engine) as s, s.begin():
        set_password(s, login, password, actor=_actor(actor))
    click.echo(tr("cli.office.password_set", login=login))


@office.command("disable-user")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False))
@click.option("--login", required=True)
@click.option("--actor", default=None, callback=actor_arg)
def disable_user_cmd(config_path, login, actor):
    """Disable a user (its sessions stop at their next request)."""
    from central.web.users import disable_user  # lazy: CLI start-up

    with _session(config_path) as s, s.begin():
        disable_user(s, login, actor=_actor(actor))
    click.echo(tr("cli.office.user_disabled", login=login))


@office.command("import-ships")
@click.option("--config", "config_path", required=True, type=click.Path(dir_okay=False))
@click.option("--ships", "ships_csv", required=True, type=click.Path(dir_okay=False, exists=True))
@click.option("--actor", default=None, callback=actor_arg)
def import_ships_cmd(config_path, ships_csv, actor):
    """Import ships.csv (ship calls: arrival to departure) for the coverage alarm (G11)."""
    from central.calls.service import import_csv  # lazy: CLI start-up

    with _session(config_path) as s, s.begin():
        n = import_csv(s, ships_csv, actor=_actor(actor))
    click.echo(tr("cli.office.ships_imported", n=n))

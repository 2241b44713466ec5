"""What the ``portgate pay`` commands read from their options before they compute: the port TOML
and its rulebook (``load_setup``), a rulebook by file or id (``rulebook_arg``), ``--by``, ``--at``,
the login, and the existing ledger a bookkeeping command works on (``on_ledger``). Changes when an
option's meaning or its refusal changes; the commands themselves live in ``central.pay.cli`` and
the ``*_cli`` modules beside it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from central.cli_args import database_arg, db_url_arg, time_arg
from central.pay.calendar import PortConfig
from central.pay.loading import (DEFAULT_PORT_CONFIG, calendar_from_config, load_port_config,
                                 load_rulebook)
from portgate.config import naming_key, unreadable
from portgate.errors import ConfigError

RULEBOOKS = Path(__file__).resolve().parents[2] / "config" / "rulebooks"


def load_setup(port_config: str | None):
    """(port config, rulebook, calendar) from a port TOML (default: config/port.example.toml)."""
    where = str(port_config or DEFAULT_PORT_CONFIG)
    try:
        port: PortConfig = load_port_config(where)
    except (OSError, ValueError) as exc:  # the rulebook's path too long to look up
        raise ConfigError(unreadable(exc), key="rulebook", path=where) from exc
    try:
        rulebook = load_rulebook(port.rulebook)
    except ConfigError as exc:
        raise naming_key(exc, "rulebook", where) from exc
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{port.rulebook[:200]}: {unreadable(exc)}", key="rulebook", path=where) from exc
    calendar = calendar_from_config(port, rulebook.timezone)
    return port, rulebook, calendar


def rulebook_arg(value: str, name: str):
    """A pay rulebook by file path or by id in ``config/rulebooks`` (``example-cct-2026``).
    Raises ``ConfigError`` if neither exists or the file is not valid."""
    if not value.strip():
        raise ConfigError("is empty: give a rulebook file or an id in config/rulebooks", path=name)
    path = Path(value)
    if not path.exists() and (RULEBOOKS / f"{value}.toml").exists():
        path = RULEBOOKS / f"{value}.toml"
    if not path.exists():
        raise ConfigError(f"no rulebook {value!r} (a file, or an id in {RULEBOOKS})", path=name)
    return load_rulebook(path)


def setup_and_rulebook(port_config: str | None, rulebook_name: str | None):
    """``load_setup(port_config)`` with its rulebook replaced by ``--rulebook`` when given
    (``rulebook_arg``): (port config, rulebook, calendar). Raises ``ConfigError`` as both do."""
    port, rulebook, calendar = load_setup(port_config)
    if rulebook_name is not None:
        rulebook = rulebook_arg(rulebook_name, "--rulebook")
    return port, rulebook, calendar


#: ``statements.computed_by`` holds at most this many characters; a longer ``--by`` is refused.
MAX_BY = 128


def by_arg(value: str | None) -> str | None:
    """``--by`` as given; raises ``ConfigError`` for an empty or blank one (not read as "the
    login": who ran the pay is on record) and for one longer than ``MAX_BY`` characters (not cut)."""
    if value is not None and not value.strip():
        raise ConfigError("is empty (name who runs the pay, or leave --by out for the login)", path="--by")
    if value is not None and len(value) > MAX_BY:
        raise ConfigError(f"has {len(value)} characters (at most {MAX_BY})", path="--by")
    return value


def at_arg(value: str | None) -> dt.datetime:
    """``--at`` as an aware UTC datetime (``time_arg``: ISO 8601 with offset), or now when not given."""
    return time_arg(value, "--at") if value else dt.datetime.now(dt.UTC)


def login() -> str:
    """The operating-system login running the command (``unknown`` when there is none)."""
    import getpass  # lazy: CLI start-up

    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def on_ledger(db_url, config_path, action) -> None:
    """Run ``action(engine)`` on the existing ledger named by ``--db`` or ``--config`` (one of them;
    a missing SQLite file is refused, never created; a file that is not a ledger is one line,
    ``StoreError``). The engine is disposed afterwards."""
    from sqlalchemy.exc import SQLAlchemyError  # lazy: CLI start-up

    from central.db import make_engine, read_failure  # lazy: CLI start-up

    db_url = database_arg(db_url, config_path)
    db_url_arg(db_url, must_exist=True)
    engine = make_engine(db_url)
    try:
        action(engine)
    except SQLAlchemyError as exc:  # not a database, not a ledger, not reachable: one line
        raise read_failure(engine.url.render_as_string(hide_password=True), engine.dialect.name, exc) from exc
    finally:
        engine.dispose()

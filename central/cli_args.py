"""Command-line arguments shared by the office commands (``portgate pay``, ``portgate ledger``):
work-day ranges and database URLs, checked before anything is opened so a typo is a clear
``BadInput`` (exit status 2), never a traceback or a new empty database.
"""

from __future__ import annotations

import datetime as dt
import os
import tempfile
from pathlib import Path

import click
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError

from central.config import load_central_config
from portgate.cells import parse_aware
from portgate.config import must_exist
from portgate.clitext import tr
from portgate.errors import BadInput

#: Work days and times outside this range are refused (an unset clock says 1970; 0001 and 9999 do
#: not survive a time-zone conversion). Same lower bound as pay's ``PLAUSIBLE_FROM``.
FIRST_DAY = dt.date(2000, 1, 1)
LAST_DAY = dt.date(2100, 12, 31)


def actor_arg(_ctx, _param, value: str | None) -> str | None:
    """Click callback of every ``--actor`` (who makes a change, ``audit_log.actor``): ``BadInput``
    (where ``--actor``, exit 2) for a name with a control character or line break
    (``portgate.cells.text``) or longer than the column (``central.bounds``: 128 characters; SQLite
    would store it, PostgreSQL refuse it at the write). ``None`` and a blank name are the command's
    to refuse (each says who is asked for)."""
    if value is None or not value.strip():
        return value
    from central import bounds  # lazy: CLI start-up
    from central.audit import audit_log  # lazy: CLI start-up
    from portgate import cells  # lazy: CLI start-up

    try:
        cells.text(value, "actor")
    except BadInput as exc:
        raise BadInput(exc.reason, where="--actor") from None
    problem = bounds.problem(audit_log, "actor", value.strip())
    if problem is not None:
        raise BadInput(problem, where="--actor")
    return value


def work_day_arg(value: str | None, name: str) -> dt.date:
    """``YYYY-MM-DD`` -> date in [2000-01-01, 2100-12-31]. Raises ``BadInput`` naming the option."""
    try:
        day = dt.date.fromisoformat((value or "").strip())
    except ValueError as exc:
        raise BadInput(f"{value!r} is not a date YYYY-MM-DD", where=name) from exc
    if not FIRST_DAY <= day <= LAST_DAY:
        raise BadInput(f"{value!r} is outside {FIRST_DAY}..{LAST_DAY}", where=name)
    return day


def day_range(date_from: str | None, date_to: str | None) -> tuple[dt.date, dt.date]:
    """(first, last) work days of ``--from``/``--to``; ``--from`` after ``--to`` is ``BadInput``."""
    first, last = work_day_arg(date_from, "--from"), work_day_arg(date_to, "--to")
    if first > last:
        raise BadInput(f"{first} is after --to {last}", where="--from")
    return first, last


def time_arg(value: str, name: str) -> dt.datetime:
    """ISO 8601 timestamp with offset -> aware UTC, in years 2000..2100. Raises ``BadInput``."""
    at = parse_aware(value, name)
    if not FIRST_DAY <= at.date() <= LAST_DAY:
        raise BadInput(f"{name} {value!r} is outside {FIRST_DAY}..{LAST_DAY}")
    return at


def db_url_arg(value: str, *, must_exist: bool, name: str = "--db", refuse_empty: bool = False) -> URL:
    """Check a database URL before connecting. Returns the parsed URL.

    Raises ``BadInput`` naming ``--db`` when the text is not a SQLAlchemy URL or names an unknown
    dialect/driver, and, when ``must_exist`` (commands that read a ledger), when it is a SQLite file
    that does not exist, an existing file of 0 bytes (a failed copy or a wrong path, which would be
    migrated into a new, empty ledger), or an in-memory SQLite database (which would be created
    empty and read as "no shifts"). ``portgate ledger migrate`` (``must_exist=False``) is what makes
    a new ledger, in a missing or an empty file. ``refuse_empty`` (with ``must_exist=False``: the
    commands that may start a ledger in a missing file, ``registry import``/``register`` and the
    ``office`` user and ship commands) still refuses an existing 0-byte file. A file given as a
    SQLite URI (``?uri=true``) is not checked. A SQLite file whose directory does not exist is
    refused naming that directory, whatever ``must_exist`` (SQLite does not create directories:
    ``ledger migrate`` would fail on it too).
    """
    try:
        url = make_url(value)
        url.get_dialect()  # unknown dialect or driver -> NoSuchModuleError (an ArgumentError)
    except ArgumentError as exc:
        raise BadInput(f"{value!r} is not a database URL (sqlite:///path.db or "
                       f"postgresql+psycopg://user@host/db): {exc}", where=name) from exc
    is_file_url = url.get_backend_name() == "sqlite" and url.query.get("uri") != "true"
    if is_file_url and url.database not in (None, "", ":memory:") and not Path(url.database).parent.is_dir():
        raise BadInput(f"the directory {str(Path(url.database).parent)!r} of SQLite file {url.database!r} does "
                       f"not exist (SQLite does not create directories): fix the path or create the directory",
                       where=name)
    if (must_exist or refuse_empty) and is_file_url:
        if must_exist and url.database in (None, "", ":memory:"):
            raise BadInput("an in-memory SQLite database holds no ledger: give a file", where=name)
        if must_exist and Path(url.database).is_dir():
            raise BadInput(f"{url.database!r} is a directory, not a SQLite file: give the ledger file in it "
                           f"(sqlite:///DIR/ledger.db)", where=name)
        if must_exist and not Path(url.database).is_file():
            raise BadInput(f"SQLite file {url.database!r} does not exist (run "
                           f"`portgate ledger migrate --db URL` to create a ledger)", where=name)
        if url.database not in (None, "", ":memory:") and Path(url.database).is_file() \
                and Path(url.database).stat().st_size == 0:
            raise BadInput(f"SQLite file {url.database!r} is empty (0 bytes): a failed copy or a wrong "
                           f"path? Restore the ledger or fix the path; to start a new ledger in this "
                           f"file run `portgate ledger migrate --db URL`", where=name)
    return url


def run_files(config) -> None:
    """What ``central run`` opens and ``central check-config`` checks alike, before anything starts:
    ``keys_dir`` a directory, each ``[publish]`` CSV file there (``must_exist``: ``ConfigError``
    "file not found: PATH" naming ``$.publish.workers_csv`` etc.; the CSV source would otherwise
    fail at its first snapshot), and a SQLite ledger writable (``sqlite_writable``)."""
    must_exist(config.keys_dir, "$.keys_dir", directory=True)
    for name in ("workers_csv", "cards_csv", "escala_csv"):
        must_exist(getattr(config.publish, name), f"$.publish.{name}")
    sqlite_writable(config.database_url, name="database_url")


def sqlite_writable(value: str, *, name: str) -> None:
    """``BadInput`` naming ``name`` and the file when an existing SQLite ledger file cannot be
    written (opened read-write) or its directory cannot take a new file (SQLite makes its journal
    and WAL files there: "unable to open database file" otherwise). Probes with a file made and
    removed at once; nothing for other databases, a missing file, a SQLite URI."""
    url = make_url(value)
    if url.get_backend_name() != "sqlite" or url.query.get("uri") == "true" or not url.database \
            or not Path(url.database).is_file():
        return
    db = Path(url.database)
    try:
        os.close(os.open(db, os.O_RDWR | os.O_CLOEXEC))
    except OSError as exc:
        raise BadInput(f"SQLite file {str(db)!r} cannot be opened for writing: {exc.strerror or exc}",
                       where=name) from exc
    sqlite_dir_writable(value, name=name)


def sqlite_dir_writable(value: str, *, name: str) -> None:
    """``BadInput`` naming ``name`` when the directory of an existing SQLite ledger file cannot take
    a new file (SQLite makes its journal and WAL files there: "unable to open database file"
    otherwise), whether or not the file itself can be written (``pay`` and ``pay close`` leave a
    read-only file to the write's own refusal). Nothing for other databases, a missing file, a
    SQLite URI."""
    url = make_url(value)
    if url.get_backend_name() != "sqlite" or url.query.get("uri") == "true" or not url.database \
            or not Path(url.database).is_file():
        return
    db = Path(url.database)
    try:
        fd, probe = tempfile.mkstemp(dir=db.parent, prefix=".portgate-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise BadInput(f"the directory {str(db.parent)!r} of SQLite file {str(db)!r} is not writable "
                       f"({exc.strerror or exc}): SQLite makes its journal files there", where=name) from exc


def database_arg(db_url: str | None, config_path: str | None, *, writes: bool | None = True) -> str:
    """The database URL a command works on: ``--db URL`` or the ``database_url`` of ``--config
    central.toml`` (its relative path and ``database_password_file`` resolved), exactly one of them.
    With ``--config`` the ledger is checked against the config's ports (``central.ledger.home.check_config``:
    every port the ledger names served, its recorded home port the config's): a command that changes
    the ledger (``writes``) is refused (``PortsRefused``, a ``BadInput``, nothing written), one that
    only reads (``writes=False``) is told on stderr and goes on; ``writes=None`` (``ledger migrate``)
    checks nothing.

    Raises ``BadInput`` naming the options when neither or both are given (no default database: a
    forgotten option must not create an empty one in the current directory), ``ConfigError`` for a
    bad central.toml. A password inside ``--db`` works but is warned about: other users see the
    command line.
    """
    if (db_url is None) == (config_path is None):
        raise BadInput("name the database: --config central.toml (its database_url) or --db URL, one of them",
                       where="--db/--config")
    if config_path is not None:
        config = load_central_config(config_path)
        if writes is not None:
            config_ledger(config, writes=writes)
        return config.database_url
    if "@" in db_url and ":" in db_url.split("@", 1)[0].split("//", 1)[-1]:
        click.echo(tr("cli.args.db_password_warning"), err=True)
    return db_url


def config_served(config_path: str | None) -> tuple[str, ...]:
    """The ports of ``--config central.toml`` when it serves several (home port first,
    ``CentralConfig.served_ports``), for a command that stores them with the workers it writes
    (``portgate registry import``/``register``: never a NULL port then, ``central.ledger.home``);
    ``()`` for ``--db`` or a config of one port (a NULL port is that port's). ``ConfigError`` for a
    bad central.toml."""
    if config_path is None:
        return ()
    served = tuple(load_central_config(config_path).served_ports)
    return served if len(served) > 1 else ()


def config_ledger(config, *, writes: bool, every_port: bool = True) -> None:
    """``central.ledger.home.check_config`` of ``config`` (a ``CentralConfig``) as a command line
    says it: ``writes``, its ``PortsRefused`` raised (exit 2); else its warning on stderr
    (``cli.ledger.warn_not_served``, ``cli.ledger.warn_other_home``) and the command goes on.
    ``every_port``: as ``central.ledger.home.need_served`` (False: the home port only)."""
    from central.ledger.home import check_config  # lazy: CLI start-up (the ledger's schema, only with --config)

    warning = check_config(config.database_url, config.served_ports, writes=writes, every_port=every_port)
    if warning is not None:
        said = {"not_served": "cli.ledger.warn_not_served", "other_home": "cli.ledger.warn_other_home"}
        click.echo(tr(said[warning.code], **warning.fields), err=True)


def keys_dir_arg(value: str, where: str = "--keys-dir") -> Path:
    """The office's key directory (``<gate>.key``, ``<gate>.pub``, ``office/``), checked before
    anything is opened. Raises ``BadInput`` naming ``where`` (the option, or ``central.toml:
    keys_dir``) and the path when it is not a directory."""
    path = Path(value)
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a directory"
        raise BadInput(f"{str(path)!r} {what} (portgate central add-gate creates the key directory)", where=where)
    return path


def say_waiting(kind: str, hosts: str) -> None:
    """``central.db.say_when_waiting``'s notice on stderr, for every ``portgate`` command that opens
    the ledger (``central.db.make_engine`` under a command; app/cli.py puts it in the root
    context): the ledger at ``hosts`` has not answered a connection (``kind`` ``connect``) or a
    commit (``commit``: waiting for its replicas) yet."""
    if kind == "commit":
        click.echo(tr("cli.db.waiting_commit", hosts=hosts), err=True)
    else:
        click.echo(tr("cli.db.waiting_connect", hosts=hosts), err=True)

"""``portgate edge`` (the gate service; sub-commands added by the gate module) and
``portgate replay`` (the gate rules over CSV files, no hardware)."""

from __future__ import annotations

import json
import sys

import click

from portgate.clitext import refusal, tr, use_lang_of
from portgate.errors import BadInput, PortgateError


@click.group()
def edge() -> None:
    """Run or inspect a gate (the gangway device)."""


@click.command()
@click.option("--workers", required=True, help="workers.csv")
@click.option("--cards", required=True, help="cards.csv")
@click.option("--escala", required=True, help="escala.csv")
@click.option("--taps", required=True, help="taps.csv (streamed)")
@click.option("--rulebook", default=None, help="gate rulebook TOML (default: built-in gate-default)")
@click.option("--isolated", is_flag=True, help="replay each gate alone (partitioned, offline)")
@click.option("--lang", type=click.Choice(["pt", "en"]), default="pt", show_default=True)
@click.pass_context
def replay(ctx: click.Context, workers: str, cards: str, escala: str, taps: str,
           rulebook: str | None, isolated: bool, lang: str) -> None:
    """Replay taps.csv through the gate rules; one JSON line per read.

    Each line: {at, gate_id, uid, registration, decision, rules_failed, flags, message}. Bad input
    prints the bad rows and exits with status 2.
    """
    from edge.replay import run_replay
    from edge.rules.rulebook import GateRulebooks, load_gate_rulebook

    use_lang_of(ctx)
    out = sys.stdout

    def emit(result: dict) -> None:
        out.write(json.dumps(result, ensure_ascii=False) + "\n")

    try:
        books = load_gate_rulebook(rulebook) if rulebook else GateRulebooks()
        run_replay(workers, cards, escala, taps, books, isolated=isolated, lang=lang, emit=emit)
    except PortgateError as exc:
        click.echo(f"portgate: {refusal(exc)}", err=True)
        ctx.exit(2)
    out.flush()


@edge.command("run")
@click.option("--config", "config_path", required=True, help="gate.toml")
def run(config_path: str) -> None:
    """Run the gate: readers -> rules -> journal -> indicator (and MQTT sync if configured).

    SIGTERM/SIGINT before the gate is ready (its imports, the configuration, a state file locked by
    another process waited for up to ``lock_wait_s``, the journal's checks) stop it at once: one log
    line (``gate_stopped_before_start`` or ``gate_start_cancelled``), exit status 0, nothing journaled
    lost (``portgate.startup_stop``); a lock that outlasts the wait is one line and exit status 1
    (``StoreLocked``). The process umask is 0o077: the state directory 0700, its files 0600."""
    from portgate import startup_stop

    startup_stop.install()  # (app.cli did it before its imports; again for an in-process call)
    stop = startup_stop.STOP
    from edge.config import load_gate_config
    from edge.config_paths import check_gate_paths
    from portgate.logs import configure_logging

    cfg = load_gate_config(config_path)
    check_gate_paths(cfg)  # edge check-config's refusals, in its words (state dir, FIFOs, indicator file)
    configure_logging(json=cfg.log_json, level=cfg.log_level,
                      fields={"service": "gate", "port": cfg.port, "gate_id": cfg.gate_id})
    if _stopped_before_start(stop, cfg.gate_id):
        return
    from edge.service import GateService, StartCancelled

    if _stopped_before_start(stop, cfg.gate_id):
        return
    try:
        service = GateService(cfg, stop=stop)
    except StartCancelled:
        return  # logged (gate_start_cancelled): a clean stop
    service.run()  # a stop asked meanwhile: gate_stopped_before_start, the files closed, exit 0


def _stopped_before_start(stop, gate_id: str) -> bool:
    """A stop was asked before anything of the state was opened: logged, True (a clean stop)."""
    if not stop.is_set():
        return False
    import structlog

    structlog.get_logger("edge.service").info("gate_stopped_before_start", gate_id=gate_id, opened=False)
    return True


#: Modules the screen's process never uses, set to None in ``sys.modules`` before its imports (an
#: ``import`` of one raises ImportError; every importer below takes that as "not available"):
#: greenlet (structlog imports it when installed, SQLAlchemy brings it: a C++ extension, ~2 MB);
#: python-multipart (Starlette's form parser: the screen reads no form; 0.35 MB); ``_hashlib``
#: (OpenSSL's digests: ``hashlib``'s sha256 of a photo falls back to the built-in ``_sha256``,
#: ``hmac`` to its pure one; 0.3 MB); bz2 and lzma (``shutil``'s archive formats, through
#: ``tempfile`` in Jinja2's bytecode cache; 0.5 MB). tests/edge/display/test_footprint.py.
SCREEN_NEVER_IMPORTS = ("greenlet", "python_multipart", "multipart", "_hashlib", "bz2", "lzma")


@edge.command("display")
@click.option("--config", "config_path", required=True, help="gate.toml (the gate this screen follows)")
@click.option("--port", type=int, default=None, help="TCP port (default: [display] port; 0: any free port)")
@click.option("--url-file", default=None, help="write the page's URL to this file once listening")
@click.pass_context
def display(ctx: click.Context, config_path: str, port: int | None, url_file: str | None) -> None:
    """The watchman's screen: follow the gate's journal read-only, serve the page on loopback."""
    # The screen's budget is 40 MB of RSS (DESIGN.md): modules it never uses are kept out
    # (``SCREEN_NEVER_IMPORTS``), and its templates are compiled before anything else is imported
    # (edge.display.pages: the compile's passing memory is then reused by the imports).
    for name in SCREEN_NEVER_IMPORTS:
        sys.modules.setdefault(name, None)  # type: ignore[arg-type]
    from edge.display.pages import environment

    environment()
    from edge.config import load_gate_config
    from edge.display.server import serve
    from portgate.logs import configure_logging

    try:
        cfg = load_gate_config(config_path)
    except PortgateError as exc:
        click.echo(f"portgate: {refusal(exc)}", err=True)
        ctx.exit(2)
    configure_logging(json=cfg.log_json, level=cfg.log_level)
    try:
        serve(cfg, port=port, url_file=url_file)
    except OSError as exc:
        where = f"{cfg.display.host}:{cfg.display.port if port is None else port}"
        click.echo(tr("cli.edge.display_cannot_listen", where=where, why=exc), err=True)
        ctx.exit(2)


@edge.command("key")
@click.option("--config", "config_path", required=True, help="gate.toml")
def key_cmd(config_path: str) -> None:
    """Print this gate's Ed25519 public key (PEM), making the key pair in state_dir if there is none.
    Register it at the office: ``portgate central add-gate --gate-id G --public-key FILE``."""
    from edge.config import load_gate_config
    from edge.signing import load_or_create
    from wire.chain import fingerprint, public_pem

    cfg = load_gate_config(config_path)
    pub = load_or_create(cfg.state_dir).public_key()
    click.echo(public_pem(pub), nl=False)
    click.echo(f"fingerprint {fingerprint(pub)}", err=True)  # machine-read: scripts take the fingerprint


@edge.command("verify-journal")
@click.option("--config", "config_path", required=True, help="gate.toml (the gate whose journal is checked)")
@click.option("--public-key", "public_keys", multiple=True, type=click.Path(dir_okay=False),
              help="The gate's public key(s), PEM or base64, in a file or the base64 itself (repeatable; the "
                   "office's <keys_dir>/G.pub holds all of them, oldest first). Default: the public half of "
                   "<state_dir>/signing.key.")
@click.pass_context
def verify_journal_cmd(ctx: click.Context, config_path: str, public_keys: tuple[str, ...]) -> None:
    """Check this gate's journal chain offline, read-only (the gate may be running, or have
    crashed): every event's signature, hash link and seq. One ``FAIL:`` line per break, then the
    first bad seq; exit 0 the chain holds, 1 a break (the first bad seq named), 2 bad configuration,
    no key or no readable journal."""
    from pathlib import Path

    from edge.config import load_gate_config, office_key, office_next_key
    from edge.journal_check import check_journal
    from edge.signing import load_existing
    from portgate.errors import StoreError
    from wire.chain import fingerprint

    try:
        cfg = load_gate_config(config_path)
        keys = [k for name in public_keys for k in _public_keys(Path(name))]
        office_keys = [k for k in (office_key(cfg), office_next_key(cfg)) if k is not None]  # the receipt's
    except (PortgateError, OSError) as exc:
        click.echo(f"portgate: {refusal(_why(exc))}", err=True)
        ctx.exit(2)
    if not keys:
        try:
            keys = [load_existing(cfg.state_dir).public_key()]
        except (PortgateError, OSError) as exc:
            click.echo(tr("cli.edge.give_public_key", why=refusal(_why(exc)), gate=cfg.gate_id), err=True)
            ctx.exit(2)
    try:
        found = check_journal(Path(cfg.state_dir) / "journal.db", cfg.gate_id, keys, office_keys=office_keys,
                              port=cfg.port)
    except StoreError as exc:
        click.echo(f"portgate: {refusal(exc)}", err=True)
        ctx.exit(2)
    _print_found(found)
    if found.first_bad is None:
        click.echo(tr("cli.edge.chain_holds", path=found.path, keys=", ".join(fingerprint(k) for k in keys)))
        ctx.exit(0)
    click.echo(tr("cli.edge.chain_broken", path=found.path, seq=found.first_bad, n=len(found.problems)))
    ctx.exit(1)


def _public_keys(path) -> list:
    """The public keys of a file: every PEM ``PUBLIC KEY`` block in it, or the file as one key
    (base64); a value that names no file is read as a base64 key itself. Raises ``OSError``
    (an existing file that cannot be read) or ``PortgateError`` (not a key; neither a file nor a
    key), worded in the command line's language."""
    from wire.chain import load_public  # lazy: CLI start-up

    try:
        text = path.read_bytes()
    except FileNotFoundError:
        try:
            return [load_public(str(path))]
        except PortgateError:
            raise BadInput(tr("cli.edge.neither_key_file_nor_key"), where=str(path)) from None
    end = b"-----END PUBLIC KEY-----"
    blocks = [b + end for b in text.split(end) if b"-----BEGIN" in b] if b"-----BEGIN" in text else [text]
    try:
        return [load_public(b) for b in blocks]
    except PortgateError:
        raise BadInput(tr("cli.edge.not_a_public_key"), where=str(path)) from None


def _print_found(found) -> None:
    """The machine-read lines of a journal check: a ``FAIL:`` per problem, then ``ok:`` lines (what
    was verified, each documented segment break)."""
    for _seq, problem in found.problems:
        click.echo(f"FAIL: {problem}")  # machine-read
    rep = found.report
    said = tr("cli.edge.journal_verified", n=rep.verified, rows=found.rows, first=found.seq_from,
              last=found.seq_to, head=rep.head[:16], key=found.key or tr("cli.edge.no_key"))
    if rep.unsigned_legacy:
        said += tr("cli.edge.journal_unsigned", n=rep.unsigned_legacy)
    click.echo(f"ok: {said}")  # machine-read: the ok: prefix; the sentence in cli_lang()
    for seg in rep.segments:
        click.echo("ok: " + tr("cli.edge.segment_break", seq=seg.seq, first=seg.lost_from,  # machine-read: ok:
                               last=seg.lost_to))


def _why(exc: Exception) -> str:
    """One line for a configuration or file error (``OSError``: its file and reason)."""
    if isinstance(exc, OSError):
        return f"{exc.filename or ''}: {exc.strerror or exc}"
    return str(exc)

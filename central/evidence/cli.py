"""``portgate evidence``: a worker's evidence bundle for a labour court, and its offline check.

    portgate evidence export (--config central.toml | --db URL --keys-dir DIR) --registration R
        --from D1 --to D2 --out FILE.zip [--force] [--gate-rulebook FILE ...] [--port-config port.toml]
    portgate evidence verify FILE.zip [--office-key FP] [--gate-key G=FP ...] [--inspector-key FP] [--pins FILE]
    portgate evidence inspector-key --dir DIR
    portgate evidence countersign-gate RECORD --key DIR/inspector.key --gate-fingerprint FP [--office-fingerprint FP]
    portgate evidence audit (--config central.toml | --db URL --keys-dir DIR) [--after-id N] [--nice 0-19]

``verify`` needs only the zip (and the fingerprints the court expects, as pins): it prints one
``ok: ...`` line per check that holds, one ``key: ...`` line per key relied on and one ``FAIL: ...``
line per thing that does not hold, then exits 0 (all holds, every key pinned), 1 (something fails,
a pin that does not match included), 2 (not a bundle, bad pins) or 3 (all holds, but a key relied on
is not pinned: the last line says the result holds only if those keys are the parties' own).
``audit`` checks, at nice 19 (``--nice N``: N, or the caller's when it is higher), the own
signature of every stored signed event after ledger id N (ingest proves an inner event's content through its successor's signature only), each
such event's stored link row, every event's stored columns against its raw, and every signing
gate's received seqs still in the ledger; records each failure (BAD_SIGNATURE, UNSIGNED, MALFORMED,
RAW_NOT_BYTES, COLUMN_MISMATCH, DUPLICATE_SEQ, LINK_ALTERED, LINK_MISSING, MISSING) as a chain
break and prints the last id examined; exit 0 (all hold), 1 (failures found, new or already
recorded, each named), 2 (bad input or configuration: a signing gate without a readable public key, its events not audited), 3 (the
ledger is unreachable or locked: retry). Formats: docs/evidence.md.
"""

from __future__ import annotations

import datetime as dt

import click

from central.cli_args import day_range, db_url_arg, keys_dir_arg
from portgate.clitext import tr

MAX_ID = 2**63 - 1  # the largest ledger id (BIGINT)


@click.group()
def evidence() -> None:
    """Evidence bundles: export a worker's signed events, statements and rulebooks; verify offline."""


@evidence.command("export")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (database, keys_dir)")
@click.option("--db", "db_url", help="Ledger database URL (instead of --config).")
@click.option("--keys-dir", type=click.Path(file_okay=False), help="Gate and office keys (instead of --config).")
@click.option("--registration", required=True)
@click.option("--from", "date_from", required=True, help="First work day (YYYY-MM-DD).")
@click.option("--to", "date_to", required=True, help="Last work day (YYYY-MM-DD).")
@click.option("--out", required=True, type=click.Path(dir_okay=False), help="The zip to write (new unless --force).")
@click.option("--force", is_flag=True, help="Replace an existing --out (a bundle is never replaced silently).")
@click.option("--gate-rulebook", "gate_rulebooks", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="Gate rulebook TOML in force (repeatable). Default: config/rulebooks/gate-default.toml.")
@click.option("--port-config", help="Port TOML (time zone). Default: the example.")
def export_cmd(config_path, db_url, keys_dir, registration, date_from, date_to, out, force, gate_rulebooks, port_config):
    """Write the evidence bundle of one worker over work days [--from, --to] (a new file unless --force)."""
    from central.db import make_engine  # lazy: CLI start-up
    from central.evidence.bundle import export  # lazy: CLI start-up
    from central.evidence.bundle_out import check_request  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up
    from central.pay.cli import load_setup  # lazy: CLI start-up

    if config_path:
        from central.config import CentralConfig  # lazy: CLI start-up
        from portgate.config import load_toml  # lazy: CLI start-up

        cfg = load_toml(config_path, CentralConfig)
        keys_where = "--keys-dir" if keys_dir else f"{config_path}: keys_dir"
        db_url, keys_dir = db_url or cfg.database_url, keys_dir or cfg.keys_dir
        port_dirs = {p: cfg.port_keys_dirs.get(p, keys_dir) if p != cfg.port else keys_dir for p in cfg.served_ports}
        for p, d in cfg.port_keys_dirs.items():
            keys_dir_arg(d, f"{config_path}: port_keys_dirs.{p}")
    else:
        keys_where = "--keys-dir"
    if not (db_url and keys_dir):
        raise click.UsageError(tr("cli.evidence.give_config_or_db"))
    keys_dir_arg(keys_dir, keys_where)
    first, last = day_range(date_from, date_to)
    check_request(registration, out, force)
    db_url_arg(db_url, must_exist=True)
    port, _rulebook, calendar = load_setup(port_config)
    upgrade(db_url)
    engine = make_engine(db_url)
    try:
        done = export(engine, keys_dir, registration, first, last, out, zone=calendar.zone,
                      gate_rulebooks=list(gate_rulebooks), now=dt.datetime.now(dt.UTC), calendar=calendar,
                      pay_rulebook=port.rulebook, force=force)
    finally:
        engine.dispose()
    gates = ", ".join(f"{g} seq {a}..{b}" for g, (a, b) in done.gates.items()) or tr("cli.evidence.no_gates")
    click.echo(tr("cli.evidence.exported", path=done.path, events=done.events, gates=gates, shifts=done.shifts,
                  statements=done.statements))


@evidence.command("verify")
@click.argument("bundle", type=click.Path(dir_okay=False))
@click.option("--office-key", "office_keys", multiple=True, metavar="FINGERPRINT",
              help="The office key's fingerprint the court expects (from the office, or a receipt kept by a gate).")
@click.option("--gate-key", "gate_keys", multiple=True, metavar="GATE=FINGERPRINT",
              help="A gate key's fingerprint (read at the gangway with portgate edge key; repeatable).")
@click.option("--inspector-key", "inspector_keys", multiple=True, metavar="FINGERPRINT",
              help="The union inspector's key fingerprint (the union's copy): confirms every gate key whose "
                   "enrolment record he countersigned.")
@click.option("--pins", "pins_file", type=click.Path(dir_okay=False),
              help="A pin file (TOML: office, inspector, [gates]) instead of or beside the options.")
@click.pass_context
def verify_cmd(ctx, bundle, office_keys, gate_keys, inspector_keys, pins_file):
    """Check a bundle offline. One ``ok:`` line per check that holds, one ``FAIL:`` line per thing
    that does not, one ``key:`` line per key relied on; exit 0 verified with every key pinned, 1
    failures (a pin that does not match included), 2 not a bundle or bad pins, 3 verified but some
    key not pinned (the last line names them: the result holds only if they are the parties' own)."""
    from central.evidence.pins import load_pins, pins_from_args  # lazy: CLI start-up
    from central.evidence.verify import check_bundle  # lazy: CLI start-up

    pins = pins_from_args(office_keys, gate_keys, inspector_keys)
    if pins_file:
        pins = pins.merged(load_pins(pins_file))
    verdict = check_bundle(bundle, pins)
    for n in verdict.notes:
        click.echo(f"ok: {n}")  # machine-read
    for k in verdict.keys:
        click.echo(k.line())
    for f in verdict.failures:
        click.echo(f"FAIL: {f}")  # machine-read
    if verdict.failures:
        click.echo(tr("cli.evidence.failures", bundle=bundle, n=len(verdict.failures)))
        ctx.exit(1)
    loose = verdict.unconfirmed
    if loose:
        named = ", ".join(k.named() for k in loose)
        click.echo(tr("cli.evidence.verified_only_if", bundle=bundle, named=named))
        ctx.exit(3)
    click.echo(tr("cli.evidence.verified", bundle=bundle))
    ctx.exit(0)


@evidence.command("audit")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="central.toml (database, keys_dir)")
@click.option("--db", "db_url", help="Ledger database URL (instead of --config).")
@click.option("--keys-dir", type=click.Path(file_okay=False), help="Gate and office keys (instead of --config).")
@click.option("--after-id", type=click.IntRange(min=0, max=MAX_ID), default=0, show_default=True,
              help="Audit ledger events after this id (the last id a previous audit printed).")
@click.option("--nice", "niceness", type=click.IntRange(min=0, max=19), default=19, show_default=True,
              help="Audit at this niceness or lower priority (19, the lowest: the ingest comes first; "
                   "0 keeps the caller's).")
@click.pass_context
def audit_cmd(ctx, config_path, db_url, keys_dir, after_id, niceness):
    """Verify every stored event's own signature, its link row, its columns against its raw and each
    gate's seqs (at nice 19 unless --nice says otherwise); record and name each failure."""
    import os  # lazy: CLI start-up

    from sqlalchemy.exc import OperationalError  # lazy: CLI start-up

    from central.db import make_engine  # lazy: CLI start-up
    from central.evidence.audit import audit, gate_rings_of  # lazy: CLI start-up
    from central.ingest.keys import KeyRing  # lazy: CLI start-up
    from central.ledger.migrate import upgrade  # lazy: CLI start-up
    from portgate.errors import StoreUnavailable  # lazy: CLI start-up

    db_url, keys_dir, port_dirs = _ledger_and_keys(config_path, db_url, keys_dir)
    ring = KeyRing(keys_dir)
    gate_rings = gate_rings_of(keys_dir, port_dirs)  # a config's other ports: their gates, their keys dirs
    os.nice(max(0, niceness - os.nice(0)))  # by default the lowest priority: the ingest comes first
    try:
        upgrade(db_url)
        engine = make_engine(db_url)
        try:
            report = audit(engine, ring, after_id=after_id, now=dt.datetime.now(dt.UTC), gate_rings=gate_rings,
                           served=tuple(port_dirs))
        finally:
            engine.dispose()
    except (OperationalError, StoreUnavailable) as exc:  # exit 1 is taken by "failures found"
        why = str(getattr(exc, "orig", None) or exc).splitlines()[0]
        click.echo(tr("cli.evidence.ledger_unreachable", why=why), err=True)
        ctx.exit(3)
    _print_audit(report, after_id)
    ctx.exit(1 if report.failures else 2 if report.unchecked else 0)


def _ledger_and_keys(config_path: str | None, db_url: str | None,
                     keys_dir: str | None) -> tuple[str, str, dict[str, str]]:
    """The ledger URL and keys folder from ``--db``/``--keys-dir``, else from ``--config``; each
    checked (``click.UsageError``/``BadParameter`` naming where it came from); and, with
    ``--config``, port -> keys dir of every served port (the home port's the keys folder, the
    others' ``port_keys_dirs`` entry, else the keys folder; each checked), else ``{}``."""
    port_dirs: dict[str, str] = {}
    if config_path:
        from central.config import CentralConfig  # lazy: CLI start-up
        from portgate.config import load_toml  # lazy: CLI start-up

        cfg = load_toml(config_path, CentralConfig)
        keys_where = "--keys-dir" if keys_dir else f"{config_path}: keys_dir"
        db_where = "--db" if db_url else f"{config_path}:$.database_url"  # where the user wrote it
        db_url, keys_dir = db_url or cfg.database_url, keys_dir or cfg.keys_dir
        port_dirs = {p: cfg.port_keys_dirs.get(p, keys_dir) if p != cfg.port else keys_dir for p in cfg.served_ports}
        for p, d in cfg.port_keys_dirs.items():
            keys_dir_arg(d, f"{config_path}: port_keys_dirs.{p}")
    else:
        keys_where, db_where = "--keys-dir", "--db"
    if not (db_url and keys_dir):
        raise click.UsageError(tr("cli.evidence.give_config_or_db"))
    keys_dir_arg(keys_dir, keys_where)
    db_url_arg(db_url, must_exist=True, name=db_where)
    return db_url, keys_dir, port_dirs


def _print_audit(report, after_id: int) -> None:
    """Each failure as a machine-read ``FAIL:`` line (marked if recorded by an earlier audit), then
    what was audited, and the gates that could not be (on stderr)."""
    new = {(b.gate_id, b.seq_from, b.kind) for b in report.recorded}
    for b in report.failures:
        again = "" if (b.gate_id, b.seq_from, b.kind) in new else " " + tr("cli.evidence.already_recorded")
        click.echo(f"FAIL: {b.detail}{again}")  # machine-read
    if report.examined == 0:
        if report.failures:
            click.echo(tr("cli.evidence.audited_nothing_failures", after=after_id, failures=len(report.failures),
                          new=len(report.recorded)))
        else:
            click.echo(tr("cli.evidence.audited_nothing", after=after_id))
    elif report.last_id < report.through_id:  # the cursor held before the first event not audited
        click.echo(tr("cli.evidence.audited_held", n=report.checked, first=after_id + 1, through=report.through_id,
                      failures=len(report.failures), new=len(report.recorded), next=report.last_id + 1,
                      last=report.last_id))
    else:
        click.echo(tr("cli.evidence.audited", n=report.checked, last=report.last_id, failures=len(report.failures),
                      new=len(report.recorded)))
    if report.unchecked:
        gates = "; ".join(tr("cli.evidence.unchecked_gate", gate=g, n=n,
                             why=tr(why.msgid, **why.fields) if hasattr(why, "msgid") else why)
                          for g, (n, why) in sorted(report.unchecked.items()))
        click.echo(tr("cli.evidence.not_audited", gates=gates), err=True)


@evidence.command("inspector-key")
@click.option("--dir", "folder", required=True, type=click.Path(file_okay=False),
              help="Where the inspector keeps his key pair (inspector.key 0600, inspector.pub).")
def inspector_key_cmd(folder):
    """Make the union inspector's Ed25519 key pair (kept if there is one) and print its
    fingerprint: the union keeps it; a court pins it (verify --inspector-key)."""
    from central.evidence.enrolment import inspector_key  # lazy: CLI start-up
    from wire.chain import fingerprint  # lazy: CLI start-up

    key, made = inspector_key(folder)
    said = dict(fingerprint=fingerprint(key.public_key()), folder=folder)
    click.echo(tr("cli.evidence.inspector_key_made", **said) if made else tr("cli.evidence.inspector_key_kept", **said))


@evidence.command("countersign-gate")
@click.argument("record", type=click.Path(exists=True, dir_okay=False))
@click.option("--key", "key_file", required=True, type=click.Path(dir_okay=False), help="The inspector's inspector.key.")
@click.option("--gate-fingerprint", required=True,
              help="The gate key fingerprint read at the gangway (portgate edge key prints it).")
@click.option("--office-fingerprint", default=None, help="The office key's fingerprint, if known: checked too.")
@click.option("--out", default=None, type=click.Path(dir_okay=False), help="Write here (default: the record in place).")
def countersign_gate_cmd(record, key_file, gate_fingerprint, office_fingerprint, out):
    """Countersign a gate key enrolment record (portgate central add-gate wrote it) with the
    inspector's key, after checking the office's signature and the gate fingerprint read at the gangway."""
    from central.evidence.enrolment import countersign, load_inspector_key  # lazy: CLI start-up
    from central.evidence.pins import fingerprint_arg  # lazy: CLI start-up

    gate_fp = fingerprint_arg(gate_fingerprint, "--gate-fingerprint")
    office_fp = fingerprint_arg(office_fingerprint, "--office-fingerprint") if office_fingerprint else None
    done = countersign(record, load_inspector_key(key_file), gate_fp, office_fp, out)
    click.echo(tr("cli.evidence.countersigned", gate=done.gate_id, fingerprint=done.fingerprint,
                  office=done.office_fingerprint, inspector=done.inspector, record=out or record))

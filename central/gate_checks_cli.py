"""``portgate central add-gate``'s refusals, before anything is written (``central.cli``): the gate's
port against the config, what the keys dirs already register (another port's gate of that id, an id
differing only in letter case at another port or at the same one) and what the ledger's events say
(``central.ledger.home``). Each is a ``click.UsageError`` (exit 2), worded through the catalogs."""

from __future__ import annotations

from pathlib import Path

import click

from central.ingest.keys import gate_key_id
from portgate.clitext import tr


def check_before_writing(config, keys_dir: str, gate_id: str, port_name: str | None, nats_users: str | None) -> None:
    """``add-gate``'s refusals, before anything is written: the port (``_check_gate_port``), the
    keys dirs' registrations (``_check_keys_dirs``), then the ledger's events (``_check_ledger``); a
    gate id that names an office key file first (``gate_key_id``: ``payslip``, ``web-session``)."""
    gate_key_id(gate_id)
    _check_gate_port(config, port_name)
    _check_keys_dirs(config, keys_dir, gate_id, port_name, nats_users)
    _check_case_same_port(config, keys_dir, gate_id, port_name)
    _check_ledger(config, gate_id, port_name)


def _check_gate_port(config, port_name: str | None) -> None:
    """On an office of several ports (``--config``) a gate is of a port it names: ``click.UsageError``
    without ``--port`` (a gate of no port would be shown to no port's clerk, dispatched to by no
    port's rotation); on any ``--config``, a ``--port`` the config does not serve."""
    if config is None:
        return
    served = ", ".join(config.served_ports)
    if port_name is None and len(config.served_ports) > 1:
        raise click.UsageError(tr("cli.central.add_gate_name_port", ports=served))
    if port_name is not None and port_name not in config.served_ports:
        raise click.UsageError(tr("cli.rotation.port_not_served", ports=port_name, served=served))


def _check_keys_dirs(config, keys_dir: str, gate_id: str, port_name: str | None, nats_users: str | None) -> None:
    """Before anything is written, what the keys dirs already say (``click.UsageError``): without
    ``--port``, a keys dir whose registrations name several ports; ``--nats-users`` for a port
    other than the one whose NATS users the keys dir holds (one port per ``nats-users.json``); a
    gate id registered at another port, in this keys dir or, with ``--config``, in any served
    port's (``registry_dirs``): gate ids are unique across ports, letter case aside (``G-Aurora``
    at paranagua beside ``g-aurora`` at santos is refused, as ``ports`` refuses ``Santos``)."""
    from central.ingest.nats_users import STATE_FILE, registrations, users_port  # lazy: CLI start-up (bcrypt)

    dirs = list(dict.fromkeys([keys_dir, *(config.registry_dirs if config is not None else ())]))
    try:
        found = {d: registrations(d) for d in dirs if Path(d).is_dir()}
        held = users_port(keys_dir) if Path(keys_dir).is_dir() else None
    except (OSError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    ports = sorted({p for _g, p in found.get(keys_dir, [])})
    if port_name is None and len(ports) > 1:
        raise click.UsageError(tr("cli.central.keys_dir_several_ports", keys_dir=keys_dir, ports=", ".join(ports)))
    port = port_name or (config.port if config is not None else None)
    if nats_users is not None and port and held not in (None, port):
        raise click.UsageError(tr("cli.central.keys_dir_other_port", users=Path(keys_dir) / STATE_FILE,
                                  have=held, port=port))
    for d, registered in found.items():
        other = next((p for g, p in registered if g == gate_id and port and p != port), None)
        if other is not None:
            raise click.UsageError(tr("cli.central.gate_of_other_port", gate=gate_id, other=other, keys_dir=d))
    for d, registered in found.items():  # G-Aurora beside g-aurora: one id to a person, as ports are
        case = next(((g, p) for g, p in registered
                     if g != gate_id and g.casefold() == gate_id.casefold() and port and p != port), None)
        if case is not None:
            raise click.UsageError(tr("cli.central.gate_case_other_port", gate=gate_id, other=case[0],
                                      port=case[1], keys_dir=d))


def _check_case_same_port(config, keys_dir: str, gate_id: str, port_name: str | None) -> None:
    """A gate id differing only in letter case from a gate of the same port (``G1`` beside ``g1``;
    ``gate_port_file.case_twin``) is refused (``click.UsageError``, exit 2) naming the existing id:
    one registered at the port (``--port``, else the config's port; without either, at any port)
    in the keys dir or, with ``--config``, any served port's keys dir; or with a key file in the
    keys dir written to (the keys dir of one port). The same id at another port is
    ``_check_keys_dirs``' refusal."""
    from central.ingest.gate_port_file import case_twin, keyed_gates  # lazy: CLI start-up
    from central.ingest.nats_users import registrations  # lazy: CLI start-up (bcrypt)

    port = port_name or (config.port if config is not None else None)
    dirs = list(dict.fromkeys([keys_dir, *(config.registry_dirs if config is not None else ())]))
    try:
        found = {d: registrations(d) for d in dirs if Path(d).is_dir()}
    except (OSError, ValueError) as exc:
        raise click.UsageError(str(exc)) from exc
    for d, registered in found.items():
        here = {g: p for g, p in registered if port is None or p == port}
        if (twin := case_twin(gate_id, here)) is not None:
            raise click.UsageError(tr("cli.central.gate_case_same_port", gate=gate_id, other=twin, port=here[twin],
                                      keys_dir=d))
    if (twin := case_twin(gate_id, keyed_gates(keys_dir))) is not None:
        _check_stray_key(config, gate_id, twin, keys_dir)
        raise click.UsageError(tr("cli.central.gate_case_same_keys_dir", gate=gate_id, other=twin, keys_dir=keys_dir))


def _check_stray_key(config, gate_id: str, twin: str, keys_dir: str) -> None:
    """With ``--config``, when the ledger's events name ``gate_id`` exactly (``ledger_gate_port``),
    the key file of its other spelling ``twin`` (made by an ``add-gate`` that had no ledger to ask)
    is the wrong one: ``click.UsageError`` (exit 2) naming both and the file to remove or rename,
    not "use {twin}"."""
    if config is None:
        return
    from central.ingest.keys import key_path  # lazy: CLI start-up
    from central.ledger.home import ledger_gate_port  # lazy: CLI start-up (SQLAlchemy only with --config)

    if ledger_gate_port(config.database_url, gate_id) is not None:
        raise click.UsageError(tr("cli.central.gate_case_stray_key", gate=gate_id, other=twin,
                                  file=key_path(keys_dir, twin)))


def _check_ledger(config, gate_id: str, port_name: str | None) -> None:
    """With ``--config``, before anything is written: a gate id whose events the ledger holds at
    another port (``central.ledger.home.ledger_gate_port``; a gate registered by another office's
    keys dir on a shared ledger) is refused (``click.UsageError``, exit 2), and so is an id differing
    only in letter case from a gate the ledger has (``ledger_gates``): at this port
    (``gate_case_same_port_ledger``, naming the existing id) or at another. A ledger that
    cannot be reached: the waiting notice and one line, exit 1, as every ``--config`` command."""
    if config is None:
        return
    from central.ledger.home import ledger_gate_port  # lazy: CLI start-up (SQLAlchemy only with --config)

    port = port_name or config.port
    other = ledger_gate_port(config.database_url, gate_id)
    if other is not None and other != port:
        raise click.UsageError(tr("cli.central.gate_of_other_port_ledger", gate=gate_id, other=other, port=port))
    if other is None:  # G-Aurora when the ledger has g-aurora (at any port): one id to a person
        from central.ledger.home import ledger_gates  # lazy: CLI start-up (SQLAlchemy only with --config)

        same = sorted((g, p) for g, p in ledger_gates(config.database_url).items()
                      if g != gate_id and g.casefold() == gate_id.casefold())
        mine = [(g, p) for g, p in same if p == port]
        if mine:  # G1 when the ledger has g1 at this very port
            raise click.UsageError(tr("cli.central.gate_case_same_port_ledger", gate=gate_id, other=mine[0][0],
                                      port=port))
        if same:
            raise click.UsageError(tr("cli.central.gate_case_other_port_ledger", gate=gate_id, other=same[0][0],
                                      port=same[0][1]))

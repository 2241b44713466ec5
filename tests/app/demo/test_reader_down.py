"""A demo gate whose every reader is out of order stops the demo at once (the last stop's whole
cluster day: a pcscd the gates could not reach listed 18 "no decision shown", each after 20 s):
``Gate.wait_decision`` looks at the gate's heartbeat file (``edge.heartbeat``, written here by the
gate's own ``Heartbeat`` and ``ReaderHealth`` after a driver's real status) once ``grace`` has
passed without a decision. A gate with one working reader still waits, and a decision shown is
returned whatever the readers say."""

from __future__ import annotations

import json

import pytest

from app.demo.gate import DemoFailed, Gate
from app.demo.run import DemoRun
from app.demo.scenario import DEFAULT_DIR, Scenario
from drivers.base import ReaderState, ReaderStatus
from edge.heartbeat import Heartbeat
from edge.reader_health import ReaderHealth
from portgate.clitext import use_lang


@pytest.fixture
def gate(tmp_path):
    use_lang("en")
    scenario = Scenario(DEFAULT_DIR)
    run = DemoRun(tmp_path, scenario, lang="en", out=lambda _line: None)
    g = Gate(run, scenario.spec.gates[0])
    (g.dir / "state").mkdir()
    yield g
    use_lang(None)


def _beat(gate: Gate, states: dict[str, ReaderState]) -> None:
    health = ReaderHealth([(rid, "control") for rid in states])
    for rid, state in states.items():
        health.note_status(ReaderStatus(rid, state, "" if state is ReaderState.READY else
                                        "SCardEstablishContext: Service not available. (0x8010001D)"))
    Heartbeat(gate.dir / "state", None, readers=health.snapshot).beat()


def test_every_reader_down_stops_the_wait_naming_them(gate):
    _beat(gate, {"g1-pcsc": ReaderState.ABSENT})
    with pytest.raises(DemoFailed) as failed:
        gate.wait_decision(timeout=60, grace=0.1)
    assert str(failed.value) == (f"gate {gate.gate_id} cannot read cards: every reader of it is out of order "
                                 "(g1-pcsc: SCardEstablishContext: Service not available. (0x8010001D)); "
                                 f"see {gate.dir}/gate.log")


def test_one_working_reader_keeps_waiting(gate):
    _beat(gate, {"g1-control": ReaderState.READY, "g1-out": ReaderState.FAULT})
    assert gate.wait_decision(timeout=1.0, grace=0.1) is None


def test_a_decision_shown_is_returned_with_every_reader_down(gate):
    _beat(gate, {"g1-pcsc": ReaderState.ABSENT})
    gate.decisions_file.write_text(json.dumps({"outcome": "allow", "colour": "green"}) + "\n")
    assert gate.wait_decision(timeout=60, grace=0.0) == {"outcome": "allow", "colour": "green"}


def test_no_heartbeat_yet_keeps_waiting(gate):
    assert gate.wait_decision(timeout=1.0, grace=0.1) is None


def _pcsc_gate(tmp_path) -> tuple[Gate, object]:
    scenario = Scenario(DEFAULT_DIR)
    run = DemoRun(tmp_path, scenario, lang="en", out=lambda _line: None)
    spec = next(g for g in scenario.spec.gates if g.readers == "pcsc")
    tap = next(t for _line, t in scenario.taps if t.gate_id == spec.gate_id)
    return Gate(run, spec), tap


@pytest.mark.pcsc
def test_a_pcscd_stopped_mid_day_is_named_with_its_gate_and_log(tmp_path):
    """The tester's stopped pcscd: ``TimeoutError: vpcd on port N did not accept the virtual card``
    (English, no gate, no log). A real pcscd and vpcd card, the daemon stopped before a tap."""
    use_lang("en")
    gate, tap = _pcsc_gate(tmp_path)
    try:
        gate._reader_config()
        assert gate.kind == "pcsc", "no vpcd driver: scripts/setup.sh installs vsmartcard-vpcd (as root)"
        gate.pcscd.stop()
        with pytest.raises(DemoFailed) as failed:
            gate.present(tap)
    finally:
        gate.stop()
        use_lang(None)
    assert str(failed.value) == (f"gate {gate.gate_id}: its PC/SC reader did not take the card (its pcscd "
                                 f"stopped?); see {gate.dir}/pcscd/pcscd.log")


def test_a_pcscd_that_does_not_start_is_named_with_its_gate_and_log(tmp_path, monkeypatch):
    """A ``pcscd`` on the PATH that exits at once (the tester's fake one): a traceback of
    ``RuntimeError: pcscd did not start`` before; now the gate and the daemon's log, one line."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "pcscd").write_text("#!/bin/sh\necho 'pcscd: cannot start' >&2\nexit 1\n")
    (fake / "pcscd").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}:{__import__('os').environ['PATH']}")
    use_lang("en")
    gate, _tap = _pcsc_gate(tmp_path / "run")
    gate.kind = "pcsc"  # as on a machine with the vpcd driver
    try:
        with pytest.raises(DemoFailed) as failed:
            gate._reader_config()
    finally:
        gate.stop()
        use_lang(None)
    assert str(failed.value) == (f"gate {gate.gate_id}: its PC/SC daemon (pcscd) did not start; "
                                 f"see {gate.dir}/pcscd/pcscd.log")

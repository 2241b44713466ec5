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

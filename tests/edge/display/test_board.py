"""The screen's pure parts: what to do per decision, the reason text, the inspector countdown,
the clock flag, the loopback-only setting."""

from __future__ import annotations

import dataclasses
import typing
import datetime as dt
from zoneinfo import ZoneInfo

import msgspec
import pytest

from edge.config import DisplayConfig
from edge.display.board import Board, Person, action_key, age_text, is_mismatch, reason_text, shown
from edge.display.texts import word
from wire.events import ConfiscationPayload, Dispatch, Event, TapPayload

AT = dt.datetime(2026, 3, 15, 4, 20, tzinfo=dt.UTC)


def _event(payload, seq=1, trusted=True) -> Event:
    return Event(event_id=f"e{seq}", port="santos", gate_id="g1", boot_id="b", seq=seq, occurred_at=AT,
                 clock_trusted=trusted, mono_ns=1, payload=payload)


def _tap(decision="deny", **kw) -> TapPayload:
    return TapPayload(uid="0A04A10001", reader_id="r", reader_kind="control", decision=decision, **kw)


@pytest.mark.parametrize(("payload", "key"), [
    (_tap("admit"), "pass"), (_tap("exit"), "leave"),
    (_tap("exit", flags=["BORROWED_CARD"], rules_failed=["G4"], badge_registration="V002"), "call_inspector"),
    (_tap("inspector"), "inspector"),
    (_tap(flags=["RETAIN_CARD"], rules_failed=["G2"]), "retain"),
    (_tap(flags=["BORROWED_CARD"], rules_failed=["G4"], badge_registration="V002"), "call_inspector"),
    # G6 with ROTATION_JUMP, G5: the inspector is called, the card is not kept (only G2 keeps it)
    (_tap(flags=["NOT_DISPATCHED", "ROTATION_JUMP"], rules_failed=["G6"]), "call_inspector"),
    (_tap(flags=["DOUBLE_ASSIGNMENT"], rules_failed=["G5"]), "call_inspector"),
    (_tap(flags=["CONFISCATE", "BORROWED_CARD"], rules_failed=["G10"]), "confiscated"),
    (_tap(rules_failed=["INTERNAL"]), "supervisor"),
    (_tap(rules_failed=["G4"]), "badge"),
    (_tap(rules_failed=["G3"]), "refuse"),
])
def test_what_to_do_follows_the_decision_flags_and_rules(payload, key) -> None:
    assert action_key(payload) == key


def test_the_reason_is_the_journaled_message_without_its_head() -> None:
    assert reason_text("NEGADO — cartão bloqueado (perdido). Retenha o cartão e chame o fiscal. [G2]") == \
        "cartão bloqueado (perdido). Retenha o cartão e chame o fiscal. [G2]"
    assert reason_text("texto sem cabeça") == "texto sem cabeça"


def test_a_shown_read_carries_duty_rules_and_local_time() -> None:
    d = Dispatch(date=dt.date(2026, 3, 15), period="01-07", ship="9300001", berth="berthed", voyage="long_haul",
                 post="portalo", function="vigia")
    s = shown(_event(_tap("admit", registration="V001", dispatch=d, message="LIBERADO — navio X.")),
              person=Person("V001", "Ana Lima", "vigia"), badge=None, ship_name="MSC Aurora",
              tz=ZoneInfo("America/Sao_Paulo"))
    assert (s.colour, s.at_local, s.ship_name, s.post, s.period, s.function) == \
        ("green", "01:20:00", "MSC Aurora", "portalo", "01-07", "vigia")
    assert s.words("pt") == "ENTRADA LIBERADA" and s.words("en") == "ADMITTED"
    # the duty line names the post and the function as the decision's sentence does (it showed "portalo")
    assert (s.named("pt", "post"), s.named("en", "post")) == ("portaló", "gangway")
    assert (s.named("pt", "function"), s.named("en", "function")) == ("vigia", "watchman")
    assert dataclasses.replace(s, post="convés-x").named("pt", "post") == "convés-x"  # a code not named: as it is
    assert not s.mismatch
    with pytest.raises(TypeError):
        shown(_event(ConfiscationPayload(uid="x", registration=None, inspector_uid="i", inspector_registration=None,
                                         reason_flag="F", article="a")),
              person=Person(None), badge=None, ship_name=None, tz=ZoneInfo("UTC"))


def test_mismatch_needs_two_different_registrations() -> None:
    assert is_mismatch(_tap(registration="V001", badge_registration="V002"))
    assert not is_mismatch(_tap(registration="V001", badge_registration="V001"))
    assert not is_mismatch(_tap(registration="V001"))


def test_inspector_countdown_runs_on_the_screen_clock_and_a_confiscation_ends_it() -> None:
    b = Board()
    b.note_event(_event(_tap("inspector")), 60, mono_s=100.0, lag_s=5.0)
    assert b.inspector_left_s(100.0) == 55
    assert b.inspector_left_s(154.5) == 1
    assert b.inspector_left_s(155.0) is None  # over
    b.note_event(_event(_tap("inspector"), seq=2), 60, mono_s=200.0)
    b.note_event(_event(ConfiscationPayload(uid="x", registration=None, inspector_uid="i",
                                            inspector_registration=None, reason_flag="F", article="a"), seq=3),
                 60, mono_s=201.0)
    assert b.inspector_left_s(201.0) is None


def test_the_clock_flag_is_the_last_event_s_and_history_keeps_ten() -> None:
    b = Board()
    b.note_event(_event(_tap(), trusted=False), 60, mono_s=0)
    assert b.last_clock_trusted is False
    for i in range(15):
        b.add(shown(_event(_tap(), seq=i + 1), person=Person("V001", photo=f"{i:064x}"), badge=None,
                    ship_name=None, tz=ZoneInfo("UTC")))
    assert [r.seq for r in b.reads] == list(range(6, 16))
    assert b.photos() == {f"{i:064x}" for i in range(5, 15)}  # only the photos on the screen


def test_age_text() -> None:
    assert [age_text(None), age_text(42), age_text(7 * 60 + 3), age_text(3 * 3600 + 5 * 60)] == \
        ["—", "42 s", "7 min", "3 h 05"]


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_the_screen_binds_loopback_only(host) -> None:
    with pytest.raises(msgspec.ValidationError, match="loopback"):
        msgspec.convert({"host": host}, DisplayConfig)
    assert msgspec.convert({"host": "::1"}, DisplayConfig).host == "::1"


def test_a_non_loopback_host_in_gate_toml_is_one_line_and_exit_2(tmp_path) -> None:
    import subprocess
    import sys

    from testkit.gate_process import write_gate_config

    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text() + '\n[display]\nhost = "0.0.0.0"\n')
    r = subprocess.run([sys.executable, "-m", "app.cli", "edge", "display", "--config", str(cfg)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and "loopback" in r.stderr and "display" in r.stderr


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path) -> None:
    import socket
    import subprocess
    import sys

    from testkit.gate_process import write_gate_config

    cfg = write_gate_config(tmp_path)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen(1)
        port = busy.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "app.cli", "edge", "display", "--config", str(cfg),
                            "--port", str(port)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert len(r.stderr.strip().splitlines()) == 1 and f"127.0.0.1:{port}" in r.stderr


def _shown(payload, seq=1) -> object:
    return shown(_event(payload, seq), person=Person("V001"), badge=None, ship_name=None,
                 tz=ZoneInfo("America/Sao_Paulo"))


def test_the_main_area_shows_a_read_for_idle_after_s_then_is_idle() -> None:
    board = Board()
    assert board.main(0.0, 5.0) is None  # nothing read yet: idle
    board.add(_shown(_tap("admit")), at_mono=100.0)
    assert board.main(104.9, 5.0).seq == 1
    assert board.main(105.0, 5.0) is None
    assert board.current.seq == 1 and len(board.reads) == 1  # still in the history
    board.add(_shown(_tap("admit"), seq=2), at_mono=None, held=False)  # shown again at start-up
    assert board.main(0.0, 5.0) is None


def test_a_read_that_asks_the_watchman_to_act_stays_until_acknowledged_or_the_next_read() -> None:
    board = Board()
    board.add(_shown(_tap(flags=["BORROWED_CARD"], rules_failed=["G4"], badge_registration="V002")), at_mono=100.0)
    assert board.current.needs_ack
    assert board.main(10_000.0, 5.0).seq == 1  # long after idle_after_s
    assert not board.acknowledge(2)  # not the read held
    assert board.acknowledge(1) and board.main(10_000.0, 5.0) is None
    assert not board.acknowledge(1)  # once
    board.add(_shown(_tap(rules_failed=["INTERNAL"]), seq=2), at_mono=200.0)  # call the supervisor: held
    board.add(_shown(_tap("admit"), seq=3), at_mono=201.0)  # the next read takes its place
    assert board.main(201.5, 5.0).seq == 3 and board.main(206.0, 5.0) is None
    board.add(_shown(_tap(rules_failed=["G3"]), seq=4), at_mono=300.0)  # a plain refusal: not held
    assert not board.current.needs_ack and board.main(305.0, 5.0) is None


def test_the_inspectors_read_stays_while_the_inspector_mode_lasts() -> None:
    board = Board()
    ev = _event(_tap("inspector"), seq=1)
    board.note_event(ev, 60, mono_s=100.0)
    board.add(_shown(_tap("inspector")), at_mono=100.0)
    assert board.main(150.0, 5.0).seq == 1
    assert board.main(161.0, 5.0) is None


def test_idle_after_s_and_outbox_warn_after_s_are_checked() -> None:
    assert DisplayConfig().idle_after_s == 5.0 and DisplayConfig().outbox_warn_after_s == 60.0
    with pytest.raises(ValueError, match="idle_after_s"):
        DisplayConfig(idle_after_s=0)
    with pytest.raises(ValueError, match="outbox_warn_after_s"):
        DisplayConfig(outbox_warn_after_s=0.5)


def test_the_no_network_strip_shows_only_when_the_link_is_down_or_the_oldest_unsent_is_old() -> None:
    from edge.display.board import Status
    from edge.reader_health import ReaderView

    def status(broker, oldest, running=True):
        return Status(broker, 3, oldest, False, False, True, gate_running=running, outbox_warn_after_s=60,
                      readers=(ReaderView("r1", "control", "fault", 1.0), ReaderView("r2", "badge", "ok")))

    assert status("offline", 1.0).offline_strip
    assert not status("online", 59.0).offline_strip and status("online", 61.0).offline_strip
    assert not status("standalone", 9999.0).offline_strip and not status("unknown", 9999.0).offline_strip
    assert [r.reader_id for r in status("online", None).reader_faults] == ["r1"]
    assert status("unknown", None, running=False).reader_faults == ()  # a stopped gate: nothing known


def test_a_rule_that_is_a_code_reads_in_words_on_the_main_area_and_in_the_history() -> None:
    """``ENROL`` (and ``INTERNAL``) read as English codes on the screen (issue 33): a gate rule keeps
    its id (a legal reference, RULES.md section G) beside its title, the others show their words."""
    s = shown(_event(_tap(rules_failed=["G1", "ENROL"], message="NEGADO — cartão em cadastro. [G1, ENROL]")),
              person=Person(None), badge=None, ship_name=None, tz=ZoneInfo("America/Sao_Paulo"))
    assert s.rule_words("pt") == [("G1", "G1: cartão desconhecido ou ilegível"), ("ENROL", "cartão em cadastro")]
    assert s.rule_words("pt", history=True) == [("G1", "G1"), ("ENROL", "cartão em cadastro")]
    assert s.rule_words("en", history=True) == [("G1", "G1"), ("ENROL", "card being enrolled")]
    internal = shown(_event(_tap(rules_failed=["INTERNAL"])), person=Person(None), badge=None, ship_name=None,
                     tz=ZoneInfo("America/Sao_Paulo"))
    assert internal.rule_words("pt", history=True) == [("INTERNAL", "falha do sistema")]


KINDS = typing.get_args(typing.get_type_hints(TapPayload)["decision"])


@pytest.mark.parametrize("kind", KINDS)
def test_every_decision_kind_has_its_words_and_the_gates_colour(kind) -> None:
    """Each decision a tap can journal has its head in pt-BR and English (not its code in capitals)
    and the colour the gate's indicator showed (``edge.indicator.COLOURS``), never the red fallback
    of an unknown one: a meal-worked ABOARD was a red "ABOARD" (the fresh tester's finding)."""
    from edge.indicator import COLOURS as GATE_COLOURS
    from edge.rules.model import Outcome

    assert {o.value for o in Outcome} == set(KINDS)
    s = shown(_event(_tap(kind, registration="V001", message="X — y.")), person=Person("V001"), badge=None,
              ship_name=None, tz=ZoneInfo("America/Sao_Paulo"))
    assert s.colour == GATE_COLOURS[Outcome(kind)]
    for lang in ("pt", "en"):
        assert word(lang, f"screen_head.{kind}") != f"screen_head.{kind}"  # in the catalogs, not the fallback
        assert s.words(lang) == word(lang, f"screen_head.{kind}")
        assert not s.action(lang).startswith("screen_action.")
    assert s.words("pt") != s.words("en")


def test_a_meal_worked_read_is_amber_already_aboard_in_both_languages_on_the_screen() -> None:
    """The gate's amber "JÁ A BORDO — intervalo de refeição trabalhado ..." (P6) on the screen's own
    templates: the main area and the last reads say JÁ A BORDO in amber with the gate's reason and
    what to do, in pt-BR and in English; no red, no "ABOARD" code."""
    from edge.display.pages import environment
    from edge.display.said import text
    from edge.display.texts import labels
    from edge.rules.messages import said

    d = Dispatch(date=dt.date(2026, 3, 15), period="01-07", ship="9300001", berth="berthed", voyage="long_haul",
                 post="portalo", function="vigia")
    message = text(said("aboard", [("G10.meal_worked", {"period": "01-07"})], [], []), "pt")
    assert message.startswith("JÁ A BORDO — intervalo de refeição trabalhado")
    s = shown(_event(_tap("aboard", registration="V001", dispatch=d, flags=["MEAL_WORKED"], message=message)),
              person=Person("V001", "Ana Lima", "vigia"), badge=None, ship_name="MSC Aurora",
              tz=ZoneInfo("America/Sao_Paulo"))
    assert (s.colour, s.action_key, s.needs_ack) == ("amber", "meal_worked", False)
    board = Board()
    board.add(s, at_mono=0.0, held=True)
    for lang, head, reason, todo in (
            ("pt", "JÁ A BORDO", "intervalo de refeição trabalhado registrado (período 01-07",
             "Intervalo de refeição trabalhado registrado"),
            ("en", "ALREADY ABOARD", "meal interval worked recorded (period 01-07", "Meal interval worked recorded")):
        html = environment().get_template("_now.html").render(
            board=board, main=s, status=None, t=labels(lang), lang=lang, gate_id="g1", gate_ship=None,
            age=age_text, local_hms=str)
        assert 'class="now amber' in html and '<span class="dot amber">' in html and "red" not in html
        assert html.count(head) == 2 and reason in html and todo in html and "ABOARD<" not in html.replace(
            "ALREADY ABOARD<", "")

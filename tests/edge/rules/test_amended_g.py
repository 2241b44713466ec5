"""RULES.md section G as amended (G2, G3, G4, G6, G9, G12) against the pure engine.

Each test is named after the rule it reads; each one fails on an engine that takes a blocked card as
its holder's exit, that records a late arrival as an exit, that lets a card left on the reader exit
its worker, or that knows no category, per-category exam or per-category badge.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from edge.rules.model import Flag, Outcome
from edge.rules.rulebook import (
    G3Settings, G4Settings, G9Settings, G12Settings, GateRulebook, load_gate_rulebook,
)
from portgate.records import CardStatus, WorkerStatus
from tests.edge.rules.conftest import local

ROOT = Path(__file__).resolve().parents[3]


# -- G2: a blocked card never opens or closes a shift ---------------------------------------------

@pytest.mark.parametrize("status", [CardStatus.LOST, CardStatus.REPLACED, CardStatus.CONFISCATED])
def test_g2_blocked_card_of_a_holder_aboard_is_deny_retain_and_his_shift_stays_open(port, status):
    uid = port.worker("1001")
    old = port.card("AA00FFD1", "1001", status=status)
    port.dispatch("1001", "07-13")
    assert port.read(uid, local(7)).outcome is Outcome.ADMIT
    d = port.read(old, local(9))
    assert d.outcome is Outcome.DENY
    assert d.rules_failed == ("G2",) and d.flags == (Flag.RETAIN_CARD,)
    assert d.message_pt.startswith("NEGADO — cartão bloqueado")
    assert "Retenha o cartão" in d.message_pt
    assert port.presence.open_shifts["1001"].admitted_at == local(7)  # not closed
    assert "1001" not in port.presence.last_end
    holder_exit = port.read(uid, local(13, 2))
    assert holder_exit.outcome is Outcome.EXIT and holder_exit.flags == ()


def test_g2_blocked_card_of_a_holder_not_aboard_opens_nothing_in_the_admit_window(port):
    port.worker("1001")
    old = port.card("AA00FFD1", "1001", status=CardStatus.LOST)
    port.dispatch("1001", "07-13")
    d = port.read(old, local(7))
    assert d.outcome is Outcome.DENY and "G2" in d.rules_failed and Flag.RETAIN_CARD in d.flags
    assert port.presence.open_shifts == {}


def test_g2_blocked_card_past_the_late_tolerance_is_deny_not_an_exit_with_no_entry(port):
    port.worker("1001")
    old = port.card("AA00FFD1", "1001", status=CardStatus.REPLACED)
    port.dispatch("1001", "07-13")
    d = port.read(old, local(12, 30))
    assert d.outcome is Outcome.DENY
    assert Flag.RETAIN_CARD in d.flags and Flag.NO_ENTRY not in d.flags
    assert port.presence.open_shifts == {} and port.presence.last_end == {}


def test_g2_blocked_card_at_an_exit_reader_records_no_exit(port):
    port.worker("1001")
    old = port.card("AA00FFD1", "1001", status=CardStatus.CONFISCATED)
    port.dispatch("1001", "07-13")
    d = port.read(old, local(12, 30), direction="out")
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G2",) and d.flags == (Flag.RETAIN_CARD,)
    assert port.presence.last_end == {}


# -- G6: a read with no open shift is an entry attempt --------------------------------------------

@pytest.mark.parametrize("direction", ["both", "in"])
def test_g6_entry_attempt_past_the_late_tolerance_is_deny_late_arrival(port, direction):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    d = port.read(uid, local(8, 30), direction=direction)
    assert d.outcome is Outcome.DENY
    assert d.rules_failed == ("G6",) and d.flags == (Flag.LATE_ARRIVAL,)
    assert d.message_pt == ("NEGADO — chegada após a tolerância de atraso (período 07-13, 1h30 após o "
                            "início, tolerância 60 min). [G6]")
    assert d.message_en.startswith("DENIED — arrival past the late tolerance (period 07-13")
    assert port.presence.open_shifts == {} and port.presence.last_end == {}


def test_g6_late_arrival_lists_the_other_failed_rules_too(port):
    uid = port.worker("1001", status=WorkerStatus.CANCELLED)
    port.dispatch("1001", "07-13")
    d = port.read(uid, local(9))
    assert d.rules_failed == ("G3", "G6") and Flag.LATE_ARRIVAL in d.flags


def test_g9_only_an_exit_reader_records_an_exit_with_no_entry(port):
    uid = port.worker("1001")
    entry = port.dispatch("1001", "07-13")
    d = port.read(uid, local(13, 1), direction="out")
    assert d.outcome is Outcome.EXIT and d.flags == (Flag.NO_ENTRY,) and d.rules_failed == ("G9",)
    assert d.dispatch == entry
    assert d.message_pt.startswith("SAÍDA — turno encerrado (07-13); saída sem entrada registrada")


def test_g9_an_exit_reader_closes_an_open_shift(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    port.read(uid, local(7))
    d = port.read(uid, local(13), direction="out")
    assert d.outcome is Outcome.EXIT and d.flags == ()
    assert port.presence.open_shifts == {}


def test_g9_an_entry_reader_never_closes_the_shift(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    port.read(uid, local(7), direction="in")
    d = port.read(uid, local(13), direction="in")
    assert d.outcome is Outcome.ABOARD and d.rules_failed == ()
    assert d.message_pt == "JÁ A BORDO — entrada registrada às 07:00; a saída é pelo leitor de saída."
    assert "1001" in port.presence.open_shifts


def test_g9_an_unknown_direction_text_is_read_as_both(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    assert port.read(uid, local(7), direction="sideways").outcome is Outcome.ADMIT
    assert port.read(uid, local(13), direction="sideways").outcome is Outcome.EXIT


# -- G9: min_stay_minutes, EARLY_EXIT ---------------------------------------------------------------

def test_g9_a_read_within_min_stay_is_already_aboard_and_changes_nothing(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    assert port.read(uid, local(6, 50)).outcome is Outcome.ADMIT
    for at in (local(6, 50, 4), local(6, 52), local(6, 54, 59)):  # after the 3 s debounce
        d = port.read(uid, at)
        assert d.outcome is Outcome.ABOARD and d.rules_failed == () and d.flags == ()
        assert d.message_pt == ("JÁ A BORDO — entrada registrada às 06:50; nada foi alterado "
                                "(permanência mínima 5 min).")
        assert d.message_en.startswith("ALREADY ABOARD — entry recorded at 06:50")
    assert port.presence.open_shifts["1001"].admitted_at == local(6, 50)
    assert port.presence.last_end == {}


def test_g9_a_clock_now_before_the_admit_does_not_hold_the_worker_aboard(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    assert port.read(uid, local(7, 2)).outcome is Outcome.ADMIT
    d = port.read(uid, local(7, 0))  # the wall clock stepped back: never refuse an exit (G13)
    assert d.outcome is Outcome.EXIT


def test_g9_min_stay_is_a_rulebook_setting(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    rb = GateRulebook(g9=G9Settings(min_stay_minutes=0, early_exit_tolerance_min=600))
    port.read(uid, local(7), rulebook=rb)
    assert port.read(uid, local(7, 0, 10), rulebook=rb).outcome is Outcome.EXIT


@pytest.mark.parametrize("at,early", [((12, 49), True), ((12, 50), False), ((13, 0), False)])
def test_g9_an_exit_more_than_the_tolerance_before_the_period_end_is_early_exit(port, at, early):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    port.read(uid, local(7))
    d = port.read(uid, local(*at))
    assert d.outcome is Outcome.EXIT
    if early:
        assert d.flags == (Flag.EARLY_EXIT,) and d.rules_failed == ("G9",)
        assert "saída antecipada: 0h11 antes do fim do período 07-13" in d.message_pt
    else:
        assert d.flags == () and d.rules_failed == ()
    assert port.presence.open_shifts == {}


# -- G12: category vs function ------------------------------------------------------------------------

def test_g12_a_stevedore_on_a_watch_post_is_deny_wrong_category(port):
    uid = port.worker("1004", category="estivador", booklet_revalidated_year=2026)
    port.dispatch("1004", "07-13", function="vigia")
    d = port.read(uid, local(7), badge="BB001004")
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G12",)
    assert d.flags == (Flag.WRONG_CATEGORY,)
    assert d.message_pt == "NEGADO — categoria estivador não pode exercer a função vigia. [G12]"
    assert port.presence.open_shifts == {}


@pytest.mark.parametrize("category,function,ok", [
    ("vigia", "vigia", True), ("vigia", "vigia_chefe", True), ("vigia", "estivador", False),
    ("estivador", "contramestre", True), ("estivador", "contramestre_geral", True),
    ("capatazia", "conferente", True), ("capatazia", "vigia", False), ("vigia", "soldador", False),
])
def test_g12_category_table_of_the_rulebook(port, category, function, ok):
    uid = port.worker("1001", category=category, booklet_revalidated_year=2026)
    port.dispatch("1001", "07-13", function=function)
    d = port.read(uid, local(7), badge="BB001001")
    assert (d.outcome is Outcome.ADMIT) is ok
    assert ("G12" in d.rules_failed) is (not ok)


def test_g12_table_and_switch_are_settings(port):
    uid = port.worker("1001", category="vigia")
    port.dispatch("1001", "07-13", function="soldador")
    # a table without "estivador" lists no badge category either (g4 names g12's categories)
    own = GateRulebook(g4=G4Settings(card_and_badge_categories=()),
                       g12=G12Settings(categories={"vigia": ("soldador",)}))
    assert port.read(uid, local(7), rulebook=own, apply=False).outcome is Outcome.ADMIT
    off = GateRulebook(g12=G12Settings(enabled=False))
    assert port.read(uid, local(7), rulebook=off, apply=False).outcome is Outcome.ADMIT


# -- G3: health exam validity per category ----------------------------------------------------------

@pytest.mark.parametrize("category,function,exam,ok", [
    ("estivador", "estivador", dt.date(2025, 4, 10), True),   # 12 months to the day
    ("estivador", "estivador", dt.date(2025, 4, 9), False),   # 12 months + 1 day
    ("vigia", "vigia", dt.date(2025, 3, 1), True),             # 13 months: a watchman has 24
    ("vigia", "vigia", dt.date(2024, 4, 9), False),
])
def test_g3_health_exam_validity_is_per_category(port, category, function, exam, ok):
    uid = port.worker("1001", category=category, health_exam_date=exam, booklet_revalidated_year=2026)
    port.dispatch("1001", "07-13", function=function)
    d = port.read(uid, local(7), badge="BB001001")
    assert (d.outcome is Outcome.ADMIT) is ok
    if not ok:
        months = 12 if category == "estivador" else 24
        assert d.rules_failed == ("G3",) and f"limite {months} meses" in d.message_pt


def test_g3_health_exam_months_per_category_is_a_setting(port):
    uid = port.worker("1001", category="vigia", health_exam_date=dt.date(2025, 3, 1))
    port.dispatch("1001", "07-13")
    rb = GateRulebook(g3=G3Settings(health_exam_months_by_category={"vigia": 12}))
    assert port.read(uid, local(7), rulebook=rb).rules_failed == ("G3",)


# -- G4: card + badge per category ---------------------------------------------------------------------

def test_g4_a_stevedore_needs_card_and_badge_at_every_gate(port):
    uid = port.worker("1004", category="estivador", booklet_revalidated_year=2026)
    port.dispatch("1004", "07-13", function="estivador")
    d = port.read(uid, local(7), apply=False)
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G4",) and "Apresente a chapa." in d.message_pt
    assert port.read(uid, local(7), badge="BB001004").outcome is Outcome.ADMIT


def test_g4_a_watchman_needs_no_badge_unless_the_gate_asks(port):
    uid = port.worker("1001", category="vigia")
    port.dispatch("1001", "07-13")
    assert port.read(uid, local(7), apply=False).outcome is Outcome.ADMIT
    gate = GateRulebook(g4=G4Settings(card_and_badge_required=True))
    assert port.read(uid, local(7), rulebook=gate, apply=False).rules_failed == ("G4",)


def test_g4_categories_are_a_setting(port):
    uid = port.worker("1004", category="estivador", booklet_revalidated_year=2026)
    port.dispatch("1004", "07-13", function="estivador")
    rb = GateRulebook(g4=G4Settings(card_and_badge_categories=()))
    assert port.read(uid, local(7), rulebook=rb).outcome is Outcome.ADMIT


# -- the seed rulebook file ------------------------------------------------------------------------------

def test_gate_default_rulebook_file_holds_the_amended_settings():
    rb = load_gate_rulebook(ROOT / "config" / "rulebooks" / "gate-default.toml").version[0]
    assert rb.g3.health_exam_months_by_category == {"estivador": 12}
    assert rb.g4.card_and_badge_categories == ("estivador",)
    assert (rb.g9.min_stay_minutes, rb.g9.early_exit_tolerance_min) == (5, 10)
    assert rb.g12.may_fill("vigia", "vigia_chefe") and not rb.g12.may_fill("estivador", "vigia")
    assert rb.g12 == GateRulebook().g12

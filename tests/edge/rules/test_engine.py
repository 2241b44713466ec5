"""Rules G1-G10 of RULES.md section G, one behaviour per test, on the real engine."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from edge.rules.model import Flag, OpenShift, Outcome
from edge.rules.rulebook import G4Settings, G7Settings, G8Settings, G10Settings, GateRulebook
from portgate.records import CardKind, CardStatus, WorkerStatus
from tests.edge.rules.conftest import DAY, local

CARD_AND_BADGE = GateRulebook(g4=G4Settings(card_and_badge_required=True))


# --- G1 -------------------------------------------------------------------------------------
def test_g1_unknown_card_is_denied(port):
    d = port.read("DEADBEEF", local(7))
    assert (d.outcome, d.rules_failed) == (Outcome.DENY, ("G1",))
    assert d.message_pt == "NEGADO — cartão desconhecido (DEADBEEF). [G1]"
    assert d.message_en == "DENIED — unknown card (DEADBEEF). [G1]"


@pytest.mark.parametrize("raw", ["", "xyz", "ABC", "0" * 40, "\x00\x01"])
def test_g1_malformed_uid_text_is_denied_not_raised(port, raw):
    d = port.read(raw, local(7))
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G1",)
    assert d.reasons == ("G1.malformed",)


def test_g1_uid_is_canonicalised_before_lookup(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    assert port.read(uid.lower(), local(7)).outcome is Outcome.ADMIT


def test_g1_cannot_be_switched_off():
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({"g1": {"enabled": False}}, GateRulebook)


# --- G2 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("status,word", [("lost", "perdido"), ("replaced", "substituído"),
                                         ("confiscated", "confiscado")])
def test_g2_inactive_card_is_denied_and_retained(port, status, word):
    port.worker("1001")
    port.dispatch("1001")
    uid = port.card("AB000001", "1001", status=CardStatus(status))
    d = port.read(uid, local(7))
    assert d.outcome is Outcome.DENY
    assert d.rules_failed == ("G2",) and d.flags == (Flag.RETAIN_CARD,)
    assert d.message_pt == f"NEGADO — cartão bloqueado ({word}). Retenha o cartão e chame o fiscal. [G2]"


def test_g2_inactive_inspector_card_does_not_open_inspector_mode(port):
    port.card("CC000001", "9001", kind=CardKind.INSPECTOR, status=CardStatus.LOST)
    d = port.read("CC000001", local(7))
    assert d.outcome is Outcome.DENY and not d.opens_inspector_session and d.flags == (Flag.RETAIN_CARD,)


# --- G3 -------------------------------------------------------------------------------------
def test_g3_cancelled_registration_is_denied(port):
    uid = port.worker("1001", status=WorkerStatus.CANCELLED)
    port.dispatch("1001")
    d = port.read(uid, local(7))
    assert d.rules_failed == ("G3",) and d.reasons == ("G3.cancelled",)


@pytest.mark.parametrize("start,end,denied", [
    (dt.date(2026, 4, 1), dt.date(2026, 4, 10), True),   # last day of the suspension
    (dt.date(2026, 4, 10), None, True),                  # open-ended from today
    (dt.date(2026, 3, 1), dt.date(2026, 4, 9), False),   # ended yesterday
    (dt.date(2026, 4, 11), dt.date(2026, 4, 30), False), # starts tomorrow
])
def test_g3_suspension_dates_count_on_the_local_date(port, start, end, denied):
    uid = port.worker("1001", status=WorkerStatus.SUSPENDED, suspended_from=start, suspended_until=end)
    port.dispatch("1001")
    d = port.read(uid, local(7))
    assert (d.outcome is Outcome.DENY) is denied
    assert ("G3.suspended" in d.reasons) is denied


def test_g3_suspended_status_without_dates_is_open_ended(port):
    uid = port.worker("1001", status=WorkerStatus.SUSPENDED)
    port.dispatch("1001")
    assert port.read(uid, local(7)).reasons == ("G3.suspended",)


def test_g3_local_date_not_utc_date_decides_the_suspension(port):
    # 22:00 local on the 9th is already the 10th in UTC; the suspension starts on the 10th.
    uid = port.worker("1001", suspended_from=dt.date(2026, 4, 10))
    port.dispatch("1001", period="19-01", day=dt.date(2026, 4, 9))
    d = port.read(uid, local(19, day=dt.date(2026, 4, 9)))
    assert d.outcome is Outcome.ADMIT


@pytest.mark.parametrize("exam,denied", [(dt.date(2024, 4, 10), False), (dt.date(2024, 4, 9), True)])
def test_g3_health_exam_at_most_24_months_old(port, exam, denied):
    uid = port.worker("1001", health_exam_date=exam)
    port.dispatch("1001")
    d = port.read(uid, local(7))
    assert ("G3.health_expired" in d.reasons) is denied
    if denied:
        assert "exame de saúde vencido (de 2024-04-09, limite 24 meses)" in d.message_pt


def test_g3_missing_health_exam_is_denied(port):
    uid = port.worker("1001", health_exam_date=None)
    port.dispatch("1001")
    assert port.read(uid, local(7)).reasons == ("G3.health_missing",)


@pytest.mark.parametrize("day,year,denied", [
    (dt.date(2026, 3, 31), 2025, False),  # still in the first quarter: last year's will do
    (dt.date(2026, 4, 1), 2025, True),    # first quarter over: 2026 required
    (dt.date(2026, 4, 1), 2026, False),
    (dt.date(2026, 2, 1), 2024, True),
])
def test_g3_booklet_revalidated_after_the_first_quarter(port, day, year, denied):
    uid = port.worker("1004", category="estivador", booklet_revalidated_year=year)
    port.dispatch("1004", day=day)
    d = port.read(uid, local(7, day=day))
    assert ("G3.booklet" in d.reasons) is denied


def test_g3_booklet_not_required_for_watchmen(port):
    uid = port.worker("1001", category="vigia", booklet_revalidated_year=None)
    port.dispatch("1001")
    assert port.read(uid, local(7)).outcome is Outcome.ADMIT


def test_g3_card_of_a_registration_missing_from_the_roster(port):
    uid = port.card("AB0000FF", "7777")
    d = port.read(uid, local(7))
    assert "G3.no_registration" in d.reasons and d.outcome is Outcome.DENY


def test_g3_lists_every_registration_reason(port):
    uid = port.worker("1004", category="estivador", status=WorkerStatus.CANCELLED, health_exam_date=None)
    port.dispatch("1004", function="estivador")
    d = port.read(uid, local(7), badge="BB001004")
    assert d.reasons == ("G3.cancelled", "G3.health_missing", "G3.booklet")
    assert d.rules_failed == ("G3",)


# --- G4 -------------------------------------------------------------------------------------
def test_g4_required_badge_missing_says_present_the_badge(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), rulebook=CARD_AND_BADGE)
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G4",)
    assert d.flags == (Flag.BADGE_MISSING,)  # RULES G4: "DENY, BADGE_MISSING"
    assert d.message_pt == "NEGADO — falta a chapa. Apresente a chapa. [G4]"


def test_g4_matching_badge_is_admitted(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001001", rulebook=CARD_AND_BADGE)
    assert d.outcome is Outcome.ADMIT and d.badge_registration == "1001"


def test_g4_badge_of_another_registration_is_a_borrowed_card(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001002", rulebook=CARD_AND_BADGE)
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G4",)
    assert d.flags == (Flag.BORROWED_CARD,) and d.badge_registration == "1002"
    assert d.message_pt == ("NEGADO — cartão da matrícula 1001 com chapa da matrícula 1002. "
                            "Chame o fiscal. [G4]")


def test_g4_badge_read_outside_the_pairing_window_counts_as_missing(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001001", badge_at=local(7) - dt.timedelta(seconds=16),
                  rulebook=CARD_AND_BADGE)
    assert d.reasons == ("G4.badge_missing",)


def test_g4_mismatch_is_flagged_even_where_badges_are_optional(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001002")
    assert Flag.BORROWED_CARD in d.flags


def test_g4_unknown_badge_is_denied(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="EE000001", rulebook=CARD_AND_BADGE)
    assert d.reasons == ("G4.badge_unknown",) and d.outcome is Outcome.DENY


def test_g4_badge_alone_is_denied_asking_for_the_control_card(port):
    port.worker("1001")
    port.dispatch("1001")
    d = port.read("BB001001", local(7), reader="badge")
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G4",)
    assert d.card_kind == "badge" and d.registration == "1001"
    assert "Apresente o cartão de controle." in d.message_pt


# --- G5 -------------------------------------------------------------------------------------
def test_g5_open_shift_on_another_ship_is_a_double_assignment(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13", gate="GA")
    port.dispatch("1001", "13-19", gate="GB")
    assert port.read(uid, local(7), gate="GA").outcome is Outcome.ADMIT
    d = port.read(uid, local(12, 40), gate="GB")
    assert d.outcome is Outcome.DENY and d.rules_failed == ("G5",)
    assert d.flags == (Flag.DOUBLE_ASSIGNMENT,)
    assert d.message_pt == "NEGADO — já está em turno no navio 9074729 (portaló GA). [G5]"


def test_g5_dispatched_to_another_ship_in_an_overlapping_period(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13", gate="GA")
    port.dispatch("1001", "07-13", gate="GB")
    d = port.read(uid, local(7), gate="GA")
    assert d.rules_failed == ("G5",) and d.reasons == ("G5.dispatched",)


def test_g5_back_to_back_periods_do_not_overlap(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13", gate="GA")
    port.dispatch("1001", "13-19", gate="GB")
    assert port.read(uid, local(7), gate="GA").outcome is Outcome.ADMIT


def test_g4_and_g5_are_both_listed_for_a_borrowed_card_on_a_second_ship(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1001", "07-13", gate="GA")
    port.dispatch("1001", "13-19", gate="GB")
    port.read(uid, local(7), gate="GA")
    d = port.read(uid, local(13), gate="GB", badge="BB001002")
    assert d.rules_failed == ("G4", "G5")
    assert d.flags == (Flag.BORROWED_CARD, Flag.DOUBLE_ASSIGNMENT)
    assert "[G4, G5]" in d.message_pt


# --- G6 -------------------------------------------------------------------------------------
def test_g6_not_dispatched_is_denied(port):
    uid = port.worker("1001")
    d = port.read(uid, local(7))
    assert d.rules_failed == ("G6",) and d.flags == (Flag.NOT_DISPATCHED,)
    assert d.message_pt == "NEGADO — não escalado para este navio neste horário. [G6]"


def test_g6_post_dispatched_to_someone_else_is_a_rotation_jump(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1002", "07-13")
    d = port.read(uid, local(8))
    assert d.flags == (Flag.NOT_DISPATCHED, Flag.ROTATION_JUMP)
    assert "o posto portaló (07-13) está escalado para a matrícula 1002" in d.message_pt
    assert "Chame o fiscal." in d.message_pt


def test_g6_dispatch_at_another_gate_does_not_admit_here(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13", gate="GB")
    assert port.read(uid, local(7), gate="GA").rules_failed == ("G6",)


@pytest.mark.parametrize("minutes_early,outcome", [(30, Outcome.ADMIT), (31, Outcome.DENY)])
def test_g6_early_arrival_tolerance(port, minutes_early, outcome):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    d = port.read(uid, local(7) - dt.timedelta(minutes=minutes_early))
    assert d.outcome is outcome


@pytest.mark.parametrize("minutes_late,outcome", [(60, Outcome.ADMIT), (61, Outcome.DENY)])
def test_g6_late_arrival_tolerance(port, minutes_late, outcome):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    d = port.read(uid, local(7) + dt.timedelta(minutes=minutes_late))
    assert d.outcome is outcome
    if outcome is Outcome.DENY:  # G6: an entry attempt past the tolerance -> LATE_ARRIVAL
        assert d.flags == (Flag.LATE_ARRIVAL,) and d.rules_failed == ("G6",)


def test_g6_admit_carries_the_matched_escala_entry(port):
    uid = port.worker("1001")
    entry = port.dispatch("1001", "19-01")
    d = port.read(uid, local(18, 45))
    assert d.outcome is Outcome.ADMIT and d.dispatch == entry
    assert d.message_pt == "LIBERADO — navio MSC ALFA (9074729), posto portaló, período 19-01."


def test_g6_nearest_period_wins_between_back_to_back_dispatches(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    second = port.dispatch("1001", "13-19")
    d = port.read(uid, local(12, 50), rulebook=GateRulebook(g7=G7Settings(enabled=False)))
    assert d.dispatch == second


# --- G7 -------------------------------------------------------------------------------------
@pytest.mark.parametrize("last_end,outcome", [((20, 0), Outcome.ADMIT), ((20, 1), Outcome.DENY)])
def test_g7_eleven_hours_of_rest(port, last_end, outcome):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    port.presence.last_end["1001"] = local(*last_end, day=DAY - dt.timedelta(days=1))
    d = port.read(uid, local(7))
    assert d.outcome is outcome
    if outcome is Outcome.DENY:
        assert d.rules_failed == ("G7",)
        assert d.message_pt == "NEGADO — descanso de 10h59 desde o último turno (mínimo 11 h). [G7]"


def test_g7_warn_mode_admits_with_rest_short(port):
    uid = port.worker("1001")
    port.dispatch("1001", "07-13")
    port.presence.last_end["1001"] = local(1, 0)
    d = port.read(uid, local(7), rulebook=GateRulebook(g7=G7Settings(mode="warn")))
    assert d.outcome is Outcome.ADMIT and d.flags == (Flag.REST_SHORT,) and d.rules_failed == ("G7",)


# --- G8 -------------------------------------------------------------------------------------
def test_g8_stale_data_admits_flagged_by_default(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), updated_at=local(7) - dt.timedelta(hours=24, minutes=1))
    assert d.outcome is Outcome.ADMIT and d.flags == (Flag.STALE_DATA,) and d.rules_failed == ("G8",)


def test_g8_data_exactly_at_max_age_is_fresh(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), updated_at=local(7) - dt.timedelta(hours=24))
    assert d.flags == ()


def test_g8_deny_mode_and_untrusted_clock(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), trusted=False, updated_at=None,
                  rulebook=GateRulebook(g8=G8Settings(stale_mode="deny")))
    assert d.outcome is Outcome.DENY
    assert d.flags == (Flag.STALE_DATA, Flag.CLOCK_UNTRUSTED)


def test_g8_never_blocks_an_exit(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    port.read(uid, local(7))
    d = port.read(uid, local(13), trusted=False, rulebook=GateRulebook(g8=G8Settings(stale_mode="deny")))
    assert d.outcome is Outcome.EXIT and Flag.CLOCK_UNTRUSTED in d.flags


def test_g8_an_unknown_card_on_a_stale_or_empty_copy_is_flagged_stale(port):
    """A copy that does not know the card may be out of date or empty (a quarantined store): the
    G1 denial says so, for the watchman and for the office (docs/gate.md)."""
    d = port.read("DEADBEEF", local(7), updated_at=None)
    assert (d.outcome, d.rules_failed, d.flags) == (Outcome.DENY, ("G1", "G8"), (Flag.STALE_DATA,))
    assert d.message_pt == "NEGADO — cartão desconhecido (DEADBEEF); dados locais desatualizados. [G1, G8]"
    d = port.read("DEADBEEF", local(7), trusted=False,
                  updated_at=local(7) - dt.timedelta(hours=30))
    assert d.rules_failed == ("G1", "G8") and d.flags == (Flag.STALE_DATA, Flag.CLOCK_UNTRUSTED)


def test_g8_an_unknown_card_on_a_fresh_copy_is_g1_alone(port):
    d = port.read("DEADBEEF", local(7), updated_at=local(7) - dt.timedelta(hours=1))
    assert (d.rules_failed, d.flags) == (("G1",), ())


# --- G9 -------------------------------------------------------------------------------------
def test_g9_read_with_open_shift_here_is_an_exit_and_closes_it(port):
    uid = port.worker("1001")
    entry = port.dispatch("1001")
    port.read(uid, local(7))
    d = port.read(uid, local(13, 10))
    assert d.outcome is Outcome.EXIT and d.dispatch == entry
    assert d.message_pt == "SAÍDA — turno encerrado (07-13)."
    assert port.presence.open_shifts == {} and port.presence.last_end["1001"] == local(13, 10)


def test_g9_exit_is_not_blocked_by_a_registration_problem(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    port.read(uid, local(7))
    port.workers[0] = port.workers[0].__class__(**{**_fields(port.workers[0]), "status": WorkerStatus.CANCELLED})
    assert port.read(uid, local(13)).outcome is Outcome.EXIT


def test_g9_exit_without_entry_is_recorded_with_no_entry_at_an_exit_reader(port):
    uid = port.worker("1001")
    entry = port.dispatch("1001")
    d = port.read(uid, local(13, 5), direction="out")
    assert d.outcome is Outcome.EXIT and d.flags == (Flag.NO_ENTRY,) and d.dispatch == entry


def test_g9_after_the_exit_grace_is_not_dispatched(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    assert port.read(uid, local(15, 1)).rules_failed == ("G6",)


def test_g9_open_shift_from_relayed_presence_at_this_gate_exits(port):
    uid = port.worker("1001")
    port.presence.open_shifts["1001"] = OpenShift("1001", "GA", "9074729", local(1))
    assert port.read(uid, local(9)).outcome is Outcome.EXIT


# --- G10 ------------------------------------------------------------------------------------
def _inspector(port):
    return port.card("CC000001", "9001", kind=CardKind.INSPECTOR)


def test_g10_inspector_card_opens_inspector_mode(port):
    d = port.read(_inspector(port), local(9))
    assert d.outcome is Outcome.INSPECTOR and d.opens_inspector_session
    assert d.message_pt == "MODO FISCAL — apresente o cartão a apreender."
    assert port.views["GA"].session.until_mono_ns == (int(local(9).timestamp()) + 60) * 10**9


@pytest.mark.parametrize("pending,reason,article", [
    (["ROTATION_JUMP"], "ROTATION_JUMP", "83.611 art. 20 i"),
    (["BORROWED_CARD"], "BORROWED_CARD", "83.611 art. 20 j/l"),
    ([], "INSPECTOR_DECISION", "83.611 art. 20 §1"),
])
def test_g10_next_control_card_is_confiscated_with_the_pending_reason(port, pending, reason, article):
    uid = port.worker("1001")
    port.dispatch("1001")
    port.presence.pending[uid] = list(pending)
    port.read(_inspector(port), local(7))
    d = port.read(uid, local(7, 0, 30))
    assert d.outcome is Outcome.DENY and d.confiscate
    assert d.confiscation_reason == reason and d.confiscation_article == article
    assert Flag.CONFISCATE in d.flags and "G10" in d.rules_failed
    assert d.message_pt.startswith(f"NEGADO — cartão apreendido pelo fiscal ({article})")


def test_g10_confiscation_at_a_card_and_badge_gate_asks_for_no_badge(port):
    """The inspector presents the card to confiscate: G4's missing badge is not a reason then."""
    uid = port.worker("1001")
    port.dispatch("1001")
    port.presence.pending[uid] = ["BORROWED_CARD"]
    port.read(_inspector(port), local(7), rulebook=CARD_AND_BADGE)
    d = port.read(uid, local(7, 0, 30), rulebook=CARD_AND_BADGE)
    assert d.confiscate and d.rules_failed == ("G10",)
    assert "chapa" not in d.message_pt


def test_g10_rotation_jump_found_on_the_read_itself_is_the_reason(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1002", "07-13")
    port.read(_inspector(port), local(8))
    d = port.read(uid, local(8, 0, 20))
    assert d.confiscation_reason == "ROTATION_JUMP" and d.rules_failed == ("G6", "G10")


def test_g10_confiscated_card_is_dead_at_every_connected_gate(port):
    uid = port.worker("1001")
    port.dispatch("1001", "13-19", gate="GB")
    port.read(_inspector(port), local(7))
    port.read(uid, local(7, 0, 10))
    d = port.read(uid, local(13), gate="GB")
    assert d.rules_failed == ("G2",) and d.flags == (Flag.RETAIN_CARD,)


def test_g10_session_expired_means_an_ordinary_read(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    port.read(_inspector(port), local(7))
    d = port.read(uid, local(7, 1, 1))
    assert d.outcome is Outcome.ADMIT and not d.confiscate


def test_g10_switched_off_inspector_card_is_denied(port):
    d = port.read(_inspector(port), local(7), rulebook=GateRulebook(g10=G10Settings(enabled=False)))
    assert d.outcome is Outcome.DENY and not d.opens_inspector_session and d.rules_failed == ("G10",)


# --- messages -------------------------------------------------------------------------------
def test_messages_in_english_name_the_reason(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1002")
    d = port.read(uid, local(7))
    assert d.message_en == ("DENIED — not dispatched to this ship at this time; post gangway (07-13) "
                            "is dispatched to registration 1002. Call the inspector. [G6]")


def test_every_reason_key_has_both_languages_in_the_catalogs_with_its_fields():
    from edge.rules.messages import ACTIONS, HEADS, REASONS, STATUS_WORDS
    from portgate.i18n import gettext
    from testkit.i18n import fields

    for prefix, keys in (("gate.head.", HEADS), ("gate.reason.", REASONS), ("gate.action.", ACTIONS),
                         ("gate.status.", STATUS_WORDS)):
        for key in keys:
            pt, en = gettext("pt", prefix + key), gettext("en", prefix + key)
            assert pt != prefix + key and en != prefix + key and pt != en, key
            if prefix == "gate.reason.":  # the template uses exactly the fields the engine gives
                assert fields(pt) == fields(en) == set(REASONS[key]), key


def test_the_rules_core_says_keys_and_values_and_the_edge_words_them(port):
    """The engine's decision carries no words (pure, language-free); ``edge.display.said`` renders
    the catalogs' pt-BR and English from its keys and fields."""
    from edge.display.said import worded
    from edge.rules import engine
    from edge.rules.messages import Said

    port.worker("1001")
    port.dispatch("1001")
    uid = port.card("AA00FFFF", "1001", status=CardStatus.LOST)
    from edge.rules.model import Now, Presentation
    from tests.edge.rules.conftest import mono

    view = port.view()
    view.updated_at = local(7)
    p = Presentation(uid=uid, reader_id="GA/control", reader_kind="control", mono_ns=mono(local(7)))
    bare = engine.decide(view, p, Now(wall=local(7), mono_ns=mono(local(7)), clock_trusted=True), port.rulebook)
    assert bare.message_pt == bare.message_en == ""
    assert bare.said == Said(head="deny", reasons=(("G2.control", (("status", "lost"),)),),
                             actions=("retain",), rules=("G2",))
    d = worded(bare)
    assert d.message_pt == "NEGADO — cartão bloqueado (perdido). Retenha o cartão e chame o fiscal. [G2]"
    assert d.message_en == "DENIED — card blocked (lost). Keep the card and call the inspector. [G2]"


def _fields(worker):
    import dataclasses

    return {f.name: getattr(worker, f.name) for f in dataclasses.fields(worker)}


def test_a_retained_card_message_asks_for_the_inspector_once(port):
    port.worker("1001")
    uid = port.card("AA00FFFF", "1001", status=CardStatus.LOST)
    d = port.read(uid, local(7))
    assert "G2" in d.rules_failed
    assert d.message_pt.lower().count("chame o fiscal") == 1
    assert d.message_en.lower().count("call the inspector") == 1


def test_G4_badge_read_after_the_card_within_the_window_is_paired(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001001", badge_at=local(7, 0, 15), rulebook=CARD_AND_BADGE)
    assert d.outcome is Outcome.ADMIT and d.badge_registration == "1001"


def test_G4_someone_elses_badge_after_the_card_is_a_borrowed_card_naming_both(port):
    uid = port.worker("1001")
    port.worker("1002")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001002", badge_at=local(7, 0, 4), rulebook=CARD_AND_BADGE)
    assert d.outcome is Outcome.DENY and d.flags == (Flag.BORROWED_CARD,)
    assert (d.registration, d.badge_registration) == ("1001", "1002")
    assert "matrícula 1001 com chapa da matrícula 1002" in d.message_pt


def test_G4_badge_after_the_card_outside_the_window_counts_as_missing(port):
    uid = port.worker("1001")
    port.dispatch("1001")
    d = port.read(uid, local(7), badge="BB001001", badge_at=local(7, 0, 16), rulebook=CARD_AND_BADGE)
    assert d.reasons == ("G4.badge_missing",)

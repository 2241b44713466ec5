"""What the gate loop (``edge.loop``) journals and shows of its own: the failure decisions and
their texts (``internal_failure``, ``internal_exit``, rule id ``INTERNAL``), the tap record of a
decided presentation (``tap_payload``), a reader's UID text made safe (``_clean_uid``), the meal
worked (P6) and coverage (G11) records.
"""

from __future__ import annotations

from edge.rules.coverage import CoverageGap
from edge.rules.model import Decision, Outcome, Presentation
from portgate.i18n import LANGS, gate_words
from wire.events import CoveragePayload, Dispatch, MealWorkedPayload, TapPayload


def _pt_en(msgid: str) -> tuple[str, str]:
    return tuple(gate_words(lang).gettext(msgid) for lang in LANGS)  # LANGS: ("pt", "en")


# the gate's own failure texts, from the catalogs (msgids gate.internal.*; docs/i18n.md), read once
INTERNAL_PT, INTERNAL_EN = _pt_en("gate.internal.deny")
NO_JOURNAL_PT, NO_JOURNAL_EN = _pt_en("gate.internal.no_journal")
INTERNAL_EXIT_PT, INTERNAL_EXIT_EN = _pt_en("gate.internal.exit")
NO_JOURNAL_EXIT_PT, NO_JOURNAL_EXIT_EN = _pt_en("gate.internal.no_journal_exit")

_MAX_UID_TEXT = 64


def internal_failure(message_pt: str = INTERNAL_PT, message_en: str = INTERNAL_EN) -> Decision:
    """The DENY shown when the gate itself failed (not a rule): rule id ``INTERNAL``."""
    return Decision(outcome=Outcome.DENY, rules_failed=("INTERNAL",), message_pt=message_pt,
                    message_en=message_en)


def internal_exit(message_pt: str = INTERNAL_EXIT_PT, message_en: str = INTERNAL_EXIT_EN,
                  registration: str | None = None, dispatch=None) -> Decision:
    """The EXIT shown when the gate itself failed for a worker with an open shift here: an exit
    is never refused because of a gate fault (G13). Rule id ``INTERNAL``."""
    return Decision(outcome=Outcome.EXIT, rules_failed=("INTERNAL",), message_pt=message_pt,
                    message_en=message_en, registration=registration, card_kind="control",
                    dispatch=dispatch)


def tap_payload(p: Presentation, d: Decision) -> TapPayload:
    """The journal record of one decided presentation (what the watchman was shown, in pt-BR).
    ``uid`` is the matched card's UID (a partial read names it, G1), else the read's text."""
    dispatch = None
    if d.dispatch is not None:
        e = d.dispatch
        dispatch = Dispatch(date=e.date, period=e.period, ship=e.ship, berth=e.berth.value,
                            voyage=e.voyage.value, post=e.post, function=e.function)
    return TapPayload(
        uid=d.card_uid or p.uid, reader_id=p.reader_id,
        reader_kind="badge" if p.reader_kind == "badge" else "control",
        decision=d.outcome.value, rules_failed=list(d.rules_failed), flags=[f.value for f in d.flags],
        message=d.message_pt, registration=d.registration, card_kind=d.card_kind,
        badge_uid=p.badge_uid, badge_registration=d.badge_registration, dispatch=dispatch,
    )


def _clean_uid(text: object) -> str:
    """A reader's UID text made safe to journal and show: printable, at most 64 characters; a
    byte the reader's decoder could not read (U+FFFD) is shown as ``?`` like a control byte."""
    s = text if isinstance(text, str) else repr(text)
    if not s.isprintable() or "\ufffd" in s:
        s = "".join(ch if ch.isprintable() and ch != "\ufffd" else "?" for ch in s)
    return s[:_MAX_UID_TEXT]



def _meal_payload(session, tap: TapPayload) -> MealWorkedPayload | None:
    """P6 (83.611 art. 26 d): the meal record of a worker's tap decided in the inspector's meal
    mode; None when the tap names no shift (the engine gives ``meal_worked`` only with one)."""
    if tap.registration is None or tap.dispatch is None:
        return None
    return MealWorkedPayload(
        uid=tap.uid, registration=tap.registration, dispatch=tap.dispatch,
        inspector_uid=session.inspector_uid if session else "",
        inspector_registration=session.inspector_registration if session else None)


def _coverage_payload(gap: CoverageGap, state: str, *, ended_by: str | None = None,
                      watchman: str | None = None) -> CoveragePayload:
    return CoveragePayload(state=state, ship=gap.ship, date=gap.date, period=gap.period,
                           voyage=gap.voyage.value, due_at=gap.due_at, period_end=gap.end,
                           dispatched=list(gap.dispatched), ended_by=ended_by, watchman=watchman)

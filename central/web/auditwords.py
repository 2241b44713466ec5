"""The audit log's rows as a person reads them, in the page's language: the action by its name
(``audit_action.<action>``: ``case.open`` -> "processo aberto") and the stored detail (a JSON object the
services write in English keys, ``{"flag": "BORROWED_CARD", "registration": "V017"}``) as a list of
``(field, value)`` pairs (``[("ocorrência", "cartão emprestado (G4)"), ("matrícula", "V017")]``).

The stored JSON is never changed (the CSV export keeps it in its own column); an action or a key the
catalogs do not name is still shown as a readable ``key: value`` list, never as raw JSON. Values:
a time (``2026-03-15T22:00:00+00:00``) in the port's time zone and the page's language
(``portgate.l10n``), a day as a day, a flag or a function by its name, ``true``/``false`` as
"sim"/"não", a list joined by commas, an object as ``key: value`` pairs, an empty value as "—".
Pure: no clock, no database.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable, Mapping
from typing import Any
from zoneinfo import ZoneInfo

from central.web.i18n import t
from central.web.codewords import function_label
from central.web.service_texts import card_detail, flag_label, penalty_reason
from portgate import l10n

_ISO_DAY = re.compile(r"\d{4}-\d\d-\d\d\Z")
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?\Z")
MAX_TEXT = 300  # characters of one value shown (a long comment or defence: the rest is in the CSV)


def _known(lang: str, msgid: str) -> str | None:
    said = t(lang, msgid)
    return None if said == msgid else said


def action_label(lang: str, action: str) -> str:
    """The audit row's ``action`` (``case.open``) named in ``lang`` (msgid ``audit_action.<action>``);
    an action the catalogs do not know as it is stored."""
    return _known(lang, f"audit_action.{action}") or action


_STATEMENTS = re.compile(r"(?P<n>\d+) statement\(s\)\Z")  # central.pay.payments, central.web.routes.pay


def subject_label(lang: str, subject: str) -> str:
    """The audit row's stored ``subject`` in ``lang``: ``"2 statement(s)"`` (the pay actions) ->
    ``"2 demonstrativo(s)"``; an alarm ``coverage:12`` -> ``"alarme de cobertura 12"``; any other
    (a registration, a card UID, a case number, a day) as it is stored (a day in the page's form)."""
    m = _STATEMENTS.match(subject or "")
    if m:
        return t(lang, "audit_subject.statements").format(n=m["n"])
    kind, sep, rest = (subject or "").partition(":")
    said = _known(lang, f"audit_subject.alarm_{kind}") if sep and rest.isdigit() else None
    if said:
        return said.format(id=rest)
    return value_text(lang, subject, dt.UTC) if subject else "—"


def field_label(lang: str, key: str) -> str:
    """A detail key (``registration``) named in ``lang``: msgid ``audit_field.<key>``, else the
    forms' ``field.<key>``, else the key with its underscores as spaces (``new_entry`` -> ``new entry``)."""
    return _known(lang, f"audit_field.{key}") or _known(lang, f"field.{key}") or key.replace("_", " ")


def _words(prefix: str) -> Callable[[str, str], str]:
    return lambda lang, value: _known(lang, prefix + value) or value


def _kind(lang: str, value: str) -> str:  # a card's kind (card.*, enrol.*) or a decision's (case.*)
    return _known(lang, f"card_kind.{value}") or _known(lang, f"decision.{value}") or value


#: detail keys whose values are codes (or stored registry texts) with their own names in the catalogs
_CODED: dict[str, Callable[[str, str], str]] = {
    "flag": flag_label, "flags": flag_label, "function": function_label, "kind": _kind,
    "reason": penalty_reason, "detail": card_detail, "voyage": lambda lang, v: _known(lang, v) or v,
    "role": _words("user_role."), "how": _words("final_how."), "outcome": _words("oc_"),
    "status": _words("state."), "was": _words("st_"),
}


def value_text(lang: str, value: Any, tz: ZoneInfo, key: str = "") -> str:
    """One stored detail value as text in ``lang`` (see the module); ``key`` names a coded value."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return t(lang, "yes") if value else t(lang, "no")
    if isinstance(value, Mapping):
        return "; ".join(f"{field_label(lang, str(k))}: {value_text(lang, v, tz, str(k))}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        inner = ", ".join(value_text(lang, v, tz, "" if isinstance(v, (list, tuple)) else key or "item")
                          for v in value)
        return inner if key else f"({inner})"  # a row inside a list: (id, shift, cents)
    text = str(value)
    if isinstance(value, str):
        if key in _CODED:
            return _CODED[key](lang, text)
        if _ISO_DAY.match(text):
            try:
                return l10n.day(dt.date.fromisoformat(text), lang)
            except ValueError:
                return text
        if _ISO_TIME.match(text):
            try:
                at = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return text
            return l10n.at(at if at.tzinfo else at.replace(tzinfo=dt.UTC), lang, tz)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + "…"


def detail_fields(lang: str, detail: Any, tz: ZoneInfo) -> list[tuple[str, str]]:
    """The stored ``detail`` of an audit row as ``(field, value)`` pairs in ``lang``, in its stored
    key order; a detail that is not an object (an old row's text or list) as one pair with an empty
    field; ``[]`` for an empty object. A detail stored as JSON text is read as its object."""
    if isinstance(detail, str) and detail.startswith(("{", "[")):
        try:
            detail = json.loads(detail)
        except ValueError:
            pass
    if isinstance(detail, Mapping):
        return [(field_label(lang, str(k)), value_text(lang, v, tz, str(k))) for k, v in detail.items()]
    if detail in (None, "", []):
        return []
    return [("", value_text(lang, detail, tz, "value"))]

"""The services' refusals (``BadInput`` texts: registry edits and uploads, photos, dispatch, pay
actions) in the page's language: pt-BR first, English available.

The services word their refusals in English, one reason per line or per ``; `` and each perhaps
behind the place it names (``workers.csv:3: ``, ``registration: ``). Each known reason is an error
code with parameters: a pattern over the English wording (named groups are the parameters) and
its pt-BR text. ``localize("pt", text)`` keeps the places and the parameters and gives each known
reason in Portuguese; an unknown reason stays as the service worded it (a test lists the codes, so
a reworded service text shows up as a failing test, not as a silent English string). ``"en"``
gives the text unchanged. The codes and their patterns are the table ``CODES`` of
``central.web.service_codes`` (importable from here too).

Field names are put in pt-BR too (``FIELDS``): a place that is a form field (``from/to: ``,
``rulebook: ``) and a field named inside a reason (``name is required`` -> ``nome é
obrigatório``). Under a file place (``workers.csv:3: ``) the CSV column stays beside its pt-BR
name, since the file's header is written with it (``nome (name) é um campo obrigatório``).
"""

from __future__ import annotations

import datetime as dt
import re

from central.web.i18n import t
from central.web.service_codes import CODES
from portgate import l10n


def _pt(msgid: str) -> str:
    """``msgid``'s pt-BR text (``portgate/locale/pt_BR``)."""
    return t("pt", msgid)


def known_text(msgid: str, lang: str = "pt") -> str | None:
    """``msgid``'s text in ``lang``, ``None`` when the catalogs do not have it."""
    text = t(lang, msgid)
    return None if text == msgid else text


# field names, CSV columns and form places the services name in English -> pt-BR: msgids
# ``field.<name>``; the old table, empty (``python -m testkit.i18n absorb`` moves what is added)
FIELDS: dict[str, str] = {
    # a case's texts (R7); workers.csv, cards.csv and the worker form; requisitions.csv, escala.csv,
    # ships.csv and the requisition form; the pages' own fields; the admission conditions (R9); the
    # rotation service's option and entries; a worker's port (an office of several ports)
}


def _field_pt(name: str, in_file: bool) -> str:
    """A field name in pt-BR (kept when unknown); under a file place its CSV column beside it."""
    word = known_text("field." + name.strip()) or FIELDS.get(name.strip())
    if word is None:
        return name
    tail = " " if name.endswith(" ") else ""  # ``not_whole``'s optional "field "
    return (f"{word} ({name.strip()})" if in_file else word) + tail


# the pt-BR words of the ``must_be`` and ``at_least_one`` parameters: msgids ``word.<English>``

# tomllib's syntax errors (``TOMLDecodeError``: "<reason> (at line L, column C)" or "(at end of
# document)"): pattern over the English reason -> the msgid of its pt-BR text; an unknown reason
# reads "erro de sintaxe"
TOML_REASONS: dict[str, str] = {
    r"Invalid value": 'toml.invalid_value',
    r"Invalid statement": 'toml.invalid_statement',
    r"Unterminated string": 'toml.unterminated_string',
    r"Unclosed array": 'toml.unclosed_array',
    r"Unclosed inline table": 'toml.unclosed_inline_table',
    r"Cannot overwrite a value": 'toml.cannot_overwrite_a_value',
    r"Expected '=' after a key in a key/value pair": 'toml.expected_after_a_key_in_a_key_value_pair',
    r"Expected ']' at the end of a table declaration": 'toml.expected_at_the_end_of_a_table_declaration',
    r"Expected ']]' at the end of an array declaration": 'toml.expected_at_the_end_of_an_array_declaration',
    r"Expected newline or end of document after a statement":
        'toml.expected_newline_or_end_of_document_after_a_statement',
    r"Expected (?P<what>.+)": 'toml.expected_what',
    r"Invalid initial character for a key part": 'toml.invalid_initial_character_for_a_key_part',
    r"Invalid hex value": 'toml.invalid_hex_value',
    r"Invalid date or datetime": 'toml.invalid_date_or_datetime',
    r"Unescaped '\\' in a string": 'toml.unescaped_in_a_string',
    r"Escaped character is not a Unicode scalar value": 'toml.escaped_character_is_not_a_unicode_scalar_value',
    r"Illegal character (?P<what>.+)": 'toml.illegal_character_what',
    r"Found invalid character (?P<what>.+)": 'toml.found_invalid_character_what',
    r"Duplicate inline table key (?P<what>.+)": 'toml.duplicate_inline_table_key_what',
    r"Cannot redefine namespace (?P<key>.+)": 'toml.cannot_redefine_namespace_key',
    r"Cannot mutate immutable namespace (?P<key>.+)": 'toml.cannot_mutate_immutable_namespace_key',
    r"Cannot declare (?P<key>.+) twice": 'toml.cannot_declare_key_twice',
}
_TOML_COMPILED = [(re.compile(pattern + r"\Z", re.S), msgid) for pattern, msgid in TOML_REASONS.items()]
_TOML_AT = re.compile(
    r"(?P<reason>.*) \(at (?:line (?P<line>\d+), column (?P<column>\d+)|(?P<end>end of document))\)\Z", re.S)


def toml_error_pt(detail: str) -> str:
    """tomllib's English message (``str(TOMLDecodeError)``) in pt-BR with its line and column:
    ``"Expected '=' after a key in a key/value pair (at line 2, column 5)"`` -> ``"linha 2, coluna 5:
    falta '=' depois da chave (chave = valor)"``; ``(at end of document)`` -> ``"no fim do texto: ..."``.
    A reason not in ``TOML_REASONS`` reads "erro de sintaxe"; a message without the position
    suffix stays as it is."""
    m = _TOML_AT.match(detail)
    if m is None:
        return detail
    reason = _pt("toml.syntax_error")
    for rx, msgid in _TOML_COMPILED:
        found = rx.match(m["reason"])
        if found:
            reason = _pt(msgid).format(**{k: _toml_key(v) if k == "key" else v for k, v in found.groupdict().items()})
            break
    where = _pt("toml.at_end") if m["end"] else _pt("toml.at").format(line=m["line"], column=m["column"])
    return f"{where}: {reason}"


def _toml_key(text: str) -> str:
    """tomllib's key tuple (``('a', 'b')``) as the TOML writes it (``a.b``); other text unchanged."""
    m = re.fullmatch(r"\(((?:'[^'\\]*',? ?)+)\)", text)
    return ".".join(re.findall(r"'([^'\\]*)'", m[1])) if m else text


# parameters that are themselves texts to put in pt-BR: code -> {parameter: function}
def _ineligible_pt(why: str) -> str:
    """``"G7 rest, R2 overlapping dispatch"`` (``Ineligible`` values, or "other category") in pt-BR,
    with the rule ids kept: the escala page's own words (``central.web.i18n``)."""
    def said(part: str) -> str:
        known = known_text(part) if part[:3] in ("G3 ", "G7 ", "R2 ") else known_text("word." + part)
        return known or part

    return ", ".join(said(part) for part in why.split(", "))


# a case's states and steps (central.registry.cases, R7) as the cases page names them: msgids
# ``case_status.<status>``, ``case_step.<step>``; a case's decisions (central.registry.cases.DECISIONS)
# with the value the form posts beside it: ``decision.<kind>``; a card's and a worker's states and
# kinds as the registry pages name them: ``state.<state>``, ``card_kind.<kind>``


# the gate's flags (``wire.flags.Flag``) and the office's shift flags (``wire.flags.ShiftFlag``):
# code -> rule id; the pages name them by the msgid ``flag.<CODE>`` (``flag_label``); the code itself
# stays in data attributes, filters, exports and the ledger. An entry added as (pt-BR, English, rule)
# works until ``python -m testkit.i18n absorb`` moves its words.
FLAG_TEXTS: dict[str, str | tuple[str, str, str]] = {
    "RETAIN_CARD": "G2",
    "BORROWED_CARD": "G4",
    "BADGE_MISSING": "G4",
    "DOUBLE_ASSIGNMENT": "G5",
    "NOT_DISPATCHED": "G6",
    "ROTATION_JUMP": "G6",
    "LATE_ARRIVAL": "G6",
    "REST_SHORT": "G7",
    "STALE_DATA": "G8",
    "CLOCK_UNTRUSTED": "G8",
    "NO_ENTRY": "G9",
    "EARLY_EXIT": "G9",
    "CONFISCATE": "G10",
    "CONFISCATION": "G10",
    "COVERAGE_GAP": "G11",
    "PARTIAL_UID": "G1",
    "WRONG_CATEGORY": "G12",
    "MEAL_MODE": "G10",
    "MEAL_WORKED": "P6",
    "MISSING_EXIT": "",
    "REPEATED_ADMIT": "",
    "CLOCK_PLACED": "",
    "CLOCK_UNPLACEABLE": "",
    "CLOCK_BACKWARDS": "",
    "MEAL_AT_GATE": "P6",
    "MEAL_CORRECTED": "P6",
    "CHAIN_BREAK": "",
    # a requisition's checks (central.rotation.requisition_checks, the escala page)
    "LATE_REQUISITION": "",
    "INCOMPLETE_REQUISITION": "",
    "GANG_COMPOSITION": "",
}


def flag_label(lang: str, code: str) -> str:
    """A flag code (``BORROWED_CARD``) as a page names it: ``"cartão emprestado (G4)"`` in pt-BR,
    ``"borrowed card (G4)"`` in English; an unknown code is shown as it is."""
    known = FLAG_TEXTS.get(code)
    if known is None:
        return code
    if isinstance(known, tuple):  # not absorbed yet
        word, rule = known[1 if lang == "en" else 0], known[2]
    else:
        word, rule = known_text(f"flag.{code}", lang) or code, known
    return f"{word} ({rule})" if rule else word


# a gang member's production role (the rulebook's quota table, docs/production.md) as the pay
# page names it: msgid ``role.<code>``; DL 2.032 art. 24 and DL 3.844 art. 4 give the pt-BR terms.
# The old table, empty: an entry added here works until ``python -m testkit.i18n absorb`` moves it.
ROLE_TEXTS: dict[str, tuple[str, str]] = {
}


def role_label(lang: str, code: str) -> str:
    """A production role code (``general_foreman``) as the pay page names it: ``"contramestre
    geral"`` in pt-BR, ``"general foreman"`` in English; a role the table does not know (a
    rulebook's own) is shown as it is."""
    said = known_text(f"role.{code}", lang)
    if said is not None:
        return said
    known = ROLE_TEXTS.get(code)
    if known is None:
        return code
    return known[1] if lang == "en" else known[0]


def _flag_named(code: str) -> str:
    """``BORROWED_CARD`` -> ``"cartão emprestado (BORROWED_CARD)"``: the pt-BR name with the code
    a filter address takes; an unknown code as it is."""
    known = FLAG_TEXTS.get(code)
    if known is None:
        return code
    word = known[0] if isinstance(known, tuple) else (known_text(f"flag.{code}") or code)
    return f"{word} ({code})"


def _state_pt(value: str) -> str:
    return known_text(f"state.{value}") or value


def _word_pt(prefix: str):
    return lambda value: known_text(prefix + value) or value


def _superseded_pt(ids: str) -> str:
    """``S1 (by S2)`` (``pay_superseded``'s ids, each by its new version) in pt-BR: ``svc.pay_superseded_by``."""
    return re.sub(r"([^,]+?) \(by ([^()]+)\)", lambda m: _pt("svc.pay_superseded_by").format(id=m[1], by=m[2]), ids)


_CARD_PARAMS = {"status": _state_pt, "new": _state_pt, "kind": _word_pt("card_kind.")}
_PARAM_PT = {"not_toml": {"detail": toml_error_pt}, "not_valid_toml": {"detail": toml_error_pt},
             "not_eligible": {"why": _ineligible_pt},
             "card_import_status": _CARD_PARAMS, "card_import_holder": _CARD_PARAMS,
             "card_import_kind": _CARD_PARAMS, "second_active_card_form": _CARD_PARAMS,
             "card_exists_held": _CARD_PARAMS, "card_transition": {"status": _state_pt, "event": _state_pt},
             "import_sanction": {"status": _word_pt("sanction_status."), "verb": _word_pt("sanction_verb.")},
             "flag_not_one_of": {"allowed": lambda v: ", ".join(_flag_named(k) for k in v.split(", "))},
             "decision_kind": {"allowed": lambda v: ", ".join(_word_pt("decision.")(k) for k in v.split(", "))},
             "outside_period": {"field": _word_pt("period_field.")}, "pay_superseded": {"ids": _superseded_pt},
             "appeal_closed": {"day": lambda v: _br_date(v)},
             "past_dispatch": {"day": lambda v: _br_date(v), "end": lambda v: _br_moment(v)},
             "past_change": {"day": lambda v: _br_date(v), "end": lambda v: _br_moment(v)},
             "case_step": {"status": _word_pt("case_status."),
                           "step": lambda v: f"«{_word_pt('case_step.')(v)}»"},
             **{code: {key: lambda v: _reason_pt(v, 3)} for code, key in (  # a library's detail (lib_*)
                 ("manifest_not_json", "why"), ("manifest_malformed", "why"), ("ledger_not_db", "detail"),
                 ("db_not_reachable", "detail"), ("db_read_failed", "detail"),
                 ("ledger_no_tables", "detail"))},
             "lib_missing_field": {"at": lambda v: f" (em `{v}`)" if v else ""}}
_FIELD_PARAMS = ("field", "other")  # parameters that name a field (see ``FIELDS``)


def _br_date(value: str) -> str:
    """``2026-04-14`` as ``14/04/2026``; anything else as it is."""
    try:
        return dt.date.fromisoformat(value).strftime("%d/%m/%Y")
    except ValueError:
        return value


def _br_moment(value: str) -> str:
    """``2026-04-14 13:00`` as ``14/04/2026 13:00``; anything else as it is."""
    day, _sep, rest = value.partition(" ")
    return f"{_br_date(day)} {rest}".strip()


_COMPILED = [(code, re.compile((v[0] if isinstance(v, tuple) else v) + r"\Z", re.S)) for code, v in CODES.items()]
# a place: ``workers.csv:3``, ``registration``, a configuration key path ``gate.toml:$.version[0].g7``,
# or a file's key as ``ConfigError`` names it (``gate.toml:office_public_key_file``, ``pay.toml:id``)
_PLACE = re.compile(r"(?P<place>[^\s:;]+(?::\d+)?(?::\$[^\s;]*|:[A-Za-z_]\w*)?|\$[^\s;]*): (?P<rest>.+)\Z", re.S)


_WITH_SEMICOLON = frozenset(code for code, rx in _COMPILED if "; " in rx.pattern)  # a line tried whole first


def code_of(reason: str, among: frozenset[str] | None = None) -> tuple[str, dict[str, str]] | None:
    """The code and parameters of an English reason (``among``: of these codes only), or ``None``."""
    for code, rx in _COMPILED:
        if among is not None and code not in among:
            continue
        m = rx.match(reason)
        if m:
            return code, {k: v or "" for k, v in m.groupdict().items()}
    return None


def _param_pt(code: str, key: str, value: str, in_file: bool) -> str:
    special = _PARAM_PT.get(code, {})
    if key in special:
        return special[key](value)
    if key in _FIELD_PARAMS:
        return _field_pt(value, in_file)
    return known_text("word." + value) or value


def _reason_pt(reason: str, depth: int = 0, in_file: bool = False, among: frozenset[str] | None = None) -> str:
    found = code_of(reason, among)
    if found is not None:
        code, params = found
        legacy, msgid = CODES[code], f"svc.{code}"
        template = legacy[1] if isinstance(legacy, tuple) else _pt(msgid)  # a tuple: not absorbed yet
        return template.format(**{k: _param_pt(code, k, v, in_file) for k, v in params.items()})
    place = _PLACE.match(reason)
    if place and depth < 3:  # "workers.csv:3: <reason>", "registration: <reason>"
        where = place["place"]
        is_file = ":" in where or "." in where  # file:line, a file name, a key path
        shown = where if is_file or where.startswith("$") else (known_text("field." + where) or FIELDS.get(where, where))
        return f"{shown}: {_reason_pt(place['rest'], depth + 1, in_file or is_file, among)}"
    return reason


def _line_pt(line: str) -> str:
    """A refusal's line in pt-BR: whole if one reason holding a ``; ``, else each ``; `` part."""
    rest: str | None = line
    for _depth in range(4):  # behind at most three places, as _reason_pt reads them
        if code_of(rest, _WITH_SEMICOLON) is not None:
            return _reason_pt(line, among=_WITH_SEMICOLON)
        rest = (place := _PLACE.match(rest)) and place["rest"]
        if not rest:
            break
    return "; ".join(_reason_pt(part) for part in line.split("; "))


def localize(lang: str, text: str) -> str:
    """``text`` (a service's refusal) in ``lang``: ``"en"`` as the service worded it; otherwise each
    line and each ``; `` part with its known reason in pt-BR (places and parameters kept). In both,
    an ISO day or time the service wrote (``2026-03-15``) reads as the language writes it
    (``15/03/2026``, ``Mar 15, 2026``; a time in the offset it carries, the services write port
    time); a quoted value a person typed stays as typed."""
    if not text:
        return text
    if lang != "en":
        text = "\n".join(_line_pt(line) for line in text.split("\n"))
    return l10n.dates_in_text(text, lang)


# the worker page's registry words (``central.registry``: card kinds and states, a card's
# lifecycle events and their details, the record's kinds and reasons) in the page's language:
# msgids ``card_kind.*``, ``state.*``, ``card_event.*``, ``penalty_kind.*``, ``card_detail.*``,
# ``penalty_reason.*``; the stored values stay English codes in the registry
_CARD_DETAIL = [  # (pattern over the stored detail, msgid); {flag} is named by flag_label
    (re.compile(r"import\Z"), "card_detail.import"),
    (re.compile(r"replaces (?P<uid>\S+)\Z"), "card_detail.replaces"),
    (re.compile(r"replaced by (?P<uid>\S+)\Z"), "card_detail.replaced_by"),
    (re.compile(r"case (?P<case>\d+): (?P<flag>[A-Z_]+) \((?P<article>.*)\)\Z", re.S), "card_detail.case"),
    (re.compile(r"reported lost by the worker: replacement requested\Z"),  # central.web.routes.worker
     "card_detail.lost_by_worker"),
]
_PENALTY_REASON = [
    # central.registry.cases._finalize: the penalty of a case made final, and how it became final
    (re.compile(r"case (?P<case>\d+): (?P<flag>[A-Z_]+) \((?P<article>.*)\), final: (?P<how>.+)\Z", re.S),
     "penalty_reason.case_final"),
    (re.compile(r"card (?P<uid>\S+) confiscated: (?P<flag>[A-Z_]+)\Z"), "penalty_reason.confiscated"),
    (re.compile(r"reprimand: (?P<rest>.*)\Z", re.S), "penalty_reason.reprimand"),
    (re.compile(r"refused dispatch (?P<entry>\d+): (?P<rest>.*)\Z", re.S), "penalty_reason.refused_dispatch"),
]


def card_word(lang: str, value: str) -> str:
    """A card's kind (``control``), a card or worker state (``confiscated``) or a card's lifecycle
    event (``issued``) as the worker page names it: ``"de controle"``, ``"apreendido"``,
    ``"emitido"`` in pt-BR; English pages show the stored word; an unknown one as it is."""
    if lang == "en":
        return value
    return known_text(f"card_kind.{value}") or known_text(f"state.{value}") or known_text(f"card_event.{value}") or value


def penalty_kind(lang: str, value: str) -> str:
    """A registration record entry's kind (``infraction``, ``suspension``, ``cancellation``) in
    ``lang``; an unknown one as it is."""
    return value if lang == "en" else known_text(f"penalty_kind.{value}") or value


def _registry_text(table, lang: str, text: str) -> str:
    for rx, msgid in table:
        m = rx.match(text or "")
        if m:
            params = m.groupdict()
            if "flag" in params:
                params["flag"] = flag_label(lang, params["flag"])
            if "how" in params:  # "appeal waived", "appeal upheld", "appeal window passed"
                params["how"] = known_text(f"final_how.{params['how']}", lang) or params["how"]
            if "rest" in params:  # a reprimand's case text; a person's words stay as typed
                params["rest"] = _registry_text(table, lang, params["rest"])
            return t(lang, msgid).format(**params)
    return text


def card_detail(lang: str, text: str) -> str:
    """A card event's stored detail (``import``, ``replaces UID``, ``case 1: BORROWED_CARD
    (83.611 art. 20 j/l)``) in ``lang``, the flag by its name (``flag_label``); a detail typed by a
    person (a return's decision) is shown as it is."""
    return _registry_text(_CARD_DETAIL, lang, text)


def penalty_reason(lang: str, text: str) -> str:
    """A record entry's stored reason (``card UID confiscated: BORROWED_CARD``, ``reprimand: …``,
    ``refused dispatch N: …``) in ``lang``, the flag by its name; the text a person typed after
    the prefix, and any other reason, as it is."""
    return _registry_text(_PENALTY_REASON, lang, text)

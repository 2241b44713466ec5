"""The services' refusals (``BadInput`` texts: registry edits and uploads, photos, dispatch, pay
actions) in the page's language: pt-BR first, English available.

The services word their refusals in English, one reason per line or per ``; `` and each perhaps
behind the place it names (``workers.csv:3: ``, ``registration: ``). Each known reason is an error
code with parameters: a pattern over the English wording (named groups are the parameters) and
its pt-BR text. ``localize("pt", text)`` keeps the places and the parameters and gives each known
reason in Portuguese; an unknown reason stays as the service worded it (a test lists the codes, so
a reworded service text shows up as a failing test, not as a silent English string). ``"en"``
gives the text unchanged.

Field names are put in pt-BR too (``FIELDS``): a place that is a form field (``from/to: ``,
``rulebook: ``) and a field named inside a reason (``name is required`` -> ``nome é
obrigatório``). Under a file place (``workers.csv:3: ``) the CSV column stays beside its pt-BR
name, since the file's header is written with it (``nome (name) é um campo obrigatório``).
"""

from __future__ import annotations

import datetime as dt
import re

from central.web.i18n import t
from portgate import l10n
from wire.topics import ID_RULE


def _pt(msgid: str) -> str:
    """``msgid``'s pt-BR text (``portgate/locale/pt_BR``)."""
    return t("pt", msgid)


def _known(msgid: str, lang: str = "pt") -> str | None:
    """``msgid``'s text in ``lang``, ``None`` when the catalogs do not have it."""
    text = t(lang, msgid)
    return None if text == msgid else text


# code: pattern over the English reason; its pt-BR template (the pattern's named groups as
# ``{fields}``) is the catalogs' msgid ``svc.<code>``. An entry another branch still adds as
# ``(pattern, pt-BR)`` works until ``python -m testkit.i18n absorb`` moves its text.
CODES: dict[str, str | tuple[str, str]] = {
    # the worker's R3 health refusal (central.web.workerrequests)
    "reason_required": r"the reason is required",
    "request_pending": r"a request for dispatch (?P<id>\d+) is already pending",
    "health_dispatch_over": r"the dispatch (?P<id>\d+) \((?P<day>\S+) (?P<period>\S+)\) has ended: a health "
                             r"refusal is made before the end of its period",
    # the escala page's requisition form (central.web.routes.escala): the ship chosen from the calls
    "choose_ship": r"choose the ship in port",
    "not_valid_date": r"date (?P<value>'.*') is not a valid date",
    # the ship-calls form (central.web.forms.instant_text)
    "not_date_time": r"(?P<value>'.*') is not a date and time \(dd/mm/yyyy hh:mm\)",
    "ship_not_in_port": r"ship (?P<ship>\S+) is not in port on (?P<day>\S+)",
    "call_no_gate": r"the call of ship (?P<ship>\S+) names no gate: give it one on the ships page",
    # the what-if's parameter form (app.whatif.parse_parameter, with_parameter)
    "param_listed": r"choose one of the listed parameters",
    "param_type_value": r"type a value",
    "param_not_bool": r"(?P<value>'.*') is not true or false \(sim or não\)",
    "param_unknown": r"(?P<key>'.*') is not a parameter of the rulebook",
    "param_not_table": r"(?P<rule>\S+) is not a table in the rulebook",
    # central.rotation.service: a requisition already stored or repeated (same key)
    "requisition_registered": r"requisition already registered as requisition (?P<id>\d+) \((?P<what>[^)]*), "
        r"(?P<n>\d+) workers\): nobody dispatched again",
    "requisition_count_changed": r"requisition already registered as requisition (?P<id>\d+) \((?P<what>[^)]*), "
        r"(?P<n>\d+) workers\): a changed head count \((?P<m>\d+)\) is not added, "
        r"substitute or remove its escala entries instead",
    "workers_range": r"workers must be between (?P<lo>\d+) and (?P<hi>\d+), not (?P<n>-?\d+)",
    "rotation_taken": r"rotation_number (?P<n>\d+) is already held by (?P<other>\S+) \((?P<cat>[^)]*)\)",
    "name_too_long": r"name is longer than (?P<n>\d+) characters",
    "name_not_utf8": r"name has a byte that is not UTF-8 text",
    # central.bounds: a value that does not fit its database column (size, range, NUL)
    "too_long": r"(?P<field>\w+) is longer than (?P<n>\d+) characters \((?P<len>\d+)\)",
    "int_outside": r"(?P<field>\w+) (?P<value>-?\d+) is outside (?P<lo>-?\d+)\.\.(?P<hi>-?\d+)",
    "field_nul": r"(?P<field>\w+) contains a NUL character",
    "day_outside": r"(?P<field>(?!date |month )\w+) (?P<value>'\d{4}-\d\d-\d\d') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
    "out_of_range": r"a value is out of range",
    "address_nul": r"the address contains a NUL character",
    "suspension_end": r"the suspension would end after (?P<day>\S+)",
    "requisition_repeated": r"repeats requisition (?P<ref>\S+) \((?P<what>[^)]*)\)",
    # portgate.records / portgate.tables: the CSV row validation (import, upload, edit form)
    "not_iso_date": r"(?P<field>\w+ )?(?P<value>'.*') is not an ISO date \(YYYY-MM-DD\)",
    "required": r"(?P<field>\w+) is required",
    # central.web.logmodel: the read log's card search
    "card_not_uid": r"card (?P<value>'.*') is not a card UID in any UID form",
    # portgate.docbr: a CPF, PIS/NIS or CNPJ of another length or with wrong check digits
    "docbr_length": r"(?P<field>\w+) (?P<value>'.*') is not (?P<n>\d+) digits \((?P<shape>\S+), e\.g\. (?P<ex>\S+)\)",
    "docbr_check": r"(?P<field>\w+) (?P<value>'.*') fails its check digits \(a digit mistyped\?\)",
    "not_whole": r"(?P<field>\w+ )?(?P<value>'.*') is not a whole number",
    "decision_kind": r"decision (?P<value>'.*') is not one of (?P<allowed>.+)",
    # central.web.flagsmodel: a flag filter that is not a flag code (the valid ones by their names)
    "flag_not_one_of": r"flag (?P<value>'.*') is not one of (?P<allowed>.+)",
    "not_one_of": r"(?P<field>\w+) (?P<value>'.*') is not one of (?P<allowed>.+)",
    "control_char": r"(?P<field>\w+) (?P<value>'.*') contains a control character or line break (?P<what>\(.*\))",
    # a ship call's arrival or departure (central.calls.service._when): the place names the field
    "time_not_timestamp": r"time (?P<value>'.*') is not an ISO 8601 timestamp",
    "time_no_offset": r"time (?P<value>'.*') has no UTC offset",
    "not_timestamp": r"(?P<field>\w+) (?P<value>'.*') is not an ISO 8601 timestamp",
    "no_offset": r"(?P<field>\w+) (?P<value>'.*') has no UTC offset",
    "out_of_range_date": r"(?P<field>\w+) (?P<value>'.*') is out of the representable date range",
    "suspension_order": r"(?P<field>suspended_from) (?P<a>\S+) is after (?P<other>suspended_until) (?P<b>\S+)",
    "negative_rotation": r"(?P<field>rotation_number) (?P<n>-?\d+) is negative",
    "period_format": r"period (?P<value>'.*') is not HH-HH \(e\.g\. 19-01\)",
    "period_hours": r"period (?P<value>'.*') has hours out of range",
    "missing_columns": r"missing column\(s\) (?P<cols>.+)",
    "header_columns": r"header lacks column\(s\) (?P<cols>.+)",
    "unknown_columns": r"unknown column\(s\) (?P<cols>.+) \(the file takes (?P<known>.+)\)",
    "nul_char": r"contains a NUL character",
    "not_utf8": r"file is not UTF-8",
    # portgate.tables: Python's csv module's field limit (csv.Error "field larger than field limit")
    "csv_field_long": r"not a valid CSV file: a field is longer than (?P<n>\d+) characters",
    "not_csv": r"not a valid CSV file: (?P<detail>.*)",
    "file_not_found": r"file not found",
    "uid_repeats": r"uid (?P<uid>\S+) repeats line (?P<line>\d+)",
    "reg_repeats": r"registration (?P<reg>\S+) repeats line (?P<line>\d+)",
    "reg_not_registered": r"registration (?P<reg>'.*') is not registered",
    # central.registry (store, edit, photos)
    "actor_required": r"actor is required \(who makes the change\)",
    "no_worker": r"no worker with registration (?P<reg>'.*')",
    "no_card": r"no card with uid (?P<uid>'.*')",
    "card_transition": r"card (?P<uid>\S+) is (?P<status>\w+): cannot be (?P<event>\w+)",
    # central.registry.store.import_refusal: an import row that would move a registered card
    "card_import_status": r"card (?P<uid>\S+) is (?P<status>\w+): an import does not make it (?P<new>\w+)",
    "card_import_use": r"use `(?P<cmd>[^`]+)`",
    "card_import_use_case": r"use `(?P<cmd>[^`]+)` \(it closes the card's open case\)",
    "card_replaced_never": r"a replaced card is never used again",
    # central.registry.store.sanction_refusal: an import row that would lift or impose an R4 sanction
    "import_reinstate": r"registration (?P<reg>\S+) is cancelled \(R4\): an import does not reinstate a "
                         r"worker \(a cancellation is final, 83\.611 art\. 21 b\)",
    "import_suspension": r"registration (?P<reg>\S+) is suspended (?P<span>\S+) \(R4\): an import does not "
                          r"change a suspension \(it ends on its own date, and the worker's edit page changes it "
                          r"with an audit entry\)",
    "import_sanction": r"registration (?P<reg>\S+) is (?P<status>\w+): an import does not (?P<verb>suspend|cancel) "
                        r"a worker \(use `(?P<cmd>[^`]+)`: the penalty goes on the registration record, R4\)",
    "card_inspector_only": r"only a union inspector confiscates a card, at the gate \(G10\)",
    "card_not_lifecycle": r"not a card lifecycle move \(docs/office\.md\)",
    "card_import_holder": r"card (?P<uid>\S+) is (?P<status>\w+) and held by (?P<reg>\S+): an import does not "
                           r"move a card to another registration \(give (?P<new>\S+) a card with a new uid\)",
    "card_import_kind": r"card (?P<uid>\S+) is (?P<status>\w+) and a (?P<kind>\w+) card: an import does not "
                         r"change a card's kind \(issue a card with a new uid\)",
    "second_active_card": r"registration (?P<reg>\S+) already has active (?P<kind>\w+) card (?P<other>\S+)",
    "reg_cancelled": r"registration (?P<reg>\S+) is cancelled",
    "reg_already_cancelled": r"registration (?P<reg>\S+) is already cancelled",
    "card_exists": r"card (?P<uid>\S+) already exists",
    # central.registry.enrol (the add-worker form, a card enrolled or replaced by hand) and R9
    "already_registered": r"(?P<reg>\S+) is already registered",
    "card_exists_held": r"card (?P<uid>\S+) already exists \((?P<status>\w+), held by (?P<reg>\S+)\)",
    "second_active_card_form": r"registration (?P<reg>\S+) already has active (?P<kind>\w+) card (?P<other>\S+): "
                                r"report it lost or replace it",
    "card_not_held": r"card (?P<uid>\S+) is not held by (?P<reg>\S+)",
    # central.registry.gate_enrol and central.web.routes.enrol_gate: enrol mode on a gate (issue 34)
    "enrol_gate_offline": r"gate (?P<gate>\S+) is offline: it cannot enter enrol mode",
    "enrol_gate_busy": r"gate (?P<gate>\S+) is already in enrol mode for another worker",
    "enrol_open": r"registration (?P<reg>\S+) already has an open enrol session: cancel it first",
    "enrol_not_open": r"enrol session (?P<n>\d+) is not open for (?P<reg>\S+)",
    "enrol_no_read": r"enrol session (?P<n>\d+) has no card read yet",
    "enrol_missing": r"enrol session (?P<n>-?\d+) does not exist",
    "enrol_no_mqtt": r"no MQTT link to the gates is configured",
    "enrol_not_told": r"gate (?P<gate>\S+) not told: (?P<why>.*)",
    "card_kind_form": r"kind (?P<value>'.*') is not control or badge",
    "uid_not_hex": r"UID (?P<value>'.*') is not hexadecimal",
    "uid_odd": r"UID (?P<value>'.*') has an odd number of hex digits",
    "uid_bytes": r"UID (?P<value>'.*') must be 3 to 10 bytes long",
    "uid_digits": r"UID (?P<value>'.*') must be exactly (?P<n>\d+) digits for format (?P<form>\w+)",
    "uid_bits": r"UID (?P<value>'.*') does not fit in (?P<n>\d+) bits for format (?P<form>\w+)",
    "uid_w26": r"UID (?P<value>'.*'): facility must be 0-255 and number 0-65535 for format wiegand26",
    "uid_ambiguous": r"uid (?P<uid>\d+) is 10 decimal digits: EM4100 hex or a DEZ10 number\? say which in column "
                      r"uid_form \(hex, decimal10, decimal10_le\)",
    "uid_partial": r"uid_form (?P<form>\w+) carries only 24 bits of the card: enrol it by its whole UID",
    "date_br_format": r"(?P<field>\w+) (?P<value>'.*') is not a day written dd/mm/aaaa",
    "expiring_outside": r"expiring (?P<value>'.*') is outside 0\.\.(?P<max>\d+)",
    "admission_age": r"(?P<art>.+?): age (?P<age>-?\d+) on (?P<day>\S+) is outside (?P<lo>\d+)\.\.(?P<hi>\d+)",
    "admission_brazilian": r"(?P<art>.+?): must be Brazilian \(nationality (?P<nat>[^)]*)\)",
    "admission_missing": r"(?P<art>.+?): (?P<label>.+) \((?P<name>\w+)\) missing: give the document and its date",
    "admission_late": r"(?P<art>.+?): (?P<label>.+) \((?P<name>\w+)\) is dated (?P<day>\S+), after the "
                       r"registration on (?P<reg>\S+)",
    "admission_pair": r"(?P<field>\w+)_on is required with (?P=field)",
    "admission_doc": r"(?P<field>\w+) \(the document\) is required with (?P=field)_on",
    "foreign_share": r"DL 2\.032 art\. 5 §3: foreigners would be (?P<f>\d+) of (?P<n>\d+) stevedores, at most one "
                      r"third \((?P<max>\d+)\)",
    "photo_empty": r"the photo file is empty",
    "photo_too_big": r"the photo file has (?P<n>\d+) bytes \(at most (?P<max>\d+)\)",
    "photo_type": r"the photo is (?P<fmt>\w+): only JPEG or PNG",
    "photo_pixels": r"the photo has (?P<size>\d+x\d+) pixels: too large \(at most (?P<max>\d+) pixels\)",
    "photo_bomb": r"the photo has too many pixels: too large",
    "photo_not_picture": r"the photo is not a JPEG or PNG picture",
    "photo_damaged": r"the photo file is damaged or cut short: not a readable JPEG or PNG picture",
    "photo_name": r"registration (?P<reg>'.*') cannot name a photo file",
    # central.rotation (dispatch, refusals, substitutions)
    "wrong_day": r"requisition\(s\) not for (?P<day>\S+): (?P<refs>.+)",
    "no_entry": r"no escala entry (?P<id>\S+)",
    "entry_removed": r"escala entry (?P<id>\S+) was already removed (?P<why>\(.*\))",
    "not_eligible": r"(?P<reg>\S+) is not eligible: (?P<why>.+)",
    # central.rotation.ports: a requisition at a gate of a port outside the user's view (or unknown)
    "gate_not_of_ports": r"gate_id (?P<gate>'.*') is not a gate of port\(s\) (?P<ports>.+)",
    # central.rotation: a period that has ended (engine.ended_at), a function no category fills
    "past_dispatch": r"the period (?P<period>\S+) of (?P<day>\S+) ended at (?P<end>\S+ \S+) port time: "
                     r"a past escala is not dispatched",
    "past_change": r"escala entry (?P<id>\S+) \((?P<day>\S+) (?P<period>\S+)\) ended at (?P<end>\S+ \S+) "
                   r"port time: a past escala is not changed",
    "unknown_function": r"function (?P<value>'.*') is unknown to the office \(no category fills it\): "
                        r"the functions are (?P<known>.+)",
    # central.pay (mark paid, release)
    "pay_unknown": r"unknown: (?P<ids>.+)",
    "pay_already_paid": r"already paid: (?P<ids>.+)",
    "pay_superseded": r"superseded: (?P<ids>.+)",
    "pay_held": r"on hold for review \(release it first\): (?P<ids>.+)",
    "paid_ref_too_long": r"the payment reference has (?P<n>\d+) characters \(at most (?P<max>\d+)\)",
    "pay_future": r"the payment time (?P<at>\S+) is more than a day after now \((?P<now>\S+)\)",
    "pay_before_work": r"the payment time (?P<at>\S+) is before the start of the shift of (?P<ids>.+)",
    "pay_not_paid": r"not marked paid: (?P<ids>.+)",
    "reversal_reason": r"a reversal needs a reason of 1 to (?P<max>\d+) characters",
    "pay_not_held": r"not on hold: (?P<ids>.+)",
    "pay_empty_id": r"statement id number (?P<n>[\d, ]+) is empty \(give the ids `portgate pay overdue` lists\)",
    "pay_slip_altered": r"statement (?P<ids>.+) no longer matches its digest \(altered outside the ledger\): "
                         r"payslip not printed, run `portgate pay close` for these days",
    "pay_no_slip_key": r"this server has no payslip key: the operator restarts it with "
                        r"`portgate office serve --config central\.toml` \(key in \[web\] slip_key_file or "
                        r"<keys_dir>/payslip\.key\)",
    "release_note": r"a release needs a note of 1 to 255 characters",
    # central.calls (ship calls) and central.registry.cases (R7)
    "time_required": r"a time is required",
    "not_iso_time": r"(?P<value>'.*') is not an ISO 8601 time",
    "value_no_offset": r"(?P<value>'.*') has no UTC offset",
    "not_imo": r"ship (?P<ship>'.*') is not an IMO number",
    "departure_order": r"departure is not after arrival",
    # central.web.users / workeraccounts (``portgate office add-user``) and central.cli_args (``--from``)
    "user_exists": r"user (?P<login>'.*') already exists",
    "reg_has_account": r"registration (?P<reg>\S+) already has an account",
    "not_a_date_arg": r"(?P<value>'.*') is not a date YYYY-MM-DD",
    "call_year_outside": r"the year (?P<year>-?\d+) is outside (?P<first>\d+)\.\.(?P<last>\d+)",
    "no_call": r"no ship call (?P<id>\S+)",
    "no_case": r"no case (?P<id>\S+)",
    "case_step": r"case (?P<id>\S+) is (?P<status>\S+): cannot take step (?P<step>\S+)",
    "no_event": r"no event (?P<id>\S+)",
    "event_flag": r"event (?P<id>\S+) does not carry flag (?P<flag>\S+)",
    "event_no_reg": r"event (?P<id>\S+) names no registration",
    "charge_required": r"the charge is required \(R7\)",
    # central.registry.flag_reviews (the flag queue)
    "comment_required": r"the comment is required: say what was seen or why there is no infraction",
    "comment_nul": r"the comment contains a NUL character",
    "comment_long": r"the comment is longer than (?P<max>\d+) characters \((?P<n>\d+)\)",
    "event_unflagged": r"event (?P<id>\S+) carries no flag",
    "alarm_comment_required": r"the comment is required: say what was seen or what is being done",
    "no_alarm": r"no (?P<kind>coverage|reader) alarm (?P<id>\d+)",
    "flag_handled_case": r"the flag was already handled \(case #(?P<case>\d+)\)",
    "flag_handled_none": r"the flag was already handled \(no infraction\)",
    "defence_required": r"the defence text is required",
    "attachment_size": r"attachment (?P<name>.+) is larger than (?P<mb>\d+) MB",
    "no_defence": r"no penalty without the prior defence of the accused \(R7, 83\.611 art\. 21 §1\)",
    "suspension_days": r"a suspension needs its number of days \(R4\)",
    "suspension_start": r"a suspension needs its first day",
    "appeal_closed": r"the appeal window closed on (?P<day>\S+)",
    "suspension_span": r"a suspension lasts (?P<lo>\d+) to (?P<hi>\d+) days \((?P<article>[^)]*)\), not (?P<n>-?\d+) \(R4\)",
    "appeal_required": r"the appeal text is required",
    "appeal_outcome": r"appeal outcome (?P<value>'.*') is not upheld\|overturned",
    "no_attachment": r"no attachment (?P<a>\S+) in case (?P<c>\S+)",
    "no_attachment_id": r"no attachment (?P<a>\S+)",
    # the web application's own checks
    "dates_format": r"dates are YYYY-MM-DD",
    "date_format": r"date (?P<value>'.*') is not YYYY-MM-DD",
    "value_date_format": r"(?P<value>'.*') is not YYYY-MM-DD",
    "period_reversed": r"the period ends before it starts",
    "select_statement": r"select at least one statement",
    "select_and_note": r"select statements and write the note \(who reviewed and why\)",
    "choose_photo": r"choose a JPEG or PNG photo",
    "no_photos_dir": r"no photos directory: set \[web\] photos_dir in central\.toml",
    "choose_csv": r"choose at least one CSV file",
    # an office of several ports (issue 37 item 4): a clerk's import of another port's worker, ship calls
    "worker_other_port": r"registration (?P<reg>\S+) is a worker of another port",
    "ships_all_ports": r"ship calls are added by a user of every port",
    "choose_ships": r"choose a ships\.csv file",
    "id_number": r"(?P<field>\w+) id is a number",
    "month_format": r"month (?P<value>'.*') is not YYYY-MM",
    "month_outside": r"month (?P<value>'.*') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
    "date_outside": r"date (?P<value>'.*') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
    "bad_id": r"(?P<field>\w+) (?P<value>'.*') is not a valid id \(" + re.escape(ID_RULE) + r"\)",
    "id_chars": r"(?P<field>\w+) (?P<value>'.*') has characters an id does not have",
    "give_reason": r"give the reason",
    "pay_rulebook_listed": r"choose one of the listed pay rulebooks",
    "not_toml": r"not TOML: (?P<detail>.*)",
    "number_too_long": r"a number has more than (?P<n>\d+) digits",
    "rulebook_nested": r"the rulebook is nested too deeply",
    "rulebook_too_long": r"the rulebook has (?P<n>\d+) characters \(at most (?P<max>\d+)\)",
    "rulebook_no_version": r"the rulebook has no version",
    "unknown_gate": r"gate (?P<gate>'.*') is not a known gate",
    "day_out_of_range": r"the day (?P<day>\S+) is outside (?P<first>\S+)\.\.(?P<last>\S+)",
    "reader_direction": r"(?P<item>'.*') is not READER_ID=in\|out\|both",
    # rulebooks (gate, pay) checked by the schema (portgate.config.convert: msgspec's wording) and
    # by their own validation (edge.rules.rulebook, central.pay.loading): the what-if page
    "schema_type": r"Expected `(?P<want>[^`]+)`, got `(?P<got>[^`]+)`",
    "schema_bound": r"Expected `(?P<want>[^`]+)` (?P<length>of length )?(?P<bound>[<>]=? \S+)",
    "schema_missing": r"Object missing required field `(?P<field>[^`]+)`",
    "schema_enum": r"Invalid enum value (?P<value>.+)",
    "schema_rfc3339": r"Invalid RFC3339 encoded (?P<what>date|datetime|time)",
    "unknown_key": r"unknown key \(misspelt, or not valid here\)",
    "unknown_time_zone": r"unknown time zone (?P<value>'.*')",
    "version_from_required": r"required: the date this version is in force from",
    "no_version_in_force": r"no gate rulebook version in force on (?P<day>\S+)",
    "one_version_required": r"at least one \[\[version\]\] is required",
    "same_effective_from": r"two (?:versions|entries) have the same effective_from",
    "g1_always_on": r"G1 cannot be switched off: an unknown card names no worker to admit",
    "unknown_category": r"unknown category (?P<cat>'.*') \(g12\.categories knows (?P<known>.*)\)",
    "not_pay_rulebook": r"not a watchmen's pay rulebook \(RULES\.md P\)",
    "not_pay_rulebook_named": r"not a watchmen's pay rulebook \(RULES\.md P\) \((?P<other>'.*') has no "
                               r"\[\[day_wages\]\] or \[\[terms\]\]\)",
    "at_least_one": r"at least one (?P<what>day wage|version of the terms|function|line) is required",
    "must_be": r"must (?P<what>be a non-negative amount|be a positive amount|be positive|not be negative|"
                r"be a positive multiplier|be a non-negative number)",
    "rule_twice": r"rule (?P<rule>'.*') appears twice",
    "not_earlier_line": r"(?P<ref>'.*') is not an earlier line",
    # central.production.csvio.outside_period: an interruption's time outside the gang's period
    "outside_period": r"(?P<field>start|end) (?P<value>\S+ \S+) is outside gang (?P<gang>\S+)'s period "
                       r"(?P<period>\S+) of (?P<day>\S+) \((?P<first>\S+ \S+)\.\.(?P<last>\S+ \S+), port time\)",
    "empty_band": r"the hour band is empty or negative",
}

# field names, CSV columns and form places the services name in English -> pt-BR: msgids
# ``field.<name>``; the old table, empty (``python -m testkit.i18n absorb`` moves what is added)
FIELDS: dict[str, str] = {
    # a case's texts (central.registry.cases, R7)
    # workers.csv, cards.csv (portgate.records) and the worker form
    # requisitions.csv, escala.csv, ships.csv and the requisition form
    # the pages' own fields (pay, what-if, flags, reports, cases, escala changes)
    # the admission conditions (central.registry.admission, R9) as the add-worker form names them
    # central.rotation.service.substitute names its command-line option
    # central.rotation.service: an entry removed or of an ended period
    # an office of several ports: a worker's port (workers.csv, the add-worker form)
}


def _field_pt(name: str, in_file: bool) -> str:
    """A field name in pt-BR (kept when unknown); under a file place its CSV column beside it."""
    word = _known("field." + name.strip()) or FIELDS.get(name.strip())
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
        known = _known(part) if part[:3] in ("G3 ", "G7 ", "R2 ") else _known("word." + part)
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
        word, rule = _known(f"flag.{code}", lang) or code, known
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
    said = _known(f"role.{code}", lang)
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
    word = known[0] if isinstance(known, tuple) else (_known(f"flag.{code}") or code)
    return f"{word} ({code})"


def _state_pt(value: str) -> str:
    return _known(f"state.{value}") or value


def _word_pt(prefix: str):
    return lambda value: _known(prefix + value) or value


_CARD_PARAMS = {"status": _state_pt, "new": _state_pt, "kind": _word_pt("card_kind.")}
_PARAM_PT = {"not_toml": {"detail": toml_error_pt}, "not_eligible": {"why": _ineligible_pt},
             "card_import_status": _CARD_PARAMS, "card_import_holder": _CARD_PARAMS,
             "card_import_kind": _CARD_PARAMS, "second_active_card_form": _CARD_PARAMS,
             "card_exists_held": _CARD_PARAMS, "card_transition": {"status": _state_pt, "event": _state_pt},
             "import_sanction": {"status": _word_pt("sanction_status."), "verb": _word_pt("sanction_verb.")},
             "flag_not_one_of": {"allowed": lambda v: ", ".join(_flag_named(k) for k in v.split(", "))},
             "decision_kind": {"allowed": lambda v: ", ".join(_word_pt("decision.")(k) for k in v.split(", "))},
             "outside_period": {"field": _word_pt("period_field.")},
             "appeal_closed": {"day": lambda v: _br_date(v)},
             "past_dispatch": {"day": lambda v: _br_date(v), "end": lambda v: _br_moment(v)},
             "past_change": {"day": lambda v: _br_date(v), "end": lambda v: _br_moment(v)},
             "case_step": {"status": _word_pt("case_status."),
                           "step": lambda v: f"«{_word_pt('case_step.')(v)}»"}}
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
# a place: ``workers.csv:3``, ``registration``, or a configuration key path ``gate.toml:$.version[0].g7``
_PLACE = re.compile(r"(?P<place>[^\s:;]+(?::\d+)?(?::\$[^\s;]*)?|\$[^\s;]*): (?P<rest>.+)\Z", re.S)


def code_of(reason: str) -> tuple[str, dict[str, str]] | None:
    """The code and parameters of an English reason, or ``None`` when it is not a known one."""
    for code, rx in _COMPILED:
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
    return _known("word." + value) or value


def _reason_pt(reason: str, depth: int = 0, in_file: bool = False) -> str:
    found = code_of(reason)
    if found is not None:
        code, params = found
        legacy, msgid = CODES[code], f"svc.{code}"
        template = legacy[1] if isinstance(legacy, tuple) else _pt(msgid)  # a tuple: not absorbed yet
        return template.format(**{k: _param_pt(code, k, v, in_file) for k, v in params.items()})
    place = _PLACE.match(reason)
    if place and depth < 3:  # "workers.csv:3: <reason>", "registration: <reason>"
        where = place["place"]
        is_file = ":" in where or "." in where  # file:line, a file name, a key path
        shown = where if is_file or where.startswith("$") else (_known("field." + where) or FIELDS.get(where, where))
        return f"{shown}: {_reason_pt(place['rest'], depth + 1, in_file or is_file)}"
    return reason


def localize(lang: str, text: str) -> str:
    """``text`` (a service's refusal) in ``lang``: ``"en"`` as the service worded it; otherwise each
    line and each ``; `` part with its known reason in pt-BR (places and parameters kept). In both,
    an ISO day or time the service wrote (``2026-03-15``) reads as the language writes it
    (``15/03/2026``, ``Mar 15, 2026``; a time in the offset it carries, the services write port
    time); a quoted value a person typed stays as typed."""
    if not text:
        return text
    if lang != "en":
        text = "\n".join("; ".join(_reason_pt(part) for part in line.split("; ")) for line in text.split("\n"))
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
    return _known(f"card_kind.{value}") or _known(f"state.{value}") or _known(f"card_event.{value}") or value


def penalty_kind(lang: str, value: str) -> str:
    """A registration record entry's kind (``infraction``, ``suspension``, ``cancellation``) in
    ``lang``; an unknown one as it is."""
    return value if lang == "en" else _known(f"penalty_kind.{value}") or value


def _registry_text(table, lang: str, text: str) -> str:
    for rx, msgid in table:
        m = rx.match(text or "")
        if m:
            params = m.groupdict()
            if "flag" in params:
                params["flag"] = flag_label(lang, params["flag"])
            if "how" in params:  # "appeal waived", "appeal upheld", "appeal window passed"
                params["how"] = _known(f"final_how.{params['how']}", lang) or params["how"]
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


# a gate event's type and its detail (a tap's decision, a reader's or coverage state) as the home
# page's "último evento" names them: msgids ``event_type.<type>``, ``event_detail.<detail>``; a
# tap's decisions are the what-if page's words (``o_<outcome>``)


def event_text(lang: str, parts: tuple[str, str, str] | None) -> str:
    """A gate's last event ``(type, detail, who)`` (``("tap", "exit", "V016")``) as one phrase:
    ``"leitura: saída V016"`` in pt-BR, ``"tap: exit V016"`` in English; a flag or alert code as
    ``flag_label`` names it; ``""`` for none."""
    if not parts:
        return ""
    kind, detail, who = parts
    said = ((_known(f"o_{detail}", lang) or _known(f"event_detail.{detail}", lang)
             or (flag_label(lang, detail) if detail else "")) if detail else "")
    head = _known(f"event_type.{kind}", lang) or kind
    rest = " ".join(x for x in (said, who) if x)
    return f"{head}: {rest}" if rest else head

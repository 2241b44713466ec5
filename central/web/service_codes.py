"""The services' refusals that ``central.web.service_texts`` puts in the page's language, as error
codes: ``CODES`` maps each code to a pattern over the service's English wording (its named groups
are the parameters); its pt-BR text is the catalogs' msgid ``svc.<code>``. Grouped by the service
that words the refusal. Changes whenever a service adds or rewords a refusal (add a ``SAMPLES``
entry in tests/central/web/test_service_texts.py beside it, docs/i18n.md); how a refusal is parsed
and put together again stays in ``service_texts``."""

from __future__ import annotations

import re

from central.web.service_codes_files import FILE_CODES
from wire.topics import ID_RULE

# code: pattern over the English reason; its pt-BR template (the named groups as ``{fields}``) is the msgid
# ``svc.<code>``. An entry a branch still adds as ``(pattern, pt-BR)`` works until ``testkit.i18n absorb`` moves it.
CODES: dict[str, str | tuple[str, str]] = {
    # the worker's R3 health refusal (central.web.workerrequests)
    "reason_required": r"the reason is required",
    "request_pending": r"a request for dispatch (?P<id>\d+) is already pending",
    "health_dispatch_over": r"the dispatch (?P<id>\d+) \((?P<day>\S+) (?P<period>\S+)\) has ended: a health "
                             r"refusal is made before the end of its period",
    # the escala page's requisition form (central.web.routes.escala): the ship chosen from the calls
    "choose_ship": r"choose the ship in port",
    "not_valid_date": r"date (?P<value>'.*') is not a valid date",
    "two_days": r"date (?P<date>'.*') and day (?P<day>'.*') name two days: give one",
    "not_br_date": r"date (?P<value>'.*') is not a date \(dd/mm/yyyy\)",
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
    # central.registry.suspensions: a suspension against the worker's record
    "suspension_repeated": r"registration (?P<reg>\S+) already has the suspension (?P<start>\S+)\.\.(?P<end>\S+) "
                           r"on its record \(penalty (?P<id>\d+)\): nothing written",
    "suspension_apart": r"registration (?P<reg>\S+) is suspended (?P<a>\S+)\.\.(?P<b>\S+): a separate suspension "
                        r"(?P<start>\S+)\.\.(?P<end>\S+) is given once that one has ended",
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
    # central.registry.import_checks: a category neither known nor new (the list once, bounded), a new one refused
    "category_listed_at": r"category (?P<value>'.*') is not one of the categories listed at (?P<first>\S+)",
    "category_and_more": r"category (?P<value>'.*') is not one of (?P<allowed>.+) and (?P<n>\d+) more",
    "new_categories_many": r"at most (?P<max>\d+) new categories, not (?P<n>\d+)",
    "new_category_long": r"new category (?P<name>'.*') is longer than (?P<n>\d+) characters",
    "new_category_comma": r"new category (?P<name>'.*') contains a comma \(one name per category\)",
    "new_category_formula": r"new category (?P<name>'.*'|\".*\") starts with (?P<lead>'.*'): not a category "
                             r"\(a spreadsheet would run it as a formula\)",
    "not_one_of": r"(?P<field>\w+) (?P<value>'.*') is not one of (?P<allowed>.+)",
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
    # portgate.tables: the csv module's field limit, a quote never closed (strict mode's end of data)
    "csv_field_long": r"not a valid CSV file: a field is longer than (?P<n>\d+) characters",
    "csv_unclosed_quote": r"not a valid CSV file: a quoted value opened on this line is never closed \(a \" is missing\)",
    "csv_after_quote": r"not a valid CSV file: a character follows a closing quote \(a value in quotes ends at its comma or at the line end\)",
    "not_csv": r"not a valid CSV file: (?P<detail>.*)",
    "file_not_found": r"file not found",
    "uid_repeats": r"uid (?P<uid>\S+) repeats line (?P<line>\d+)",
    "reg_repeats": r"registration (?P<reg>\S+) repeats line (?P<line>\d+)",
    "reg_not_registered": r"registration (?P<reg>'.*') is not registered",
    # central.registry.csv_import: a CPF/PIS of another worker, a formula name (a category: not_one_of)
    "cpf_taken": r"cpf (?P<value>\d+) is already held by (?P<other>\S+)",
    "pis_taken": r"pis (?P<value>\d+) is already held by (?P<other>\S+)",
    "name_formula": r"name (?P<name>'.*'|\".*\") starts with (?P<lead>'.*'): not a person's name \(a "
                   r"spreadsheet would run it as a formula\)",
    # central.registry.import_checks / enrol: a registration that is no registration, or another in other case
    "reg_formula": r"registration (?P<reg>'.*'|\".*\") starts with (?P<lead>'.*'): not a registration \(a "
                    r"spreadsheet would run it as a formula\)",
    "reg_char": r"registration (?P<reg>'.*'|\".*\") holds (?P<char>'.*'|\".*\"): a registration is letters and "
                r"digits, with - \. / between them",
    "reg_case_registered": r"registration (?P<reg>\S+) differs only in letter case from the registered (?P<other>\S+)",
    "reg_case_line": r"registration (?P<reg>\S+) differs only in letter case from (?P<other>\S+) at line "
                     r"(?P<line>\d+)",
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
    "card_import_other_port": r"card (?P<uid>\S+) is registered at another port: an import does not give it to "
                               r"(?P<new>\S+) \(give (?P=new) a card with a new uid\)",
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
    "gate_ports_clash": r"gate (?P<gate>\S+) is registered at several ports \((?P<where>.*)\): a gate id is unique "
                        r"across ports",
    "gate_case_clash": r"gates (?P<a>\S+) \(port (?P<pa>\S+), (?P<da>.*)\) and (?P<b>\S+) \(port (?P<pb>\S+), "
                        r"(?P<db>.*)\) differ only in letter case: a gate id is unique across ports, letter case aside",
    "gate_not_ledger_port": r"gate (?P<gate>\S+) is registered at port (?P<port>\S+) in (?P<dir>.*), but the ledger "
                             r"has its events at port (?P<other>\S+): a gate's port is its events' port",
    "gate_case_ledger": r"gate (?P<gate>\S+) is registered at port (?P<port>\S+) in (?P<dir>.*), but the ledger has "
                         r"events of gate (?P<same>\S+) at port (?P<other>\S+): gate ids differing only in letter "
                         r"case are one gate id",
    "enrol_gate_not_offered": r"gate (?P<gate>\S+) is not a gate of (?P<reg>\S+)'s port: choose one of the list",
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
    "gate_not_known": r"gate_id (?P<gate>'.*') is not a known gate",
    "gate_no_port": r"gate_id (?P<gate>'.*') has no registered port: register it with portgate central add-gate "
                    r"--port PORT",
    "ship_at_other_port": r"ship (?P<ship>\S+) is in port at another port's gate",
    "ship_at_portless_gate": r"ship (?P<ship>\S+) is in port at gate (?P<gate>'.*'), which has no registered port: "
                             r"register it with portgate central add-gate --port PORT",
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
    "ledger_several_ports": r"the ledger holds several ports \((?P<ports>[^)]*)\): give --config central\.toml \(its "
                            r"port and ports\) so each requisition is filled from its own port's workers",
    "ledger_not_served": r"the ledger holds port\(s\) (?P<ports>.*) that this config does not serve "
                         r"\((?P<served>[^)]*)\): give a central\.toml whose ports name every port of the "
                         r"ledger, or its workers and gates would be read as the home port's",
    "ledger_other_home": r"the ledger's workers without a port are (?P<recorded>\S+)'s \(its home port\), not "
                         r"(?P<home>\S+)'s: give them their port \(registry import --port\) or use a central\.toml "
                         r"whose port is \S+",
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
    # central.evidence.verify / pins: a file that is not an evidence bundle, a pinned key that is not a fingerprint
    "not_a_zip": r"not a readable zip: (?P<why>.+)",
    "no_manifest": r"no manifest\.json: not an evidence bundle",
    "manifest_malformed": r"manifest\.json is malformed: (?P<why>.+)",
    "manifest_not_json": r"manifest\.json is not JSON: (?P<why>.+)",
    # central.db.read_failure: a file that is not a ledger (the driver's detail: the library words below)
    "ledger_not_db": r"(?P<where>\S+) is not a database \(not a portgate ledger\): (?P<detail>.*)",
    "ledger_no_tables": r"(?P<where>\S+) is not a portgate ledger \(no ledger tables: run `portgate ledger migrate "
                         r"--db URL` on a new one\): (?P<detail>.*)",
    # the libraries' own words inside a detail (sqlite3, msgspec): ``_PARAM_PT`` words a detail through them
    "lib_not_db": r"file is not a database",
    "lib_no_table": r"no such table: (?P<table>\S+)",
    "lib_cannot_open": r"unable to open database file",
    "lib_json_char": r"JSON is malformed: invalid character \(byte (?P<n>\d+)\)",
    "lib_json_truncated": r"Input data was truncated",
    "lib_missing_field": r"Object missing required field `(?P<f>[^`]+)`(?: - at `(?P<at>[^`]*)`)?",
    "not_fingerprint": r"(?P<value>'.*') is not a key fingerprint \(16 hex digits, as verify prints them\)",
    # central.evidence.enrolment.countersign: a record the inspector does not countersign
    "countersign_other_key": r"the record enrols key (?P<key>\S+) of gate (?P<gate>\S+), not (?P<read>\S+) \(read at "
                              r"the gangway\): not countersigned",
    "countersign_other_office": r"the record is signed by office key (?P<key>\S+), not (?P<given>\S+): not countersigned",
    "countersigned_already": r"already countersigned by inspector key (?P<key>\S+)",
    # central.web.cli: an office user's ports
    "port_not_served": r"port (?P<port>'[^']*') is not served by this office \(ports: (?P<ports>[^)]*)\)",
    # central.ledger.cli home-port --set: another setter's record or lock (store_failure, exit 1)
    "home_changed_meanwhile": r"setting the ledger's home port failed: another command changed it meanwhile, "
                               r"run again \((?P<why>.*)\)",
    # central.pay.cli_setup: --rulebook that is neither a file nor a shipped rulebook id
    "no_rulebook": r"no rulebook (?P<value>'.*') \(a file, or an id in (?P<where>.+)\)",
    # central.cli_args.db_url_arg: an existing 0-byte SQLite file
    "sqlite_empty": r"SQLite file (?P<path>'.*') is empty \(0 bytes\): a failed copy or a wrong path\? Restore the "
                     r"ledger or fix the path; to start a new ledger in this file run `portgate ledger migrate --db URL`",
    # central.db.read_failure: a server not reachable, a locked file, another failure (the detail: lib_*)
    "db_not_reachable": r"database (?P<where>\S+) not reachable: (?P<detail>.*)",
    "db_read_failed": r"reading (?P<where>\S+) failed: (?P<detail>.*)",
    # central.ledger.liveness.stored_time: a time column holding text that is not a time
    "stored_not_time": r"(?P<where>\w+\.\w+) holds (?P<value>.*), not a time: the office cannot read this row "
                        r"\(fix or delete it\)",
    "lib_locked": r"database is locked",
    # central.pay.slips_cli / verify_slip: portgate pay verify-slip
    "slip_options_both": r"give either --config central\.toml or --db URL --key-file FILE, not both",
    "slip_options_none": r"give --config central\.toml, or --db URL --key-file FILE",
    "slip_key_unreadable": r"cannot read the payslip key: (?P<why>.+)",
    "slip_not_key": r"not a payslip key \((?P<n>\d+) bytes; a key is (?P<size>\d+) random bytes\)",
    "not_payslip": r"not a portgate payslip \(no slip metadata\)",
    "no_slip": r"no slip to verify \(no statements in (?P<first>\S+)\.\.(?P<last>\S+)\)",
    "slip_no_statements": r"no statements in the ledger for (?P<first>\S+)\.\.(?P<last>\S+)",
    "slip_code_mismatch": r"code (?P<code>\S+) does not match the ledger \(the slip or the ledger changed\)",
    "slip_statement_altered": r"statement (?P<ids>.+) no longer matches its digest \(its lines or total were altered "
                               r"outside the ledger\): not proof of pay; run `portgate pay close` for these days",
    "slip_pages": r"the PDF has (?P<n>\d+) page\(s\), the ledger's slips print (?P<m>\d+) \(pages added or removed\)",
    "slip_page_differs": r"page (?P<page>\d+) prints (?P<printed>.*) where the ledger's slip has (?P<want>.*) "
                          r"\(edited\?\)",
    # the configuration files', command-line arguments' and evidence files' refusals
    **FILE_CODES,
}

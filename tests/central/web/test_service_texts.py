"""The services' refusals in the page's language (``central.web.service_texts``): every code has
its pt-BR text, the places and parameters are kept, English is unchanged, and texts the services
really raise (registry edit, upload, photos, pay actions) come out in Portuguese."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pytest
from sqlalchemy.orm import Session

from central.db import make_engine
from central.ledger.migrate import upgrade_engine
from central.pay.statements_store import mark_paid
from central.registry.edit import edit_worker
from central.registry.photos import save_photo
from central.registry.store import import_files
from central.web.service_texts import CODES, TOML_REASONS, code_of, localize, toml_error_pt
from portgate.errors import BadInput

DEMO = Path(__file__).resolve().parents[3] / "config" / "demo"

# one English text per code, as the service words it
SAMPLES = {
    "reason_required": "the reason is required",
    "request_pending": "a request for dispatch 22 is already pending",
    "health_dispatch_over": "the dispatch 7 (2026-12-06 07-13) has ended: a health refusal is made before the end "
                            "of its period",
    "requisition_registered": "requisition already registered as requisition 1 "
                              "(07-13/9300001/g-a/portalo/vigia, 3 workers): nobody dispatched again",
    "requisition_count_changed": "requisition already registered as requisition 1 "
                                 "(07-13/9300001/g-a/portalo/vigia, 3 workers): a changed head count "
                                 "(4) is not added, substitute or remove its escala entries instead",
    "workers_range": "workers must be between 1 and 200, not 99999999999",
    "rotation_taken": "rotation_number 1 is already held by V001 (vigia)",
    "name_too_long": "name is longer than 255 characters",
    "name_not_utf8": "name has a byte that is not UTF-8 text",
    "pay_future": "the payment time 2099-01-01T00:00:00-03:00 is more than a day after now (2026-03-16T10:00:00-03:00)",
    "pay_before_work": ("the payment time 2026-03-15T18:59-03:00 is before the start of the shift of S1@p "
                        "(2026-03-15T19:00-03:00)"),
    "too_long": "registration is longer than 64 characters (100)",
    "int_outside": "rotation_number 99999999999 is outside -2147483648..2147483647",
    "field_nul": "registration contains a NUL character",
    "day_outside": "health_exam_date '9999-12-31' is outside 2000-01-01..2100-12-31",
    "import_reinstate": "registration V011 is cancelled (R4): an import does not reinstate a worker (a "
                        "cancellation is final, 83.611 art. 21 b)",
    "import_suspension": "registration V012 is suspended 2026-03-10..2026-03-29 (R4): an import does not change "
                         "a suspension (it ends on its own date, and the worker's edit page changes it with an "
                         "audit entry)",
    "import_sanction": "registration V002 is active: an import does not suspend a worker (use `portgate registry "
                       "suspend`: the penalty goes on the registration record, R4)",
    "out_of_range": "a value is out of range",
    "address_nul": "the address contains a NUL character",
    "suspension_end": "the suspension would end after 9999-12-31",
    "suspension_repeated": "registration V001 already has the suspension 2026-03-20..2026-03-24 on its record "
                           "(penalty 3): nothing written",
    "suspension_apart": "registration V001 is suspended 2026-03-20..2026-03-24: a separate suspension "
                        "2026-04-01..2026-04-05 is given once that one has ended",
    "month_outside": "month '0001-01' is outside 2000-01..2100-12",
    "requisition_repeated": "repeats requisition req.csv:2 (07-13/9300001/g-a/portalo/vigia)",
    "not_iso_date": "health_exam_date '15/01/2026' is not an ISO date (YYYY-MM-DD)",
    "required": "name is required",
    "not_whole": "rotation_number 'x' is not a whole number",
    "flag_not_one_of": "flag 'NOPE' is not one of BORROWED_CARD, NOT_DISPATCHED, CONFISCATION",
    "not_one_of": "status 'aposentado' is not one of active|suspended|cancelled",
    "control_char": "name 'a<U+0001>' contains a control character or line break (U+0001 at character 2)",
    "format_char": "name 'Ana<U+202E>Lima' contains an invisible format character (U+202E at character 4): a direction "
                   "mark or zero-width character is part of no name",
    "not_timestamp": "arrival 'amanhã' is not an ISO 8601 timestamp",
    "no_offset": "arrival '2026-03-15T10:00' has no UTC offset",
    "out_of_range_date": "arrival '9999-12-31T23:59+14:00' is out of the representable date range",
    "suspension_order": "suspended_from 2026-03-10 is after suspended_until 2026-03-01",
    "negative_rotation": "rotation_number -1 is negative",
    "period_format": "period '7-13h' is not HH-HH (e.g. 19-01)",
    "period_hours": "period '25-07' has hours out of range",
    "missing_columns": "missing column(s) name, category",
    "header_columns": "header lacks column(s) registration",
    "unknown_columns": "unknown column(s) rotation_numbr (the file takes registration, name, rotation_number)",
    "nul_char": "contains a NUL character",
    "not_utf8": "file is not UTF-8",
    "not_csv": "not a valid CSV file: unexpected end of data",
    "csv_field_long": "not a valid CSV file: a field is longer than 131072 characters",
    "csv_unclosed_quote": 'not a valid CSV file: a quoted value opened on this line is never closed (a " is missing)',
    "csv_after_quote": "not a valid CSV file: a character follows a closing quote (a value in quotes ends at its comma or at the line end)",
    "time_not_timestamp": "time '15/03/2026 06:00' is not an ISO 8601 timestamp",
    "time_no_offset": "time '2026-03-15T06:00' has no UTC offset",
    "file_not_found": "file not found",
    "uid_repeats": "uid 0A04A10001 repeats line 2",
    "reg_repeats": "registration V001 repeats line 2",
    "cpf_taken": "cpf 00000000191 is already held by V001",
    "pis_taken": "pis 12345678900 is already held by V001",
    "ids_repeated": "migration 0038 refused: a CPF or PIS/NIS on two registrations (cpf 00000000191: V001/V921): "
                    "leave each number on one registration and migrate again",
    "name_formula": "name '=cmd|calc' starts with '=': not a person's name (a spreadsheet would run it as a formula)",
    "reg_formula": "registration '=HYPERLINK(\"x\")' starts with '=': not a registration (a spreadsheet would run "
                   "it as a formula)",
    "reg_char": "registration 'V9 04' holds ' ': a registration is letters and digits, with - . / between them",
    "reg_case_registered": "registration v017 differs only in letter case from the registered V017",
    "reg_case_line": "registration v017 differs only in letter case from V017 at line 2",
    "category_listed_at": "category 'astronaut' is not one of the categories listed at d.csv:2",
    "category_and_more": "category 'astronaut' is not one of a, b, c and 9 more",
    "new_categories_many": "at most 20 new categories, not 21",
    "ledger_not_db": "sqlite:///bad.db is not a database (not a portgate ledger): file is not a database",
    "ledger_no_tables": "sqlite:///x.db is not a portgate ledger (no ledger tables: run `portgate ledger migrate "
                        "--db URL` on a new one): no such table: workers",
    "lib_not_db": "file is not a database",
    "lib_no_table": "no such table: workers",
    "lib_cannot_open": "unable to open database file",
    "lib_json_char": "JSON is malformed: invalid character (byte 0)",
    "lib_json_truncated": "Input data was truncated",
    "lib_missing_field": "Object missing required field `format` - at `$.keys`",
    "new_category_long": "new category 'xxx' is longer than 64 characters",
    "new_category_comma": "new category 'a,b' contains a comma (one name per category)",
    "new_category_formula": "new category '=cmd' starts with '=': not a category (a spreadsheet would run it as a formula)",
    "reg_not_registered": "registration 'V999' is not registered",
    "actor_required": "actor is required (who makes the change)",
    "no_worker": "no worker with registration 'V999'",
    "no_card": "no card with uid 'FF00'",
    "card_transition": "card 0A04A10001 is replaced: cannot be lost",
    "card_import_status": "card 0A04A10008 is confiscated: an import does not make it active",
    "card_import_use": "use `portgate registry lost 0A04A10001`",
    "card_import_use_case": ("use `portgate registry return-card 0A04A10008 --decision TEXT` "
                             "(it closes the card's open case)"),
    "card_replaced_never": "a replaced card is never used again",
    "card_inspector_only": "only a union inspector confiscates a card, at the gate (G10)",
    "card_not_lifecycle": "not a card lifecycle move (docs/office.md)",
    "card_import_holder": ("card 0A04A10001 is active and held by V001: an import does not move a card "
                           "to another registration (give V002 a card with a new uid)"),
    "card_import_other_port": ("card 0A04A10001 is registered at another port: an import does not give it to "
                               "V002 (give V002 a card with a new uid)"),
    "card_import_kind": ("card 0A04A10001 is active and a control card: an import does not change a "
                         "card's kind (issue a card with a new uid)"),
    "second_active_card": "registration V004 already has active control card 0A04A10904",
    "reg_cancelled": "registration V001 is cancelled",
    "reg_already_cancelled": "registration V001 is already cancelled",
    "card_exists": "card 0A04A10001 already exists",
    "photo_empty": "the photo file is empty",
    "photo_too_big": "the photo file has 20000000 bytes (at most 10485760)",
    "photo_type": "the photo is GIF: only JPEG or PNG",
    "photo_pixels": "the photo has 9000x9000 pixels: too large (at most 8000000 pixels)",
    "photo_not_picture": "the photo is not a JPEG or PNG picture",
    "photo_damaged": "the photo file is damaged or cut short: not a readable JPEG or PNG picture",
    "photo_bomb": "the photo has too many pixels: too large",
    "photo_name": "registration '../x' cannot name a photo file",
    "wrong_day": "requisition(s) not for 2026-03-15: req.csv:2, req.csv:3",
    "no_entry": "no escala entry 42",
    "gate_not_of_ports": "gate_id 'rio-g1' is not a gate of port(s) santos",
    "gate_not_known": "gate_id 'g-zzz' is not a known gate",
    "gate_no_port": "gate_id 'g-zzz' has no registered port: register it with portgate central add-gate --port PORT",
    "ship_at_portless_gate": "ship 9400001 is in port at gate 'g-lost', which has no registered port: register it "
                             "with portgate central add-gate --port PORT",
    "ship_at_other_port": "ship 9400001 is in port at another port's gate",
    "entry_removed": "escala entry 42 was already removed (refused)",
    "not_eligible": "V001 is not eligible: G7 rest",
    "past_dispatch": "the period 07-13 of 2026-03-10 ended at 2026-03-10 13:00 port time: a past escala is not dispatched",
    "past_change": "escala entry 12 (2026-03-10 07-13) ended at 2026-03-10 13:00 port time: a past escala is not changed",
    "unknown_function": "function 'vigia_xefe' is unknown to the office (no category fills it): the functions "
                        "are vigia, vigia_chefe",
    "pay_unknown": "unknown: S1, S2",
    "pay_already_paid": "already paid: S1",
    "pay_superseded": "superseded: S1 (by S2)",
    "pay_held": "on hold for review (release it first): S1",
    "pay_not_held": "not on hold: S1",
    "pay_empty_id": "statement id number 2 is empty (give the ids `portgate pay overdue` lists)",
    "pay_slip_altered": ("statement S1, S2 (+3) no longer matches its digest (altered outside the ledger): "
                         "payslip not printed, run `portgate pay close` for these days"),
    "pay_no_slip_key": ("this server has no payslip key: the operator restarts it with `portgate office serve "
                        "--config central.toml` (key in [web] slip_key_file or <keys_dir>/payslip.key)"),
    "release_note": "a release needs a note of 1 to 255 characters",
    "time_required": "a time is required",
    "not_iso_time": "'amanhã' is not an ISO 8601 time",
    "value_no_offset": "'2026-03-15T10:00' has no UTC offset",
    "not_imo": "ship '93X' is not an IMO number",
    "departure_order": "departure is not after arrival",
    "call_year_outside": "the year 9999 is outside 2000..2100",
    "user_exists": "user 'escritorio' already exists",
    "reg_has_account": "registration V017 already has an account",
    "not_a_date_arg": "'2026-02-30' is not a date YYYY-MM-DD",
    "no_call": "no ship call 7",
    "choose_ship": "choose the ship in port",
    "not_valid_date": "date '2026-02-30' is not a valid date",
    "two_days": "date '2026-03-15' and day '2026-03-16' name two days: give one",
    "not_date_time": "'31/02/2026 10:00' is not a date and time (dd/mm/yyyy hh:mm)",
    "ship_not_in_port": "ship 9300001 is not in port on 2026-03-15",
    "call_no_gate": "the call of ship 9300001 names no gate: give it one on the ships page",
    "no_case": "no case 7",
    "case_step": "case 7 is final: cannot take step appeal",
    "no_event": "no event 12",
    "event_flag": "event 12 does not carry flag BORROWED_CARD",
    "event_no_reg": "event 12 names no registration",
    "charge_required": "the charge is required (R7)",
    "comment_required": "the comment is required: say what was seen or why there is no infraction",
    "comment_nul": "the comment contains a NUL character",
    "comment_long": "the comment is longer than 2000 characters (2001)",
    "event_unflagged": "event 3f2c carries no flag",
    "alarm_comment_required": "the comment is required: say what was seen or what is being done",
    "no_alarm": "no reader alarm 7",
    "flag_handled_case": "the flag was already handled (case #4)",
    "flag_handled_none": "the flag was already handled (no infraction)",
    "suspension_span": "a suspension lasts 1 to 30 days (DL 2.032 art. 30), not 45 (R4)",
    "defence_required": "the defence text is required",
    "attachment_size": "attachment prova.pdf is larger than 5 MB",
    "decision_kind": "decision 'talvez' is not one of none, reprimand, suspension, cancellation",
    "no_attachment_id": "no attachment 99999999999999999999",
    "no_defence": "no penalty without the prior defence of the accused (R7, 83.611 art. 21 §1)",
    "suspension_days": "a suspension needs its number of days (R4)",
    "suspension_start": "a suspension needs its first day",
    "appeal_closed": "the appeal window closed on 2026-04-14",
    "appeal_required": "the appeal text is required",
    "appeal_outcome": "appeal outcome 'maybe' is not upheld|overturned",
    "no_attachment": "no attachment 3 in case 7",
    "dates_format": "dates are YYYY-MM-DD",
    "date_format": "date '15/03' is not YYYY-MM-DD",
    "value_date_format": "'15/03' is not YYYY-MM-DD",
    "period_reversed": "the period ends before it starts",
    "select_statement": "select at least one statement",
    "select_and_note": "select statements and write the note (who reviewed and why)",
    "choose_photo": "choose a JPEG or PNG photo",
    "no_photos_dir": "no photos directory: set [web] photos_dir in central.toml",
    "choose_csv": "choose at least one CSV file",
    "worker_other_port": "registration SAN001 is a worker of another port",
    "not_br_date": "date '16-03-2026' is not a date (dd/mm/yyyy)",
    "ledger_several_ports": "the ledger holds several ports (paranagua, santos): give --config central.toml (its "
                            "port and ports) so each requisition is filled from its own port's workers",
    "ledger_not_served": "the ledger holds port(s) santos that this config does not serve (paranagua): give a "
                         "central.toml whose ports name every port of the ledger, or its workers and gates would "
                         "be read as the home port's",
    "ledger_other_home": "the ledger's workers without a port are santos's (its home port), not rio's: give them "
                         "their port (registry import --port) or use a central.toml whose port is santos",
    "ships_all_ports": "ship calls are added by a user of every port",
    "choose_ships": "choose a ships.csv file",
    "id_number": "entry id is a number",
    "month_format": "month '2026-13' is not YYYY-MM",
    "date_outside": "date '1900-01-01' is outside 2000-01-01..2100-12-31",
    "bad_id": "gate_id 'g/aurora' is not a valid id (1-64 of A-Z a-z 0-9 _ . -, starting with a letter or digit)",
    "id_chars": "gate 'g a' has characters an id does not have",
    "give_reason": "give the reason",
    "param_listed": "choose one of the listed parameters",
    "param_type_value": "type a value",
    "param_not_bool": "'talvez' is not true or false (sim or não)",
    "param_unknown": "'g99.x' is not a parameter of the rulebook",
    "param_not_table": "g6 is not a table in the rulebook",
    "pay_rulebook_listed": "choose one of the listed pay rulebooks",
    "not_toml": "not TOML: Expected '=' after a key in a key/value pair (at line 2, column 5)",
    "reader_direction": "'r1=up' is not READER_ID=in|out|both",
    "paid_ref_too_long": "the payment reference has 129 characters (at most 128)",
    "number_too_long": "a number has more than 4300 digits",
    "rulebook_nested": "the rulebook is nested too deeply",
    "rulebook_too_long": "the rulebook has 300000 characters (at most 200000)",
    "rulebook_no_version": "the rulebook has no version",
    "unknown_gate": "gate '../../etc' is not a known gate",
    "day_out_of_range": "the day 0001-01-01 is outside 2000-01-01..2100-12-31",
    "schema_type": "Expected `str`, got `int`",
    "schema_bound": "Expected `str` of length <= 3",
    "schema_missing": "Object missing required field `effective_from`",
    "schema_enum": "Invalid enum value 'maybe'",
    "schema_rfc3339": "Invalid RFC3339 encoded date",
    "unknown_key": "unknown key (misspelt, or not valid here)",
    "unknown_time_zone": "unknown time zone 'Mars/Olympus'",
    "version_from_required": "required: the date this version is in force from",
    "no_version_in_force": "no gate rulebook version in force on 2020-01-01",
    "one_version_required": "at least one [[version]] is required",
    "same_effective_from": "two versions have the same effective_from",
    "g1_always_on": "G1 cannot be switched off: an unknown card names no worker to admit",
    "unknown_category": "unknown category 'zz' (g12.categories knows estivador, vigia)",
    "not_pay_rulebook": "not a watchmen's pay rulebook (RULES.md P)",
    "not_pay_rulebook_named": "not a watchmen's pay rulebook (RULES.md P) ('gate-default' has no [[day_wages]] or [[terms]])",
    "at_least_one": "at least one day wage is required",
    "must_be": "must be a positive amount",
    "rule_twice": "rule 'night' appears twice",
    "not_earlier_line": "'base' is not an earlier line",
    "empty_band": "the hour band is empty or negative",
    "outside_period": "start 2026-03-10 00:10 is outside gang T1's period 19-01 of 2026-03-10 "
                      "(2026-03-10 19:00..2026-03-11 01:00, port time)",
    # issue 34: the add-worker form, cards typed by hand, the list's filter, the reversal
    "already_registered": "V001 is already registered",
    "card_exists_held": "card 0A04A10003 already exists (active, held by V003)",
    "second_active_card_form": "registration V001 already has active control card 0A04A10001: report it lost or "
                               "replace it",
    "card_not_held": "card 0A04A10003 is not held by V001",
    "enrol_gate_offline": "gate g-b is offline: it cannot enter enrol mode",
    "enrol_gate_busy": "gate g-c is already in enrol mode for another worker",
    "enrol_open": "registration V008 already has an open enrol session: cancel it first",
    "enrol_not_open": "enrol session 3 is not open for V008",
    "enrol_no_read": "enrol session 3 has no card read yet",
    "enrol_missing": "enrol session 99 does not exist",
    "enrol_no_mqtt": "no MQTT link to the gates is configured",
    "enrol_not_told": "gate g-c not told: MQTT broker 127.0.0.1:1 not reachable: Connection refused",
    "gate_ports_clash": "gate g-aurora is registered at several ports (santos: /k/s, paranagua: /k/p): "
                        "a gate id is unique across ports",
    "gate_case_clash": "gates g-aurora (port santos, /k/s) and G-Aurora (port paranagua, /k/p) differ only in letter "
                       "case: a gate id is unique across ports, letter case aside",
    "gate_not_ledger_port": "gate g-aurora is registered at port paranagua in /k/p, but the ledger has its events at "
                            "port santos: a gate's port is its events' port",
    "gate_case_ledger": "gate G-Aurora is registered at port paranagua in /k/p, but the ledger has events of gate "
                        "g-aurora at port santos: gate ids differing only in letter case are one gate id",
    "enrol_gate_not_offered": "gate g-aurora is not a gate of PRV001's port: choose one of the list",
    "card_kind_form": "kind 'inspector' is not control or badge",
    "uid_not_hex": "UID 'XYZ' is not hexadecimal",
    "uid_odd": "UID '123' has an odd number of hex digits",
    "uid_bytes": "UID '0102' must be 3 to 10 bytes long",
    "uid_digits": "UID '123' must be exactly 10 digits for format decimal10",
    "uid_bits": "UID '9999999999' does not fit in 32 bits for format decimal10",
    "uid_w26": "UID '99900001': facility must be 0-255 and number 0-65535 for format wiegand26",
    "uid_ambiguous": "uid 0077660161 is 10 decimal digits: EM4100 hex or a DEZ10 number? say which in column "
                     "uid_form (hex, decimal10, decimal10_le)",
    "uid_partial": "uid_form dez8 carries only 24 bits of the card: enrol it by its whole UID",
    "date_br_format": "health_exam_date '31/02/2026' is not a day written dd/mm/aaaa",
    "expiring_outside": "expiring '99999' is outside 0..1100",
    "admission_future_birth": "83.611 art. 15 a: birth date 2090-05-15 is in the future (after the registration on "
                              "2026-12-01)",
    "admission_age": "83.611 art. 15 a: age 45 on 2026-12-01 is outside 21..41",
    "admission_brazilian": "83.611 art. 15 a: must be Brazilian (nationality PT)",
    "admission_missing": "83.611 art. 15 b: atestado de saúde e visão (médico de instituição pública) (vision) "
                         "missing: give the document and its date",
    "admission_late": "83.611 art. 15 c: atestado de bons antecedentes (autoridade policial) (police_record) is "
                      "dated 2026-12-02, after the registration on 2026-12-01",
    "admission_before_birth": "83.611 art. 15 c: atestado de bons antecedentes (autoridade policial) (police_record) "
                              "is dated 1900-01-01, before the birth on 1990-05-15",
    "admission_pair": "vision_on is required with vision",
    "admission_doc": "vision (the document) is required with vision_on",
    "foreign_share": "DL 2.032 art. 5 §3: foreigners would be 2 of 4 stevedores, at most one third (1)",
    "pay_not_paid": "not marked paid: S1@p",
    "reversal_reason": "a reversal needs a reason of 1 to 255 characters",
    "card_not_uid": "card 'xyz!' is not a card UID in any UID form",
    "docbr_length": "cpf '5299822472' is not 11 digits (000.000.000-00, e.g. 529.982.247-25)",
    "docbr_check": "pis '170.33259.50-5' fails its check digits (a digit mistyped?)",
    "not_a_zip": "not a readable zip: File is not a zip file",
    "no_manifest": "no manifest.json: not an evidence bundle",
    "manifest_malformed": "manifest.json is malformed: Object missing required field `format`",
    "manifest_not_json": "manifest.json is not JSON: invalid character (byte 0)",
    "not_fingerprint": "'zz' is not a key fingerprint (16 hex digits, as verify prints them)",
    "home_port_not_in_ports": "port 'santos' (the home port) must be one of ports ['paranagua']",
    "ports_twice": "ports ['Santos', 'santos'] names a port twice (letter case aside)",
    "directory_not_found": "directory not found: /etc/portgate/keys",
    "file_not_found_at": "file not found: /var/lib/portgate/data/workers.csv",
    "database_backend": "mysql is not supported: the ledger runs on SQLite (sqlite:///path.db) or PostgreSQL "
                        "(postgresql+psycopg://user@host/db)",
    "nats_without_servers": "[nats] has settings but no servers: give servers (the JetStream ingest) or remove "
                            "[nats] (the MQTT ingest)",
    "after_to": "2026-03-20 is after --to 2026-03-01",
    "crew_stamp_years": "start '0001-01-01T12:00:00+00:00' is outside the years 1900-2199 (UTC)",
    "crew_day_years": "--to is outside the years 1900-2199",
    "crew_period_long": "period '2024-06-10T08:00:00-03:00'..'2024-07-20T07:00:00-03:00' is longer than 31 days",
    "crew_period_order": "end '2024-06-10T07:00:00-03:00' is not after start '2024-06-10T08:00:00-03:00'",
    "crew_overlap": "period of crew_id A '2024-06-10T11:00:00-03:00'..'2024-06-10T13:00:00-03:00' "
                    "(America/Sao_Paulo) overlaps periods.csv:2",
    "crew_overlaps_head": "overlapping work periods:",
    "output_unwritable": "cannot write the output 'books/overtime_book.csv': Is a directory",
    "crew_not_date": "'2024-02-30' is not a date (YYYY-MM-DD)",
    "crew_to_before_from": "--to 2024-06-01 is before --from 2024-06-10",
    "crew_no_periods": "no work periods for ship '999'",
    "option_not_timestamp": "--at 'ontem' is not an ISO 8601 timestamp",
    "option_no_offset": "--at '2026-03-15T10:00' has no UTC offset",
    "evidence_registration_empty": "the registration (--registration) is empty",
    "evidence_nothing": "no event or shift of V999 from 2026-03-15 to 2026-03-16",
    "evidence_out_exists": "'/tmp/b.zip' already exists: an evidence bundle is never replaced silently (give "
                           "another --out, or --force to replace it)",
    "value_outside": "'1900-01-01' is outside 2000-01-01..2100-12-31",
    "suspension_lasts": "a suspension lasts 1 to 30 days (83.611 art. 21 a), not 99",
    "cells_more": "2 cell(s) more than the header has",
    "port_not_served": "port 'rio' is not served by this office (ports: santos)",
    "not_gate_pin": "'g1' is not GATE=FINGERPRINT",
    "pin_file_unreadable": "cannot read the pin file: No such file or directory",
    "pin_file_not_toml": "not a pin file: not UTF-8 TOML (Expected '=' after a key in a key/value pair (at line 1, column 3))",
    "pin_file_unknown_key": "not a pin file: unknown key 'owner' (office, inspector, gates)",
    "pin_fingerprints": "a fingerprint or a list of them",
    "pin_gates_table": "a table GATE = FINGERPRINT",
    "member_over_limit": "unpacks to 900000000 bytes, over the limit of 268435456",
    "members_over_limit": "members unpack to 900000000 bytes in all, over the limit of 1073741824",
    "member_damaged": "damaged member (Bad CRC-32 for file 'shifts.json')",
    "member_longer": "holds more than the 10 bytes it declares",
    "not_database_url": "'x' is not a database URL (sqlite:///path.db or postgresql+psycopg://user@host/db): Could not "
                        "parse SQLAlchemy URL from given URL string",
    "not_database_url_config": "not a database URL: Could not parse SQLAlchemy URL from given URL string",
    "sqlite_memory": "an in-memory SQLite database holds no ledger: give a file",
    "sqlite_memory_config": "an in-memory SQLite ledger is private to one connection: use a file or PostgreSQL",
    "sqlite_missing": "SQLite file '/tmp/none.db' does not exist (run `portgate ledger migrate --db URL` to create a "
                      "ledger)",
    "sqlite_no_directory": "the directory '/srv/none' of SQLite file '/srv/none/l.db' does not exist (SQLite does not "
                           "create directories): fix the path or create the directory",
    "name_database": "name the database: --config central.toml (its database_url) or --db URL, one of them",
    "keys_dir_missing": "'/etc/portgate/keys' does not exist (portgate central add-gate creates the key directory)",
    "keys_dir_not_dir": "'/etc/portgate/keys' is not a directory (portgate central add-gate creates the key directory)",
    "password_twice": "give the password in database_password_file or in database_url, not both",
    "port_keys_dirs_strange": "port_keys_dirs names rio: not a port of ports other than the home port 'santos' (whose "
                              "registrations are in keys_dir)",
    "nats_durable_ports": "[nats] durable names one consumer: with several ports leave it empty (each port's consumer "
                          "is ledger-<port>)",
    "nats_user_no_password": "[nats] user given without password_file",
    "nats_name": "'a.b' is not a NATS name (not empty; no whitespace, dot, *, > or /)",
    "nats_server": "'http://x' is not a NATS server address (nats://host:port or tls://host:port)",
    "unknown_time_zone_iana": "unknown time zone 'Mars/Base' (an IANA name such as America/Sao_Paulo)",
    "gate_not_fifo": "/srv/gate/reads is not a FIFO (a fifo reader reads a named pipe)",
    "gate_is_directory": "/srv/gate/shown.jsonl is a directory, not a file",
    "gate_file_no_directory": "the directory of /srv/none/shown.jsonl does not exist (the file is made there, never "
                              "the directory)",
    "gate_cannot_make_dir": "cannot make the directory /proc/state: No such file or directory",
    "gate_lock_unopenable": "cannot open the gate's lock file /srv/state/gate.lock: Permission denied",
    "cannot_open_path": "cannot open /srv/gate/reads: Permission denied",
    "sqlite_dir_unwritable": "the directory '/srv' of SQLite file '/srv/l.db' is not writable (Operation not "
                             "permitted): SQLite makes its journal files there",
    "sqlite_file_unwritable": "SQLite file '/srv/l.db' cannot be opened for writing: Read-only file system",
    "sqlite_is_directory": "'/srv' is a directory, not a SQLite file: give the ledger file in it "
                           "(sqlite:///DIR/ledger.db)",
    "ledger_none_empty": "sqlite:////srv/x.db holds no portgate ledger (an empty database): pay creates none, "
                         "create the ledger with `portgate ledger migrate --db URL`",
    "ledger_none_other": "sqlite:////srv/x.db holds no portgate ledger (other tables: foo): pay writes nothing "
                         "there, create the ledger with `portgate ledger migrate --db URL` in a database of its own",
    "close_conflict": "closing the month failed: another close of these days is running or ran meanwhile, run it "
                      "again (UNIQUE constraint failed: shifts.shift_id)",
    "at_before_taps": "2026-03-10T00:00:00+00:00 is before the last tap of the closed days "
                      "(2026-03-31T22:00:00+00:00): a statement is computed after the work it pays; give a later "
                      "--at or leave it out (now)",
    "instance_name": "instance name 'a b' (3 characters) must be 1 to 64 letters, digits, - or _",
    "cannot_listen": "cannot listen on 127.0.0.1:9102 (already in use)",
    "gate_id_reserved": "gate id 'payslip' is reserved: payslip.key in a keys dir is the office's payslip key; choose "
                        "another gate id",
    "key_no_directory": "the directory '/srv/none' of '/srv/none/s.key' does not exist (a key file is made there, "
                        "never the directory): fix the path or create the directory",
    "secret_missing": "MQTT password file not found",
    "secret_unreadable": "gate HMAC key file cannot be opened: Permission denied",
    "secret_open": "MQTT password file must not be accessible by group or others (chmod 600)",
    "secret_empty": "database password file is empty",
    "cannot_open": "cannot be opened: Permission denied",
    "not_valid_toml": "not valid TOML: Expected '=' after a key in a key/value pair (at line 1, column 3)",
    "countersign_other_key": "the record enrols key 0123456789abcdef of gate g1, not 0000000000000000 (read at the "
                             "gangway): not countersigned",
    "countersign_other_office": "the record is signed by office key 0123456789abcdef, not 0000000000000000: not "
                                "countersigned",
    "countersigned_already": "already countersigned by inspector key 0123456789abcdef",
    "home_changed_meanwhile": "setting the ledger's home port failed: another command changed it meanwhile, run "
                              "again (database is locked)",
    "no_rulebook": "no rulebook 'nope.toml' (a file, or an id in /srv/portgate/config/rulebooks)",
    "sqlite_empty": "SQLite file '/srv/l.db' is empty (0 bytes): a failed copy or a wrong path? Restore the ledger or "
                    "fix the path; to start a new ledger in this file run `portgate ledger migrate --db URL`",
    "db_not_reachable": "database sqlite:////srv/l.db not reachable: database is locked",
    "db_read_failed": "reading sqlite:////srv/l.db failed: disk I/O error",
    "stored_not_time": "office_processes.seen_at holds 'garbage', not a time: the office cannot read this row "
                       "(fix or delete it)",
    "lib_locked": "database is locked",
    "sync_lanes_protocol": "sync.lanes = 3 needs mqtt.protocol = '3.1.1' (a NATS cluster): mosquitto gives every "
                           "connection of a gate the gate's client id (use_username_as_clientid), so the lanes would "
                           "take the session from each other",
    "office_running_instance": "another office 'a' of port santos (pid 4242 on host escritorio-1, heartbeat 3 s ago) "
                               "is running on this ledger: start this one with another --instance NAME or stop that "
                               "one (an office that died stops counting 60 s after its last heartbeat)",
    "office_running_default": "another office without --instance of port santos (pid 4242 on host escritorio-1, "
                              "heartbeat 3 s ago) is running on this ledger: start this one with --instance NAME or "
                              "stop that one (an office that died stops counting 60 s after its last heartbeat)",
    "slip_options_both": "give either --config central.toml or --db URL --key-file FILE, not both",
    "slip_options_none": "give --config central.toml, or --db URL --key-file FILE",
    "slip_key_unreadable": "cannot read the payslip key: Permission denied",
    "slip_not_key": "not a payslip key (3 bytes; a key is 32 random bytes)",
    "pdf_not_pdf": "not a PDF file (it does not start with %PDF-)",
    "pdf_damaged": "a damaged PDF: it starts as a PDF but its contents cannot be read (cut short or altered?)",
    "not_payslip": "not a portgate payslip (no slip metadata)",
    "no_slip": "no slip to verify (no statements in 2026-03-01..2026-03-02)",
    "slip_no_statements": "no statements in the ledger for 2026-03-01..2026-03-02",
    "slip_code_mismatch": "code ABCD-1234 does not match the ledger (the slip or the ledger changed)",
    "slip_statement_altered": "statement S1, S2 no longer matches its digest (its lines or total were altered outside "
                              "the ledger): not proof of pay; run `portgate pay close` for these days",
    "slip_pages": "the PDF has 3 page(s), the ledger's slips print 2 (pages added or removed)",
    "slip_page_differs": "page 1 prints 'R$ 900,00' where the ledger's slip has 'R$ 180,00' (edited?)",
    "database_url_backend": "database URL 'mysql://u@h/db': mysql is not supported: the ledger runs on SQLite "
                            "(sqlite:///path.db) or PostgreSQL (postgresql+psycopg://user@host/db)",
    "option_outside": "--at '1999-12-31T23:00:00-03:00' is outside 2000-01-01..2100-12-31",
    "exit_before_admit": "exit_at is before admit_at",
    "not_whole_hour": "period_start 2026-03-15 07:30:00-03:00 is not on a whole local hour (America/Sao_Paulo)",
    "shift_given_twice": "shift 103/9300001/2026-03-15/07-13 is given twice (first at shifts.csv:5)",
    "not_yes_no": "meal_worked 'maybe' is not yes|no",
    "function_not_in_rulebook": "function 'cook' is not in rulebook decreto-83611-1979 (one of: vigia, vigia_chefe)",
    "gate_has_key": "gate g-new already has a key (use --rotate to replace it)",
    "ed25519_one_block": "not an Ed25519 public key: give one PEM PUBLIC KEY block and nothing else",
    "ed25519_weak": "not an Ed25519 public key: a weak key (all zero or the neutral point)",
    "ed25519_length": "not an Ed25519 public key: An Ed25519 public key is 32 bytes long",
    "not_ed25519_why": "not an Ed25519 public key: Incorrect padding",
    "not_ed25519": "not an Ed25519 public key",
    "office_key_unreadable": "cannot read the office public key: Permission denied",
    "password_short": "a password has at least 10 characters",
    "pay_rulebook_is_gate": "not a pay rulebook: a gate rulebook (it has [[version]]); give a pay rulebook "
                            "(config/rulebooks/decreto-83611-1979.toml ...)",
    "pay_rulebook_no_id": "not a pay rulebook: no rulebook id; give a pay rulebook "
                          "(config/rulebooks/decreto-83611-1979.toml ...)",
}


def test_a_config_file_s_key_is_a_place_and_an_errno_text_is_worded():
    """``ConfigError`` names its place ``file.toml:key`` (no ``$.``): the reason behind it is still
    worded, and an OS error's own words (strerror) read in pt-BR where the catalogs have them."""
    text = "/etc/portgate/gate.toml:office_public_key_file: cannot read the office public key: No such file or directory"
    assert localize("pt", text) == ("/etc/portgate/gate.toml:office_public_key_file: não foi possível ler a chave "
                                    "pública do escritório: arquivo ou diretório inexistente")
    assert localize("en", text) == text


def test_every_code_has_a_sample_that_is_read_as_that_code_and_has_a_portuguese_text():
    assert set(SAMPLES) == set(CODES)
    for code, text in SAMPLES.items():
        found = code_of(text)
        assert found is not None and found[0] == code, (code, text, found)
        pt = localize("pt", text)
        assert pt != text, code


def test_places_and_parameters_are_kept_and_english_is_unchanged():
    text = "novos.csv:3: status 'aposentado' is not one of active|suspended|cancelled"
    assert localize("pt", text) == ("novos.csv:3: situação (status) 'aposentado' não é um dos valores "
                                    "active|suspended|cancelled")
    assert localize("en", text) == text
    several = "statement: unknown: S9; already paid: S1\nto: the period ends before it starts"
    assert localize("pt", several) == ("demonstrativo: desconhecido(s): S9; já pago(s): S1\n"
                                       "fim do período: o período termina antes de começar")


def test_rulebook_schema_errors_keep_their_key_path_and_read_in_portuguese():
    assert localize("pt", "gate.toml:$.version[0].g7.mode: Invalid enum value 'maybe'") == (
        "gate.toml:$.version[0].g7.mode: o valor 'maybe' não é um dos permitidos")
    assert localize("pt", "$.version[0].port_timezone: Expected `str`, got `int`") == (
        "$.version[0].port_timezone: esperado `str`, veio `int`")
    assert localize("pt", "p.toml:$.day_wages[0].amount: must be a positive amount") == (
        "p.toml:$.day_wages[0].amount: deve ser um valor positivo")
    assert localize("pt", "$.terms: at least one version of the terms is required") == (
        "$.terms: é preciso ao menos um(a) versão das condições (terms)")
    assert localize("pt", "$.c: Expected `str` of length <= 3") == "$.c: esperado `str` de comprimento <= 3"


# TOML texts tomllib refuses, one or more per reason of ``TOML_REASONS`` it can produce
BAD_TOML = ['a = ', '= 1', 'a = "x', 'a = [1', 'a={b=1\n', 'a = 1\na = 2', 'a 1', '[a', '[[a]\n', 'a = 1 b',
            'a = {b = 1, b = 2}', 'a = "\\uZZZZ"', 'a = "\\uD800"', 'a = "\\q"', 'a = "\x01"', '# \x01',
            '[a]\n[a]', '[a.b]\n[a.b]', 'a = {b = 1}\na.c = 2', 'a = {,}', "a = '''x"]


@pytest.mark.parametrize("text", BAD_TOML)
def test_tomllib_s_syntax_errors_read_in_portuguese_with_line_and_column(text):
    import tomllib

    with pytest.raises(tomllib.TOMLDecodeError) as err:
        tomllib.loads(text)
    english = str(err.value)
    pt = localize("pt", f"rulebook: not TOML: {english}")
    position = re.search(r"\(at line (\d+), column (\d+)\)\Z", english)
    where = f"linha {position[1]}, coluna {position[2]}" if position else "no fim do texto"
    assert pt.startswith(f"tabela de regras: não é TOML: {where}: "), pt
    assert "erro de sintaxe" not in pt and " at " not in pt and "Expected" not in pt, pt
    assert localize("en", f"rulebook: not TOML: {english}") == f"rulebook: not TOML: {english}"


def test_a_toml_error_tomllib_may_add_later_still_gives_line_and_column_in_portuguese():
    assert toml_error_pt("Something new (at line 3, column 7)") == "linha 3, coluna 7: erro de sintaxe"
    assert toml_error_pt("Cannot declare ('a', 'b') twice (at line 2, column 5)") == (
        "linha 2, coluna 5: a tabela [a.b] foi declarada duas vezes")
    assert "Invalid date or datetime" in TOML_REASONS


def test_field_names_read_in_portuguese_and_a_csv_column_stays_beside_its_name():
    assert localize("pt", "name is required") == "nome é um campo obrigatório"
    assert localize("pt", "category is required") == "categoria é um campo obrigatório"
    assert localize("pt", "workers.csv:3: name is required") == "workers.csv:3: nome (name) é um campo obrigatório"
    assert localize("pt", "req.csv:2: workers 'x' is not a whole number") == (
        "req.csv:2: número de trabalhadores (workers) 'x' não é um número inteiro")
    assert localize("pt", "suspended_from 2026-03-10 is after suspended_until 2026-03-01") == (
        "o início da suspensão 10/03/2026 é depois do fim da suspensão 01/03/2026")
    assert localize("pt", "w.csv:4: rotation_number -1 is negative") == (
        "w.csv:4: o número de rodízio (rotation_number) -1 é negativo")
    assert localize("en", "name is required") == "name is required"


@pytest.mark.parametrize("english, pt", [
    ("from/to: dates are YYYY-MM-DD", "período: as datas são AAAA-MM-DD"),
    ("to: the period ends before it starts", "fim do período: o período termina antes de começar"),
    ("month: month 'x' is not YYYY-MM", "mês: o mês 'x' não é AAAA-MM"),
    ("rulebook: the rulebook has no version", "tabela de regras: a tabela de regras não tem versão ([[version]])"),
    ("requisition: period '7' is not HH-HH (e.g. 19-01)", "requisição do formulário: período '7' não é HH-HH (ex.: 19-01)"),
    ("case: case id is a number", "processo: o id de processo é um número"),
    ("gate: gate 'g a' has characters an id does not have", "portaló: portaló 'g a' tem caracteres que um id não tem"),
    ("--registration: V002 is not eligible: R2 overlapping dispatch, G7 rest",
     "matrícula: V002 não está apto: R2 escalação sobreposta (já escalado no mesmo horário), "
     "G7 descanso insuficiente desde a última jornada"),
    ("--registration: V002 is not eligible: G3 suspended", "matrícula: V002 não está apto: G3 suspenso"),
])
def test_a_form_field_and_the_rule_reasons_read_in_portuguese_and_stay_english_in_english(english, pt):
    assert localize("pt", english) == pt
    assert localize("en", english) == english


def test_a_refusal_s_iso_days_and_times_read_as_the_page_s_language_writes_them():
    """A service writes ISO days into its English refusal; a person reads them as dd/mm/aaaa
    (pt-BR) or as Babel's English (issue 33: no ISO date where a person reads), a time in the
    offset it carries (port time); a quoted value a person typed and a day inside an id stay."""
    english = "from: the day 1900-01-01 is outside 2000-01-01..2100-12-31"
    assert localize("pt", english) == "início do período: o dia 01/01/1900 está fora de 01/01/2000..31/12/2100"
    assert localize("en", english) == "from: the day Jan 1, 1900 is outside Jan 1, 2000..Dec 31, 2100"
    assert localize("pt", "date '1900-01-01' is outside 2000-01-01..2100-12-31") == (
        "a data '1900-01-01' está fora de 01/01/2000..31/12/2100")
    late = "the payment time 2026-03-17T10:00:00-03:00 is more than a day after now (2026-03-15T09:00:00-03:00)"
    assert "17/03/2026 10:00:00" in localize("pt", late) and "15/03/2026 09:00:00" in localize("pt", late)
    assert localize("en", late) == ("the payment time Mar 17, 2026, 10:00:00 AM is more than a day after now "
                                    "(Mar 15, 2026, 9:00:00 AM)")
    shift = "no shift 'V001/9300001/2026-03-15/01-07' in the ledger"
    assert localize("en", shift) == shift and "2026-03-15" in localize("pt", shift)
    wall = "end 2026-03-11 01:01 is outside (2026-03-10 19:00..2026-03-11 01:00, port time)"
    assert localize("en", wall) == ("end Mar 11, 2026, 1:01 AM is outside (Mar 10, 2026, 7:00 PM..Mar 11, 2026, "
                                    "1:00 AM, port time)")
    assert localize("en", "the day 2026-13-45 is not a day") == "the day 2026-13-45 is not a day"


def test_an_unknown_reason_stays_as_the_service_worded_it():
    assert localize("pt", "registration: something new happened") == "matrícula: something new happened"
    assert localize("pt", "x.csv:2: something new happened") == "x.csv:2: something new happened"


@pytest.fixture
def engine(tmp_path):
    e = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    upgrade_engine(e)
    with Session(e) as s, s.begin():
        import_files(s, workers_csv=DEMO / "workers.csv", cards_csv=DEMO / "cards.csv", actor="t",
                     now=dt.datetime.now(dt.UTC))
    yield e
    e.dispose()


def _refusal(fn) -> str:
    with pytest.raises(BadInput) as info:
        fn()
    return str(info.value)


ENGLISH = re.compile(r"\b(is not|is required|cannot|unknown|already|missing|repeats)\b")


@pytest.mark.parametrize("row", [{"health_exam_date": "15/01/2026"}, {"status": "aposentado"},
                                 {"rotation_number": "x"}, {"name": ""},
                                 {"suspended_from": "2026-03-10", "suspended_until": "2026-03-01"}])
def test_the_registry_edits_refusals_come_out_in_portuguese(engine, row):
    def edit():
        with Session(engine) as s, s.begin():
            edit_worker(s, "V001", row, actor="t", now=dt.datetime.now(dt.UTC))

    text = _refusal(edit)
    pt = localize("pt", text)
    assert not ENGLISH.search(pt), (text, pt)


def test_upload_photo_and_pay_refusals_come_out_in_portuguese(engine, tmp_path):
    bad = tmp_path / "w.csv"
    bad.write_text("registration,name,category,status\nN1,Nova,vigia,aposentado\nV001,Ana,vigia,active\n"
                   "V001,Ana,vigia,active\n", encoding="utf-8")

    def upload():
        with Session(engine) as s, s.begin():
            import_files(s, workers_csv=bad, actor="t", now=dt.datetime.now(dt.UTC))

    texts = [_refusal(upload), _refusal(lambda: save_photo(tmp_path / "photos", "V001", b"")),
             _refusal(lambda: save_photo(tmp_path / "photos", "V001", b"GIF89a not a picture")),
             _refusal(lambda: mark_paid(engine, ["no-such-statement"], dt.datetime.now(dt.UTC), None,
                                            now=dt.datetime.now(dt.UTC))),
             _refusal(lambda: mark_paid(engine, ["x", " "], dt.datetime.now(dt.UTC), None,
                                            now=dt.datetime.now(dt.UTC)))]
    for text in texts:
        pt = localize("pt", text)
        ours = re.sub(r"\(cannot identify image file .*\)", "", pt)  # Pillow's own words, kept as detail
        assert not ENGLISH.search(ours) and pt != text, (text, pt)


@pytest.mark.parametrize("english,pt", [
    ("case 1 is decided: cannot take step decide", "o processo 1 está decidido: não pode ter o passo «decisão»"),
    ("case 7 is final: cannot take step appeal", "o processo 7 está encerrado: não pode ter o passo «recurso»"),
    ("case 2 is open: cannot take step appeal_decided",
     "o processo 2 está aberto: não pode ter o passo «decisão do recurso»"),
])
def test_a_case_s_state_and_step_read_in_portuguese(english, pt):
    assert localize("pt", english) == pt
    assert localize("en", english) == english


def test_an_import_s_card_and_sanction_refusals_name_states_in_portuguese():
    assert localize("pt", "cards.csv:2: card 0A04A1FFEE is lost: an import does not make it active; use "
                          "`portgate registry return-card 0A04A1FFEE --decision TEXT`") == (
        "cards.csv:2: o cartão 0A04A1FFEE está perdido: uma importação não o torna ativo; use o comando "
        "`portgate registry return-card 0A04A1FFEE --decision TEXT`")
    assert localize("pt", "workers.csv:3: registration V002 is active: an import does not cancel a worker (use "
                          "`portgate registry cancel`: the penalty goes on the registration record, R4)") == (
        "workers.csv:3: a matrícula V002 está ativa: uma importação não cancela um trabalhador (use o comando "
        "`portgate registry cancel`: a penalidade vai para o registro da matrícula, R4)")


def test_every_gate_and_shift_flag_has_a_label_in_both_languages():
    from central.web.service_texts import FLAG_TEXTS, flag_label
    from wire.flags import Flag, ShiftFlag

    for code in [*Flag, *ShiftFlag]:
        assert code.value in FLAG_TEXTS, code
        assert flag_label("pt", code.value) != code.value and flag_label("en", code.value) != code.value
    assert flag_label("pt", "BORROWED_CARD") == "cartão emprestado (G4)"
    assert flag_label("en", "LATE_REQUISITION") == "late requisition"
    assert flag_label("pt", "SOMETHING_NEW") == "SOMETHING_NEW"  # an unknown code is shown as it is


def test_an_interruption_outside_the_gang_s_period_reads_in_portuguese_naming_row_and_field():
    text = ("interruptions.csv:2: end 2026-03-11 01:01 is outside gang T1's period 19-01 of 2026-03-10 "
            "(2026-03-10 19:00..2026-03-11 01:00, port time)")
    assert localize("pt", text) == ("interruptions.csv:2: o fim (end) 11/03/2026 01:01 está fora do período 19-01 de "
                                    "10/03/2026 do terno T1 (10/03/2026 19:00 a 11/03/2026 01:00, hora do porto)")
    assert localize("en", text) == ("interruptions.csv:2: end Mar 11, 2026, 1:01 AM is outside gang T1's period 19-01 "
                                    "of Mar 10, 2026 (Mar 10, 2026, 7:00 PM..Mar 11, 2026, 1:00 AM, port time)")


def test_a_final_cases_penalty_reason_reads_in_portuguese_with_the_flag_by_its_name():
    """The registry stores ``case N: FLAG (article), final: how`` (central.registry.cases._finalize);
    the worker page showed it as stored ("case 1: BORROWED_CARD … final: appeal waived", issue 33)."""
    from central.web.service_texts import penalty_reason
    stored = "case 1: BORROWED_CARD (83.611 art. 20 j/l), final: appeal waived"
    assert penalty_reason("pt", stored) == \
        "processo 1: cartão emprestado (G4) (83.611 art. 20 j/l), decisão definitiva: recurso renunciado"
    assert penalty_reason("pt", "reprimand: case 2: NO_ENTRY (art. 9), final: appeal window passed") == \
        "repreensão: processo 2: saída sem entrada (G9) (art. 9), decisão definitiva: prazo de recurso encerrado"
    assert penalty_reason("en", stored) == "case 1: borrowed card (G4) (83.611 art. 20 j/l), final: appeal waived"
    assert penalty_reason("pt", "refused dispatch 3: doente") == "recusou a escala 3: doente"  # typed words stay


@pytest.mark.parametrize("name", ["=cmd|' /C calc'!A0", "@SUM(1+1)", '+"x"', "-'a\"b'"])
def test_every_formula_name_refusal_reads_in_portuguese_whatever_its_quotes(name):
    """A name holding a ``'`` is shown by ``repr`` in double quotes (``"=cmd|' /C calc'!A0"``): it
    reads in pt-BR like ``'@SUM(1+1)'``, and in English as the service worded it (the fresh tester's
    finding: the first stayed English in pt-BR)."""
    from central.registry.import_checks import text_problems

    for text in text_problems("V900", name) + [
            f"registration {name!r} starts with {name[:1]!r}: not a registration (a spreadsheet would run it as "
            "a formula)", f"new category {name!r} starts with {name[:1]!r}: not a category (a spreadsheet would "
            "run it as a formula)"]:
        pt = localize("pt", text)
        assert pt.startswith(("o nome ", "a matrícula ", "a categoria nova ")), (text, pt)
        assert repr(name) in pt and f"começa com {name[:1]!r}" in pt and "formula" not in pt, pt
        assert localize("en", text) == text


def test_a_superseded_statement_s_refusal_is_wholly_portuguese():
    """``mark_paid``'s refusal names each superseded statement with the version that replaced it:
    ``(by S2)`` reads ``(por S2)`` in pt-BR (was left in English inside the Portuguese sentence)."""
    text = "statement: superseded: S1@p (by S1@p.2), S3 (by S4); already paid: S5"
    assert localize("pt", text) == ("demonstrativo: substituído(s) por nova versão: S1@p (por S1@p.2), S3 (por S4); "
                                    "já pago(s): S5")
    assert localize("en", text) == text

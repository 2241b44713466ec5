"""The refusals of configuration files, command-line arguments and evidence files (central.toml's
ports and database URL, secret and TOML files, a ledger migration refused, the --from/--to days, the
evidence pins and a bundle's members) as error codes of ``central.web.service_texts``: the same form as
``central.web.service_codes.CODES`` (code: pattern over the English reason; its pt-BR template is the
catalogs' msgid ``svc.<code>``), which takes them in after its own. Changes when one of these
refusals is added or reworded (a ``SAMPLES`` entry in tests/central/web/test_service_texts.py)."""

from __future__ import annotations

FILE_CODES: dict[str, str | tuple[str, str]] = {
    # central.config / app.checkconfig: central.toml's ports, database URL and files
    "home_port_not_in_ports": r"port (?P<port>'[^']*') \(the home port\) must be one of ports (?P<ports>\[.*\])",
    "ports_twice": r"ports (?P<ports>\[.*\]) names a port twice \(letter case aside\)",
    "directory_not_found": r"directory not found: (?P<path>.+)",
    "file_not_found_at": r"file not found: (?P<path>.+)",
    "database_backend": r"(?P<backend>\S+) is not supported: the ledger runs on SQLite \(sqlite:///path\.db\) or "
                         r"PostgreSQL \(postgresql\+psycopg://user@host/db\)",
    "nats_without_servers": r"\[nats\] has settings but no servers: give servers \(the JetStream ingest\) or "
                             r"remove \[nats\] \(the MQTT ingest\)",
    # central/migrations/versions/0038_worker_ids_unique.py: a ledger's numbers already on two registrations
    "ids_repeated": r"migration 0038 refused: a CPF or PIS/NIS on two registrations \((?P<listed>.*)\): leave "
                    r"each number on one registration and migrate again",
    # portgate.cells.text: a name or id cell of any file or form holding an unseen character
    "control_char": r"(?P<field>\w+) (?P<value>'.*') contains a control character or line break "
                    r"\(U\+(?P<code>[0-9A-F]+) at character (?P<at>\d+)\)",
    "format_char": r"(?P<field>\w+) (?P<value>'.*') contains an invisible format character \(U\+(?P<code>[0-9A-F]+) "
                   r"at character (?P<at>\d+)\): a direction mark or zero-width character is part of no name",
    # central.cli_args: the commands' --from/--to work days
    "after_to": r"(?P<first>\S+) is after --to (?P<last>\S+)",
    "value_outside": r"(?P<value>'[^']*') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
    # central.pay.verify_slip: portgate pay verify-slip on a file that is no PDF, or a damaged one
    "pdf_not_pdf": r"not a PDF file \(it does not start with %PDF-\)",
    "pdf_damaged": r"a damaged PDF: it starts as a PDF but its contents cannot be read \(cut short or altered\?\)",
    # central.inspection.cli / crew_hours: crew hours' --from/--to days and its ship
    "crew_not_date": r"(?P<value>'.*') is not a date \(YYYY-MM-DD\)",
    "crew_to_before_from": r"--to (?P<last>\S+) is before --from (?P<first>\S+)",
    "crew_no_periods": r"no work periods for ship (?P<ship>'.*'|\".*\")",
    # central.inspection.work_periods / crew_hours: the crew hours book's limits and period order
    "crew_stamp_years": r"(?P<which>start|end) (?P<value>'[^']*') is outside the years (?P<first>\d{4})-(?P<last>\d{4}) \(UTC\)",
    "crew_day_years": r"(?P<option>--from|--to) is outside the years (?P<first>\d{4})-(?P<last>\d{4})",
    "crew_period_long": r"period (?P<start>'[^']*')\.\.(?P<end>'[^']*') is longer than (?P<n>\d+) days",
    "crew_period_order": r"end (?P<end>'[^']*') is not after start (?P<start>'[^']*')",
    "crew_overlap": r"period of crew_id (?P<crew>\S+) (?P<start>'[^']*')\.\.(?P<end>'[^']*') \((?P<zone>[^)]*)\) "
                    r"overlaps (?P<other>\S+)",
    "crew_overlaps_head": r"overlapping work periods:",  # the first line of the list of crew_overlap lines
    # central.inspection.files.write_all: an output of crew hours --out that cannot be written
    "output_unwritable": r"cannot write the output (?P<path>'.*'): (?P<why>[^:]+)",
    # central.registry.sanctions: the length of a suspension (R4), as the command line says it
    "suspension_lasts": r"a suspension lasts (?P<lo>\d+) to (?P<hi>\d+) days \((?P<article>[^)]*)\), not (?P<n>-?\d+)",
    # portgate.record_rows: a CSV row longer than its header
    "cells_more": r"(?P<n>\d+) cell\(s\) more than the header has",
    # central.evidence.pins: --gate-key and the pin file
    "not_gate_pin": r"(?P<value>'.*') is not GATE=FINGERPRINT",
    "pin_file_unreadable": r"cannot read the pin file: (?P<why>.+)",
    "pin_file_not_toml": r"not a pin file: not UTF-8 TOML \((?P<why>.*)\)",
    "pin_file_unknown_key": r"not a pin file: unknown key (?P<key>'.*') \(office, inspector, gates\)",
    "pin_fingerprints": r"a fingerprint or a list of them",
    "pin_gates_table": r"a table GATE = FINGERPRINT",
    # central.evidence.verify.read_members: a bundle's members over the size limits or damaged
    "member_over_limit": r"unpacks to (?P<n>\d+) bytes, over the limit of (?P<max>\d+)",
    "members_over_limit": r"members unpack to (?P<n>\d+) bytes in all, over the limit of (?P<max>\d+)",
    "member_damaged": r"damaged member \((?P<why>.*)\)",
    "member_longer": r"holds more than the (?P<n>\d+) bytes it declares",
    # central.evidence.cli / bundle: portgate evidence export's --registration and --out
    "evidence_registration_empty": r"the registration \(--registration\) is empty",
    "evidence_nothing": r"no event or shift of (?P<reg>.+) from (?P<first>\S+) to (?P<last>\S+)",
    "evidence_out_exists": r"(?P<path>'.*'|\".*\") already exists: an evidence bundle is never replaced silently "
                           r"\(give another --out, or --force to replace it\)",
    # central.cli_args / central.config: the ledger's database URL and keys dir
    "not_database_url": r"(?P<value>'.*') is not a database URL \(sqlite:///path\.db or "
                         r"postgresql\+psycopg://user@host/db\): (?P<why>.+)",
    "not_database_url_config": r"not a database URL: (?P<why>.+)",
    "sqlite_memory": r"an in-memory SQLite database holds no ledger: give a file",
    "sqlite_memory_config": r"an in-memory SQLite ledger is private to one connection: use a file or PostgreSQL",
    "sqlite_missing": r"SQLite file (?P<path>'.*') does not exist \(run `portgate ledger migrate --db URL` to "
                       r"create a ledger\)",
    "sqlite_no_directory": r"the directory (?P<dir>'.*') of SQLite file (?P<path>'.*') does not exist \(SQLite does "
                            r"not create directories\): fix the path or create the directory",
    "name_database": r"name the database: --config central\.toml \(its database_url\) or --db URL, one of them",
    "keys_dir_missing": r"(?P<path>'.*') does not exist \(portgate central add-gate creates the key directory\)",
    "keys_dir_not_dir": r"(?P<path>'.*') is not a directory \(portgate central add-gate creates the key directory\)",
    "password_twice": r"give the password in database_password_file or in database_url, not both",
    "port_keys_dirs_strange": r"port_keys_dirs names (?P<ports>.+): not a port of ports other than the home port "
                               r"(?P<home>'.*') \(whose registrations are in keys_dir\)",
    "nats_durable_ports": r"\[nats\] durable names one consumer: with several ports leave it empty \(each "
                           r"port's consumer is ledger-<port>\)",
    "nats_user_no_password": r"\[nats\] user given without password_file",
    "nats_name": r"(?P<value>'.*') is not a NATS name \(not empty; no whitespace, dot, \*, > or /\)",
    "nats_server": r"(?P<value>'.*') is not a NATS server address \(nats://host:port or tls://host:port\)",
    # portgate.timeutil.zone: a configuration's time zone ([web] tz)
    "unknown_time_zone_iana": r"unknown time zone (?P<value>'.*') \(an IANA name such as (?P<example>\S+)\)",
    # central.web.cli.key_dir_missing: [web] secret_file / slip_key_file in a directory that does not exist
    "key_no_directory": r"the directory (?P<dir>'.*') of (?P<path>'.*') does not exist \(a key file is made there, "
                         r"never the directory\): fix the path or create the directory",
    # portgate.config.read_secret / load_toml: a secret file or a TOML file that cannot be used ({what}: word.*)
    "secret_missing": r"(?P<what>[^:]+?) file not found",
    "secret_unreadable": r"(?P<what>[^:]+?) file cannot be opened: (?P<why>.+)",
    "secret_open": r"(?P<what>[^:]+?) file must not be accessible by group or others \(chmod 600\)",
    "secret_empty": r"(?P<what>[^:]+?) file is empty",
    "cannot_open": r"cannot be opened: (?P<why>.+)",
    "not_valid_toml": r"not valid TOML: (?P<detail>.*)",
    # central.db.engine_for: the database URL of --db or database_url, its backend not supported
    "database_url_backend": r"database URL (?P<url>'[^']*'): (?P<backend>\S+) is not supported: the ledger runs on "
                             r"SQLite \(sqlite:///path\.db\) or PostgreSQL \(postgresql\+psycopg://user@host/db\)",
    # central.cli_args.day_arg: an option's time outside the plausible years (pay mark-paid --at)
    "option_outside": r"(?P<option>--[\w-]+) (?P<value>'[^']*') is outside (?P<first>\S+)\.\.(?P<last>\S+)",
    # portgate.cells.parse_aware through central.cli_args.time_arg: an option's time (pay mark-paid --at)
    "option_not_timestamp": r"(?P<option>--[\w-]+) (?P<value>'.*'|\".*\") is not an ISO 8601 timestamp",
    "option_no_offset": r"(?P<option>--[\w-]+) (?P<value>'.*'|\".*\") has no UTC offset",
    # central.pay.shifts_csv / central.pay.watchmen: a row of portgate pay --shifts FILE
    "exit_before_admit": r"exit_at is before admit_at",
    "not_whole_hour": r"(?P<field>\w+) (?P<value>.+) is not on a whole local hour \((?P<zone>.+)\)",
    "shift_given_twice": r"shift (?P<shift>\S+) is given twice \(first at (?P<first>.+)\)",
    "not_yes_no": r"(?P<field>\w+) (?P<value>'.*') is not yes\|no",
    "function_not_in_rulebook": r"function (?P<value>'.*') is not in rulebook (?P<rulebook>\S+) \(one of: "
                                 r"(?P<known>.*)\)",
    # central.ingest.keys.add_gate and wire.chain.load_public: portgate central add-gate [--public-key]
    "gate_has_key": r"gate (?P<gate>\S+) already has a key \(use --rotate to replace it\)",
    "ed25519_one_block": r"not an Ed25519 public key: give one PEM PUBLIC KEY block and nothing else",
    "ed25519_weak": r"not an Ed25519 public key: a weak key \(all zero or the neutral point\)",
    "ed25519_length": r"not an Ed25519 public key: An Ed25519 public key is 32 bytes long",
    "not_ed25519_why": r"not an Ed25519 public key: (?P<why>.+)",
    "not_ed25519": r"not an Ed25519 public key",
    # edge.config: gate.toml's office_public_key_file
    "office_key_unreadable": r"cannot read the office public key: (?P<why>.+)",
    # central.web.users: portgate office add-user / set-password
    "password_short": r"a password has at least (?P<n>\d+) characters",
    # central.registry.sanctions.load_suspension_limits: [web] rulebook of portgate office serve
    "pay_rulebook_is_gate": r"not a pay rulebook: a gate rulebook \(it has \[\[version\]\]\); give a pay rulebook "
                             r"\((?P<example>.+)\)",
    "pay_rulebook_no_id": r"not a pay rulebook: no rulebook id; give a pay rulebook \((?P<example>.+)\)",
    # edge.config.GateConfig: [sync] lanes above 1 on mosquitto (MQTT 5)
    "sync_lanes_protocol": r"sync\.lanes = (?P<n>\d+) needs mqtt\.protocol = '3\.1\.1' \(a NATS cluster\): mosquitto "
                            r"gives every connection of a gate the gate's client id \(use_username_as_clientid\), so "
                            r"the lanes would take the session from each other",
    # central.ledger.instance_claim: portgate central run while another of its port and --instance runs
    "office_running_instance": r"another office '(?P<instance>[^']*)' of port (?P<port>\S+) \(pid (?P<pid>\d+) on "
        r"host (?P<host>\S+), heartbeat (?P<age>\d+) s ago\) is running on this ledger: start this one with another "
        r"--instance NAME or stop that one \(an office that died stops counting (?P<stale>\d+) s after its last "
        r"heartbeat\)",
    "office_running_default": r"another office without --instance of port (?P<port>\S+) \(pid (?P<pid>\d+) on host "
        r"(?P<host>\S+), heartbeat (?P<age>\d+) s ago\) is running on this ledger: start this one with --instance "
        r"NAME or stop that one \(an office that died stops counting (?P<stale>\d+) s after its last heartbeat\)",
    # edge.config_paths: the paths edge run opens at start-up (edge check-config says the same)
    "gate_not_fifo": r"(?P<path>.+) is not a FIFO \(a fifo reader reads a named pipe\)",
    "gate_is_directory": r"(?P<path>.+) is a directory, not a file",
    "gate_file_no_directory": r"the directory of (?P<path>.+) does not exist \(the file is made there, never the "
                               r"directory\)",
    "gate_cannot_make_dir": r"cannot make the directory (?P<path>.+): (?P<why>[^:]+)",
    "gate_lock_unopenable": r"cannot open the gate's lock file (?P<path>.+): (?P<why>[^:]+)",
    "cannot_open_path": r"cannot open (?P<path>/.+): (?P<why>[^:]+)",
    # central.cli_args.sqlite_writable: central run and check-config on a ledger it cannot write
    "sqlite_dir_unwritable": r"the directory (?P<dir>'.*') of SQLite file (?P<path>'.*') is not writable "
                              r"\((?P<why>[^)]*)\): SQLite makes its journal files there",
    "sqlite_file_unwritable": r"SQLite file (?P<path>'.*') cannot be opened for writing: (?P<why>.+)",
    # central.cli_args.db_url_arg: --db naming a directory; central.ledger.migrate.existing_ledger:
    # pay and pay close on a database that holds no ledger; central.pay.close: a concurrent close;
    # central.pay.close_cli: an --at before the closed days' last tap
    "sqlite_is_directory": r"(?P<path>'.*') is a directory, not a SQLite file: give the ledger file in it "
                            r"\(sqlite:///DIR/ledger\.db\)",
    "ledger_none_empty": r"(?P<where>\S+) holds no portgate ledger \(an empty database\): pay creates none, create "
                          r"the ledger with `portgate ledger migrate --db URL`",
    "ledger_none_other": r"(?P<where>\S+) holds no portgate ledger \(other tables: (?P<tables>.*)\): pay writes "
                          r"nothing there, create the ledger with `portgate ledger migrate --db URL` in a database "
                          r"of its own",
    "close_conflict": r"closing the month failed: another close of these days is running or ran meanwhile, run it "
                       r"again \((?P<why>.*)\)",
    "at_before_taps": r"(?P<at>\S+) is before the last tap of the closed days \((?P<last>[^)]*)\): a statement is "
                       r"computed after the work it pays; give a later --at or leave it out \(now\)",
    # central.runner.for_instance: portgate central run --instance NAME
    "instance_name": r"instance name (?P<value>'.*') \((?P<n>\d+) characters\) must be 1 to (?P<max>\d+) letters, "
                      r"digits, - or _",
    # portgate.metrics.cannot_listen: a metrics port or office serve's --port that cannot be listened on
    "cannot_listen": r"cannot listen on (?P<where>\S+) \((?P<why>[^)]*)\)",
    # central.ingest.keys.gate_key_id: a gate id naming one of the office's key files in a keys dir
    "gate_id_reserved": r"gate id (?P<gate>'.*') is reserved: (?P<file>\S+) in a keys dir is the office's "
                         r"(?P<what>.+); choose another gate id",
    # central.registry.admission: a birth date after the registration, a document before the birth (R9)
    "admission_future_birth": r"(?P<art>.+?): birth date (?P<day>\S+) is in the future \(after the registration on "
                               r"(?P<registered>\S+)\)",
    "admission_before_birth": r"(?P<art>.+?): (?P<label>.+) \((?P<name>\w+)\) is dated (?P<day>\S+), before the "
                              r"birth on (?P<birth>\S+)",
}

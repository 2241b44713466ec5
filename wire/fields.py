"""What every field of the wire messages means, for the generated JSON Schemas and AsyncAPI
document (``wire.generate`` puts each text in the field's ``description``; a test fails when a
field has none). ``BY_NAME`` holds fields that mean the same in every message; ``BY_TYPE`` the
ones whose meaning depends on the message, keyed ``(type name, field)``, looked up first."""

from __future__ import annotations

BY_NAME: dict[str, str] = {
    # envelope and identity
    "event_id": "UUID (lower-case text) of the event, globally unique: the office's dedupe key.",
    "port": "Port id (one MQTT topic level, e.g. `santos`).",
    "gate_id": "Gate id (one MQTT topic level); also the gate's MQTT username.",
    "boot_id": "UUID of the gate process start that wrote this (changes at every restart).",
    "seq": "Per-gate gapless sequence number, from 1 (64-bit: parse as a big integer).",
    "occurred_at": "When the gate journaled the event: RFC 3339, UTC (`Z`), gate wall clock.",
    "clock_trusted": "True if the gate's wall clock was synchronised when it wrote this (rules G8, G13).",
    "mono_ns": "The gate's monotonic clock in nanoseconds since its boot (64-bit; exceeds 2^53 after "
               "about 104 days: a JavaScript consumer must parse it as a BigInt, see docs/mqtt.md).",
    "payload": "What happened: one of the payload types, told apart by its `type` member.",
    "schema": "Version of the wire contract (`wire.SCHEMA_VERSION`); another version is refused.",
    "mac": "HMAC-SHA256 in lower-case hex with the gate's key (the key file's 64-character text) over "
           "the compact sorted-keys JSON of the message with `mac` set to \"\" (docs/mqtt.md, Verifying a MAC).",
    "prev": "Signed chain (docs/evidence.md): lower-case hex SHA-256 of the canonical bytes of this gate's "
            "previous event (64 zeros for the first); absent on an unsigned event.",
    "sig": "Signed chain (docs/evidence.md): lower-case hex Ed25519 signature of the canonical bytes "
           "(`mac` and `sig` set to \"\") by the gate's own key; absent on an unsigned event.",
    "type": "Tag naming the variant of a tagged union.",
    "at": "When the sender built this message: RFC 3339, UTC (`Z`).",
    # taps and cards
    "uid": "Card UID as read, upper-case hex (may be invalid text when a reader sent garbage).",
    "reader_id": "Id of the reader in the gate's configuration.",
    "reader_kind": "`control` (the worker's control card) or `badge` (a badge paired with it, G4).",
    "decision": "What the gate decided and showed: admit, exit, deny, inspector or aboard (G9).",
    "rules_failed": "Ids of the rules that failed (RULES.md, e.g. `G5`).",
    "flags": "Flags raised for the office (e.g. `DOUBLE_ASSIGNMENT`).",
    "message": "What the watchman was shown (pt-BR).",
    "registration": "The worker's registration number at the port's labour pool.",
    "card_kind": "Kind of the card read (`control`, `badge`, `inspector`), null if unknown.",
    "badge_uid": "UID of the badge paired with the control card (G4), null if none.",
    "badge_registration": "Registration the paired badge belongs to, null if none.",
    "dispatch": "The escala entry the decision was made against (admit/exit), null otherwise.",
    "inspector_uid": "UID of the union inspector's card.",
    "inspector_registration": "Registration of the union inspector, null if unknown.",
    "reason_flag": "Why the card was confiscated (e.g. `BORROWED_CARD`).",
    "article": "Legal article the confiscation rests on (e.g. `83.611 art. 20 i`).",
    "code": "Alert code (e.g. `STORE_QUARANTINED`, `OUTBOX_HIGH_WATER`, `CLOCK_UNTRUSTED`).",
    "detail": "Free text with details, possibly `key=value` words; empty if none.",
    # escala and coverage
    "date": "Local calendar date (the port's time zone), ISO 8601.",
    "period": "Work period of the day as `HH-HH` local hours (e.g. `07-13`, `19-01`).",
    "ship": "The ship's IMO number.",
    "ship_name": "The ship's name.",
    "berth": "`berthed` or `anchored`.",
    "voyage": "`long_haul` or `cabotage`.",
    "post": "The post the worker is dispatched to (e.g. `gangway`).",
    "function": "The worker's function in the gang.",
    "due_at": "When a watchman had to be aboard (period start + grace): RFC 3339, UTC.",
    "period_end": "End of the period: RFC 3339, UTC.",
    "dispatched": "Registrations dispatched to the gangway post for the period.",
    "ended_by": "How the gap ended: `watchman_admitted` or `period_end`; null while raised.",
    "watchman": "Registration of the watchman whose admission ended the gap, null otherwise.",
    # gate status
    "sent_seq": "Every event 1..sent_seq of the gate was acknowledged by the broker (null: not said).",
    "outbox_depth": "Events journaled and not yet acknowledged by the broker (null: not said).",
    "oldest_unsent_at": "occurred_at of the oldest of them: RFC 3339, UTC (null: none or not said).",
    "copies_updated_at": "When the gate's roster/escala copies were last updated: RFC 3339, UTC (G8).",
    # commands
    "seq_from": "First sequence number to republish (inclusive).",
    "seq_to": "Last sequence number to republish (inclusive).",
    "have_version": "Version of the gate's copy of that kind, null if it holds none.",
    # downlinks
    "version": "Version of the reference data this message brings the gate to.",
    "from_version": "Version this delta applies on; a gate holding another asks for a snapshot.",
    "to_version": "Version the gate holds after applying this delta.",
    "workers": "Every worker of the port (CSV columns of workers.csv).",
    "cards": "Every card of the port (CSV columns of cards.csv).",
    "workers_upsert": "Workers added or changed.",
    "cards_upsert": "Cards added or changed.",
    "blocked": "Cards every gate must refuse (G2/G10).",
    "unblocked": "UIDs of cards no longer blocked (returned to their holder, found).",
    "entries": "Every escala entry the office publishes (today and tomorrow).",
    "source_event_id": "event_id of the admit/exit that caused this change.",
    "admitted_at": "When the worker was admitted: RFC 3339, UTC.",
    "photos": "Which worker has which photo file.",
    "sha256": "SHA-256 of the photo file, lower-case hex: its name.",
    "size": "Size of the photo file in bytes.",
    "media_type": "Media type of the photo file (image/jpeg, image/png or image/webp).",
    "data": "The photo file's bytes, base64.",
    # records (CSV columns)
    "name": "The worker's name.",
    "category": "The worker's category at the labour pool.",
    "suspended_from": "First day of a suspension, null if none.",
    "suspended_until": "Last day of a suspension, null if none.",
    "health_exam_date": "Date of the worker's last health exam, null if unknown.",
    "booklet_revalidated_year": "Year the worker's booklet was last revalidated, null if unknown.",
    "rotation_number": "The worker's place in the rotation, null if none.",
}

BY_TYPE: dict[tuple[str, str], str] = {
    ("SignedDownlink", "body"): "The office's message (a snapshot, delta, photo file or replay command of the "
                                "channel), base64 of its own JSON bytes.",
    ("SignedDownlink", "issued"): "The office's issue number (nanoseconds since 1970 at signing, strictly "
                                  "increasing): a gate refuses one older than the newest it applied on the topic.",
    ("SignedDownlink", "key"): "Fingerprint of the office key that signed it (`wire.chain.fingerprint`).",
    ("SignedDownlink", "sig"): "Base64 Ed25519 signature by the office key of `portgate-downlink/1\\n` + topic + "
                               "`\\n` + issued + `\\n` + the body's bytes.",
    ("SignedDownlink", "topic"): "The topic it was signed for: a gate refuses it on any other.",
    ("MealWorkedPayload", "uid"): "UID of the worker's control card read in meal mode.",
    ("MealWorkedPayload", "registration"): "Registration of the worker whose meal interval was worked.",
    ("MealWorkedPayload", "dispatch"): "The escala entry of the worker's open shift (the shift's identity).",
    ("MealWorkedPayload", "rule"): "Pay rule the record feeds: `P6` (meal interval worked).",
    ("MealWorkedPayload", "article"): "Legal article of the rule: `83.611 art. 26 d`.",
    ("GateStatus", "state"): "`online` (birth, progress) or `offline` (Last Will, graceful stop).",
    ("GateStatus", "reason"): "Why it was published: birth (connect), will (broker, gate gone), "
                              "graceful (stop) or progress (sent_seq or health changed).",
    ("GateStatus", "at"): "When the gate built this status (a Last Will: when it connected): RFC 3339, UTC.",
    ("ReaderPayload", "state"): "The reader's state: absent, ready or fault.",
    ("GateStatus", "readers"): "Each configured reader's health (null: not said).",
    ("ReaderHealth", "state"): "`ok` (ready), `fault` (unplugged, daemon lost, silent) or `unknown` (not reported yet).",
    ("ReaderHealth", "since"): "When the reader entered this state: RFC 3339, UTC.",
    ("ReaderHealth", "last_read_at"): "The reader's last card read since the gate started: RFC 3339, UTC (null: none).",
    ("ReaderHealth", "detail"): "The driver's own words about its last state change (pt-BR).",
    ("ReaderHealth", "kind"): "Which reader: control (control card) or badge.",
    ("CoveragePayload", "state"): "`raised` (no watchman aboard by due_at) or `ended`.",
    ("CoveragePayload", "date"): "Local date of the period (the port's time zone).",
    ("RulebookPayload", "name"): "The gate rulebook's name (its `name` key; `gate-default` built in).",
    ("RulebookPayload", "sha256"): "SHA-256 of the rulebook's TOML text (UTF-8), lower-case hex; of the empty text for the built-in default.",
    ("RulebookPayload", "toml"): "The rulebook's TOML text as the gate loaded it (empty: the built-in default, or a text over 32,000 characters).",
    ("SnapshotRequest", "kind"): "Which reference data the gate asks for.",
    ("SnapshotRequest", "gate_id"): "The gate asking (its copy does not follow the deltas).",
    ("Card", "kind"): "Kind of card: control, badge or inspector.",
    ("Card", "status"): "The card's status: active, or why it is not (confiscated, lost, ...).",
    ("Card", "uid"): "Card UID, upper-case hex.",
    ("Card", "registration"): "Registration of the card's holder.",
    ("Worker", "status"): "The worker's status at the labour pool.",
    ("BlockedCard", "reason"): "Why the card is blocked (e.g. `confiscated`, `lost`).",
    ("BlockedCard", "at"): "When it was blocked: RFC 3339, UTC.",
    ("EnrolCommand", "session"): "The office's id of the enrol session (issue 34); a cancel names the session it ends.",
    ("EnrolCommand", "action"): "`start` enrol mode at the gate, or `cancel` the session named.",
    ("EnrolCommand", "registration"): "The worker the card read in enrol mode is offered to (for the office; the gate does not bind it).",
    ("EnrolCommand", "until"): "When enrol mode ends if no unknown card was read: RFC 3339, UTC, the office's clock (null on a cancel).",
    ("EnrolCommand", "timeout_s"): "Enrol mode lasts at most this many seconds on the gate's monotonic clock from receipt.",
    ("EnrolCommand", "at"): "When the office sent the command: RFC 3339, UTC.",
    ("RosterSnapshot", "inspectors"): "The port's active union inspectors (Fiscais do Sindicato): registration and name, for the watchman's screen (issue 33).",
    ("RosterDelta", "inspectors_upsert"): "Union inspectors added or renamed (registration and name).",
    ("InspectorRow", "registration"): "The inspector's registration (the `registration` of his inspector cards; his photo is the photo index row of that registration).",
    ("InspectorRow", "name"): "The inspector's name as the watchman's screen shows it.",
    ("EscalaDelta", "upsert"): "Escala entries added or changed.",
    ("EscalaDelta", "remove"): "Escala entries cancelled.",
    ("PhotosDelta", "upsert"): "Photo index rows added or changed.",
    ("PhotosDelta", "remove"): "Registrations whose photo was withdrawn.",
    ("PresenceSnapshot", "open"): "Every open shift of the port (admitted, not yet exited).",
    ("PresenceDelta", "open"): "The worker's new open shift, or null after an exit.",
    ("PresenceDelta", "version"): "Ledger row id of the admit/exit that caused it: a gate keeps the newest per worker.",
    ("PresenceRow", "gate_id"): "The gate where the worker was admitted.",
    ("PresenceRow", "ship"): "IMO number of the ship the worker was admitted to, empty if unknown.",
    ("EscalaEntry", "gate_id"): "The gate the entry is for.",
    ("PhotoRef", "registration"): "The worker whose photo this is.",
}


def describe(type_name: str, field: str) -> str | None:
    """The description of ``field`` in message type ``type_name``, or None if there is none."""
    return BY_TYPE.get((type_name, field)) or BY_NAME.get(field)

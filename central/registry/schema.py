"""Registry tables (rules R4, G2, G3, G10).

- ``workers``: one row per registration (matrícula) in one category, with the fields of
  ``workers.csv``; ``suspended_from``/``suspended_until`` carry a scheduled or current suspension so
  the gate's G3 applies it on its dates.
- ``health_exams`` / ``booklet_revalidations``: the history behind ``workers.health_exam_date`` and
  ``workers.booklet_revalidated_year`` (the worker row keeps the latest).
- ``cards``: control cards, badges (chapas) and inspector cards, current status; ``card_events``:
  their lifecycle (issued, lost, replaced, confiscated, returned).
- ``inspectors``: union inspectors (Fiscais do Sindicato); their cards are ``cards`` of kind inspector.
- ``penalties``: the worker's registration record (83.611 art. 20 §3): suspensions, cancellations,
  infractions (refusals R3, confiscations G10).
- ``cases``: confiscation cases for the labour office (DTM), 83.611 art. 20 §1.
- ``flag_reviews``: an inspector's review of a flagged gate event (acknowledged, no infraction).
- ``enrol_sessions``: enrol mode on a chosen gate (issue 34): the card the gate read, bound by the clerk.
- ``downlink_changes``: the versioned change feed the MQTT downlink publishes (id = version).
- ``audit_log``: who changed what, one row per command (defined in ``central/audit.py``, below the
  ledger and the registry that both write it; exported here).
"""

from __future__ import annotations

from sqlalchemy import (
    JSON,
    Column,
    Date,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    String,
    Table,
    Text,
)

from central.audit import audit_log  # noqa: F401 (the audit log lives in central/audit.py)
from central.db import metadata
from portgate.textfold import fold


def _name_folded(context) -> str | None:
    """An inserted worker's folded name (``portgate.textfold.fold``) when the insert gives none."""
    name = context.get_current_parameters().get("name")
    return None if name is None else fold(name)


workers = Table(
    "workers",
    metadata,
    Column("registration", String(64), primary_key=True),
    Column("name", String(255), nullable=False),
    Column("category", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # active | suspended | cancelled
    Column("suspended_from", Date, nullable=True),
    Column("suspended_until", Date, nullable=True),
    Column("health_exam_date", Date, nullable=True),
    Column("booklet_revalidated_year", Integer, nullable=True),
    Column("rotation_number", Integer, nullable=True),
    Column("cancelled_on", Date, nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
    # payroll identifiers (0022): bare digits, checked by their check digits (``portgate.docbr``);
    # never in ``Worker`` nor sent to the gates (``portgate.records.WorkerIds``)
    Column("cpf", String(11), nullable=True),
    Column("pis", String(11), nullable=True),
    # the port whose OGMO registered him (0029, Lei 12.815 art. 32-33; NULL: the office's home port);
    # never in ``Worker`` nor sent to the gates (``central.registry.worker_ports``)
    Column("port", String(64), nullable=True),
    # the name without accents and case (0030, ``portgate.textfold.fold``): what the office's text
    # search compares (``central.registry.name_search``); written with the name by
    # ``central.registry.store.save_worker`` and by any insert of this table (its default)
    Column("name_folded", Text, nullable=True, default=_name_folded),
)
Index("ix_workers_category_rotation", workers.c.category, workers.c.rotation_number)
# one CPF and one PIS/NIS per registration (0038; NULLs repeat): a person on two registrations could
# be dispatched to two ships (G5); two forms at once cannot both take one (``central.registry.ids``)
Index("ux_workers_cpf", workers.c.cpf, unique=True)
Index("ux_workers_pis", workers.c.pis, unique=True)
# the office list (0017) and by category (0026), in the list's order; ``name_folded`` (0030) rides
# along so that a text search walking the list's order tests each name in the index alone
# (SQLite: 6x faster for a common name at 50,000 workers than reading each row)
Index("ix_workers_name_registration", workers.c.name, workers.c.registration, workers.c.name_folded)
Index("ix_workers_category_name_registration", workers.c.category, workers.c.name,
      workers.c.registration, workers.c.name_folded)  # the office list by category (0026, 0030)
Index("ix_workers_port_name_registration", workers.c.port, workers.c.name,
      workers.c.registration)  # the office list of one port (0029)

health_exams = Table(
    "health_exams",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("registration", String(64), ForeignKey("workers.registration"), nullable=False),
    Column("exam_date", Date, nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)

booklet_revalidations = Table(
    "booklet_revalidations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("registration", String(64), ForeignKey("workers.registration"), nullable=False),
    Column("year", Integer, nullable=False),
    Column("recorded_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)

inspectors = Table(
    "inspectors",
    metadata,
    Column("registration", String(64), primary_key=True),
    Column("name", String(255), nullable=False, default=""),
    Column("active", Integer, nullable=False, default=1),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)

cards = Table(
    "cards",
    metadata,
    Column("uid", String(32), primary_key=True),
    Column("kind", String(16), nullable=False),  # control | badge | inspector
    Column("registration", String(64), nullable=False),
    Column("status", String(16), nullable=False),  # active | lost | confiscated | replaced
    Column("replaced_by", String(32), nullable=True),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
Index("ix_cards_registration", cards.c.registration)

card_events = Table(
    "card_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uid", String(32), ForeignKey("cards.uid"), nullable=False),
    Column("event", String(16), nullable=False),  # issued | lost | replaced | confiscated | returned
    Column("at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
    Column("detail", Text, nullable=False, default=""),
)

penalties = Table(
    "penalties",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("registration", String(64), ForeignKey("workers.registration"), nullable=False),
    Column("kind", String(16), nullable=False),  # suspension | cancellation | infraction
    Column("rule", String(8), nullable=False),  # R3 | R4 | G10
    Column("article", String(64), nullable=False),
    Column("reason", Text, nullable=False),
    Column("starts_on", Date, nullable=True),
    Column("ends_on", Date, nullable=True),
    Column("case_id", Integer, ForeignKey("cases.id"), nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)
Index("ix_penalties_registration", penalties.c.registration)

cases = Table(
    "cases",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("event_id", String(36), nullable=True, unique=True),  # the gate event; dedupe key
    Column("card_uid", String(32), nullable=False),
    Column("registration", String(64), nullable=True),
    Column("inspector_uid", String(32), nullable=False),
    Column("inspector_registration", String(64), nullable=True),
    Column("gate_id", String(64), nullable=False),
    Column("reason_flag", String(32), nullable=False),
    Column("article", String(64), nullable=False),
    Column("occurred_at", DateTime(timezone=True), nullable=False),
    Column("status", String(16), nullable=False),  # open | closed
    Column("decision", Text, nullable=False, default=""),
    Column("opened_at", DateTime(timezone=True), nullable=False),
    # due process (R7, 83.611 art. 21 §1, §2): central/registry/cases.py
    Column("source_event_id", String(36), nullable=True),  # the flagged event a case was opened from
    Column("charge", Text, nullable=True),
    Column("evidence", Text, nullable=True),
    Column("defence", Text, nullable=True),
    Column("defence_at", DateTime(timezone=True), nullable=True),
    Column("decision_kind", String(16), nullable=True),  # none | reprimand | suspension | cancellation
    Column("decision_days", Integer, nullable=True),
    Column("decision_start", Date, nullable=True),
    Column("decided_at", DateTime(timezone=True), nullable=True),
    Column("appeal", Text, nullable=True),
    Column("appeal_at", DateTime(timezone=True), nullable=True),
    Column("appeal_outcome", String(16), nullable=True),  # upheld | overturned | waived
    Column("final_at", DateTime(timezone=True), nullable=True),
    Column("port", String(64), nullable=True),  # the flagged event's port (0029); NULL: the home port
)
Index("ix_cases_port_status", cases.c.port, cases.c.status)

case_attachments = Table(
    "case_attachments",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("case_id", Integer, ForeignKey("cases.id"), nullable=False),
    Column("filename", String(255), nullable=False),
    Column("content_type", String(128), nullable=False),
    Column("data", LargeBinary, nullable=False),
    Column("uploaded_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
)

# the inspectors' review of a flagged gate event (issue 33): acknowledged with a comment (the flag is
# "seen") or closed as no infraction ("handled"); a case opened from the event handles it too
# (``cases.event_id``). One row per event, its latest review; every review is an audit_log row.
flag_reviews = Table(
    "flag_reviews",
    metadata,
    Column("event_id", String(36), primary_key=True),
    Column("outcome", String(16), nullable=False),  # acknowledged | no_infraction
    Column("comment", Text, nullable=False),
    Column("actor", String(128), nullable=False),
    Column("at", DateTime(timezone=True), nullable=False),
)

# enrol mode on a chosen gate (issue 34): the clerk starts it for a worker; the gate refuses the next
# unknown card read whole (rule ENROL) and the office offers its UID to the clerk, who binds it.
# state: waiting (no card yet) | read (a card offered) | bound | cancelled | expired. Every step is
# also an audit_log row (enrol.start, enrol.read, enrol.bound, enrol.cancel, enrol.expired).
enrol_sessions = Table(
    "enrol_sessions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("registration", String(64), ForeignKey("workers.registration"), nullable=False),
    Column("gate_id", String(64), nullable=False),
    Column("kind", String(16), nullable=False),  # the card issued: control | badge
    Column("state", String(16), nullable=False),
    Column("started_at", DateTime(timezone=True), nullable=False),
    Column("until", DateTime(timezone=True), nullable=False),
    Column("started_by", String(128), nullable=False),
    Column("uid", String(32), nullable=True),  # the card read at the gate (canonical UID)
    Column("read_at", DateTime(timezone=True), nullable=True),  # when the gate read it
    Column("event_id", String(36), nullable=True),  # the gate's tap event of that read
    Column("ended_at", DateTime(timezone=True), nullable=True),
    Column("ended_by", String(128), nullable=True),
)
Index("ix_enrol_sessions_registration", enrol_sessions.c.registration)
Index("ix_enrol_sessions_gate_state", enrol_sessions.c.gate_id, enrol_sessions.c.state)

downlink_changes = Table(
    "downlink_changes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),  # the version
    Column("kind", String(16), nullable=False),  # roster | cards | escala
    Column("op", String(8), nullable=False),  # upsert | delete
    Column("key", String(128), nullable=False),
    Column("body", JSON, nullable=True),
    Column("created_at", DateTime(timezone=True), nullable=False),
    Column("actor", String(128), nullable=False),
    # the port a roster/cards row concerns (0033): the worker's (a card's holder's) port when it was
    # made; NULL: the home port (``central.broadcast.port_roster``)
    Column("port", String(64), nullable=True),
)
Index("ix_downlink_changes_kind_id", downlink_changes.c.kind, downlink_changes.c.id)


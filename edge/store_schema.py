"""Tables of the gate's local store (SQLite through the stdlib ``sqlite3``). See ``edge.store``.

The DDL text is the file layout: ``sqlite_master`` of a new file holds exactly these statements
(the same bytes as the store files written since the first release, so an existing file opens
unchanged; tests/edge/test_store_schema.py compares them).
"""

from __future__ import annotations

import dataclasses

from portgate.uid import PARTIAL_BITS


@dataclasses.dataclass(frozen=True)
class Table:
    """One table: ``name``, ``columns`` (column names in file order), ``ddl`` (its CREATE TABLE)
    and ``indexes`` (the CREATE INDEX statements made with the table)."""

    name: str
    columns: tuple[str, ...]
    ddl: str
    indexes: tuple[str, ...] = ()

    def insert_sql(self, *, replace: bool = False, skip: tuple[str, ...] = ()) -> str:
        """``INSERT [OR REPLACE] INTO name (cols) VALUES (:col, ...)`` over the columns not in
        ``skip`` (named parameters: a mapping per row, keyed by column name)."""
        cols = [c for c in self.columns if c not in skip]
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        names = ", ".join(f'"{c}"' if c == "key" else c for c in cols)
        return f"{verb} INTO {self.name} ({names}) VALUES ({', '.join(':' + c for c in cols)})"


def _table(name: str, columns: tuple[tuple[str, str], ...], key: tuple[str, ...],
           indexes: tuple[str, ...] = ()) -> Table:
    """Render the CREATE TABLE as the store files have it: one tab-indented line per column
    (``name TYPE[ NOT NULL]``), then the primary key; ``key`` (an SQL keyword) is quoted."""
    def q(c: str) -> str:
        return f'"{c}"' if c == "key" else c

    lines = [f"{q(c)} {decl}" for c, decl in columns] + [f"PRIMARY KEY ({', '.join(q(k) for k in key)})"]
    ddl = f"CREATE TABLE {name} (\n\t" + ", \n\t".join(lines) + "\n)"
    return Table(name, tuple(c for c, _ in columns), ddl, indexes)


_S, _SN, _I, _IN = "VARCHAR", "VARCHAR NOT NULL", "INTEGER", "INTEGER NOT NULL"

workers = _table("workers", (
    ("registration", _SN), ("name", _SN), ("category", _SN), ("status", _SN),
    ("suspended_from", _S), ("suspended_until", _S), ("health_exam_date", _S),  # ISO dates
    ("booklet_revalidated_year", _I), ("rotation_number", _I),
), ("registration",))

cards = _table("cards", (  # uid: canonical UID
    ("uid", _SN), ("kind", _SN), ("registration", _SN), ("status", _SN),
), ("uid",), ("CREATE INDEX ix_cards_registration ON cards (registration)",))


def low_bits_sql(bits: int) -> str:
    """SQL for the low ``bits`` of ``cards.uid`` as hex (NULL-free; a shorter UID compares unequal
    because its whole text is shorter than ``bits / 4`` digits): the expression the indexes hold."""
    return f"substr(uid, -{bits // 4})"


# Partial reads (DEZ10: low 32 bits, DEZ8/W26: low 24, ``portgate.uid``) are looked up through these
# expression indexes: a read costs one index probe, whatever the size of the roster.
CARD_BITS_INDEXES = tuple(
    f"CREATE INDEX IF NOT EXISTS ix_cards_low{bits} ON cards ({low_bits_sql(bits)})"
    for bits in sorted(set(PARTIAL_BITS.values()))
)

# The per-tap expiry of pending flags (``DELETE ... WHERE at < ?``) seeks instead of scanning.
PENDING_FLAGS_AT_INDEX = "CREATE INDEX IF NOT EXISTS ix_pending_flags_at ON pending_flags (at)"

# Cards confiscated at this gate (G10): effective at once, and kept until the office shows it knows
# of the confiscation: its roster says the card is not active, or its blocklist lists the card.
# (Named "blocklist" since the first store files; office blocks are in ``office_blocks``.) The reason
# of a confiscation here is "confiscated: <reason flag>" (``edge.effects.confiscation_reason``).
blocklist = _table("blocklist", (("uid", _SN), ("reason", _SN), ("at", _SN)), ("uid",))  # at: ISO UTC

# The office's blocklist copy (downlink ``cards``): a snapshot replaces it, a delta adds to it; so a
# card the office no longer lists (returned, found) is no longer blocked here. Upgrade: a file written
# before this table existed kept the office's blocks in ``blocklist``; on opening it, the rows whose
# reason is not a gate confiscation (not "confiscated: <flag>", i.e. the office's plain "confiscated",
# "lost", "replaced") move here, in one transaction (``edge.store_file._upgrade_blocklist``).
office_blocks = _table("office_blocks", (("uid", _SN), ("reason", _SN), ("at", _SN)), ("uid",))

escala = _table("escala", (
    ("id", _IN),  # the rowid (INTEGER PRIMARY KEY): given by SQLite on insert
    ("date", _SN),  # local ISO date
    ("period", _SN), ("ship", _SN), ("ship_name", _SN), ("voyage", _SN), ("berth", _SN),
    ("gate_id", _SN), ("post", _SN), ("function", _SN), ("registration", _SN),
), ("id",), (
    "CREATE UNIQUE INDEX ux_escala_key ON escala (date, period, ship, post, registration)",
    "CREATE INDEX ix_escala_registration ON escala (registration, date)",
    "CREATE INDEX ix_escala_gate ON escala (gate_id, date)",
))

# Open shifts: origin "local" (admitted at this gate) or "presence" (relayed by the office).
open_shifts = _table("open_shifts", (
    ("registration", _SN), ("origin", _SN), ("gate_id", _SN), ("ship", _SN), ("admitted_at", _SN),
    ("dispatch", "TEXT"),  # JSON of the EscalaEntry, or NULL
), ("registration", "origin"))

last_shift_end = _table("last_shift_end", (("registration", _SN), ("ended_at", _SN)), ("registration",))

pending_flags = _table("pending_flags", (("uid", _SN), ("flag", _SN), ("at", _SN)), ("uid", "flag"))

inspector_session = _table("inspector_session", (
    ("id", _IN),  # always 1
    ("boot_id", _SN),  # a session does not survive a restart
    ("inspector_uid", _SN), ("inspector_registration", _SN), ("until_mono_ns", _IN),
), ("id",))

versions = _table("versions", (
    ("name", _SN),  # roster | cards | escala | presence
    ("version", _IN),
    ("updated_at", _S),  # ISO UTC or NULL
), ("name",))

meta = _table("meta", (("key", _SN), ("value", _SN)), ("key",))  # applied_seq: last journal seq applied

# In the order a new file creates them (the order of ``sqlite_master``).
TABLES = (workers, cards, blocklist, office_blocks, escala, open_shifts, last_shift_end, pending_flags,
          inspector_session, versions, meta)


def layout_problem(tables: set[str]) -> str | None:
    """What is wrong with the tables a store file holds (names from ``sqlite_master``), one line, or
    None. No tables (a new or 0-byte file) is a new store; every table of ``TABLES`` is the store;
    ``blocklist`` without ``office_blocks`` is a file from before ``office_blocks`` (upgraded at
    open). A table the store does not know (a renamed one, another program's file) or a store
    table missing while others are there is refused: the store cannot tell what it would lose by
    making it anew (the open shifts of a renamed ``open_shifts``: a second ADMIT, G5). SQLite's own
    ``sqlite_*`` tables are ignored."""
    tables = {n for n in tables if not n.startswith("sqlite_")}
    if not tables:
        return None
    known = [table.name for table in TABLES]
    unknown = sorted(tables - set(known))
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        return f"not a gate store layout: table(s) the store does not know: {shown}"
    upgradable = {"office_blocks"} if "blocklist" in tables else set()
    missing = [n for n in known if n not in tables and n not in upgradable]
    if missing:
        return f"not a gate store layout: store table(s) missing: {', '.join(missing)}"
    return None

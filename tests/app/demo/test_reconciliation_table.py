"""The demo's reconciliation table: one header word per column, each count right-aligned under
its header word (a tester read four header words over five columns)."""

from __future__ import annotations

from app.demo.run import RECONCILIATION_COLUMNS, reconciliation_line


def _right_edges(line: str) -> list[int]:
    edges, inside = [], False
    for i, ch in enumerate(line + " "):
        if ch != " " and not inside:
            inside = True
        elif ch == " " and inside:
            inside = False
            edges.append(i)
    return edges


def test_every_column_has_one_header_word_and_its_count_under_it():
    header = reconciliation_line(RECONCILIATION_COLUMNS)
    row = reconciliation_line(("g-aurora", 21, 18, 12345, 0, 3))
    assert header.split() == ["gate", "journaled", "decisions", "ledger", "missing", "gaps"]
    assert len(row.split()) == len(header.split()) == 6
    assert _right_edges(header)[1:] == _right_edges(row)[1:]  # counts end where their header ends
    assert header.index("gate") == row.index("g-aurora")  # the gate is left-aligned

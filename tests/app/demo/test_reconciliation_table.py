"""The demo's reconciliation table: one header word per column, each count right-aligned under
its header word (a tester read four header words over five columns), in the run's language
(``portgate demo --lang``: pt-BR by default, as the watchman's messages)."""

from __future__ import annotations

import pytest

from app.demo.console import RECONCILIATION_COLUMNS, reconciliation_line, texts


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


@pytest.mark.parametrize("lang, words", [
    ("pt", ["portaló", "diário", "decisões", "livro", "faltam", "lacunas"]),
    ("en", ["gate", "journaled", "decisions", "ledger", "missing", "gaps"]),
])
def test_the_header_words_follow_the_run_s_language_and_counts_stay_under_them(lang, words):
    header = reconciliation_line(texts(lang)["columns"], lang)
    row = reconciliation_line(("g-aurora", 21, 18, 12345, 0, 3), lang)
    assert header.split() == words and len(row.split()) == 6
    assert _right_edges(header)[1:] == _right_edges(row)[1:]
    assert header.index(words[0]) == row.index("g-aurora")


def test_the_console_s_titles_are_in_the_run_s_language():
    assert texts("pt")["reconciliation"].startswith("Conciliação")
    assert texts("pt")["pay"].startswith("Demonstrativos de pagamento")
    assert texts("en")["reconciliation"].startswith("Reconciliation")
    assert set(texts("pt")) == set(texts("en"))

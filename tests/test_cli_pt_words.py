"""English a fresh tester saw on a pt-BR command line (the default): refusals the commands printed
as the service worded them (``portgate.clitext.refusal``: the office's error codes through
``central.web.service_texts.localize``) and refusals no code knew; each in pt-BR by default and in
English with ``--lang en``, exit status and place unchanged."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from testkit.cli import in_pt_and_en, migrated_ledger
from testkit.cli import refused_in_pt_and_en as _refused

DEMO = Path(__file__).resolve().parent.parent / "config" / "demo"


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> str:
    return migrated_ledger(tmp_path_factory.mktemp("ledger"))


def test_edge_verify_journal_of_a_config_that_is_not_toml(tmp_path):
    bad = tmp_path / "gate.toml"
    bad.write_text("a = [\n")
    _refused(["edge", "verify-journal", "--config", str(bad)], "gate.toml: não é TOML válido: no fim do texto: ",
             "gate.toml: not valid TOML: ")


@pytest.mark.parametrize(("content", "pt_text", "en_text"), [
    (b"registration,x\n", "w.csv:1: o cabeçalho não tem a(s) coluna(s) name, category, status",
     "w.csv:1: header lacks column(s) name, category, status"),
    (b"\xff\xfe,\n", "w.csv:1: o arquivo não é UTF-8", "w.csv:1: file is not UTF-8"),
])
def test_replay_of_a_workers_file_it_cannot_read(tmp_path, content, pt_text, en_text):
    workers = tmp_path / "w.csv"
    workers.write_bytes(content)
    _refused(["replay", "--workers", str(workers), "--cards", str(DEMO / "cards.csv"), "--escala",
              str(DEMO / "escala.csv"), "--taps", str(DEMO / "taps.csv")], pt_text, en_text)


def test_pay_with_a_rulebook_that_is_neither_a_file_nor_an_id(ledger):
    _refused(["pay", "--db", ledger, "--from", "2026-03-01", "--to", "2026-03-02", "--rulebook", "nope.toml"],
             "--rulebook: não há regulamento 'nope.toml' (um arquivo, ou um id em ",
             "--rulebook: no rulebook 'nope.toml' (a file, or an id in ")


def test_evidence_audit_of_a_config_naming_an_empty_sqlite_file_names_its_database_url(tmp_path):
    (tmp_path / "empty.db").write_bytes(b"")
    (tmp_path / "keys").mkdir()
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "empty.db"}"\nport = "santos"\nkeys_dir = "{tmp_path / "keys"}"\n')
    pt, en = in_pt_and_en(["evidence", "audit", "--config", str(cfg), "--nice", "0"])
    assert pt.returncode == en.returncode == 2
    assert pt.stderr.startswith(f"portgate: {cfg}:$.database_url: o arquivo SQLite '{tmp_path / 'empty.db'}' está "
                                "vazio (0 bytes): uma cópia que falhou ou um caminho errado? Restaure o livro-razão "
                                "ou corrija o caminho; para começar"), pt.stderr
    assert en.stderr.startswith(f"portgate: {cfg}:$.database_url: SQLite file '{tmp_path / 'empty.db'}' is empty "
                                "(0 bytes): a failed copy or a wrong path? Restore the ledger"), en.stderr
    assert "--db" not in pt.stderr.split(":")[1]


def test_a_locked_sqlite_ledger_is_not_reachable_in_pt_br(ledger, tmp_path):
    """Another process holds the ledger's file locked (rollback journal, an exclusive
    transaction): the command waits its busy timeout and says so, exit 1 (try again)."""
    path = tmp_path / "locked.db"
    path.write_bytes(Path(ledger.removeprefix("sqlite:///")).read_bytes())
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("PRAGMA journal_mode=DELETE")
        holder.execute("BEGIN EXCLUSIVE")
        _refused(["pay", "overdue", "--db", f"sqlite:///{path}"],
                 f"banco sqlite:///{path} inacessível: o banco está travado (outro processo o está usando)",
                 f"database sqlite:///{path} not reachable: database is locked", status=1)
    finally:
        holder.close()


def test_verify_slip_refusals(ledger, tmp_path):
    pdf = tmp_path / "slip.pdf"
    pdf.write_bytes(b"%PDF-1.4\n")
    _refused(["pay", "verify-slip", str(pdf)], "portgate: dê --config central.toml, ou --db URL --key-file ARQUIVO",
             "portgate: give --config central.toml, or --db URL --key-file FILE")
    key = tmp_path / "slip.key"
    key.write_bytes(b"abc")
    _refused(["pay", "verify-slip", "--db", ledger, "--key-file", str(key), str(pdf)],
             "slip.key: não é uma chave de contracheque (3 bytes; uma chave tem 32 bytes aleatórios)",
             "slip.key: not a payslip key (3 bytes; a key is 32 random bytes)")
    key.write_bytes(bytes(32))
    _refused(["pay", "verify-slip", "--db", ledger, "--key-file", str(key), str(pdf)],
             "slip.pdf: PDF danificado: começa como PDF, mas seu conteúdo não pode ser lido (cortado ou alterado?)",
             "slip.pdf: a damaged PDF: it starts as a PDF but its contents cannot be read (cut short or altered?)")

"""Refusals a fresh tester saw in English on a pt-BR command line (the default), worded through
the catalogs (``central.web.service_codes_files``, ``svc.*``): each through the real command, in
pt-BR by default and in English with ``--lang en``, its exit status and its place kept."""

from __future__ import annotations

import csv
import functools
from pathlib import Path

import pytest

from testkit.cli import in_pt_and_en, migrated_ledger, refused_in_pt_and_en, run_here
from testkit.gate_process import write_gate_config

ROOT = Path(__file__).resolve().parent.parent
_refused = functools.partial(refused_in_pt_and_en, absent=("None",))


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> str:
    return migrated_ledger(tmp_path_factory.mktemp("ledger"))


def _central(tmp_path, ledger: str, extra: str = "") -> str:
    (tmp_path / "keys").mkdir(exist_ok=True)
    path = tmp_path / "central.toml"
    path.write_text(f'port = "santos"\nkeys_dir = "keys"\ndatabase_url = "{ledger}"\n{extra}')
    return str(path)


def _row(reg: str, start: str, admit: str, exit_: str, meal: str = "no") -> list[str]:
    return [reg, "vigia", "9300001", "berthed", f"2026-03-15T{start}:00-03:00", "2026-03-15T13:00:00-03:00",
            f"2026-03-15T{admit}:00-03:00", f"2026-03-15T{exit_}:00-03:00", meal]


def test_pay_shifts_file_rows_in_pt_and_en(tmp_path):
    path = tmp_path / "shifts.csv"
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(["registration", "function", "ship", "berth", "period_start", "period_end", "admit_at",
                    "exit_at", "meal_worked"])
        w.writerows([_row("100", "07:00", "07:00", "06:00"), _row("101", "07:30", "07:30", "12:00"),
                     _row("102", "07:00", "07:00", "12:00", "maybe"), _row("103", "07:00", "07:00", "12:00"),
                     _row("103", "07:00", "07:00", "12:00")])
    pt, en = in_pt_and_en(["pay", "--shifts", str(path)])
    assert pt.returncode == en.returncode == 2, (pt.stderr, en.stderr)
    for line in ("shifts.csv:2: exit_at (saída) é anterior a admit_at (entrada)",
                 "shifts.csv:3: period_start 15/03/2026 07:30:00 não está numa hora cheia do horário local "
                 "(America/Sao_Paulo)",
                 "shifts.csv:4: meal_worked 'maybe' não é sim|não",
                 "shifts.csv:6: o turno 103/9300001/2026-03-15/07-13 aparece duas vezes (a primeira em shifts.csv:5)"):
        assert line in pt.stderr, pt.stderr
    for line in ("shifts.csv:2: exit_at is before admit_at",
                 "shifts.csv:3: period_start 2026-03-15T07:30:00-03:00 is not on a whole local hour (America/Sao_Paulo)",
                 "shifts.csv:4: meal_worked 'maybe' is not yes|no",
                 "shifts.csv:6: shift 103/9300001/2026-03-15/07-13 is given twice (first at shifts.csv:5)"):
        assert line in en.stderr, en.stderr


def test_pay_shifts_function_not_in_the_rulebook(tmp_path):
    path = tmp_path / "shifts.csv"
    row = _row("100", "07:00", "07:00", "12:00")
    row[1] = "cook"
    path.write_text("registration,function,ship,berth,period_start,period_end,admit_at,exit_at,meal_worked\n"
                    + ",".join(row) + "\n", encoding="utf-8")
    _refused(["pay", "--shifts", str(path)],
             "a função 'cook' não está no regulamento decreto-83611-1979 (uma de: vigia, vigia_chefe)",
             "function 'cook' is not in rulebook decreto-83611-1979 (one of: vigia, vigia_chefe)")


def test_add_gate_twice_and_a_bad_public_key(tmp_path):
    keys = str(tmp_path / "keys")
    assert run_here(["central", "add-gate", "--keys-dir", keys, "--gate-id", "g-new"]).returncode == 0
    _refused(["central", "add-gate", "--keys-dir", keys, "--gate-id", "g-new"],
             "g-new.key: o portaló g-new já tem uma chave (use --rotate para substituí-la)",
             "g-new.key: gate g-new already has a key (use --rotate to replace it)")
    _refused(["central", "add-gate", "--keys-dir", keys, "--gate-id", "g-two", "--public-key", "AAAA"],
             "portgate: não é uma chave pública Ed25519: uma chave pública Ed25519 tem 32 bytes",
             "portgate: not an Ed25519 public key: An Ed25519 public key is 32 bytes long")


def test_an_office_public_key_file_that_is_not_there(tmp_path):
    cfg = write_gate_config(tmp_path)
    cfg.write_text(cfg.read_text().replace('key_file = "gate.key"\n',
                                           'key_file = "gate.key"\noffice_public_key_file = "office.pub"\n'))
    _refused(["edge", "check-config", str(cfg)],
             "gate.toml:office_public_key_file: não foi possível ler a chave pública do escritório: arquivo ou "
             "diretório inexistente",
             "gate.toml:office_public_key_file: cannot read the office public key: No such file or directory")


def test_a_mysql_database_url_on_the_command_line():
    _refused(["ledger", "migrate", "--db", "mysql://u@h/db"],
             "portgate: URL do banco de dados 'mysql://u@h/db': mysql não é suportado: o livro-razão roda em SQLite",
             "portgate: database URL 'mysql://u@h/db': mysql is not supported: the ledger runs on SQLite")


def test_mark_paid_at_a_time_before_2000(ledger):
    _refused(["pay", "mark-paid", "--db", ledger, "--at", "1999-06-01T00:00:00-03:00", "1"],
             "portgate: --at '1999-06-01T00:00:00-03:00' está fora do intervalo 01/01/2000..31/12/2100",
             "portgate: --at '1999-06-01T00:00:00-03:00' is outside 2000-01-01..2100-12-31")


def test_an_office_user_s_short_password(ledger, tmp_path):
    (tmp_path / "pw").write_text("short\n")
    _refused(["office", "add-user", "--config", _central(tmp_path, ledger), "--login", "ana", "--role", "office",
              "--password-file", str(tmp_path / "pw")],
             "portgate: --password: uma senha tem pelo menos 10 caracteres",
             "portgate: --password: a password has at least 10 characters")


def test_office_serve_with_a_gate_rulebook_as_its_pay_rulebook(ledger, tmp_path):
    gate_book = ROOT / "config" / "rulebooks" / "gate-default.toml"
    config = _central(tmp_path, ledger, f'\n[web]\nrulebook = "{gate_book}"\n')
    _refused(["office", "serve", "--config", config, "--port", "18771"],
             "gate-default.toml:id: não é um regulamento de pagamento: é um regulamento de portaló (tem [[version]]); "
             "dê um regulamento de pagamento (config/rulebooks/decreto-83611-1979.toml ...)",
             "gate-default.toml:id: not a pay rulebook: a gate rulebook (it has [[version]]); give a pay rulebook "
             "(config/rulebooks/decreto-83611-1979.toml ...)")

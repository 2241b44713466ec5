"""A service's refusal printed by a ``portgate`` command reads in pt-BR by default and in English
with ``PORTGATE_LANG=en`` (``app.cli`` through ``central.web.service_texts.localize``), through the
real console script: the fresh tester's English lines from ``office add-user`` and ``pay --from``."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.cli import run_here

PORTGATE = str(Path(sys.executable).parent / "portgate")
DEMO_WORKERS = Path(__file__).resolve().parent.parent / "config" / "demo" / "workers.csv"


def _run(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PORTGATE_LANG"} | {"PORTGATE_PASSWORD": "uma senha longa!"}
    if lang is not None:
        env["PORTGATE_LANG"] = lang
    return subprocess.run([PORTGATE, *args], capture_output=True, text=True, env=env, timeout=120)


def _here(*args: str, lang: str | None) -> subprocess.CompletedProcess:
    """The same command through ``app.cli.main`` in this process (``testkit.cli.run_here``: no Python
    start): the ledger's set-up and the English lines; the pt-BR ones stay the console script's."""
    return run_here(list(args), env={"PORTGATE_LANG": lang, "PORTGATE_PASSWORD": "uma senha longa!"})


@pytest.fixture(scope="module")
def office(tmp_path_factory) -> tuple[str, str]:
    """(central.toml, its ledger URL): the demo's workers, user ``escritorio`` and V017's account."""
    tmp = tmp_path_factory.mktemp("office")
    db = f"sqlite:///{tmp / 'ledger.db'}"
    cfg = tmp / "central.toml"
    cfg.write_text(f'database_url = "{db}"\nport = "santos"\nkeys_dir = "{tmp / "keys"}"\n')
    for args in (("ledger", "migrate", "--db", db), ("registry", "import", "--db", db, "--workers", str(DEMO_WORKERS)),
                 ("office", "add-user", "--config", str(cfg), "--login", "escritorio", "--role", "office"),
                 ("office", "add-user", "--config", str(cfg), "--role", "worker", "--registration", "V017")):
        done = _here(*args, lang="en")
        assert done.returncode == 0, (args, done.stderr)
    return str(cfg), db


def test_add_user_for_a_taken_login_or_registration_says_so_in_pt_br_and_english(office):
    cfg, _db = office
    taken = ("office", "add-user", "--config", cfg, "--login", "escritorio", "--role", "office")
    pt, en = _run(*taken, lang=None), _here(*taken, lang="en")
    assert pt.returncode == en.returncode == 2
    assert pt.stderr.strip() == "portgate: --login: o usuário 'escritorio' já existe"
    assert en.stderr.strip() == "portgate: --login: user 'escritorio' already exists"
    again = ("office", "add-user", "--config", cfg, "--role", "worker", "--registration", "V017")
    pt, en = _run(*again, lang="pt"), _here(*again, lang="en")
    assert pt.returncode == en.returncode == 2
    assert pt.stderr.strip() == "portgate: matrícula: a matrícula V017 já tem uma conta"
    assert en.stderr.strip() == "portgate: --registration: registration V017 already has an account"


def test_pay_from_a_day_that_does_not_exist_says_so_in_pt_br_and_english(office):
    _cfg, db = office
    args = ("pay", "--db", db, "--from", "2026-02-30", "--to", "2026-03-01")
    pt, en = _run(*args, lang=None), _here(*args, lang="en")
    assert pt.returncode == en.returncode == 2
    assert pt.stderr.strip() == "portgate: --from: '2026-02-30' não é uma data AAAA-MM-DD"
    assert en.stderr.strip() == "portgate: --from: '2026-02-30' is not a date YYYY-MM-DD"

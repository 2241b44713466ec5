"""An argument whose bytes are not UTF-8 (a fresh tester: ``registry import ... --actor $'\\xff'``
gave a traceback, ``UnicodeEncodeError ... surrogates not allowed``, and ``--new-category
$'arru\\xffmador'`` was stored as ``arru\\udcffmador``): the real ``portgate`` refuses it in one line
naming it, exit 2, before any command runs (nothing made, nothing stored); pt-BR first."""

from __future__ import annotations

import os
import subprocess
import sys


def _portgate(tmp_path, *args: bytes, lang: str = "pt") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable.encode(), b"-m", b"app.cli", *args], capture_output=True,
                          env={**os.environ, "PORTGATE_LANG": lang}, cwd=os.getcwd(), timeout=120)


def test_an_actor_not_in_utf8_is_refused_before_the_ledger_is_made(tmp_path):
    db = tmp_path / "ledger.db"
    csv = tmp_path / "w.csv"
    csv.write_text("registration,name,category,status\n")
    r = _portgate(tmp_path, b"registry", b"import", b"--workers", bytes(csv), b"--db",
                  b"sqlite:///" + bytes(db), b"--actor", b"\xff")
    err = r.stderr.decode()
    assert r.returncode == 2 and "Traceback" not in err, (r.returncode, err)
    assert err == "portgate: um argumento não é texto UTF-8 válido: '\\xff'; informe-o em UTF-8 (um nome de " \
                  "arquivo: renomeie o arquivo)\n", err
    assert not db.exists()


def test_a_category_not_in_utf8_is_refused_in_english(tmp_path):
    r = _portgate(tmp_path, b"registry", b"import", b"--workers", b"w.csv", b"--new-category", b"arru\xffmador",
                  b"--db", b"sqlite:///" + bytes(tmp_path / "l.db"), lang="en")
    err = r.stderr.decode()
    assert r.returncode == 2 and err.count("\n") == 1, (r.returncode, err)
    assert "an argument is not valid UTF-8 text: 'arru\\xffmador'" in err, err

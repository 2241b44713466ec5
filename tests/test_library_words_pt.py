"""A library's own English words (sqlite3's ``file is not a database``, msgspec's ``JSON is
malformed: ...``) inside a pt-BR refusal are worded in pt-BR too, as the refusal around them (the
real command on a real file; ``central.web.service_codes`` ``lib_*``)."""

from __future__ import annotations

import zipfile
from pathlib import Path

from testkit.cli import run_here

ROOT = Path(__file__).resolve().parents[1]
PT = {"PORTGATE_LANG": "pt"}


def test_a_file_that_is_not_a_database_is_said_in_pt(tmp_path):
    bad = tmp_path / "bad.db"
    bad.write_bytes(b"not a sqlite file, only bytes " * 200)
    demo = ROOT / "config" / "demo" / "workers.csv"
    args = ["registry", "import", "--db", f"sqlite:///{bad}", "--workers", str(demo)]
    r = run_here(args, env=PT)
    said = "não é um banco de dados (não é um livro-razão do portgate): o arquivo não é um banco de dados"
    assert r.returncode == 2 and said in r.stderr, r.stderr
    assert "is not a database" not in r.stderr, r.stderr
    r = run_here(args, env={"PORTGATE_LANG": "en"})
    assert "is not a database (not a portgate ledger): file is not a database" in r.stderr, r.stderr


def test_a_manifest_that_is_not_json_is_said_in_pt(tmp_path):
    bundle = tmp_path / "b.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr("manifest.json", "xx{")
    r = run_here(["evidence", "verify", str(bundle)], env=PT)
    assert r.returncode == 2, r.stderr
    assert "o manifest.json não é JSON (o JSON está malformado: caractere inválido (byte 0))" in r.stderr, r.stderr
    assert "malformed" not in r.stderr, r.stderr

"""``portgate registry import`` (the real entry point) names every bad row of its files in one
refusal: a row that does not parse (a UID that is not hexadecimal, a kind or status that does not
exist) no longer hides the rows that parse but are wrong against the registry (a registration
nobody has, a second active card), in either file; each row once, in line order, file by file;
a card of a worker whose own row is bad is not called unregistered; nothing is written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from sqlalchemy import func, select

from central.db import make_engine
from central.registry.schema import cards, workers
from testkit.cli import run_here

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "config" / "demo"
PORTGATE = Path(sys.executable).with_name("portgate")


def _portgate(*args: str) -> subprocess.CompletedProcess:
    env = os.environ | {"PORTGATE_LANG": "en"}
    return subprocess.run([str(PORTGATE), *args], capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)


def _count(url: str, table) -> int:
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(table)).scalar()
    finally:
        engine.dispose()


def test_every_bad_row_of_both_files_in_one_refusal(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    done = run_here(["registry", "import", "--db", url, "--workers", str(DEMO / "workers.csv"), "--cards",
                     str(DEMO / "cards.csv")])  # the set-up, in process; the refusal below: the real entry point
    assert done.returncode == 0, done.stderr
    before = _count(url, cards), _count(url, workers)
    people = tmp_path / "workers.csv"
    people.write_text("registration,name,category,status,health_exam_date,rotation_number\n"
                      "V950,Novo Um,vigia,active,2026-02-30,950\n"  # 2: no such day
                      "V951,Novo Dois,vigia,active,2026-01-10,1\n"  # 3: rotation number 1 is V001's
                      "V952,Novo Três,vigia,active,2026-01-10,952\n", encoding="utf-8")  # good
    badges = tmp_path / "cards.csv"
    badges.write_text("uid,kind,registration,status\n"
                      "0A04A1ZZ01,control,V001,active\n"  # 2: not hexadecimal
                      "0A04A19901,control,V999,active\n"  # 3: nobody has V999
                      "0A04A19902,chave,V001,active\n"  # 4: no such kind
                      "0A04A19905,control,V950,active\n"  # 5: V950's own row is bad (named there)
                      "0A04A19906,control,V001,active\n"  # 6: V001 holds an active control card
                      "0A04A19907,control,V952,active\n"  # good
                      "0A04A1990,control,V002,active\n", encoding="utf-8")  # 8: odd number of digits
    done = _portgate("registry", "import", "--db", url, "--workers", str(people), "--cards", str(badges))
    assert done.returncode == 2, (done.stdout, done.stderr)
    lines = [line.removeprefix("portgate: ") for line in done.stderr.strip().splitlines()]
    places = [line.split(": ", 1)[0] for line in lines]
    assert places == ["workers.csv:2", "workers.csv:3", "cards.csv:2", "cards.csv:3", "cards.csv:4", "cards.csv:6",
                      "cards.csv:8"], done.stderr
    said = dict(line.split(": ", 1) for line in lines)
    assert "2026-02-30" in said["workers.csv:2"] and "already held by V001" in said["workers.csv:3"]
    assert "not hexadecimal" in said["cards.csv:2"] and "'V999' is not registered" in said["cards.csv:3"]
    assert "chave" in said["cards.csv:4"] and "already has active" in said["cards.csv:6"]
    assert "odd number of hex digits" in said["cards.csv:8"]
    assert (_count(url, cards), _count(url, workers)) == before  # nothing written

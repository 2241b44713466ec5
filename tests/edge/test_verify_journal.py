"""``portgate edge verify-journal --config gate.toml`` (issue 36, item 5): a real gate process
writes its signed journal; the check runs read-only while it runs and after it is killed (the
``-wal`` file left by the crash is read and left as it was), and after an edit with sqlite3 it
names the first bad seq and exits 1. Journals written by the real ``Journal`` class, edited with
sqlite3, give each kind of break."""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from edge.journal import Journal
from edge.rules.model import Now
from edge.signing import load_or_create
from testkit.cli import run_here
from testkit.gate_process import kill_gate, start_gate_and_wait, write_gate_config
from testkit.wait import wait_until
from wire import chain
from wire.events import TapPayload

T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)
GATE = "g-aurora"


def verify(config: Path, *extra: str) -> subprocess.CompletedProcess:
    """The installed ``portgate edge verify-journal`` (a Python start)."""
    return subprocess.run([sys.executable, "-m", "app.cli", "edge", "verify-journal", "--config", str(config),
                           *extra], capture_output=True, text=True, timeout=120)


def verify_here(config: Path, *extra: str) -> subprocess.CompletedProcess:
    """The same command through ``app.cli.main`` in this process (``testkit.cli.run_here``): the
    edited-journal tests check its output, the first test above the installed command."""
    return run_here(["edge", "verify-journal", "--config", str(config), *extra])


def digests(state: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(state.glob("journal.db*"))
            if not p.name.endswith("-shm")}


def test_a_running_gate_a_crashed_one_and_an_edited_journal(tmp_path):
    config = write_gate_config(tmp_path)
    state = tmp_path / "state"
    fifo = os.open(tmp_path / "reads.fifo", os.O_RDWR)
    proc = start_gate_and_wait(config)
    try:
        for uid in (b"0A04A10001", b"0A04A10002", b"0A04A10003"):
            os.write(fifo, uid + b"\n")
        shown = tmp_path / "shown.jsonl"
        wait_until(lambda: shown.exists() and len(shown.read_bytes().splitlines()) >= 3, timeout=60,
                   what="three reads decided")
        running = verify(config)  # the gate holds the journal open and may write meanwhile
        assert running.returncode == 0, running.stdout + running.stderr
        assert "chain holds" in running.stdout.splitlines()[-1]
        assert proc.poll() is None
    finally:
        kill_gate(proc)  # SIGKILL: a crash, the -wal file stays
        os.close(fifo)
    assert (state / "journal.db-wal").exists()
    before = digests(state)
    crashed = verify(config)
    assert crashed.returncode == 0, crashed.stdout + crashed.stderr
    top = int(crashed.stdout.split(" seq 1..")[1].split(",")[0])
    assert top >= 3
    assert digests(state) == before, "verify-journal changed the journal"  # read-only, WAL untouched
    assert "journal.db-wal" in before

    # an edit with sqlite3 (the gate stopped): the uid of the first tap changed in the stored body
    conn = sqlite3.connect(state / "journal.db")
    seq, body = conn.execute("SELECT seq, body FROM journal WHERE kind = 'tap' ORDER BY seq").fetchone()
    edited = body.replace(b'"uid":"0A04A1', b'"uid":"0B04A1')
    assert edited != body
    conn.execute("UPDATE journal SET body = ? WHERE seq = ?", (edited, seq))
    conn.commit()
    conn.close()
    broken = verify(config)
    assert broken.returncode == 1, broken.stdout + broken.stderr
    assert f"FAIL: CHAIN_BREAK BAD_SIGNATURE gate {GATE} seq {seq}: " in broken.stdout
    assert f"first bad seq {seq}" in broken.stdout.splitlines()[-1]


def _tap(i: int) -> TapPayload:
    return TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="deny",
                      rules_failed=["G6"], registration="R1", message="NEGADO")


@pytest.fixture
def journal_gate(tmp_path):
    """A gate.toml and a journal of 6 signed taps written by the real ``Journal`` with the gate's
    own key (``<state_dir>/signing.key``)."""
    config = write_gate_config(tmp_path)
    state = tmp_path / "state"
    signer = load_or_create(state)
    j = Journal(state / "journal.db", port="santos", gate_id=GATE, key=b"k" * 32, boot_id="b1", signer=signer)
    for i in range(6):
        j.append(_tap(i), now=Now(T0 + dt.timedelta(minutes=i), i, True))
    j.close()
    return config, state / "journal.db"


def _edit(path: Path, sql: str, *args) -> None:
    conn = sqlite3.connect(path)
    conn.execute(sql, args)
    conn.commit()
    conn.close()


def _swap_seq(path: Path) -> None:
    """Rows 3 and 4 exchange their bodies."""
    conn = sqlite3.connect(path)
    b3, b4 = (conn.execute("SELECT body FROM journal WHERE seq = ?", (s,)).fetchone()[0] for s in (3, 4))
    conn.execute("UPDATE journal SET body = ? WHERE seq = 3", (b4,))
    conn.execute("UPDATE journal SET body = ? WHERE seq = 4", (b3,))
    conn.commit()
    conn.close()


@pytest.mark.parametrize("edit, named, first", [
    (lambda p: _edit(p, "DELETE FROM journal WHERE seq = 4"), "CHAIN_BREAK MISSING gate g-aurora seq 4", 4),
    (lambda p: _edit(p, "UPDATE journal SET body = X'7B7D' WHERE seq = 5"), "MALFORMED seq 5", 5),
    (_swap_seq, "ROW_MISMATCH seq 3: the row holds the event of seq 4", 3),
    # the last rows deleted leave a chain that holds: the gate's .hwm file says 6 were journaled
    (lambda p: _edit(p, "DELETE FROM journal WHERE seq >= 5"), "TRUNCATED after seq 4", 5),
], ids=["deleted", "not-an-event", "swapped", "cut-at-the-end"])
def test_each_edit_names_its_first_bad_seq(journal_gate, edit, named, first):
    config, path = journal_gate
    assert verify_here(config).returncode == 0
    edit(path)
    done = verify_here(config)
    assert done.returncode == 1, done.stdout + done.stderr
    assert any(line.startswith("FAIL: ") and named in line for line in done.stdout.splitlines()), done.stdout
    assert f"first bad seq {first} " in done.stdout.splitlines()[-1]


def test_another_key_fails_every_event_and_a_missing_key_is_exit_2(journal_gate, tmp_path):
    config, _path = journal_gate
    other = tmp_path / "other.pem"
    other.write_text(chain.public_pem(chain.new_private_key().public_key()))
    done = verify_here(config, "--public-key", str(other))
    assert done.returncode == 1 and "CHAIN_BREAK BAD_SIGNATURE gate g-aurora seq 1:" in done.stdout
    assert "first bad seq 1 " in done.stdout.splitlines()[-1]
    (tmp_path / "state" / "signing.key").unlink()
    done = verify_here(config)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert "gate signing key file not found" in done.stderr and "--public-key" in done.stderr
    pt = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "pt"})
    assert pt.returncode == 2 and "not found" not in pt.stderr and "--public-key" in pt.stderr, pt.stderr
    (tmp_path / "state" / "journal.db").rename(tmp_path / "moved.db")
    done = verify_here(config, "--public-key", str(other))
    assert done.returncode == 2 and "cannot open read-only" in done.stderr and "Traceback" not in done.stderr
    pt = run_here(["edge", "verify-journal", "--config", str(config), "--public-key", str(other)],
                  env={"PORTGATE_LANG": "pt"})
    assert pt.returncode == 2 and "cannot open" not in pt.stderr, pt.stderr
    (tmp_path / "state" / "journal.db").write_bytes(b"not a journal, only bytes " * 300)
    pt = run_here(["edge", "verify-journal", "--config", str(config), "--public-key", str(other)],
                  env={"PORTGATE_LANG": "pt"})  # sqlite3's English reason in pt-BR too
    assert pt.returncode == 2 and "o arquivo não é um banco de dados" in pt.stderr, pt.stderr
    assert "diário" in pt.stderr and "database" not in pt.stderr, pt.stderr


def test_the_ok_line_in_pt_br_and_english(journal_gate):
    """``ok: N signed event(s) verified`` stayed English under a pt-BR command line (the demo's pt-BR
    console prints it too): the ``ok:`` prefix stays, the sentence speaks the run's language."""
    config, _path = journal_gate
    pt = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "pt"})
    assert pt.returncode == 0, pt.stdout + pt.stderr
    assert "ok: 6 evento(s) assinado(s) conferido(s) de 6 linha(s), seq 1..6, cabeça " in pt.stdout, pt.stdout
    en = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "en"})
    assert "ok: 6 signed event(s) verified of 6 row(s), seq 1..6, head " in en.stdout, en.stdout


@pytest.mark.parametrize("edit, pt_line, en_line", [
    (lambda p: _edit(p, "DELETE FROM journal WHERE seq = 4"),
     "FAIL: CHAIN_BREAK MISSING gate g-aurora seq 4: seq 4..4 ausentes",
     "FAIL: CHAIN_BREAK MISSING gate g-aurora seq 4: seq 4..4 not present"),
    (_swap_seq, "FAIL: ROW_MISMATCH seq 3: a linha contém o evento da seq 4 (",
     "FAIL: ROW_MISMATCH seq 3: the row holds the event of seq 4 ("),
    (lambda p: _edit(p, "DELETE FROM journal WHERE seq >= 5"),
     "FAIL: TRUNCATED after seq 4: a marca de nível do diário (journal.db.hwm) diz que a seq 6 foi registrada",
     "FAIL: TRUNCATED after seq 4: the journal's high-water mark (journal.db.hwm) says seq 6 was journaled"),
], ids=["deleted", "swapped", "cut-at-the-end"])
def test_the_fail_lines_in_pt_br_and_english(journal_gate, edit, pt_line, en_line):
    """``FAIL:`` lines were English under a pt-BR command line: the code and place (``FAIL: CHAIN_BREAK
    MISSING gate G seq N: ``, ``FAIL: ROW_MISMATCH seq N: ``) stay what a script reads, the sentence
    speaks the run's language, the exit status stays 1."""
    config, path = journal_gate
    edit(path)
    pt = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "pt"})
    en = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "en"})
    assert pt.returncode == en.returncode == 1, pt.stdout + en.stdout
    assert any(line.startswith(pt_line) for line in pt.stdout.splitlines()), pt.stdout
    assert any(line.startswith(en_line) for line in en.stdout.splitlines()), en.stdout


def test_a_public_key_given_inline_as_base64_or_neither_a_file_nor_a_key(journal_gate, tmp_path):
    """``--public-key AAAA`` said ``AAAA: No such file or directory`` (English, under pt-BR): a value
    that names no file is read as the key itself (base64 of its 32 bytes); neither a file nor a key is
    refused in the run's language, exit 2."""
    config, _path = journal_gate
    own = chain.public_raw(load_or_create(tmp_path / "state").public_key())
    done = verify_here(config, "--public-key", own)
    assert done.returncode == 0, done.stdout + done.stderr
    pt = run_here(["edge", "verify-journal", "--config", str(config), "--public-key", "AAAA"], env={"PORTGATE_LANG": "pt"})
    en = run_here(["edge", "verify-journal", "--config", str(config), "--public-key", "AAAA"], env={"PORTGATE_LANG": "en"})
    assert pt.returncode == en.returncode == 2, pt.stderr + en.stderr
    assert "portgate: AAAA: não é um arquivo de chave legível nem uma chave pública Ed25519" in pt.stderr, pt.stderr
    assert "portgate: AAAA: neither a readable key file nor an Ed25519 public key" in en.stderr, en.stderr


def _receipted_gate(tmp_path: Path, office_signer) -> tuple[Path, Path]:
    """A gate.toml naming the office's public key and a journal of 22 signed taps whose
    ``journal.db.receipt`` is the office's receipt of seq 22 (``central.ingest.receipts``' body, signed
    with ``office_signer``), kept by the real ``Journal.keep_receipt``."""
    from central.ingest.receipts import receipt_body

    office = chain.new_private_key()
    pub = tmp_path / "office.pub"
    pub.write_text(chain.public_pem(office.public_key()))
    config = write_gate_config(tmp_path)
    config.write_text(config.read_text().replace('clock_trust = "always"\n',
                                                 f'clock_trust = "always"\noffice_public_key_file = "{pub}"\n'))
    state = tmp_path / "state"
    j = Journal(state / "journal.db", port="santos", gate_id=GATE, key=b"k" * 32, boot_id="b1",
                signer=load_or_create(state))
    for i in range(22):
        j.append(_tap(i), now=Now(T0 + dt.timedelta(minutes=i), i, True))
    seq, head = j.head()
    body = receipt_body("santos", GATE, seq, head, 0, T0 + dt.timedelta(hours=1))
    signer = office if office_signer == "office" else chain.new_private_key()
    assert j.keep_receipt(msgspec.json.encode({"body": body.decode(), "sig": signer.sign(body).hex()}))
    j.close()
    return config, state / "journal.db"


def _cut_20_to_22_and_the_hwm(path: Path) -> None:
    _edit(path, "DELETE FROM journal WHERE seq >= 20")
    Path(str(path) + ".hwm").unlink()


def test_a_cut_end_with_the_hwm_deleted_is_truncated_below_the_verified_receipt(tmp_path):
    """Seqs 20-22 and ``journal.db.hwm`` deleted left a chain that holds (exit 0): the office's signed
    receipt next to the journal says seq 22 was received, so the journal ending at 19 is TRUNCATED,
    exit 1, in pt-BR and English."""
    config, path = _receipted_gate(tmp_path, "office")
    assert verify_here(config).returncode == 0
    _cut_20_to_22_and_the_hwm(path)
    pt = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "pt"})
    en = run_here(["edge", "verify-journal", "--config", str(config)], env={"PORTGATE_LANG": "en"})
    assert pt.returncode == en.returncode == 1, pt.stdout + pt.stderr
    assert ("FAIL: TRUNCATED after seq 19: o recibo assinado do escritório (journal.db.receipt) diz que a seq 22 "
            "foi recebida; faltam as seqs 20..22") in pt.stdout.splitlines(), pt.stdout
    assert ("FAIL: TRUNCATED after seq 19: the office's signed receipt (journal.db.receipt) says seq 22 was "
            "received; seqs 20..22 missing") in en.stdout.splitlines(), en.stdout
    assert "first bad seq 20 " in en.stdout.splitlines()[-1]


def test_a_receipt_that_does_not_verify_sets_no_floor(tmp_path):
    """A ``journal.db.receipt`` signed by another key than the office's (forged, or the wrong file)
    is not believed: the same cut then shows nothing beyond what the chain and the .hwm say."""
    config, path = _receipted_gate(tmp_path, "another key")
    _cut_20_to_22_and_the_hwm(path)
    done = verify_here(config)
    assert done.returncode == 0 and "TRUNCATED" not in done.stdout, done.stdout

"""Malformed manifests, oversized members and non-rulebook ``--gate-rulebook`` files are one-line
errors (exit 2), never a traceback; the bundles are real exports, then edited."""

from __future__ import annotations

import datetime as dt
import json
import struct
import subprocess
import sys
import zipfile
from zoneinfo import ZoneInfo

import pytest

from central.db import make_engine
from central.evidence import verify as verify_mod
from central.evidence.bundle import export
from central.evidence.bundle_out import write_out
from central.ingest.receipts import issue, office_key
from central.evidence.verify import verify_bundle
from central.ingest import chain as chain_check
from central.ingest.event_store import Accepted, check, update_progress, write_batch
from central.ingest.keys import KeyRing, add_gate, register_public_key
from central.ledger.migrate import upgrade
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from portgate.errors import BadInput
from testkit.cli import in_pt_and_en, run_here
from wire import chain, topics
from wire.events import TapPayload, encode

Z = ZoneInfo("America/Sao_Paulo")
T0 = dt.datetime(2026, 3, 15, 12, 0, tzinfo=dt.UTC)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory):
    """(db url, keys dir) of a ledger holding three signed taps of R1 at gate g1 and a receipt."""
    base = tmp_path_factory.mktemp("ledger")
    keys = base / "keys"
    hkey = read_secret(add_gate(keys, "g1"))
    signer = chain.new_private_key()
    register_public_key(keys, "g1", chain.public_pem(signer.public_key()))
    j = Journal(base / "j.db", port="santos", gate_id="g1", key=hkey, boot_id="b1", signer=signer)
    sent = [j.append(TapPayload(uid=f"0A04A1{i:04d}", reader_id="r1", reader_kind="control", decision="deny",
                                rules_failed=["G6"], registration="R1", message="NEGADO"),
                     now=Now(T0 + dt.timedelta(minutes=i), i, True)) for i in range(3)]
    j.close()
    url = f"sqlite:///{base / 'ledger.db'}"
    upgrade(url)
    engine = make_engine(url)
    ring = KeyRing(keys, recheck_s=0)
    with engine.begin() as conn:
        ok = [check(topics.gate_events("santos", "g1"), encode(e), "santos", ring) for e in sent]
        assert all(isinstance(v, Accepted) for v in ok)
        chain_check.record(conn, write_batch(conn, ok, [], T0), [], T0)
        update_progress(conn, ["g1"], T0)
        issue(conn, office_key(keys), "santos", ["g1"], T0)
    engine.dispose()
    return url, keys


@pytest.fixture(scope="module")
def bundle(ledger, tmp_path_factory):
    url, keys = ledger
    out = tmp_path_factory.mktemp("bundle") / "r1.zip"
    engine = make_engine(url)
    export(engine, keys, "R1", dt.date(2026, 3, 15), dt.date(2026, 3, 15), out, zone=Z, now=T0)
    engine.dispose()
    assert verify_bundle(out)[0] == []
    return out


def cli(*args):
    """The installed command (a Python start): the one-line refusal of a malformed manifest."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300)


def cli_here(*args):
    """The same command through ``app.cli.main`` in this process (``testkit.cli.run_here``)."""
    return run_here(list(args))


def rewrite(src, dst, change):
    with zipfile.ZipFile(src) as zin:
        files = {n: zin.read(n) for n in zin.namelist()}
    with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name, data in change(files).items():
            zout.writestr(name, data)
    return dst


def with_manifest(edit):
    def change(files):
        files["manifest.json"] = json.dumps(edit(json.loads(files["manifest.json"]))).encode()
        return files
    return change


@pytest.mark.parametrize("edit, named", [
    (lambda m: [], "Expected `object`, got `array`"),
    (lambda m: {**m, "files": []}, "$.files"),
    (lambda m: {**m, "files": None}, "$.files"),
    (lambda m: {**m, "gates": "x"}, "$.gates"),
    (lambda m: {**m, "gates": {"g1": {"seq_from": "a"}}}, "$.gates[...].seq_from"),
    (lambda m: {**m, "gates": {"g1": 7}}, "$.gates[...]"),
], ids=["array", "files-list", "files-null", "gates-str", "seq-from-str", "gate-int"])
def test_a_malformed_manifest_is_bad_input_naming_the_key(bundle, tmp_path, edit, named):
    bad = rewrite(bundle, tmp_path / "bad.zip", with_manifest(edit))
    with pytest.raises(BadInput) as err:
        verify_bundle(bad)
    assert "manifest.json is malformed" in str(err.value) and named in str(err.value)


def test_the_cli_reports_a_malformed_manifest_in_one_line_with_exit_2(bundle, tmp_path):
    bad = rewrite(bundle, tmp_path / "bad.zip", with_manifest(lambda m: {**m, "gates": {"g1": {"seq_from": "a"}}}))
    done = cli("evidence", "verify", str(bad))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert "$.gates[...].seq_from" in done.stderr


def test_a_manifest_with_extra_fields_still_verifies_the_content(bundle, tmp_path):
    """Unknown manifest fields are ignored by the struct; the edit itself breaks the signature."""
    bad = rewrite(bundle, tmp_path / "extra.zip", with_manifest(lambda m: {**m, "note": "x"}))
    failures, _ = verify_bundle(bad)
    assert failures == ["manifest.sig: not the office key's signature of manifest.json"]


def test_a_member_over_the_per_member_limit_is_refused_before_reading(bundle, tmp_path, mocker):
    big = rewrite(bundle, tmp_path / "big.zip", lambda f: {**f, "shifts.json": b"\0" * (3 * 2**20)})
    spy = mocker.spy(zipfile.ZipFile, "open")
    with pytest.raises(BadInput) as err:
        verify_bundle(big, max_member=2**20)
    assert "shifts.json: unpacks to 3145728 bytes, over the limit of 1048576 per member" in str(err.value)
    assert spy.call_count == 0
    assert "shifts.json: SHA-256 differs from the manifest (edited)" in verify_bundle(big)[0]


def test_members_over_the_total_limit_are_refused_before_reading(bundle, tmp_path, mocker):
    with zipfile.ZipFile(bundle) as zf:
        total = sum(i.file_size for i in zf.infolist())
    spy = mocker.spy(zipfile.ZipFile, "open")
    with pytest.raises(BadInput) as err:
        verify_bundle(bundle, max_total=total - 1)
    assert f"members unpack to {total} bytes in all, over the limit of {total - 1}" in str(err.value)
    assert spy.call_count == 0
    assert verify_bundle(bundle, max_total=total)[0] == []


def test_the_default_limits_are_256_mib_per_member_and_1_gib_in_all():
    assert (verify_mod.MAX_MEMBER_BYTES, verify_mod.MAX_TOTAL_BYTES) == (256 * 2**20, 2**30)


def _understate(zip_bytes: bytes, name: str, size: int) -> bytes:
    """The zip with ``name``'s declared uncompressed size set to ``size`` in both its headers."""
    data = bytearray(zip_bytes)
    raw = name.encode()
    local = data.find(b"PK\x03\x04")
    while local != -1:
        n = struct.unpack_from("<H", data, local + 26)[0]
        if data[local + 30:local + 30 + n] == raw:
            struct.pack_into("<I", data, local + 22, size)
            break
        local = data.find(b"PK\x03\x04", local + 4)
    central = data.find(b"PK\x01\x02")
    while central != -1:
        n = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46:central + 46 + n] == raw:
            struct.pack_into("<I", data, central + 24, size)
            return bytes(data)
        central = data.find(b"PK\x01\x02", central + 4)
    raise AssertionError(f"{name} not in the zip")


def test_a_header_that_understates_the_size_cannot_read_more_than_it_declares(bundle, tmp_path):
    big = rewrite(bundle, tmp_path / "big.zip", lambda f: {**f, "shifts.json": b"\0" * (4 * 2**20)})
    lying = tmp_path / "lying.zip"
    lying.write_bytes(_understate(big.read_bytes(), "shifts.json", 1000))
    with zipfile.ZipFile(lying) as zf:
        assert zf.getinfo("shifts.json").file_size == 1000
    with pytest.raises(BadInput) as err:
        verify_bundle(lying, max_member=2**20)
    assert "shifts.json: damaged member" in str(err.value)
    done = cli_here("evidence", "verify", str(lying))
    assert done.returncode == 2 and "Traceback" not in done.stderr and "shifts.json" in done.stderr


@pytest.mark.parametrize("content, named", [
    ("root:x:0:0:root:/root:/bin/bash\n", "not UTF-8 TOML"),
    ('title = "x"\n', "unknown key 'title'"),
    ('name = "g"\n', "no [[version]]"),
    ('[[version]]\nport_timezone = "America/Sao_Paulo"\n', "version[0] has no date effective_from"),
], ids=["passwd", "other-toml", "no-version", "no-date"])
def test_a_gate_rulebook_that_is_not_one_is_refused_naming_the_file(ledger, tmp_path, content, named):
    url, keys = ledger
    book = tmp_path / "book.toml"
    book.write_text(content)
    out = tmp_path / "out.zip"
    done = cli_here("evidence", "export", "--db", url, "--keys-dir", str(keys), "--registration", "R1",
               "--from", "2026-03-15", "--to", "2026-03-15", "--out", str(out), "--gate-rulebook", str(book))
    assert done.returncode == 2, done.stdout + done.stderr
    line = done.stderr.strip()
    assert len(line.splitlines()) == 1 and str(book) in line and named in line, line
    assert not out.exists()


def test_a_shipped_gate_rulebook_is_packed(ledger, tmp_path):
    from central.evidence.bundle import RULEBOOKS

    url, keys = ledger
    out = tmp_path / "out.zip"
    done = cli_here("evidence", "export", "--db", url, "--keys-dir", str(keys), "--registration", "R1",
               "--from", "2026-03-15", "--to", "2026-03-15", "--out", str(out),
               "--gate-rulebook", str(RULEBOOKS / "gate-default.toml"))
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(out) as zf:
        assert zf.read("rulebooks/gate/rulebooks-gate-default.toml") == (RULEBOOKS / "gate-default.toml").read_bytes()
    assert verify_bundle(out)[0] == []


@pytest.mark.parametrize("name, content", [("statements.json", b"{}"), ("shifts.json", b"[1, 2]")])
def test_statements_or_shifts_of_another_shape_are_a_named_failure(bundle, tmp_path, name, content):
    bad = rewrite(bundle, tmp_path / "bad.zip", lambda f: {**f, name: content})
    failures, _ = verify_bundle(bad)
    assert f"{name}: not a list of objects" in failures


def _flipped(src, dst, at):
    raw = bytearray(src.read_bytes())
    raw[at] ^= 0xFF
    dst.write_bytes(bytes(raw))


def _deflated_span(path):
    """(start, end) byte offsets of the compressed data of the bundle's largest deflated member."""
    with zipfile.ZipFile(path) as zf:
        info = max((i for i in zf.infolist() if i.compress_type == zipfile.ZIP_DEFLATED),
                   key=lambda i: i.compress_size)
    raw = path.read_bytes()
    name_len, extra_len = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    start = info.header_offset + 30 + name_len + extra_len
    return start, start + info.compress_size


def test_every_flipped_byte_in_deflated_data_is_a_damaged_member_never_a_traceback(bundle, tmp_path):
    import zlib
    start, end = _deflated_span(bundle)
    causes = []
    for at in range(start, end):
        bad = tmp_path / f"flip{at}.zip"
        _flipped(bundle, bad, at)
        with pytest.raises(BadInput, match="damaged member") as err:
            verify_bundle(bad)
        causes.append(err.value.__cause__)
        if isinstance(err.value.__cause__, zlib.error):
            done = cli_here("evidence", "verify", str(bad))
            assert done.returncode == 2, done.stderr
            assert "damaged member" in done.stderr and len(done.stderr.strip().splitlines()) == 1
            assert "Traceback" not in done.stderr
            break
        bad.unlink()
    assert any(isinstance(c, zlib.error) for c in causes), "no flip made zlib fail"


def test_the_ok_lines_of_a_good_bundle_in_pt_br_and_english(bundle):
    """``ok: manifest signed by ...`` stayed English under a pt-BR command line (and the demo's pt-BR
    console): the ``ok:`` prefix stays what a script reads, the sentence speaks the run's language."""
    pt = run_here(["evidence", "verify", str(bundle)], env={"PORTGATE_LANG": "pt"})
    lines = pt.stdout.splitlines()
    assert any(line.startswith("ok: manifesto assinado pela chave do escritório ") for line in lines), pt.stdout
    assert any(line.startswith("ok: portaló g1: ") and "eventos assinados conferidos" in line for line in lines)
    assert not any(" signed by the office key" in line or "verified, seq" in line for line in lines), pt.stdout
    en = run_here(["evidence", "verify", str(bundle)], env={"PORTGATE_LANG": "en"}).stdout.splitlines()
    assert any(line.startswith("ok: manifest signed by the office key ") for line in en)
    assert any(line.startswith("ok: gate g1: ") and "signed events verified" in line for line in en)


def test_the_fail_lines_in_pt_br_and_english_keep_their_place_and_exit_code(bundle, tmp_path):
    """``FAIL:`` lines were English under a pt-BR command line: the sentence now speaks the run's
    language; what scripts read stays (the ``FAIL: <member>: `` place, the exit status 1)."""
    bad = rewrite(bundle, tmp_path / "bad.zip", lambda f: {**f, "shifts.json": b"[1, 2]"})
    pt = run_here(["evidence", "verify", str(bad)], env={"PORTGATE_LANG": "pt"})
    en = run_here(["evidence", "verify", str(bad)], env={"PORTGATE_LANG": "en"})
    assert pt.returncode == en.returncode == 1, pt.stdout + en.stdout
    pt_fail = [line for line in pt.stdout.splitlines() if line.startswith("FAIL: ")]
    en_fail = [line for line in en.stdout.splitlines() if line.startswith("FAIL: ")]
    assert "FAIL: shifts.json: SHA-256 difere do manifesto (editado)" in pt_fail, pt.stdout
    assert "FAIL: shifts.json: não é uma lista de objetos" in pt_fail, pt.stdout
    assert "FAIL: shifts.json: SHA-256 differs from the manifest (edited)" in en_fail, en.stdout
    assert "FAIL: shifts.json: not a list of objects" in en_fail, en.stdout
    assert [line.split(": ")[1] for line in pt_fail] == [line.split(": ")[1] for line in en_fail], (pt_fail, en_fail)


def _export(url, keys, out, *more, registration="R1"):
    return ["evidence", "export", "--db", url, "--keys-dir", str(keys), "--registration", registration,
            "--from", "2026-03-15", "--to", "2026-03-15", "--out", str(out), *more]


def test_an_existing_bundle_is_never_replaced_without_force(ledger, tmp_path):
    """A bundle handed to a court is not silently replaced (docs/evidence.md): an existing --out is
    refused before the ledger is read, one line in pt-BR (default) and English, the file untouched;
    with --force it is replaced by a bundle that verifies."""
    url, keys = ledger
    out = tmp_path / "court.zip"
    out.write_bytes(b"the bundle the court has")
    pt, en = in_pt_and_en(_export(url, keys, out))
    assert pt.returncode == en.returncode == 2, (pt.stderr, en.stderr)
    assert pt.stderr == (f"portgate: --out: {str(out)!r} já existe: um pacote de provas nunca é substituído em "
                         "silêncio (dê outro --out, ou --force para substituí-lo)\n"), pt.stderr
    assert en.stderr == (f"portgate: --out: {str(out)!r} already exists: an evidence bundle is never replaced "
                         "silently (give another --out, or --force to replace it)\n"), en.stderr
    assert out.read_bytes() == b"the bundle the court has"
    done = cli_here(*_export(url, keys, out, "--force"))
    assert done.returncode == 0, done.stderr
    assert verify_bundle(out)[0] == [] and not list(tmp_path.glob(".court.zip.*"))


def test_a_file_made_meanwhile_is_not_replaced_either(tmp_path):
    """``write_out`` opens the file exclusively: one made after the early check is kept, refused."""
    out = tmp_path / "b.zip"
    out.write_bytes(b"made meanwhile")
    with pytest.raises(BadInput, match="already exists"):
        write_out(out, b"new", force=False)
    assert out.read_bytes() == b"made meanwhile"
    write_out(out, b"new", force=True)
    assert out.read_bytes() == b"new" and [p.name for p in tmp_path.iterdir()] == ["b.zip"]


@pytest.mark.parametrize("registration, out, pt_said, en_said", [
    ("V999", "x.zip", "nenhum evento nem turno de V999 de 15/03/2026 a 15/03/2026",
     "no event or shift of V999 from 2026-03-15 to 2026-03-15"),
    ("", "x.zip", "a matrícula (--registration) está vazia", "the registration (--registration) is empty"),
    (" ", "x.zip", "a matrícula (--registration) está vazia", "the registration (--registration) is empty"),
    ("R1", "nodir/x.zip", "não foi possível gravar a saída '{tmp}/nodir/x.zip': arquivo ou diretório inexistente",
     "cannot write the output '{tmp}/nodir/x.zip': No such file or directory"),
    ("R1", "afile/x.zip", "não foi possível gravar a saída '{tmp}/afile/x.zip': não é um diretório",
     "cannot write the output '{tmp}/afile/x.zip': Not a directory"),
], ids=["unknown", "empty", "blank", "no-directory", "file-as-directory"])
def test_export_refusals_are_one_line_in_portuguese_and_english(ledger, tmp_path, registration, out,
                                                                pt_said, en_said):
    """The fresh tester's findings: each was English in pt-BR (a raw system error for the missing
    directory; an empty registration read ``no event or shift of  from``)."""
    url, keys = ledger
    (tmp_path / "afile").write_text("a file where the directory should be")
    pt, en = in_pt_and_en(_export(url, keys, tmp_path / out, registration=registration))
    assert pt.returncode == en.returncode == 2, (pt.stderr, en.stderr)
    for done, said in ((pt, pt_said), (en, en_said)):
        lines = done.stderr.splitlines()
        assert len(lines) == 1 and lines[0].endswith(said.format(tmp=tmp_path)), done.stderr
    assert not (tmp_path / out).exists()

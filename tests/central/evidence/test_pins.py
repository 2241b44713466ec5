"""Issue 36, item 2: whoever makes a bundle chooses its keys. ``verify`` prints every key it relied
on; pins (``--office-key``, ``--gate-key``, ``--inspector-key``, ``--pins``) confirm them and a
mismatch fails; without pins the last line says the result holds only if those keys are the
parties' own (exit 3). Each gate key is enrolled by ``central add-gate`` (office-signed record) and
countersigned by the union inspector's key; the bundle carries the record. The forged bundle is a
whole second ledger made with other office, gate and inspector keys (everything re-signed)."""

from __future__ import annotations

import datetime as dt
import json
import zipfile

import pytest

from app.cli import main
from central.db import make_engine
from central.evidence.bundle import export
from central.evidence.enrolment import record_path
from central.ingest.receipts import issue
from central.office_key import office_key
from central.ingest.event_store import update_progress
from central.ingest.keys import KeyRing, add_gate
from central.ledger.migrate import upgrade
from central.ledger.store import rebuild_shifts
from central.pay.cli import load_setup
from central.pay.statements_store import pay_from_ledger
from edge.journal import Journal
from edge.rules.model import Now
from portgate.config import read_secret
from testkit.cli import run_here
from wire import chain

from .ingested import ingest
from .test_recompute import ADMIT, DAY, EXIT, NOW, _tap, resign

GATE = "g1"


def build(base, *, countersign=True) -> dict:
    """A ledger made end to end with fresh office, gate and inspector keys under ``base``: the
    gate key enrolled by ``central add-gate``, countersigned by ``evidence countersign-gate``;
    V017's shift ingested, rebuilt and paid; the bundle exported. Returns the fingerprints and paths."""
    keys = base / "keys"
    hkey = read_secret(add_gate(keys, GATE))
    signer = chain.new_private_key()
    pem = base / "g1.pem"
    pem.write_text(chain.public_pem(signer.public_key()))
    gate_fp = chain.fingerprint(signer.public_key())
    assert main(["central", "add-gate", "--gate-id", GATE, "--keys-dir", str(keys), "--public-key", str(pem)]) == 0
    record = record_path(keys, GATE, gate_fp)
    assert record.exists()
    assert main(["evidence", "inspector-key", "--dir", str(base / "union")]) == 0
    inspector = chain.fingerprint(chain.load_public((base / "union" / "inspector.pub").read_text()))
    if countersign:
        assert main(["evidence", "countersign-gate", str(record), "--key", str(base / "union" / "inspector.key"),
                     "--gate-fingerprint", gate_fp]) == 0
    j = Journal(base / "j.db", port="santos", gate_id=GATE, key=hkey, boot_id="b1", signer=signer)
    evs = [j.append(_tap("admit"), now=Now(ADMIT, 1, True)), j.append(_tap("exit"), now=Now(EXIT, 2, True))]
    j.close()
    url = f"sqlite:///{base / 'ledger.db'}"
    upgrade(url)
    engine = make_engine(url)
    assert ingest(engine, KeyRing(keys, recheck_s=0), evs, NOW) == []
    with engine.begin() as conn:
        update_progress(conn, [GATE], NOW)
        issue(conn, office_key(keys), "santos", [GATE], NOW)
    port, rulebook, calendar = load_setup(None)
    rebuild_shifts(engine, DAY, DAY, calendar.zone, now=NOW)
    pay_from_ledger(engine, DAY, DAY, rulebook, calendar, now=NOW)
    bundle = base / "v017.zip"
    export(engine, keys, "V017", DAY, DAY, bundle, zone=calendar.zone, now=NOW, calendar=calendar,
           pay_rulebook=port.rulebook)
    engine.dispose()
    return {"bundle": bundle, "keys": keys, "record": record, "union": base / "union",
            "office": chain.fingerprint(office_key(keys).public_key()), "gate": gate_fp, "inspector": inspector}


@pytest.fixture(scope="module")
def real(tmp_path_factory):
    return build(tmp_path_factory.mktemp("real"))


@pytest.fixture(scope="module")
def forged(tmp_path_factory):
    """The same shift made by someone holding none of the real keys: every key replaced, every
    signature redone, his own 'inspector' countersigning."""
    return build(tmp_path_factory.mktemp("forged"))


def verify(capsys, bundle, *pins) -> tuple[int, list[str]]:
    code = main(["evidence", "verify", str(bundle), *pins])
    return code, capsys.readouterr().out.splitlines()


def test_the_record_is_signed_by_the_office_and_the_inspector_and_rides_in_the_bundle(real):
    record = json.loads(real["record"].read_text())
    body = json.loads(record["body"])
    assert (body["gate_id"], body["fingerprint"], body["office_fingerprint"]) == (GATE, real["gate"], real["office"])
    chain.load_public(body["office_key"]).verify(bytes.fromhex(record["office_sig"]), record["body"].encode())
    chain.load_public(record["inspector_key"]).verify(bytes.fromhex(record["inspector_sig"]), record["body"].encode())
    with zipfile.ZipFile(real["bundle"]) as zf:
        assert zf.read(f"enrolments/{GATE}-{real['gate']}.json") == real["record"].read_bytes()


def test_without_pins_every_key_is_printed_and_the_last_line_is_conditional(real, capsys):
    code, out = verify(capsys, real["bundle"])
    assert code == 3, out
    assert f"key: office {real['office']} (manifest, receipts, enrolment records): not pinned" in out
    assert (f"key: gate {GATE} {real['gate']} (chain of gate {GATE} from seq 1): enrolled "
            f"{json.loads(json.loads(real['record'].read_text())['body'])['enrolled_at']}, countersigned by "
            f"inspector key {real['inspector']} (not pinned)") in out
    assert (f"key: inspector {real['inspector']} (countersigned the enrolment of {GATE} {real['gate']}): "
            "not pinned") in out
    assert out[-1].startswith(f"{real['bundle']}: VERIFIED ONLY IF these keys are the parties' own (not pinned: "
                              f"office {real['office']}, gate {GATE} {real['gate']}, inspector {real['inspector']})")
    assert not any(line.startswith("FAIL") for line in out)


def test_pinned_by_the_office_and_the_union_inspector_it_verifies(real, capsys, tmp_path):
    code, out = verify(capsys, real["bundle"], "--office-key", real["office"], "--inspector-key", real["inspector"])
    assert code == 0, out
    assert out[-1] == f"{real['bundle']}: VERIFIED (every key pinned)"
    assert any(line.startswith(f"key: gate {GATE} {real['gate']} ") and line.endswith(
        f"countersigned by the pinned inspector key {real['inspector']}") for line in out), out
    pins = tmp_path / "pins.toml"
    pins.write_text(f'office = "{real["office"].upper()}"\n[gates]\n{GATE} = ["{real["gate"]}"]\n')
    code, out = verify(capsys, real["bundle"], "--pins", str(pins))
    assert code == 0 and out[-1].endswith("VERIFIED (every key pinned)"), out
    code, out = verify(capsys, real["bundle"], "--office-key", real["office"], "--gate-key", f"{GATE}={real['gate']}")
    assert code == 0, out


def test_a_bundle_made_with_other_keys_verifies_only_against_itself_and_fails_every_pin(real, forged, capsys):
    code, out = verify(capsys, forged["bundle"])
    assert code == 3 and "VERIFIED ONLY IF" in out[-1], out  # consistent in itself: only the keys differ
    assert forged["office"] in out[-1] and real["office"] not in "\n".join(out)
    code, out = verify(capsys, forged["bundle"], "--office-key", real["office"], "--inspector-key", real["inspector"])
    assert code == 1, out
    assert (f"FAIL: keys/office.pem: the office key {forged['office']} is not the pinned {real['office']}") in out
    assert (f"FAIL: enrolments/{GATE}-{forged['gate']}.json: countersigned by inspector key {forged['inspector']}, "
            f"not the pinned {real['inspector']}") in out
    code, out = verify(capsys, forged["bundle"], "--gate-key", f"{GATE}={real['gate']}")
    assert code == 1
    assert (f"FAIL: keys/{GATE}.pem: gate {GATE}'s events are signed from key {forged['gate']}, not the pinned "
            f"{real['gate']}") in out


def test_keys_swapped_into_the_real_bundle_and_re_signed_fail_the_pins(real, forged, capsys, tmp_path):
    """The real events kept, the office key replaced by the forger's (manifest re-signed): the
    gate's signatures still hold, the receipt and the enrolment record no longer do, the office
    pin fails."""
    with zipfile.ZipFile(real["bundle"]) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    forger = office_key(forged["keys"])
    files["keys/office.pem"] = chain.public_pem(forger.public_key()).encode()
    bad = resign(files, forger, tmp_path / "swapped.zip")
    code, out = verify(capsys, bad, "--office-key", real["office"], "--inspector-key", real["inspector"])
    assert code == 1
    assert f"FAIL: keys/office.pem: the office key {forged['office']} is not the pinned {real['office']}" in out
    assert f"FAIL: receipts/{GATE}.json: not a receipt signed by the office key" in out
    assert (f"FAIL: enrolments/{GATE}-{real['gate']}.json: signed by office key {real['office']}, not the "
            f"bundle's {forged['office']}") in out


def test_an_uncountersigned_gate_stays_unconfirmed_and_an_edited_record_fails(tmp_path, capsys):
    alone = build(tmp_path / "alone", countersign=False)
    code, out = verify(capsys, alone["bundle"], "--office-key", alone["office"], "--inspector-key", alone["inspector"])
    assert code == 3, out
    assert (f"key: gate {GATE} {alone['gate']} (chain of gate {GATE} from seq 1): not pinned; enrolled by the "
            "office alone (no inspector countersignature)") in out
    with zipfile.ZipFile(alone["bundle"]) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    name = f"enrolments/{GATE}-{alone['gate']}.json"
    record = json.loads(files[name])
    record["inspector_key"] = chain.public_raw(chain.new_private_key().public_key())
    record["inspector_sig"] = "00" * 64
    bad = resign({**files, name: json.dumps(record).encode()}, office_key(alone["keys"]), tmp_path / "bad.zip")
    code, out = verify(capsys, bad)
    assert code == 1 and f"FAIL: {name}: its inspector countersignature does not hold" in out


def test_countersigning_checks_the_gate_fingerprint_and_bad_pins_are_exit_2(real, tmp_path, capsys):
    code = main(["evidence", "countersign-gate", str(real["record"]), "--key", str(real["union"] / "inspector.key"),
                 "--gate-fingerprint", "0" * 16, "--out", str(tmp_path / "x.json")])
    err = capsys.readouterr().err
    assert code == 2 and f"the record enrols key {real['gate']} of gate {GATE}, not {'0' * 16}" in err
    assert not (tmp_path / "x.json").exists()
    assert main(["evidence", "verify", str(real["bundle"]), "--office-key", "xyz"]) == 2
    assert "is not a key fingerprint" in capsys.readouterr().err
    assert main(["evidence", "verify", str(real["bundle"]), "--gate-key", real["gate"]]) == 2
    assert "is not GATE=FINGERPRINT" in capsys.readouterr().err
    (tmp_path / "p.toml").write_text('office = "x"\nowner = 1\n')
    assert main(["evidence", "verify", str(real["bundle"]), "--pins", str(tmp_path / "p.toml")]) == 2
    assert "unknown key 'owner'" in capsys.readouterr().err


def _bundle_with(files: dict[str, bytes], out):
    """The members ``files`` written as they are (no manifest redone, no signature made)."""
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for n, d in files.items():
            zf.writestr(n, d)
    return out


def _fail_lines(bundle, lang: str) -> tuple[int, list[str]]:
    done = run_here(["evidence", "verify", str(bundle)], env={"PORTGATE_LANG": lang})
    return done.returncode, [line for line in done.stdout.splitlines() if line.startswith("FAIL: ")]


def test_an_enrolment_records_fail_lines_in_pt_br_and_english(real, tmp_path):
    """An enrolment record's problems were English under a pt-BR command line, and a bundle with no
    valid office key printed ``not the bundle's None``: the sentence speaks the run's language, the
    ``FAIL: <member>: `` place and exit status 1 stay."""
    with zipfile.ZipFile(real["bundle"]) as zf:
        files = {n: zf.read(n) for n in zf.namelist()}
    name = f"enrolments/{GATE}-{real['gate']}.json"
    record = json.loads(files[name])
    record["inspector_sig"] = "00" * 64
    odd = "enrolments/odd.json"
    bad = resign({**files, name: json.dumps(record).encode(), odd: json.dumps({"body": "{}"}).encode()},
                 office_key(real["keys"]), tmp_path / "bad.zip")
    (pt_code, pt), (en_code, en) = _fail_lines(bad, "pt"), _fail_lines(bad, "en")
    assert pt_code == en_code == 1, (pt, en)
    assert f"FAIL: {name}: a contra-assinatura do fiscal não confere" in pt, pt
    assert f"FAIL: {odd}: não é um registro de chave de portão (sem kind)" in pt, pt
    assert f"FAIL: {name}: its inspector countersignature does not hold" in en, en
    assert f"FAIL: {odd}: not a gate enrolment record (no kind)" in en, en
    unsigned = _bundle_with({**files, "manifest.sig": b"00\n"}, tmp_path / "unsigned.zip")
    (pt_code, pt), (en_code, en) = _fail_lines(unsigned, "pt"), _fail_lines(unsigned, "en")
    assert pt_code == en_code == 1, (pt, en)
    assert (f"FAIL: {name}: assinado pela chave do escritório {real['office']}, e o pacote não tem chave do "
            "escritório válida (nenhuma)") in pt, pt
    assert (f"FAIL: {name}: signed by office key {real['office']}, and the bundle has no valid office key "
            "(none given)") in en, en
    assert not any("None" in line for line in pt + en), (pt, en)


def test_the_key_lines_read_in_pt_br_by_default(real):
    """The ``key:`` prefix stays (machine-read); the rest in the command line's language."""
    from testkit.cli import run_here

    pt = run_here(["evidence", "verify", str(real["bundle"]), "--office-key", real["office"]],
                  env={"PORTGATE_LANG": None}).stdout.splitlines()
    assert (f"key: escritório {real['office']} (manifesto, recibos, registros de cadastro): com pino") in pt, pt
    assert any(line.startswith(f"key: portaló {GATE} {real['gate']} (cadeia do portaló {GATE} a partir da seq 1): "
                               f"cadastrada em ") and line.endswith(f"contra-assinada pela chave do fiscal "
                                                                    f"{real['inspector']} (sem pino)") for line in pt), pt
    assert (f"key: fiscal {real['inspector']} (contra-assinou o cadastro de {GATE} {real['gate']}): sem pino") in pt
    assert f"(sem pino: portaló {GATE} {real['gate']}, fiscal {real['inspector']})" in pt[-1], pt[-1]

"""On the demo's day (issue 20): the evidence bundle of V017 verifies and fails, naming what, after
any edit; ``pay --what-if example-cct-2026`` prints V017's new total beside 696.60."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import zipfile

import pytest

from app.cli import main
from testkit.cli import run_here
from wire import chain

DAY = "2026-03-15"


@pytest.fixture(scope="module")
def demo(demo_day):
    """The session's demo day (tests/conftest.py): these tests read its run directory and ledger and
    write their edited bundles elsewhere."""
    assert demo_day.serving or demo_day.stop() == 0, demo_day.out[-3000:]
    # the demo's console speaks its --lang (pt-BR here), its evidence verify too
    assert "evidence-V017.zip: VERIFICADO (todas as chaves com pino)" in demo_day.out, demo_day.out[-3000:]
    return demo_day.run_dir


def cli(*args):
    """The installed command (a Python start): the V017 bundle's verify, pinned and not."""
    return subprocess.run([sys.executable, "-m", "app.cli", *args], capture_output=True, text=True, timeout=300)


def cli_here(*args):
    """The same entry point (``app.cli.main``) in this process (``testkit.cli.run_here``): every
    other run of this module (no Python start with the office's imports per run)."""
    return run_here(list(args))


def rewrite(src, dst, change):
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w") as zout:
        files = {n: zin.read(n) for n in zin.namelist()}
        for name, data in change(files).items():
            zout.writestr(name, data)


def demo_pins(demo) -> list[str]:
    """The office's fingerprint (its own key) and the demo union inspector's (issue 36)."""
    from central.evidence.enrolment import inspector_key
    from central.office_key import office_key

    return ["--office-key", chain.fingerprint(office_key(demo / "keys").public_key()),
            "--inspector-key", chain.fingerprint(inspector_key(demo / "inspector")[0].public_key())]


def test_the_v017_bundle_verifies_offline(demo, tmp_path):
    bundle = demo / "evidence-V017.zip"
    done = cli("evidence", "verify", str(bundle), *demo_pins(demo))
    assert done.returncode == 0, done.stdout
    assert "office receipt up to seq" in done.stdout
    assert done.stdout.splitlines()[-1] == f"{bundle}: VERIFIED (every key pinned)"
    assert "statement V017/" in done.stdout and "equal to the pay recomputed from the gate-signed events" in done.stdout
    unpinned = cli("evidence", "verify", str(bundle))  # the same bundle, no pins: conditional, exit 3
    assert unpinned.returncode == 3, unpinned.stdout
    assert unpinned.stdout.splitlines()[-1].startswith(f"{bundle}: VERIFIED ONLY IF these keys are the parties' own")
    with zipfile.ZipFile(bundle) as zf:
        names = set(zf.namelist())
        statements = json.loads(zf.read("statements.json"))
        assert zf.read("summary.pdf").startswith(b"%PDF")
    assert {"manifest.json", "manifest.sig", "keys/office.pem", "keys/g-nordic.pem", "events/g-nordic.jsonl",
            "receipts/g-nordic.json", "shifts.json", "rulebooks/pay/decreto-83611-1979.toml"} <= names
    assert [s["total_cents"] for s in statements] == [69660]


def verify_here(path, capsys) -> tuple[int, str]:
    """``portgate evidence verify PATH`` through the command's entry point (``app.cli.main``) in
    this process: the same code as the installed command without a Python start per bundle (the
    V017 bundle's test above checks the installed command). Returns (exit status, stdout)."""
    capsys.readouterr()
    status = main(["evidence", "verify", str(path)])
    return status, capsys.readouterr().out


def test_any_edit_of_the_bundle_fails_and_is_named(demo, tmp_path, capsys):
    bundle = demo / "evidence-V017.zip"
    with zipfile.ZipFile(bundle) as zf:
        names = zf.namelist()
    for i, name in enumerate(names):
        def flip(files, name=name):
            data = bytearray(files[name])
            at = len(data) // 2
            while at < len(data) - 1 and not chr(data[at]).isalnum():
                at += 1  # a letter or digit: a JSON member stays JSON (a damaged manifest is exit 2, elsewhere)
            data[at] ^= 0x01
            return {**files, name: bytes(data)}

        edited = tmp_path / f"e{i}.zip"
        rewrite(bundle, edited, flip)
        status, out = verify_here(edited, capsys)
        assert status == 1, (name, out)
        fails = [line for line in out.splitlines() if line.startswith("FAIL: ")]
        expected = "manifest.sig" if name in ("manifest.json", "manifest.sig", "keys/office.pem") else name
        assert any(expected in line for line in fails), (name, fails)
    # a file removed, or one slipped in
    rewrite(bundle, tmp_path / "gone.zip", lambda f: {k: v for k, v in f.items() if k != "shifts.json"})
    assert "FAIL: shifts.json: listed in the manifest but missing" in cli_here("evidence", "verify", str(tmp_path / "gone.zip")).stdout
    rewrite(bundle, tmp_path / "extra.zip", lambda f: {**f, "events/g-x.jsonl": b"{}"})
    assert "FAIL: events/g-x.jsonl: not listed in the manifest" in cli_here("evidence", "verify", str(tmp_path / "extra.zip")).stdout


def test_an_edited_event_with_a_re_signed_manifest_still_fails_on_the_gate_signature(demo, tmp_path):
    """Whoever holds (or replaces) the office key can redo the manifest, not a gate's signature."""
    forger = chain.new_private_key()

    def forge(files):
        files = dict(files)
        lines = files["events/g-nordic.jsonl"].splitlines()
        target = next(i for i, line in enumerate(lines) if b'"registration":"V017"' in line and b'"exit"' in line)
        lines[target] = lines[target].replace(b'"2026-03-16T05:30', b'"2026-03-16T04:00')
        files["events/g-nordic.jsonl"] = b"\n".join(lines) + b"\n"
        files["keys/office.pem"] = chain.public_pem(forger.public_key()).encode()
        manifest = json.loads(files["manifest.json"])
        manifest["files"] = {n: hashlib.sha256(d).hexdigest() for n, d in files.items()
                             if n not in ("manifest.json", "manifest.sig")}
        files["manifest.json"] = json.dumps(manifest).encode()
        files["manifest.sig"] = forger.sign(files["manifest.json"]).hex().encode()
        return files

    rewrite(demo / "evidence-V017.zip", tmp_path / "forged.zip", forge)
    done = cli_here("evidence", "verify", str(tmp_path / "forged.zip"))
    assert done.returncode == 1
    assert "FAIL: events/g-nordic.jsonl: CHAIN_BREAK BAD_SIGNATURE gate g-nordic seq" in done.stdout, done.stdout
    assert "receipts/g-nordic.json: not a receipt signed by the office key" in done.stdout


def test_pay_what_if_prints_v017s_new_total_beside_696_60(demo):
    done = cli_here("pay", "--db", f"sqlite:///{demo / 'ledger.db'}", "--from", DAY, "--to", DAY,
                    "--what-if", "example-cct-2026")
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    total = next(r for r in rows if r["registration"] == "V017" and r["rule"] == "TOTAL")
    assert total["recorded"] == "696.60" and total["what_if"] not in (None, "696.60")
    assert "nothing stored" in done.stderr
    assert "evidence-V017.zip: VERIFIED" in cli_here("evidence", "verify", str(demo / "evidence-V017.zip")).stdout


def test_a_bad_bundle_is_a_one_line_error(tmp_path):
    (tmp_path / "x.zip").write_bytes(b"not a zip")
    done = cli_here("evidence", "verify", str(tmp_path / "x.zip"))
    assert done.returncode == 2 and "not a readable zip" in done.stderr


def _replay(demo, tmp_path, required: bool, *extra):
    book = tmp_path / f"gate-{required}.toml"
    book.write_text((demo / "g-aurora" / "gate-rules.toml").read_text().replace(
        "card_and_badge_required = true", f"card_and_badge_required = {str(required).lower()}"))
    from app.demo.scenario import DEFAULT_DIR

    done = cli_here("replay", "--from-ledger", "--db", f"sqlite:///{demo / 'ledger.db'}", "--date", DAY,
                    "--rulebook", str(book), "--workers", str(DEFAULT_DIR / "workers.csv"),
                    "--cards", str(DEFAULT_DIR / "cards.csv"), "--escala", str(DEFAULT_DIR / "escala.csv"), *extra)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    return rows[:-1], rows[-1]["summary"], done.stderr


def test_what_if_without_card_and_badge_changes_the_g4_decisions_and_nothing_else(demo, tmp_path):
    rows, summary, _ = _replay(demo, tmp_path, True, "--gate", "g-aurora")
    assert summary["changed"] == summary["rules_changed"] == 0  # the recorded rulebook gives the record
    rows, summary, err = _replay(demo, tmp_path, False, "--gate", "g-aurora")
    changed = [r for r in rows if r["changed"] or r["rules_changed"]]
    assert changed and all("G4" in r["recorded"]["rules_failed"] for r in changed)
    assert [(r["registration"], r["recorded"]["decision"], r["what_if"]["decision"]) for r in changed] == [
        ("V008", "deny", "admit")]
    assert summary == {"reads": len(rows), "changed": 1, "rules_changed": 0, "by_gate": {"g-aurora": 1},
                       "changes": {"deny -> admit": 1}}
    assert "nothing stored" in err
    # over both gates the admitted V008 is then also "already in a shift" at the other gate: the same
    # decision (deny), one more rule: reported apart, not as a changed decision
    rows, summary, _ = _replay(demo, tmp_path, False)
    assert summary["changed"] == 1 and summary["rules_changed"] == 1
    knock = next(r for r in rows if r["rules_changed"])
    assert knock["registration"] == "V008" and knock["gate_id"] == "g-nordic"
    assert set(knock["what_if"]["rules_failed"]) - set(knock["recorded"]["rules_failed"]) == {"G5"}


@pytest.mark.parametrize("gate", ["g-nordic", "g-aurora"])
def test_one_gate_replayed_with_its_own_rulebook_against_the_others_records_changes_nothing(demo, gate):
    """``--gate G``: G's taps are decided again, the other gates' admits and confiscations stand and
    reach G as the office relays them: the worker already aboard at the other ship is still refused
    under G5 at g-nordic, the card confiscated at g-aurora still under G2."""
    from app.demo.scenario import DEFAULT_DIR

    done = cli_here("replay", "--from-ledger", "--db", f"sqlite:///{demo / 'ledger.db'}", "--date", DAY,
                    "--gate", gate, "--rulebook", str(demo / gate / "gate-rules.toml"),
                    "--workers", str(DEFAULT_DIR / "workers.csv"), "--cards", str(DEFAULT_DIR / "cards.csv"),
                    "--escala", str(DEFAULT_DIR / "escala.csv"))
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in done.stdout.splitlines()]
    summary, rows = rows[-1]["summary"], rows[:-1]
    assert rows and {r["gate_id"] for r in rows} == {gate}
    assert (summary["changed"], summary["rules_changed"]) == (0, 0), [r for r in rows if r["changed"] or r["rules_changed"]]
    if gate == "g-nordic":  # the cross-gate rules the record holds are there again
        failed = {rule for r in rows for rule in r["what_if"]["rules_failed"]}
        assert {"G2", "G5"} <= failed

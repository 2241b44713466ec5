"""More refusals a fresh tester saw in English on a pt-BR command line (the default), and Python's
``None`` in a sentence: each in pt-BR by default and in English with ``--lang en``, with its exit
status and the place before the first ``: `` unchanged (docs/i18n.md "The command line";
``PortgateError``s below the commands through ``central.web.service_codes`` and ``svc.*``, the
command's own sentences through ``cli.*``)."""

from __future__ import annotations

import functools
import zipfile
from pathlib import Path

import pytest

from testkit.cli import migrated_ledger, refused_in_pt_and_en, run_here


_refused = functools.partial(refused_in_pt_and_en, absent=("None",))


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> str:
    return migrated_ledger(tmp_path_factory.mktemp("ledger"))


def _central(tmp_path, text: str) -> str:
    (tmp_path / "keys").mkdir(exist_ok=True)
    path = tmp_path / "central.toml"
    path.write_text(f'port = "santos"\nkeys_dir = "keys"\n{text}\n')
    return str(path)


@pytest.mark.parametrize(("extra", "pt_text", "en_text"), [
    ('database_url = "sqlite:///l.db"\nports = ["paranagua"]',
     ".toml: o porto 'santos' (o porto de origem) deve ser um dos ports ['paranagua']",
     ".toml: port 'santos' (the home port) must be one of ports ['paranagua']"),
    ('database_url = "mysql://u@h/db"',
     ".toml:$.database_url: mysql não é suportado: o livro-razão roda em SQLite",
     ".toml:$.database_url: mysql is not supported: the ledger runs on SQLite"),
    ('database_url = "sqlite:///l.db"\n[nats]\nservers = []\nuser = "office"\npassword_file = "p"',
     ".toml: [nats] tem parâmetros mas nenhum servers: informe servers (a ingestão JetStream) ou remova [nats]",
     ".toml: [nats] has settings but no servers: give servers (the JetStream ingest) or remove [nats]"),
    ('database_url = "sqlite:///l.db"\nports = ["santos", "Santos"]',
     ".toml: ports ['santos', 'Santos'] nomeia um porto duas vezes (maiúsculas e minúsculas não distinguem portos)",
     ".toml: ports ['santos', 'Santos'] names a port twice (letter case aside)"),
])
def test_central_check_config_refusals(tmp_path, extra, pt_text, en_text):
    _refused(["central", "check-config", _central(tmp_path, extra)], pt_text, en_text)


def test_a_missing_keys_dir(tmp_path):
    path = tmp_path / "central.toml"
    path.write_text('database_url = "sqlite:///l.db"\nport = "santos"\nkeys_dir = "nowhere"\n')
    _refused(["central", "check-config", str(path)], f"$.keys_dir: diretório não encontrado: {tmp_path / 'nowhere'}",
             f"$.keys_dir: directory not found: {tmp_path / 'nowhere'}")


def test_check_config_still_takes_a_good_config(tmp_path):
    path = _central(tmp_path, 'database_url = "postgresql+psycopg://u@h/db"\nports = ["santos", "paranagua"]')
    done = run_here(["central", "check-config", path])
    assert done.returncode == 0 and done.stdout.startswith(f"ok: {path}: ports santos, paranagua"), done.stdout


def test_evidence_verify_refusals(tmp_path):
    not_zip = tmp_path / "x.zip"
    not_zip.write_text("hello")
    _refused(["evidence", "verify", str(not_zip)], f"portgate: {not_zip}: não é um zip legível (",
             f"portgate: {not_zip}: not a readable zip: ")
    empty = tmp_path / "empty.zip"
    with zipfile.ZipFile(empty, "w") as zf:
        zf.writestr("shifts.json", "[]")
    _refused(["evidence", "verify", str(empty)], f"{empty}: sem manifest.json: não é um pacote de evidências",
             f"{empty}: no manifest.json: not an evidence bundle")
    _refused(["evidence", "verify", "--office-key", "zz", str(empty)],
             "--office-key: 'zz' não é uma impressão digital de chave (16 dígitos hexadecimais",
             "--office-key: 'zz' is not a key fingerprint (16 hex digits")


def test_pay_day_range_refusals(ledger):
    _refused(["pay", "--db", ledger, "--from", "2026-03-20", "--to", "2026-03-01"],
             "portgate: --from: 20/03/2026 é depois de --to 01/03/2026", "portgate: --from: 2026-03-20 is after --to 2026-03-01")
    _refused(["pay", "--db", ledger, "--from", "1900-01-01", "--to", "2026-03-01"],
             "portgate: --from: '1900-01-01' está fora do intervalo 01/01/2000..31/12/2100",
             "portgate: --from: '1900-01-01' is outside 2000-01-01..2100-12-31")


def test_registry_suspension_length_refusal(ledger):
    _refused(["registry", "suspend", "--db", ledger, "V001", "--from", "2026-03-01", "--days", "99", "--reason", "x"],
             "portgate: --days: a suspensão vai de 1 a 30 dias (83.611 art. 21 a), não 99",
             "portgate: --days: a suspension lasts 1 to 30 days (83.611 art. 21 a), not 99")


def test_a_csv_row_longer_than_its_header(ledger, tmp_path):
    long = tmp_path / "long.csv"
    long.write_text("registration,name,category,status\nV001,Ana,vigia,active,x,y\n")
    _refused(["registry", "import", "--db", ledger, "--workers", str(long)],
             "long.csv:2: 2 célula(s) a mais do que o cabeçalho", "long.csv:2: 2 cell(s) more than the header has")


def test_an_office_user_for_a_port_not_served(ledger, tmp_path):
    config = _central(tmp_path, f'database_url = "{ledger}"')
    (tmp_path / "pw").write_text("a long enough password 1\n")
    _refused(["office", "add-user", "--config", config, "--login", "ana", "--role", "office",
              "--password-file", str(tmp_path / "pw"), "--port", "rio"],
             "portgate: --port: o porto 'rio' não é atendido por este escritório (portos: santos)",
             "portgate: --port: port 'rio' is not served by this office (ports: santos)")


def test_verify_journal_public_key_refusals(tmp_path):
    gate = Path(__file__).resolve().parent.parent / "config" / "gate.example.toml"
    _refused(["edge", "verify-journal", "--config", str(gate), "--public-key", "AAAA"],
             "portgate: AAAA: não é um arquivo de chave legível nem uma chave pública Ed25519",
             "portgate: AAAA: neither a readable key file nor an Ed25519 public key")
    bad = tmp_path / "bad.pem"
    bad.write_text("not a key\n")
    _refused(["edge", "verify-journal", "--config", str(gate), "--public-key", str(bad)],
             f"portgate: {bad}: não é uma chave pública Ed25519 (", f"portgate: {bad}: not an Ed25519 public key (")


@pytest.mark.parametrize(("lang", "have", "want", "said"), [
    ("pt", "'2026-03-16T07:00:00Z'", None, "admit_at é '2026-03-16T07:00:00Z', os eventos assinados pelo portaló não dão nenhum"),
    ("en", "'2026-03-16T07:00:00Z'", None, "admit_at is '2026-03-16T07:00:00Z', the gate-signed events give none"),
    ("pt", None, "'2026-03-16T07:00:00Z'", "admit_at não foi informado, os eventos assinados pelo portaló dão '2026-03-16T07:00:00Z'"),
    ("en", None, "'2026-03-16T07:00:00Z'", "admit_at is not given (none), the gate-signed events give '2026-03-16T07:00:00Z'"),
])
def test_a_recomputed_shift_value_missing_on_one_side_is_not_python_none(monkeypatch, lang, have, want, said):
    """``evidence verify`` said ``the gate-signed events give None``."""
    from central.evidence.recompute import _differs

    monkeypatch.setenv("PORTGATE_LANG", lang)
    value = (lambda v: v and v.strip("'"))
    assert _differs("admit_at", value(have), value(want)) == said


def test_the_database_and_pin_refusals_next_to_them(tmp_path):
    """Refusals worded in the same modules (central.cli_args, central.evidence.pins)."""
    none = tmp_path / "none.db"
    _refused(["pay", "--db", f"sqlite:///{none}", "--from", "2026-03-01", "--to", "2026-03-02"],
             f"--db: o arquivo SQLite '{none}' não existe (rode `portgate ledger migrate --db URL`",
             f"--db: SQLite file '{none}' does not exist (run `portgate ledger migrate --db URL`")
    bundle = tmp_path / "b.zip"
    bundle.write_text("x")
    _refused(["evidence", "verify", str(bundle), "--gate-key", "g1"], "--gate-key: 'g1' não é PORTÃO=IMPRESSÃO_DIGITAL",
             "--gate-key: 'g1' is not GATE=FINGERPRINT")


def test_check_config_secret_file_refusals(tmp_path):
    """check-config's secret files (portgate.config.read_secret), their kind worded too (word.*)."""
    pw = tmp_path / "mqtt.password"
    pw.write_text("s3cret\n")
    pw.chmod(0o644)
    config = _central(tmp_path, f'database_url = "sqlite:///l.db"\n[mqtt]\npassword_file = "{pw}"')
    _refused(["central", "check-config", config],
             f"$.mqtt.password_file: {pw}: o arquivo de senha MQTT não pode ser acessível ao grupo nem a outros (chmod 600)",
             f"$.mqtt.password_file: {pw}: MQTT password file must not be accessible by group or others (chmod 600)")
    pw.write_text("")
    pw.chmod(0o600)
    _refused(["central", "check-config", config], f"{pw}: o arquivo de senha MQTT está vazio",
             f"{pw}: MQTT password file is empty")


def test_a_sqlite_ledger_in_a_directory_that_does_not_exist_names_the_directory(tmp_path):
    """``database_url`` (``central run --config``) or ``--db`` (``ledger migrate``, which makes a
    ledger; ``pay``, which reads one) naming a SQLite file in a directory that does not exist: the
    refusal names the directory (it said the file did not exist and to run ``ledger migrate``, which
    then failed with SQLite's "unable to open database file", in English); nothing is created."""
    gone = tmp_path / "gone" / "sub"
    db = gone / "ledger.db"
    pt = (f"o diretório '{gone}' do arquivo SQLite '{db}' não existe (o SQLite não cria diretórios): corrija o "
          "caminho ou crie o diretório")
    en = (f"the directory '{gone}' of SQLite file '{db}' does not exist (SQLite does not create directories): fix "
          "the path or create the directory")
    config = _central(tmp_path, f'database_url = "sqlite:///{db}"')
    _refused(["central", "run", "--config", config], f"portgate: database_url: {pt}\n",
             f"portgate: database_url: {en}\n")
    for args in (["ledger", "migrate", "--db", f"sqlite:///{db}"],
                 ["pay", "--db", f"sqlite:///{db}", "--from", "2026-03-01", "--to", "2026-03-02"]):
        _refused(args, f"portgate: --db: {pt}\n", f"portgate: --db: {en}\n")
    assert not (tmp_path / "gone").exists()

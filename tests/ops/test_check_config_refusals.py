"""``check-config`` refuses what the service would refuse or crash on, with the service's words
(docs/operations.md): ``[web] tz`` and ``[publish] tz``, a value of another TOML type (``workers =
"2"``), a gate rulebook without ``[[version]]``, the SQLite ledger file and its directory, ``[web] rulebook``,
``[nats]`` names and servers, ``[web] secret_file`` in a missing directory; and its summary says the
brokers the office really uses. Each refusal: pt-BR first, then English with ``--lang en``, exit 2,
one line naming the key, no traceback. ``check-config`` and the refusals made at config load run in
this process (``run_here``); a service's refusal (``central run``, ``edge run``, ``office serve``) runs
as the installed command (``run_cli``) in pt-BR and in this process with ``--lang en`` (the same code:
one Python start per refusal, not two)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from central.ledger.migrate import upgrade
from tests.ops.conftest import free_port, run_cli
from testkit.cli import run_here
from testkit.gate_process import write_gate_config
from testkit.sqlite_copies import copy_made_once


def _migrated(path: Path) -> None:
    upgrade(f"sqlite:///{path}")


def _toml(tmp_path: Path, extra: str = "", *, url: str | None = None) -> Path:
    """central.toml with a migrated SQLite ledger (or ``url``), an existing keys dir and ``extra``."""
    keys = tmp_path / "keys"
    keys.mkdir(exist_ok=True)
    if url is None and not (tmp_path / "ledger.db").exists():
        copy_made_once("ops-migrated", _migrated, tmp_path / "ledger.db")
    path = tmp_path / "central.toml"
    path.write_text(f'database_url = "{url or "sqlite:///" + str(tmp_path / "ledger.db")}"\n'
                    f'port = "santos"\nkeys_dir = "{keys}"\n{extra}\n', encoding="utf-8")
    return path


def _gate_with(tmp_path: Path, line: str) -> Path:
    """A gate.toml (``write_gate_config``) whose top-level key of ``line`` is ``line``."""
    cfg = write_gate_config(tmp_path / "gate")
    text = cfg.read_text(encoding="utf-8")
    lines = [x for x in text.splitlines() if not x.startswith(line.split(" ", 1)[0] + " ")]
    cfg.write_text("\n".join([line, *lines]) + "\n", encoding="utf-8")
    return cfg


def _env(changes: dict[str, str | None]) -> dict[str, str]:
    env = dict(os.environ)
    for k, v in changes.items():
        env.pop(k, None) if v is None else env.__setitem__(k, v)
    return env


def _refused(args: list[str], key: str, pt: str, en: str, *, here: bool = True) -> str:
    """``portgate ARGS`` in pt-BR, then with ``--lang en``: exit 2, one line naming ``key`` and
    saying ``pt`` / ``en``, no traceback. Returns the pt-BR line. ``here=False``: the pt-BR run
    through the installed command, the English one in this process."""
    said = []
    for lang, words in ((None, pt), ("en", en)):  # pt-BR: the default (tests/conftest.py sets en)
        full = ["--lang", lang, *args] if lang else args
        env = {"PORTGATE_LANG": None} if lang is None else {}
        res = run_here(full, env=env) if here or lang else run_cli(full, env=_env(env))
        lines = res.stderr.strip().splitlines()
        assert res.returncode == 2, res
        assert len(lines) == 1 and "Traceback" not in res.stderr, res.stderr
        assert key in lines[0] and words in lines[0], lines[0]
        said.append(lines[0])
    return said[0]


@pytest.mark.parametrize("tz", ["Mars/Base", ""])
def test_an_unknown_web_time_zone_is_refused_by_check_config_and_office_serve(tmp_path, tz):
    cfg = _toml(tmp_path, f'[web]\ntz = "{tz}"')
    pt = "fuso horário desconhecido"
    _refused(["central", "check-config", str(cfg)], "$.web.tz", pt, "unknown time zone")
    _refused(["office", "serve", "--config", str(cfg), "--port", str(free_port())], "$.web.tz", pt, "unknown time zone",
             here=False)


@pytest.mark.parametrize("tz", ["Mars/Base", ""])
def test_an_unknown_publish_time_zone_is_refused_at_load_by_every_command(tmp_path, tz):
    """``[publish] tz`` was only looked at when the registry source started (``central run`` with
    ``source = "registry"``): now at load, as ``[web] tz``, whatever the source."""
    cfg = _toml(tmp_path, f'[publish]\ntz = "{tz}"')
    pt, en = "fuso horário desconhecido", "unknown time zone"
    _refused(["central", "check-config", str(cfg)], "$.publish.tz", pt, en)
    _refused(["central", "run", "--config", str(cfg)], "$.publish.tz", pt, en, here=False)
    _refused(["office", "serve", "--config", str(cfg), "--port", str(free_port())], "$.publish.tz", pt, en,
             here=False)


@pytest.mark.parametrize(("extra", "key", "want"), [
    ('workers = "2"', "$.workers", ("`int`", "`str`")),
    ('metrics_port = "9102"', "$.metrics_port", ("`int`", "`str`")),
    ('[web]\nsession_hours = "12"', "$.web.session_hours", ("`float`", "`str`")),
    ('[web]\nsecure_cookies = "true"', "$.web.secure_cookies", ("`bool`", "`str`")),
    ('log_json = 1', "$.log_json", ("`bool | null`", "`int`")),
    ('[ingest]\nbatch_size = true', "$.ingest.batch_size", ("`int`", "`bool`")),
    ('[mqtt]\nhost = 127', "$.mqtt.host", ("`str`", "`int`")),
])
def test_a_value_of_another_toml_type_is_refused_naming_its_key(tmp_path, extra, key, want):
    """A number in quotes where a number is expected, a number where a string or a bool is, a bool
    where a number is: refused at load with the words of a float for an int (msgspec's strict
    conversion; the lenient one took ``workers = "2"`` as 2 and ``log_json = 1`` as true)."""
    cfg = _toml(tmp_path, extra)
    pt, en = f"esperado {want[0]}, veio {want[1]}", f"Expected {want[0]}, got {want[1]}"
    _refused(["central", "check-config", str(cfg)], key, pt, en)
    if key == "$.workers":  # the services load it as check-config does (load_central_config)
        _refused(["central", "run", "--config", str(cfg)], key, pt, en, here=False)
        _refused(["office", "serve", "--config", str(cfg), "--port", str(free_port())], key, pt, en, here=False)


@pytest.mark.parametrize(("book", "key"), [
    ('name = "santos-gate"\n', "$.version"),
    ('name = "santos-gate"\nversion = []\n', "$.version"),
    ('name = "santos-gate"\n[[version]]\neffective_from = 2026-01-01\n[version.g7]\nrest_hours = "11"\n',
     "$.version[0].g7.rest_hours"),
])
def test_edge_check_config_and_edge_run_refuse_a_gate_rulebook_without_versions_or_with_a_quoted_number(
        tmp_path, book, key):
    """A gate rulebook with no ``[[version]]`` was taken as the built-in default (``edge
    check-config`` said ok); ``version = []`` was refused without naming the key; ``rest_hours =
    "11"`` was taken as 11."""
    rulebook = tmp_path / "gate-rules.toml"
    rulebook.write_text(book, encoding="utf-8")
    cfg = _gate_with(tmp_path, f'rulebook = "{rulebook}"')
    pt, en = (("é preciso ao menos uma [[version]]", "at least one [[version]] is required") if key == "$.version"
              else ("esperado `int`, veio `str`", "Expected `int`, got `str`"))
    said = _refused(["edge", "check-config", str(cfg)], key, pt, en)
    assert str(rulebook) in said, said
    _refused(["edge", "run", "--config", str(cfg)], key, pt, en, here=False)


@pytest.mark.parametrize(("where", "pt", "en"), [
    ("nonexist/dir/x.db", "não existe (o SQLite não cria diretórios)", "SQLite does not create directories"),
    ("none.db", "portgate ledger migrate", "portgate ledger migrate"),
])
def test_check_config_refuses_the_sqlite_ledger_central_run_refuses_in_its_words(tmp_path, where, pt, en):
    db = tmp_path / where
    cfg = _toml(tmp_path, url=f"sqlite:///{db}")
    said = _refused(["central", "check-config", str(cfg)], "database_url", pt, en)
    run = run_here(["central", "run", "--config", str(cfg)], env={"PORTGATE_LANG": None})
    assert run.returncode == 2 and run.stderr.strip() == said, run
    assert not db.exists() and not db.parent.exists() or db.parent == tmp_path and not db.exists()


def test_check_config_refuses_a_missing_web_rulebook_as_office_serve_does(tmp_path):
    cfg = _toml(tmp_path, f'[web]\nrulebook = "{tmp_path / "nonexist.toml"}"')
    _refused(["central", "check-config", str(cfg)], "$.web.rulebook", "arquivo não encontrado", "file not found")
    serve = run_cli(["office", "serve", "--config", str(cfg), "--port", str(free_port())])
    assert serve.returncode == 2 and "nonexist.toml" in serve.stderr, serve


@pytest.mark.parametrize(("extra", "key", "value"), [
    ('stream = "a.b c*"', "$.nats.stream", "'a.b c*'"),
    ('durable = "a.b"', "$.nats.durable", "'a.b'"),
    ('stream = "a>b"', "$.nats.stream", "'a>b'"),
    ('stream = ""', "$.nats.stream", "''"),
])
def test_nats_stream_and_consumer_names_are_refused_at_config_load(tmp_path, extra, key, value):
    cfg = _toml(tmp_path, f'[nats]\nservers = ["nats://127.0.0.1:4222"]\n{extra}')
    for cmd in (["central", "check-config", str(cfg)], ["central", "run", "--config", str(cfg)]):
        line = _refused(cmd, key, "não é um nome NATS", "is not a NATS name")
        assert value in line


@pytest.mark.parametrize(("servers", "key"), [('["http://x", ""]', "$.nats.servers[0]"),
                                              ('["nats://x:4222", ""]', "$.nats.servers[1]"),
                                              ('["nats://x y:4222"]', "$.nats.servers[0]")])
def test_nats_servers_that_are_not_nats_addresses_are_refused_at_config_load(tmp_path, servers, key):
    cfg = _toml(tmp_path, f"[nats]\nservers = {servers}")
    for cmd in (["central", "check-config", str(cfg)], ["central", "run", "--config", str(cfg)]):
        _refused(cmd, key, "não é um endereço de servidor NATS", "is not a NATS server address")


def test_the_summary_names_the_brokers_really_used(tmp_path):
    cfg = _toml(tmp_path, '[mqtt]\nprotocol = "3.1.1"\nhosts = ["b1.example:1883", "b2.example:1884"]\n'
                          '[nats]\nservers = ["nats://n1:4222", "tls://n2:4222"]')
    res = run_here(["central", "check-config", str(cfg)])
    assert res.returncode == 0, res
    assert "mqtt b1.example:1883 b2.example:1884" in res.stdout and "127.0.0.1" not in res.stdout, res.stdout
    assert "nats nats://n1:4222 tls://n2:4222" in res.stdout, res.stdout


def test_a_web_secret_file_in_a_missing_directory_is_refused_and_nothing_is_made(tmp_path):
    missing = tmp_path / "nonexist"
    cfg = _toml(tmp_path, f'[web]\nsecret_file = "{missing / "s.key"}"')
    pt, en = "não existe (o arquivo de chave é criado nele", "never the directory"
    _refused(["central", "check-config", str(cfg)], "$.web.secret_file", pt, en)
    _refused(["office", "serve", "--config", str(cfg), "--port", str(free_port())], "$.web.secret_file", pt, en, here=False)
    assert not missing.exists()


def test_a_web_slip_key_file_in_a_missing_directory_is_refused(tmp_path):
    missing = tmp_path / "nonexist"
    cfg = _toml(tmp_path, f'[web]\nslip_key_file = "{missing / "p.key"}"')
    _refused(["central", "check-config", str(cfg)], "$.web.slip_key_file", "não existe", "never the directory")
    assert not missing.exists()


@pytest.mark.parametrize(("line", "key", "pt", "en"), [
    ('ship = "93000\\u00001"', "$.ship", "contém um caractere NUL", "contains a NUL character"),
    ('rulebook = "/nonexist/gate-rules.toml"', "$.rulebook", "não encontrado", "not found"),
])
def test_edge_check_config_refuses_what_edge_run_refuses(tmp_path, line, key, pt, en):
    """A NUL escape in ``ship`` and a missing gate rulebook: ``edge check-config`` and ``edge run``
    refuse alike (both already did on this branch: kept so that they stay alike)."""
    cfg = _gate_with(tmp_path, line)
    said = _refused(["edge", "check-config", str(cfg)], key, pt, en)
    run = run_here(["edge", "run", "--config", str(cfg)], env={"PORTGATE_LANG": None})
    assert run.returncode == 2 and key in run.stderr and pt in run.stderr, run
    assert said.split(": ", 2)[-1] in run.stderr, (said, run.stderr)


def _gate_replacing(tmp_path: Path, old: str, new: str) -> Path:
    cfg = write_gate_config(tmp_path / "gate")
    text = cfg.read_text(encoding="utf-8")
    assert old in text, text
    cfg.write_text(text.replace(old, new), encoding="utf-8")
    return cfg


@pytest.mark.parametrize(("case", "key", "pt", "en"), [
    ("device_dir", "$.readers[0].device", "não é um FIFO", "is not a FIFO"),
    ("indicator_no_dir", "$.indicator_file", "não existe (o arquivo é criado nele", "does not exist (the file is made"),
    ("indicator_dir", "$.indicator_file", "é um diretório, não um arquivo", "is a directory, not a file"),
    ("state_under_proc", "$.state_dir", "não é possível criar o diretório", "cannot make the directory"),
])
def test_edge_check_config_refuses_the_paths_edge_run_cannot_open_in_its_line(tmp_path, case, key, pt, en):
    """A reader ``device`` that is a directory (run: "not a FIFO"), an ``indicator_file`` in a
    missing directory (run: a bare "No such file or directory") or that is a directory, a
    ``state_dir`` that cannot be made (run: "cannot open the gate's lock file"): ``edge
    check-config`` said ok. Now both refuse with one line naming the key and the path."""
    path = {"device_dir": tmp_path, "indicator_no_dir": tmp_path / "nonexist" / "shown.jsonl",
            "indicator_dir": tmp_path, "state_under_proc": Path("/proc/portgate-state")}[case]
    old = {"device_dir": f'device = "{tmp_path / "gate" / "reads.fifo"}"', "indicator_no_dir": 'indicator_file = "shown.jsonl"',
           "indicator_dir": 'indicator_file = "shown.jsonl"', "state_under_proc": 'state_dir = "state"'}[case]
    cfg = _gate_replacing(tmp_path, old, old.split(" = ")[0] + f' = "{path}"')
    said = _refused(["edge", "check-config", str(cfg)], key, pt, en)
    assert str(path) in said, said
    run = run_cli(["edge", "run", "--config", str(cfg)], env=_env({"PORTGATE_LANG": None}))
    assert run.returncode == 2 and run.stderr.strip() == said, run
    assert not (tmp_path / "gate" / "state").exists() and not (tmp_path / "nonexist").exists()


@pytest.mark.parametrize("name", ["workers_csv", "escala_csv"])
def test_a_missing_publish_csv_is_refused_by_central_run_as_by_check_config(tmp_path, name):
    """``[publish] workers_csv`` naming a missing file: ``check-config`` refused it, ``central run``
    started (and failed at its first snapshot). A configured file is meant to be published: both
    refuse it now, with one line naming the key and the path."""
    missing = tmp_path / "nonexist.csv"
    cfg = _toml(tmp_path, f'[publish]\n{name} = "{missing}"')
    key, pt, en = f"$.publish.{name}", "arquivo não encontrado", "file not found"
    said = _refused(["central", "check-config", str(cfg)], key, pt, en)
    assert str(missing) in said, said
    assert _refused(["central", "run", "--config", str(cfg)], key, pt, en, here=False) == said


def test_a_missing_keys_dir_is_one_text_in_check_config_and_central_run(tmp_path):
    """``central run`` said "keys_dir: ... is not a directory (...)", ``check-config`` "$.keys_dir:
    directory not found: PATH": one text now."""
    cfg = _toml(tmp_path)
    missing = tmp_path / "nonexist"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace(str(tmp_path / "keys"), str(missing)), encoding="utf-8")
    pt, en = f"diretório não encontrado: {missing}", f"directory not found: {missing}"
    said = _refused(["central", "check-config", str(cfg)], "$.keys_dir", pt, en)
    assert _refused(["central", "run", "--config", str(cfg)], "$.keys_dir", pt, en, here=False) == said


@pytest.fixture
def immutable(tmp_path):
    """``tmp_path / "ro"``, then made immutable (``chattr +i``: root writes in it refused too; a
    mode 0555 directory otherwise), given back writable after the test."""
    import shutil
    import subprocess

    d = tmp_path / "ro"
    d.mkdir()
    root = os.geteuid() == 0
    assert not root or shutil.which("chattr"), "chattr (e2fsprogs) is installed by scripts/setup.sh"
    yield d, (lambda: subprocess.run(["chattr", "+i", str(d)], check=True)) if root else (lambda: d.chmod(0o555))
    if root:
        subprocess.run(["chattr", "-i", str(d)], check=True)
    d.chmod(0o755)


def test_a_sqlite_ledger_in_a_directory_that_cannot_be_written_is_refused_alike(tmp_path, immutable):
    """``check-config`` said ok with a warning, ``central run`` "unable to open database file": both
    say now one line naming the file and its directory, not writable."""
    d, freeze = immutable
    copy_made_once("ops-migrated", _migrated, d / "ledger.db")
    cfg = _toml(tmp_path, url=f"sqlite:///{d / 'ledger.db'}")
    freeze()
    pt, en = "não aceita escrita", "is not writable"
    said = _refused(["central", "check-config", str(cfg)], "database_url", pt, en)
    assert str(d / "ledger.db") in said, said
    assert _refused(["central", "run", "--config", str(cfg)], "database_url", pt, en, here=False) == said

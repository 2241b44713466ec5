"""``portgate office add-user / set-password / disable-user``: users in the ledger, argon2 hashes,
audit rows, one-line errors with exit status 2."""

from __future__ import annotations

from sqlalchemy import select
from sqlalchemy.orm import Session

from central.db import make_engine
from central.registry.schema import audit_log
from central.web.schema import office_users
from central.web.users import LoginRefused, check_login
from app.cli import main


def _config(tmp_path):
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "ledger.db"}"\nport = "santos"\n'
                   f'keys_dir = "{tmp_path / "keys"}"\n')
    return str(cfg)


def test_users_are_added_their_password_set_and_disabled(tmp_path, monkeypatch, capsys):
    cfg = _config(tmp_path)
    monkeypatch.setenv("PORTGATE_PASSWORD", "first password!")
    assert main(["office", "add-user", "--config", cfg, "--login", "Fiscal1", "--role", "inspector",
                 "--name", "Ana", "--actor", "admin-ana"]) == 0
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    with Session(engine) as s:
        row = s.execute(select(office_users)).one()
        assert row.login == "fiscal1" and row.role == "inspector"
        assert row.password_hash.startswith("$argon2id$") and "first password" not in row.password_hash
        assert check_login(s, "fiscal1", "first password!", address="a").login == "fiscal1"
    monkeypatch.setenv("PORTGATE_PASSWORD", "second password!")
    assert main(["office", "set-password", "--config", cfg, "--login", "fiscal1"]) == 0
    assert main(["office", "disable-user", "--config", cfg, "--login", "fiscal1"]) == 0
    with Session(engine) as s:
        try:
            check_login(s, "fiscal1", "second password!", address="a")
            raise AssertionError("a disabled user logged in")
        except LoginRefused as exc:
            assert not exc.locked
        actions = [(r.action, r.subject) for r in s.execute(select(audit_log).order_by(audit_log.c.id))]
    assert actions == [("user.add", "fiscal1"), ("user.set_password", "fiscal1"), ("user.disable", "fiscal1")]
    engine.dispose()


def test_bad_user_input_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys):
    cfg = _config(tmp_path)
    monkeypatch.setenv("PORTGATE_PASSWORD", "short")
    assert main(["office", "add-user", "--config", cfg, "--login", "x1", "--role", "admin"]) == 2
    assert "at least 10 characters" in capsys.readouterr().err
    monkeypatch.setenv("PORTGATE_PASSWORD", "long enough password")
    assert main(["office", "add-user", "--config", cfg, "--login", "bad login!", "--role", "admin"]) == 2
    assert main(["office", "add-user", "--config", cfg, "--login", "ok", "--role", "admin"]) == 0
    assert main(["office", "add-user", "--config", cfg, "--login", "ok", "--role", "admin"]) == 2
    assert "already exists" in capsys.readouterr().err
    assert main(["office", "set-password", "--config", cfg, "--login", "ghost"]) == 2
    assert main(["office", "serve", "--config", str(tmp_path / "missing.toml")]) == 2


def test_set_password_on_the_command_line_ends_open_web_sessions(tmp_path, monkeypatch):
    from starlette.testclient import TestClient

    from central.config import WebSettings
    from central.web.app import create_app
    from tests.central.web.conftest import login

    cfg = _config(tmp_path)
    monkeypatch.setenv("PORTGATE_PASSWORD", "first password!")
    assert main(["office", "add-user", "--config", cfg, "--login", "fiscal1", "--role", "inspector"]) == 0
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    app = create_app(engine, WebSettings(), b"s" * 32, background=False)
    c = TestClient(app, follow_redirects=False)
    assert login(c, "fiscal1", "first password!").status_code == 303
    assert c.get("/cases").status_code == 200
    monkeypatch.setenv("PORTGATE_PASSWORD", "second password!")
    assert main(["office", "set-password", "--config", cfg, "--login", "fiscal1"]) == 0
    r = c.get("/cases")
    assert r.status_code == 303 and r.headers["location"].startswith("/login")
    assert login(TestClient(app, follow_redirects=False), "fiscal1", "second password!").status_code == 303
    engine.dispose()


def test_office_serve_refuses_a_missing_ledger_a_bad_or_busy_port_in_one_line(tmp_path, capsys):
    import socket

    cfg = _config(tmp_path)
    assert main(["office", "serve", "--config", cfg]) == 2  # ledger.db not made by `ledger migrate`
    err = capsys.readouterr().err
    assert "does not exist" in err and "ledger migrate" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "ledger.db").exists()  # not created silently
    nodir = tmp_path / "nodir.toml"
    nodir.write_text(f'database_url = "sqlite:///{tmp_path / "no" / "such" / "ledger.db"}"\nport = "santos"\n'
                     f'keys_dir = "{tmp_path / "keys"}"\n')
    assert main(["office", "serve", "--config", str(nodir)]) == 2
    assert f"the directory '{tmp_path / 'no' / 'such'}' of SQLite file" in capsys.readouterr().err
    assert main(["ledger", "migrate", "--config", cfg]) == 0
    capsys.readouterr()
    assert main(["office", "serve", "--config", cfg, "--port", "99999"]) == 2
    assert "99999 is not in the range" in capsys.readouterr().err
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        assert main(["office", "serve", "--config", cfg, "--port", str(taken)]) == 2
    err = capsys.readouterr().err
    assert f"cannot listen on 127.0.0.1:{taken}" in err and len(err.strip().splitlines()) == 1


def test_a_ships_csv_that_is_not_utf8_is_named_by_file_and_line(tmp_path, capsys):
    cfg = _config(tmp_path)
    assert main(["ledger", "migrate", "--config", cfg]) == 0
    ships = tmp_path / "ships.csv"
    ships.write_bytes("ship,ship_name,voyage,berth,gate_id,arrival,departure\n"
                      "9300001,Aurora,long_haul,berthed,g1,2026-03-15T06:00:00-03:00,\n".encode()
                      + "9300002,Navio São,long_haul,berthed,g1,2026-03-15T06:00:00-03:00,\n".encode("latin-1"))
    capsys.readouterr()
    assert main(["office", "import-ships", "--config", cfg, "--ships", str(ships)]) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last == "portgate: ships.csv:3: file is not UTF-8"


def test_add_user_port_scope_on_an_office_of_several_ports(tmp_path, monkeypatch, capsys):
    """``--port`` (repeatable) and ``--all-ports`` (issue 37 item 4): stored in ``office_users.ports``;
    neither: None (the home port); a port the office does not serve, both options, or a worker: exit 2."""
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "ledger.db"}"\nport = "santos"\n'
                   f'ports = ["santos", "rio"]\nkeys_dir = "{tmp_path / "keys"}"\n')
    cfg = str(cfg)
    monkeypatch.setenv("PORTGATE_PASSWORD", "long enough password")
    assert main(["office", "add-user", "--config", cfg, "--login", "clerk", "--role", "office",
                 "--port", "rio", "--port", "santos"]) == 0
    assert "ports: rio,santos" in capsys.readouterr().out
    assert main(["office", "add-user", "--config", cfg, "--login", "fed", "--role", "auditor", "--all-ports"]) == 0
    assert main(["office", "add-user", "--config", cfg, "--login", "old", "--role", "office"]) == 0
    capsys.readouterr()
    assert main(["office", "add-user", "--config", cfg, "--login", "x2", "--role", "office", "--port", "vitoria"]) == 2
    assert "'vitoria' is not served by this office" in capsys.readouterr().err
    assert main(["office", "add-user", "--config", cfg, "--login", "x3", "--role", "office", "--port", "rio",
                 "--all-ports"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["office", "add-user", "--config", cfg, "--role", "worker", "--registration", "V1",
                 "--port", "rio"]) == 2
    assert "for office users" in capsys.readouterr().err
    engine = make_engine(f"sqlite:///{tmp_path / 'ledger.db'}")
    with Session(engine) as s:
        got = dict(s.execute(select(office_users.c.login, office_users.c.ports)).all())
        detail = s.execute(select(audit_log.c.detail).where(audit_log.c.subject == "clerk")).scalar_one()
    assert got == {"clerk": "rio,santos", "fed": "*", "old": None}
    assert detail["ports"] == "rio,santos"
    assert main(["office", "set-ports", "--config", cfg, "--login", "old", "--all-ports"]) == 0
    assert main(["office", "set-ports", "--config", cfg, "--login", "fed", "--port", "rio"]) == 0
    assert main(["office", "set-ports", "--config", cfg, "--login", "clerk", "--home"]) == 0
    capsys.readouterr()
    assert main(["office", "set-ports", "--config", cfg, "--login", "old"]) == 2
    assert main(["office", "set-ports", "--config", cfg, "--login", "old", "--home", "--port", "rio"]) == 2
    assert main(["office", "set-ports", "--config", cfg, "--login", "ghost", "--all-ports"]) == 2
    assert main(["office", "set-ports", "--config", cfg, "--login", "old", "--port", "vitoria"]) == 2
    assert "no user 'ghost'" in capsys.readouterr().err
    with Session(engine) as s:
        got = dict(s.execute(select(office_users.c.login, office_users.c.ports)).all())
        changed = [r.detail for r in s.execute(select(audit_log).where(audit_log.c.action == "user.set_ports")
                                               .order_by(audit_log.c.id))]
    assert got == {"clerk": None, "fed": "rio", "old": "*"}
    assert changed == [{"from": None, "to": "*"}, {"from": "*", "to": "rio"}, {"from": "rio,santos", "to": None}]
    engine.dispose()

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
    from tests.web.conftest import login

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

"""``portgate office add-user / set-password / disable-user / set-ports --config`` are checked
against the ledger's ports as every command given ``--config`` is (a fresh tester: ``add-user``
under a config whose home port differs from the ledger's recorded one was not refused, while
docs/operations.md says every ``--config`` command is checked). A ledger of santos and paranagua
whose worker X800 has no port and whose home port is santos: paranagua's config is refused, exit 2,
no user written; santos's config adds the user. Real SQLite and PostgreSQL (``migrated_url``),
through ``app.cli.main`` (``run_here``)."""

from __future__ import annotations

from sqlalchemy import select

from central.db import make_engine
from central.web.schema import office_users
from testkit.cli import run_here
from tests.central.ledger.test_home_port_command import _config  # central.toml of santos + paranagua

EN = {"PORTGATE_LANG": "en", "PORTGATE_PASSWORD": "uma senha longa o bastante 123", "PORTGATE_ACTOR": "chefe"}
OTHER_HOME = "the ledger's workers without a port are santos's (its home port), not paranagua's"
HEADER = "registration,name,category,status,suspended_from,suspended_until,health_exam_date,"\
         "booklet_revalidated_year,rotation_number\n"


def _logins(url: str) -> list[str]:
    engine = make_engine(url)
    try:
        with engine.connect() as c:
            return sorted(c.execute(select(office_users.c.login)).scalars())
    finally:
        engine.dispose()


def test_user_commands_under_another_home_port_are_refused(migrated_url, tmp_path):
    csv = tmp_path / "w.csv"
    csv.write_text(HEADER + "X800,Vigia X800,vigia,active,,,2026-01-05,2026,800\n")
    done = run_here(["registry", "import", "--workers", str(csv), "--db", migrated_url], env=EN)
    assert done.returncode == 0, done.stderr
    santos, paranagua = _config(tmp_path, migrated_url, "santos"), _config(tmp_path, migrated_url, "paranagua")
    done = run_here(["ledger", "home-port", "--config", santos, "--set", "santos", "--actor", "chefe"], env=EN)
    assert done.returncode == 0, done.stderr
    before = _logins(migrated_url)
    refused = run_here(["office", "add-user", "--config", paranagua, "--login", "clerk.p", "--role", "office"], env=EN)
    assert refused.returncode == 2 and OTHER_HOME in refused.stderr, (refused.returncode, refused.stderr)
    assert _logins(migrated_url) == before
    added = run_here(["office", "add-user", "--config", santos, "--login", "clerk.s", "--role", "office"], env=EN)
    assert added.returncode == 0, added.stderr
    assert "clerk.s" in _logins(migrated_url)
    for args in (["set-password", "--login", "clerk.s"], ["disable-user", "--login", "clerk.s"]):
        refused = run_here(["office", *args, "--config", paranagua], env=EN)
        assert refused.returncode == 2 and OTHER_HOME in refused.stderr, (args, refused.stderr)

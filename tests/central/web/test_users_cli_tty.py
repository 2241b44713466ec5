"""``portgate office add-user`` and ``set-password`` as a person runs them: the real ``portgate``
entry point on a real pseudo-terminal (its controlling terminal: the password is asked on it, as
``getpass`` does), no password in the environment. A login that is taken, malformed or (for
``set-password``) unknown is said before any password is asked, exit status 2; a free login is
asked its password twice and added."""

from __future__ import annotations

import errno
import fcntl
import os
import select
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from testkit.cli import run_here

ROOT = Path(__file__).resolve().parents[3]
PORTGATE = Path(sys.executable).with_name("portgate")


def _config(tmp_path: Path) -> str:
    cfg = tmp_path / "central.toml"
    cfg.write_text(f'database_url = "sqlite:///{tmp_path / "ledger.db"}"\nport = "santos"\n'
                   f'keys_dir = "{tmp_path / "keys"}"\n')
    return str(cfg)


class Tty:
    """The ``portgate`` command on a new pseudo-terminal, which is its controlling terminal."""

    def __init__(self, *args: str) -> None:
        env = {k: v for k, v in os.environ.items() if k != "PORTGATE_PASSWORD"}
        self.master, slave = os.openpty()
        self.proc = subprocess.Popen([str(PORTGATE), *args], stdin=slave, stdout=slave, stderr=slave, cwd=ROOT,
                                     env=env, start_new_session=True,
                                     preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
        os.close(slave)
        self.seen = b""

    def read_until(self, *endings: str, timeout: float = 120) -> str:
        """What the terminal showed until one of ``endings`` appears or the command ends (then
        everything it wrote). ``AssertionError`` with what was seen after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not any(e.encode() in self.seen for e in endings):
            left = deadline - time.monotonic()
            assert left > 0, f"the terminal showed {self.seen.decode(errors='replace')!r}, none of {endings}"
            ready, _w, _x = select.select([self.master], [], [], min(left, 1.0))
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError as exc:  # the command closed the terminal: it is done
                if exc.errno != errno.EIO:
                    raise
                break
            if not data:
                break
            self.seen += data
        return self.seen.decode(errors="replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode() + b"\n")

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=120)
        finally:
            os.close(self.master)
            if self.proc.poll() is None:
                self.proc.kill()


@pytest.fixture(scope="module")
def config(tmp_path_factory):
    """A ledger holding the user ``ana`` (added with the password in the environment)."""
    cfg = _config(tmp_path_factory.mktemp("users-tty"))
    done = run_here(["office", "add-user", "--config", cfg, "--login", "ana", "--role", "office"],
                    env={"PORTGATE_PASSWORD": "first password!"})  # the set-up, in process; the tests: a tty
    assert done.returncode == 0, done.stderr
    return cfg


@pytest.mark.parametrize("login, says", [("ana", "user 'ana' already exists"), ("ANA", "user 'ana' already exists"),
                                         ("má login", "must be 2-64 of a-z")])
def test_add_user_says_a_taken_or_bad_login_before_it_asks_a_password(config, login, says):
    tty = Tty("office", "add-user", "--config", config, "--login", login, "--role", "office")
    try:
        shown = tty.read_until("password:", says)
    finally:
        if tty.proc.poll() is None and "password:" in tty.seen.decode(errors="replace"):
            tty.proc.kill()
        code = tty.close()
    assert "password:" not in shown, shown
    assert says in shown and code == 2, (code, shown)


def test_set_password_says_an_unknown_login_before_it_asks_a_password(config):
    tty = Tty("office", "set-password", "--config", config, "--login", "ghost")
    try:
        shown = tty.read_until("password:", "ghost")
    finally:
        if tty.proc.poll() is None and "password:" in tty.seen.decode(errors="replace"):
            tty.proc.kill()
        code = tty.close()
    assert "password:" not in shown and "'ghost'" in shown and code == 2, (code, shown)


def test_a_free_login_is_asked_its_password_twice_on_the_terminal_and_added(config):
    tty = Tty("office", "add-user", "--config", config, "--login", "bia", "--role", "inspector")
    try:
        tty.read_until("password:")
        tty.type("segunda senha boa")
        tty.read_until("again:")
        tty.type("segunda senha boa")
        shown = tty.read_until("bia (")
    finally:
        code = tty.close()
    assert code == 0, shown

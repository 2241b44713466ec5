"""The office web's own keys (central/web/cli.py): made 0600 with 32 random bytes when missing,
kept when present, refused naming the file when short or unreadable."""

from __future__ import annotations

import stat

import msgspec
import pytest

from central.config import CentralConfig, WebSettings
from central.web.cli import session_secret, slip_key
from portgate.errors import ConfigError


def _config(tmp_path) -> CentralConfig:
    return CentralConfig(database_url=f"sqlite:///{tmp_path / 'l.db'}", port="santos", keys_dir=str(tmp_path))


@pytest.mark.parametrize("read,name", [(session_secret, "web-session.key"), (slip_key, "payslip.key")])
def test_a_missing_key_is_made_once_and_then_kept(tmp_path, read, name):
    first = read(_config(tmp_path))
    path = tmp_path / name
    assert len(first) == 32 and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read(_config(tmp_path)) == first


@pytest.mark.parametrize("read,what", [(session_secret, "session key"), (slip_key, "payslip key")])
def test_a_short_or_unreadable_key_is_one_config_error_naming_the_file(tmp_path, read, what):
    short = tmp_path / "short.key"
    short.write_bytes(b"x" * 31)
    config = _config(tmp_path)
    web = WebSettings(secret_file=str(short), slip_key_file=str(short))
    with pytest.raises(ConfigError) as caught:
        read(msgspec.structs.replace(config, web=web))
    assert caught.value.path == str(short) and caught.value.reason == f"the {what} has fewer than 32 bytes"
    folder = tmp_path / "folder.key"
    folder.mkdir()
    web = WebSettings(secret_file=str(folder), slip_key_file=str(folder))
    with pytest.raises(ConfigError) as caught:
        read(msgspec.structs.replace(config, web=web))
    assert caught.value.path == str(folder) and caught.value.reason.startswith(f"cannot read the {what}: ")

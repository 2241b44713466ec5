"""The systemd units and udev rules: ``systemd-analyze verify`` accepts them without a warning, the
hardening gives a low exposure score, and the options the gate needs for its readers are there."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = ["portgate-gate.service", "portgate-central.service", "portgate-central@.service",
         "portgate-office-web.service"]
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")
needs_analyze = pytest.mark.skipif(SYSTEMD_ANALYZE is None, reason="systemd-analyze not installed")


def unit_copies(tmp_path: Path) -> Path:
    """Copies of the units with ExecStart pointing at an existing binary (verify checks it exists)."""
    for name in UNITS:
        text = (ROOT / "systemd" / name).read_text()
        (tmp_path / name).write_text(text.replace("/opt/portgate/venv/bin/portgate", "/bin/true"))
    return tmp_path


def options(name: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for line in (ROOT / "systemd" / name).read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            found.setdefault(key, []).append(value)
    return found


@needs_analyze
def test_units_verify_without_warnings(tmp_path):
    d = unit_copies(tmp_path)
    args = [SYSTEMD_ANALYZE, "verify", "--man=no",
            str(d / "portgate-gate.service"), str(d / "portgate-central.service"),
            str(d / "portgate-central@1.service"), str(d / "portgate-office-web.service")]
    res = subprocess.run(args, capture_output=True, text=True, cwd=d)
    assert res.returncode == 0, res.stderr
    ours = [line for line in (res.stdout + res.stderr).splitlines() if "portgate" in line]
    assert ours == [], ours  # verify exits 0 on unknown keys: a warning line is a failure here


@needs_analyze
def test_verify_catches_a_broken_unit(tmp_path):
    """The check above can fail: an unknown option or syscall group is reported."""
    d = unit_copies(tmp_path)
    bad = d / "portgate-bad.service"
    bad.write_text((d / "portgate-gate.service").read_text().replace(
        "NoNewPrivileges=yes", "NoNewPrivileges=yes\nProtectEverything=yes\nSystemCallFilter=@nonsense"))
    res = subprocess.run([SYSTEMD_ANALYZE, "verify", "--man=no", str(bad)], capture_output=True, text=True, cwd=d)
    text = res.stdout + res.stderr
    assert "ProtectEverything" in text and "@nonsense" in text


@needs_analyze
@pytest.mark.parametrize("name,limit", [("portgate-gate.service", 3.0), ("portgate-central.service", 2.0)])
def test_hardening_exposure_is_low(tmp_path, name, limit):
    d = unit_copies(tmp_path)
    res = subprocess.run([SYSTEMD_ANALYZE, "security", "--offline=yes", "--no-pager", str(d / name)],
                         capture_output=True, text=True, cwd=d)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", res.stdout + res.stderr)
    assert m, res.stdout + res.stderr
    assert float(m.group(1)) <= limit


def test_gate_unit_reaches_readers_and_notifies():
    o = options("portgate-gate.service")
    assert o["Type"] == ["notify"] and o["Restart"] == ["on-failure"] and o["WatchdogSec"]
    assert "dialout" in o["SupplementaryGroups"][0]
    allowed = " ".join(o["DeviceAllow"])
    for dev in ("char-ttyUSB", "char-ttyACM", "char-input"):
        assert dev in allowed
    assert o["DevicePolicy"] == ["closed"] and "-/run/pcscd" in o["ReadWritePaths"]
    assert "AF_UNIX" in o["RestrictAddressFamilies"][0]  # pcscd socket, journald, NOTIFY_SOCKET
    assert "ProtectClock" not in o  # it would forbid adjtimex, the NTP-sync probe (G8)
    assert o["SystemCallFilter"][-1] == "adjtimex"
    for key in ("ProtectSystem", "ProtectHome", "PrivateTmp", "NoNewPrivileges", "StateDirectory", "User"):
        assert key in o, key
    docs = (ROOT / "docs" / "operations.md").read_text()
    for key in set(options("portgate-gate.service")) | set(options("portgate-central.service")):
        if key not in ("Description", "Documentation", "ExecStart", "ExecStartPre", "WantedBy"):
            assert f"`{key}" in docs, f"{key} is not explained in docs/operations.md"


def test_template_gives_each_instance_its_own_client_id_and_env():
    o = options("portgate-central@.service")
    assert o["ExecStart"][0].endswith("--instance %i")
    assert o["EnvironmentFile"] == ["-/etc/portgate/central-%i.env"]


def test_udev_rules_give_stable_names():
    rules = (ROOT / "systemd" / "99-portgate-readers.rules").read_text()
    lines = [line for line in rules.splitlines() if line.strip() and not line.startswith("#")]
    pair = re.compile(r'^[A-Z_]+(\{[^}]+\})?(==|!=|\+=|=)"[^"]*"$')
    for line in lines:
        for part in (p.strip() for p in line.split(", ")):
            assert pair.match(part), (line, part)
    assert 'SYMLINK+="portgate-badge"' in rules and 'SYMLINK+="portgate-control"' in rules
    assert 'ATTRS{idVendor}=="10c4"' in rules and 'ATTRS{idVendor}=="1a86"' in rules  # CP2102, CH340
    assert all('GROUP="dialout"' in line for line in lines if 'SUBSYSTEM=="tty"' in line)
    udevadm = shutil.which("udevadm")
    if udevadm and "verify" in subprocess.run([udevadm, "--help"], capture_output=True, text=True).stdout:
        res = subprocess.run([udevadm, "verify", str(ROOT / "systemd" / "99-portgate-readers.rules")],
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr

"""The screen's systemd unit and the kiosk set-up (``scripts/install-gate.sh --display``, staged)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
UNIT = ROOT / "systemd" / "portgate-display.service"
ANALYZE = shutil.which("systemd-analyze")


def _copy(tmp_path: Path) -> Path:
    path = tmp_path / UNIT.name
    path.write_text(UNIT.read_text().replace("/opt/portgate/venv/bin/portgate", "/bin/true"))
    return path


def test_the_unit_starts_after_the_gate_and_reaches_loopback_only() -> None:
    text = UNIT.read_text()
    assert "After=portgate-gate.service" in text
    assert "ExecStart=/opt/portgate/venv/bin/portgate edge display --config /etc/portgate/gate.toml" in text
    assert "IPAddressAllow=localhost" in text and "IPAddressDeny=any" in text
    assert "Requires=" not in text and "BindsTo=" not in text  # the gate never depends on the screen
    assert "screen" not in (ROOT / "systemd" / "portgate-gate.service").read_text()


@pytest.mark.skipif(ANALYZE is None, reason="systemd-analyze not installed")
def test_the_unit_verifies_and_its_exposure_is_low(tmp_path) -> None:
    unit = _copy(tmp_path)
    res = subprocess.run([ANALYZE, "verify", "--man=no", str(unit)], capture_output=True, text=True, cwd=tmp_path)
    ours = [line for line in (res.stdout + res.stderr).splitlines() if "portgate" in line]
    assert res.returncode == 0 and ours == [], res.stdout + res.stderr
    res = subprocess.run([ANALYZE, "security", "--offline=yes", "--no-pager", str(unit)],
                         capture_output=True, text=True, cwd=tmp_path)
    m = re.search(r"Overall exposure level for \S+: ([0-9.]+)", res.stdout + res.stderr)
    assert m and float(m.group(1)) <= 2.5, res.stdout[-2000:]


def test_install_gate_with_display_stages_the_unit_and_the_kiosk(tmp_path) -> None:
    env = {**os.environ, "PORTGATE_ROOT": str(tmp_path), "SKIP_VENV": "1"}
    for _ in range(2):  # idempotent
        res = subprocess.run(["bash", str(ROOT / "scripts/install-gate.sh"), "--display"], env=env,
                             capture_output=True, text=True)
        assert res.returncode == 0, res.stdout + res.stderr
    assert (tmp_path / "etc/systemd/system/portgate-display.service").read_text() == UNIT.read_text()
    kiosk = tmp_path / "opt/portgate/bin/portgate-kiosk"
    assert os.access(kiosk, os.X_OK) and "--kiosk" in kiosk.read_text()
    for autostart in ("etc/xdg/labwc/autostart", "etc/xdg/lxsession/LXDE-pi/autostart"):
        lines = (tmp_path / autostart).read_text().splitlines()
        assert sum("portgate-kiosk" in line for line in lines) == 1, lines
    assert "keeping existing kiosk line" in res.stdout
    res = subprocess.run(["bash", "-n", str(ROOT / "scripts/kiosk.sh")], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr


def test_install_gate_without_display_installs_no_screen(tmp_path) -> None:
    env = {**os.environ, "PORTGATE_ROOT": str(tmp_path), "SKIP_VENV": "1"}
    res = subprocess.run(["bash", str(ROOT / "scripts/install-gate.sh")], env=env, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert not (tmp_path / "etc/systemd/system/portgate-display.service").exists()
    assert not (tmp_path / "etc/xdg").exists()

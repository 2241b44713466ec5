"""``scripts/pip_install.sh`` (scripts/setup.sh's pip installs): pip's "Location 'file:///...' is
ignored" warnings of a file:// extra index without a folder per package are left out, every other
line and pip's exit status kept. Real pip (this venv's) on the machine's local simple index
(/opt/pypi/simple), with its own configuration only (``PIP_CONFIG_FILE=/dev/null``), a dry run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INDEX = Path("/opt/pypi/simple")


def pip_install(tmp_path, *args, script=True):
    empty = tmp_path / "extra-index"  # an index with no folder per package: pip warns per package
    empty.mkdir(exist_ok=True)
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": INDEX.as_uri(),
           "PIP_EXTRA_INDEX_URL": empty.as_uri(), "PIP_FIND_LINKS": "", "PIP_NO_INPUT": "1"}
    command = (["bash", str(ROOT / "scripts/pip_install.sh"), sys.executable] if script
               else [sys.executable, "-m", "pip", "install"])
    return subprocess.run([*command, "-q", "--dry-run", "--ignore-installed", "--no-deps", *args],
                          capture_output=True, text=True, env=env, timeout=300)


@pytest.fixture(autouse=True)
def local_index():
    if not (INDEX / "six").is_dir():
        pytest.skip(f"no local simple index with six at {INDEX}")


def test_pip_itself_warns_once_per_package_of_the_extra_index(tmp_path):
    """What the script hides: pip's own warning (the test would mean nothing without it)."""
    run = pip_install(tmp_path, "six", script=False)
    assert run.returncode == 0, run.stderr
    assert f"WARNING: Location '{(tmp_path / 'extra-index').as_uri()}/six/' is ignored" in run.stderr


def test_the_ignored_location_warnings_are_left_out(tmp_path):
    run = pip_install(tmp_path, "six")
    assert (run.returncode, run.stderr) == (0, ""), run.stderr


def test_an_install_error_still_shows_with_pips_exit_status(tmp_path):
    run = pip_install(tmp_path, "portgate-no-such-package-here")
    assert run.returncode == 1, run.stderr
    assert "ERROR: Could not find a version that satisfies the requirement portgate-no-such-package-here" \
        in run.stderr
    assert "is ignored" not in run.stderr

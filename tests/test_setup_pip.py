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


def test_the_editable_install_prints_no_setuptools_notice(tmp_path):
    """scripts/setup.sh's ``pip install -e ".[test]"`` printed setuptools' boxed "BuildBackendWarning:
    Editable installation. Please be careful with folders in your working directory ..." at every
    install: with several top-level packages and no ``package-dir`` setuptools makes the editable
    install a meta path finder, and says so. pyproject.toml's ``package-dir = {"" = "."}`` makes it
    a ``.pth`` naming the checkout (the packages are its folders), which says nothing. Built for
    real (the build backend from the local index, as setup.sh's pip does) from a copy of what
    setuptools looks at: pyproject.toml, README.md and the packages' ``__init__.py`` files, under a
    prefix of its own (``--ignore-installed``: pip would otherwise uninstall this venv's portgate)."""
    src = tmp_path / "src"
    for name in ("pyproject.toml", "README.md"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_bytes((ROOT / name).read_bytes())
    tops = ("portgate", "wire", "drivers", "edge", "central", "app", "testkit")
    for init in (p for top in tops for p in (ROOT / top).rglob("__init__.py")):
        if "__pycache__" not in init.parts and "node_modules" not in init.parts:
            (src / init.relative_to(ROOT)).parent.mkdir(parents=True, exist_ok=True)
            (src / init.relative_to(ROOT)).write_bytes(init.read_bytes())
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": INDEX.as_uri(), "PIP_FIND_LINKS": "",
           "PIP_NO_INPUT": "1"}
    run = subprocess.run(["bash", str(ROOT / "scripts/pip_install.sh"), sys.executable, "-q", "--no-deps",
                          "--ignore-installed", "--prefix", str(tmp_path / "prefix"), "-e", str(src)],
                         capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr == "", run.stderr
    assert list((tmp_path / "prefix").rglob("__editable__.portgate-*.pth")), "nothing was installed"

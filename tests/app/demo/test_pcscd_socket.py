"""The private pcscd's socket reached from a deep run directory (``app.demo.pcsc``).

``portgate demo --cluster`` under pytest's ``/tmp/pytest-of-root/pytest-1000`` and later put the
pr-nordic gate's socket at a 108-byte path: libpcsclite cut it, the gate found no pcscd
(``SCARD_E_NO_SERVICE``) and decided none of its 18 taps while the daemon read every card. Real
pcscd + vpcd; the PC/SC client is a fresh process (libpcsclite reads ``PCSCLITE_CSOCK_NAME`` once
per process)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from app.demo.gate import pcsc_available
from app.demo.pcsc import MAX_SOCKET_PATH, PcscDaemon

pytestmark = [pytest.mark.pcsc, pytest.mark.skipif(not pcsc_available(), reason="needs pcscd + vpcd")]

LIST_READERS = ("from smartcard.scard import *\n"
                "h, c = SCardEstablishContext(SCARD_SCOPE_USER)\n"
                "print(hex(h & 0xffffffff), *(SCardListReaders(c, [])[1] if h == 0 else []), sep='|')\n")


def _readers_seen(daemon: PcscDaemon) -> list[str]:
    """What a PC/SC client of ``daemon`` sees: ``[hresult, reader names...]``."""
    done = subprocess.run([sys.executable, "-c", LIST_READERS], env={**os.environ, **daemon.client_env()},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().split("|")


@pytest.mark.parametrize("extra", [0, 1, 40])  # the longest path that fits, one byte over, far over
def test_a_client_reaches_the_daemon_of_a_deep_run_directory(tmp_path, extra):
    # the workdir whose run/pcscd.comm is exactly MAX_SOCKET_PATH + extra bytes long
    tail = Path("run") / "pcscd.comm"
    room = MAX_SOCKET_PATH + extra - len(os.fsencode(tmp_path / "w" / tail)) + 1
    assert room > 0, tmp_path  # pytest's own tmp_path is short enough to play every case
    workdir = tmp_path / ("w" * room)
    assert len(os.fsencode(workdir / tail)) == MAX_SOCKET_PATH + extra
    daemon = PcscDaemon(workdir)
    if not daemon.isolated:
        pytest.skip("unshare -m not permitted: the daemon uses the system socket")
    try:
        daemon.start()
        assert _readers_seen(daemon) == ["0x0", "Virtual PCD 00 00", "Virtual PCD 00 01"]  # not 0x8010001d
        assert len(os.fsencode(daemon.socket_path)) <= MAX_SOCKET_PATH, daemon.socket_path
        short = daemon.socket_path != str(workdir / tail)
        assert short == (extra > 0)  # a path that fits stays in the workdir
    finally:
        daemon.stop()
    # a short socket directory made in the temporary directory does not outlive the daemon
    assert not Path(daemon.socket_path).parent.exists() or not short

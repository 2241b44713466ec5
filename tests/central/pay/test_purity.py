"""The pay core stays pure: importing it pulls in no database, broker or driver code."""

from __future__ import annotations

import subprocess
import sys


def test_pay_core_imports_no_io_libraries():
    code = ("import sys, central.pay.watchmen, central.pay.rulebook, central.pay.calendar, "
            "central.ledger.shifts; bad = [m for m in ('sqlalchemy', 'paho', 'smartcard', 'serial') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr

"""``testkit.demo_day``: the session's demo day hears its Ctrl-C however the suite was started."""

from __future__ import annotations

import signal
import subprocess
import sys

from testkit.demo_day import _hear_ctrl_c

# what the child says about its SIGINT: Python's KeyboardInterrupt handler, or left ignored
SAYS = "import signal; h = signal.getsignal(signal.SIGINT); print('ctrl-c' if h is signal.default_int_handler else int(h))"


def test_a_demo_started_from_a_suite_with_sigint_ignored_still_hears_ctrl_c():
    """A background job of a non-interactive shell (``bash .ci/run &``) starts with SIGINT ignored
    and passes that on to every child; the demo's process puts it back to the default, so Python
    turns Ctrl-C into KeyboardInterrupt (``DemoDay.stop``). Without ``_hear_ctrl_c`` the child
    inherits the ignored signal (the control)."""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        heard = subprocess.run([sys.executable, "-c", SAYS], preexec_fn=_hear_ctrl_c, capture_output=True,
                               text=True, timeout=120)
        control = subprocess.run([sys.executable, "-c", SAYS], capture_output=True, text=True, timeout=120)
    finally:
        signal.signal(signal.SIGINT, before)
    assert heard.stdout.strip() == "ctrl-c", heard.stdout + heard.stderr
    assert control.stdout.strip() == str(int(signal.SIG_IGN)), control.stdout + control.stderr

"""Shared pytest set-up. Component fixtures (mosquitto, PostgreSQL) live in the suites' conftest
modules; a test that uses one is marked for it here, so ``-m mqtt`` / ``-m "not postgres"`` select
by what a test really starts rather than by a marker someone remembered to write.

How the suite is spread over two pytest-xdist workers (``scripts/test.sh``: ``--dist loadgroup``
with ``testkit/xdist_groups.py``): each test module goes whole to one worker, as ``--dist loadfile``
would (module fixtures start once; some modules' tests build on each other's state), except that
every module using the session's ``demo_day`` goes to one and the same worker, first: the demo day
is played once per run, not once per worker. A module that wants the same for another session
fixture marks itself ``pytestmark = pytest.mark.xdist_group("name")``."""

from __future__ import annotations

import os
import signal

import pytest

from testkit.demo_day import DemoDay

# The command line's messages (portgate/clitext.py) are read in English by the suite's assertions on
# a command's output: every command a test runs, in-process or as a subprocess, speaks English
# unless the test sets PORTGATE_LANG itself (tests/test_cli_texts.py runs them in pt-BR, the default).
os.environ["PORTGATE_LANG"] = "en"

# Ctrl-C as a terminal gives it, in this process and so in every command a test starts: a suite
# started as a background job of a non-interactive shell (``bash .ci/run &``, ``(nohup ... &)``)
# inherits SIGINT ignored, every child inherits that, and Python leaves an ignored SIGINT ignored:
# the tests that Ctrl-C a command (tests/central/pay/test_close_interrupts.py) then saw it run to its
# end (exit 0). A Python handler here is reset to the default action in a child at its exec.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

pytest_plugins = ["testkit.xdist_groups"]  # the two workers' scheduling (scripts/test.sh)

BROKER_FIXTURES = frozenset({"broker", "secure_broker"})  # a private mosquitto (tests/central/ingest, tests/ops)
PG_FIXTURES = frozenset({"pg", "pg_cluster", "pg_url"})  # a throw-away PostgreSQL cluster
PG_PARAMS = ("db_url", "migrated_url", "engine")  # parametrised fixtures whose "postgresql" run makes a database
NATS_FIXTURES = frozenset({"nats_cluster"})  # three nats-server processes (tests/ops/conftest.py)


@pytest.fixture(autouse=True)
def _command_language_reset():
    """A command's own ``--lang`` holds for the rest of its process (``portgate.clitext.use_lang``):
    one run in-process by a test (CliRunner, ``app.cli.main``) must not decide the language of the
    next test's commands (the full run saw Click's texts stay English after an earlier ``--lang en``)."""
    yield
    from portgate.clitext import use_lang

    use_lang(None)


DEMO_GROUP = "demo_day"  # the xdist group of the modules that use the ``demo_day`` fixture


def pytest_collection_modifyitems(config, items):
    """Add ``mqtt`` to every test that uses a broker fixture and ``postgres`` to every test that uses
    a PostgreSQL fixture, directly or through another fixture, or runs as ``db_url[postgresql]``
    (or ``migrated_url``, or the web suite's ``engine``).
    Every test of a module where any test uses ``demo_day`` (directly or through another fixture)
    gets ``xdist_group("demo_day")``."""
    demo_modules = {item.path for item in items if "demo_day" in getattr(item, "fixturenames", ())}
    for item in items:
        if item.path in demo_modules:
            item.add_marker(pytest.mark.xdist_group(DEMO_GROUP))
        names = set(getattr(item, "fixturenames", ()))
        if names & BROKER_FIXTURES:
            item.add_marker(pytest.mark.mqtt)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if names & PG_FIXTURES or any(params.get(name) == "postgresql" for name in PG_PARAMS):
            item.add_marker(pytest.mark.postgres)
        if names & NATS_FIXTURES:
            item.add_marker(pytest.mark.nats)


@pytest.fixture(scope="session")
def demo_day(tmp_path_factory):
    """One ``portgate demo --keep-serving`` day (default scenario, with the broker outage) for every
    test that only reads it: its output, run directory, ledger and web application, served until the
    end of the session, when it is Ctrl-C'd: it must then stop with exit status 0 and say so
    (``--keep-serving``: the web application until Ctrl-C). No test stops it: the tests that use its
    web application may run in any order."""
    day = DemoDay(tmp_path_factory.mktemp("demo-day")).start()
    yield day
    assert day.stop() == 0, day.out[-3000:]
    assert "\nparado\n" in day.out, day.out[-3000:]  # cli.demo.stopped in the demo's pt-BR

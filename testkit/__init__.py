"""Helpers for tests and benchmarks only; no product package imports them (tests/test_layers.py).

``postgres``: a throw-away PostgreSQL cluster; ``sink``: a QoS 1 subscriber in its own process;
``gate_process``: a real ``portgate edge run`` process fed through a FIFO reader; ``shift_events``:
signed tap events for given shifts; ``journal_faults``: journal corruption; ``browser``: Chromium
driven by Playwright; ``wait_until``: poll a condition; ``demo_day``: one ``portgate demo
--keep-serving`` day shared by the tests that only read it; ``xdist_groups``: how the suite's two
pytest-xdist workers share the modules (a plugin of ``tests/conftest.py``); ``full``: the size of a long
fault run, small in the suite, full with ``PORTGATE_FULL=1``. The simulated hardware the demo also starts
(mosquitto, pcscd + vpcd, a virtual card, a serial reader on a pty) lives in ``app.demo``.
"""

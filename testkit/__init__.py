"""Helpers for tests and benchmarks only; no product package imports them (tests/test_layers.py).

``postgres``: a throw-away PostgreSQL cluster; ``sink``: a QoS 1 subscriber in its own process;
``gate_process``: a real ``portgate edge run`` process fed through a FIFO reader; ``shift_events``:
signed tap events for given shifts; ``journal_faults``: journal corruption; ``browser``: Chromium
driven by Playwright; ``wait_until``: poll a condition; ``demo_day``: one ``portgate demo
--keep-serving`` day shared by the tests that only read it. The simulated hardware the demo also starts
(mosquitto, pcscd + vpcd, a virtual card, a serial reader on a pty) lives in ``app.demo``.
"""

"""The top floor: the ``portgate`` command (``app.cli``), ``check-config`` (``app.checkconfig``) and
the demo (``app.demo``). It imports every layer below; nothing imports it (docs/architecture.md)."""

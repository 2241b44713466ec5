"""The ``options`` each reader driver takes from gate.toml, and whether it reads ``uid_format``.

Pure data and one check, with no driver import (``edge.config`` validates a ``[[readers]]`` entry
at start-up and in ``edge check-config`` without loading pyscard or evdev). A driver's
constructor keyword arguments that a file may set are listed here; a value list (``protocol``)
names the accepted texts exactly (case matters: ``"Line"`` is refused, not read as EM4100).
"""

from __future__ import annotations

from collections.abc import Mapping

_NUMBER = (int, float)

# driver -> option -> accepted type(s) or tuple of accepted values (texts)
DRIVER_OPTIONS: dict[str, dict[str, object]] = {
    # drivers.serial_rfid: Em4100SerialReader / LineSerialReader
    "serial": {"protocol": ("em4100", "line"), "baudrate": int, "debounce_ms": int,
               "watchdog_s": _NUMBER},
    "pcsc": {"poll_ms": int},  # drivers.pcsc.PcscReader
    "wedge": {"burst_timeout_ms": int, "debounce_ms": int, "grab": bool},  # drivers.wedge.WedgeReader
    "fake": {},
    "fifo": {},
}


def reads_numbers(driver: str, options: Mapping[str, object]) -> bool:
    """True for the readers that read a typed/printed number in ``uid_format`` (a line serial
    reader, a keyboard wedge); the others produce the whole UID and ignore it."""
    return driver == "wedge" or (driver == "serial" and options.get("protocol") == "line")


def option_problem(driver: str, options: Mapping[str, object], uid_format: str) -> str | None:
    """The first problem of ``options``/``uid_format`` for ``driver``, as ``options.<name>: ...``
    or ``uid_format: ...``; None if they are fine."""
    known = DRIVER_OPTIONS.get(driver, {})
    for name, value in options.items():
        if name not in known:
            accepted = ", ".join(sorted(known)) or "none"
            return f"options.{name}: not an option of driver {driver!r} (accepted: {accepted})"
        want = known[name]
        if isinstance(want, tuple) and all(isinstance(v, str) for v in want):
            if value not in want:
                return f"options.{name}: {value!r} is not one of {', '.join(want)}"
        elif isinstance(value, bool) and want is not bool:
            return f"options.{name}: expected a number, got {value!r}"
        elif not isinstance(value, want):  # type: ignore[arg-type]
            return f"options.{name}: {value!r} has the wrong type"
    if uid_format != "hex" and not reads_numbers(driver, options):
        return (f"uid_format: {uid_format!r} applies only to a number-reading reader (serial with "
                f"protocol = \"line\", wedge); this {driver} reader produces the whole UID")
    return None

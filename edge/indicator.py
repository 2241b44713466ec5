"""What the watchman sees and hears: the ``Indicator`` protocol and its implementations.

``show(decision, lang, *, event=None)`` is called by the gate loop only AFTER the decision's event is
committed to the journal (STYLE.md 7); ``event`` is that journaled event (seq, event id) when there
is one. Colours: green = ADMIT, blue = EXIT, red = DENY, amber = INSPECTOR mode and ABOARD (G9:
already aboard, nothing changed; the relay stays closed).

- ``ConsoleIndicator``: one coloured line on a terminal (dev machine, demo).
- ``RecordingIndicator``: keeps every call (tests).
- ``FileIndicator``: appends one JSON line per decision to a file or FIFO (crash test, demo logs).
- ``GpioIndicator``: LEDs, buzzer and a relay via gpiozero (optional extra ``pi``), imported lazily.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Protocol, TextIO

from edge.rules.model import Decision, Outcome
from portgate.i18n import LANGS, gate_words
from wire.events import Event

COLOURS = {Outcome.ADMIT: "green", Outcome.EXIT: "blue", Outcome.DENY: "red", Outcome.INSPECTOR: "amber",
           Outcome.ABOARD: "amber"}
_ANSI = {"green": "\x1b[1;32m", "blue": "\x1b[1;34m", "red": "\x1b[1;31m", "amber": "\x1b[1;33m"}
# the indicator's head words, from the catalogs (msgids indicator.<outcome>; docs/i18n.md), read from
# the gate's part of them (``portgate.i18n.gate_words``), not the office's whole catalogs
_WORDS = {lang: {o: gate_words(lang).gettext(msgid) for o in Outcome if (msgid := "indicator." + o.value)}
          for lang in LANGS}


class Indicator(Protocol):
    def show(self, decision: Decision, lang: str = "pt", *, event: Event | None = None) -> None: ...


def message(decision: Decision, lang: str) -> str:
    """The watchman's text in ``lang`` (pt-BR first; English if asked and available)."""
    if lang == "en" and decision.message_en:
        return decision.message_en
    return decision.message_pt or decision.message_en


def render(decision: Decision, lang: str = "pt") -> str:
    """``[green] ENTRADA LIBERADA: <message> (G6, G7)`` without terminal colours."""
    words = _WORDS.get(lang, _WORDS["pt"])[decision.outcome]
    rules = f" ({', '.join(decision.rules_failed)})" if decision.rules_failed else ""
    text = message(decision, lang)
    who = f" [{decision.registration}]" if decision.registration else ""
    return f"[{COLOURS[decision.outcome]}] {words}{who}: {text}{rules}" if text else f"[{COLOURS[decision.outcome]}] {words}{who}{rules}"


class ConsoleIndicator:
    """Prints the watchman's view (colour, message in pt-BR, failed rule ids) to ``stream``."""

    def __init__(self, stream: TextIO | None = None, *, colour: bool | None = None) -> None:
        self.stream = stream or sys.stdout
        self.colour = self.stream.isatty() if colour is None else colour

    def show(self, decision: Decision, lang: str = "pt", *, event: Event | None = None) -> None:
        line = render(decision, lang)
        if self.colour:
            line = f"{_ANSI[COLOURS[decision.outcome]]}{line}\x1b[0m"
        print(line, file=self.stream, flush=True)


class RecordingIndicator:
    """Keeps ``(decision, lang, event)`` of every call, for tests."""

    def __init__(self) -> None:
        self.shown: list[tuple[Decision, str, Event | None]] = []
        self._lock = threading.Lock()

    def show(self, decision: Decision, lang: str = "pt", *, event: Event | None = None) -> None:
        with self._lock:
            self.shown.append((decision, lang, event))

    @property
    def decisions(self) -> list[Decision]:
        return [d for d, _, _ in self.shown]


class FileIndicator:
    """Appends one JSON object per decision (outcome, colour, message, rules, seq, event_id, uid) to
    ``path`` with a single ``write`` on an ``O_APPEND`` descriptor: a line is either whole or absent,
    even if the process is killed (used by the crash test)."""

    def __init__(self, path: str) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    def show(self, decision: Decision, lang: str = "pt", *, event: Event | None = None) -> None:
        record = {
            "outcome": decision.outcome.value, "colour": COLOURS[decision.outcome],
            "message": message(decision, lang), "rules": list(decision.rules_failed),
            "flags": [f.value for f in decision.flags],
            "registration": decision.registration,
            "seq": event.seq if event else None, "event_id": event.event_id if event else None,
            # without an event (the journal refused it: disk full) the UID the read named
            "uid": getattr(event.payload, "uid", None) if event else decision.card_uid,
        }
        os.write(self._fd, (json.dumps(record, ensure_ascii=False) + "\n").encode())

    def close(self) -> None:
        os.close(self._fd)


class GpioIndicator:
    """LEDs (green/red/amber), a buzzer and an optional relay on a Raspberry Pi via gpiozero.

    ADMIT: green LED and relay pulse, one short beep. EXIT: green LED, relay pulse. DENY: red LED,
    three beeps. INSPECTOR: amber LED. ``pins``: ``edge.config.GpioConfig``. Raises ``ConfigError``
    if gpiozero is not installed (``pip install portgate[pi]``) or the pins cannot be opened.
    """

    def __init__(self, pins, *, console: Indicator | None = None) -> None:
        from portgate.errors import ConfigError

        try:
            import gpiozero  # noqa: PLC0415 (optional extra, only on a Pi)
        except ImportError as exc:
            raise ConfigError("gpiozero is not installed (pip install 'portgate[pi]')", key="indicator") from exc
        try:
            self._green = gpiozero.LED(pins.green) if pins.green else None
            self._red = gpiozero.LED(pins.red) if pins.red else None
            self._amber = gpiozero.LED(pins.amber) if pins.amber else None
            self._buzzer = gpiozero.Buzzer(pins.buzzer) if pins.buzzer else None
            self._relay = gpiozero.OutputDevice(pins.relay) if pins.relay else None
        except Exception as exc:  # gpiozero raises many types (BadPinFactory, PinInvalidPin, ...)
            raise ConfigError(f"cannot open GPIO pins: {exc}", key="gpio") from exc
        self._pulse = pins.pulse_s
        self._console = console

    def show(self, decision: Decision, lang: str = "pt", *, event: Event | None = None) -> None:
        colour = COLOURS[decision.outcome]
        led = {"green": self._green, "blue": self._green, "red": self._red, "amber": self._amber}[colour]
        for other in (self._green, self._red, self._amber):
            if other is not None and other is not led:
                other.off()
        if led is not None:
            led.blink(on_time=self._pulse, off_time=0, n=1, background=True)
        if self._relay is not None and decision.outcome in (Outcome.ADMIT, Outcome.EXIT):
            self._relay.blink(on_time=self._pulse, off_time=0, n=1, background=True)
        if self._buzzer is not None:
            beeps = 3 if decision.outcome is Outcome.DENY else 1
            self._buzzer.beep(on_time=0.1, off_time=0.1, n=beeps, background=True)
        if self._console is not None:
            self._console.show(decision, lang, event=event)


class NullIndicator:
    def show(self, decision: Decision, lang: str = "pt", *, event: Event | None = None) -> None:
        return None

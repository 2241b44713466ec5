"""The one form of a time on the wire: an aware datetime in UTC, written ``…Z`` (RFC 3339).

``UtcDatetime`` is the field type of every time in a message: decoding refuses a time without an
offset (``msgspec.ValidationError``, so ``BadInput`` from the decoders), and the JSON Schemas say
``format: date-time``. ``UtcMessage`` (the base of the downlink and status messages) turns every
aware time into UTC when a message is built or decoded, so ``-03:00`` from a database session's
time zone never reaches the wire. Events are built in UTC by the gate's journal and are not
rewritten on decode: their MAC covers the bytes as the gate signed them.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import msgspec

from portgate.timeutil import require_aware

UtcDatetime = Annotated[dt.datetime, msgspec.Meta(tz=True)]


class UtcMessage(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Base of messages whose times are normalised to UTC (see the module docstring)."""

    def __post_init__(self) -> None:
        for name in self.__struct_fields__:
            value = getattr(self, name)
            if isinstance(value, dt.datetime):
                try:
                    utc = require_aware(value, name)
                except ValueError:
                    raise ValueError(f"{name}: time has no UTC offset") from None
                if utc is not value:
                    msgspec.structs.force_setattr(self, name, utc)

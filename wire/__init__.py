"""The wire contract shared by the gate (``edge``) and the office (``central``): every MQTT message
type, the topic tree and the event MAC. Neither side imports the other's internals; both import this.
"""

SCHEMA_VERSION = 1
#: default cap of one photo file (a passport-style JPEG is 20-60 KB); ``wire.downlink``'s photo messages.
#: Here, not in ``wire.downlink``, so the gate's photo store (and the watchman's screen) reads it
#: without the downlink's roster types (``portgate.records``: 0.8 MB of the screen's 40, issue 33).
PHOTO_MAX_BYTES = 256 * 1024

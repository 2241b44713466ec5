"""The wire contract shared by the gate (``edge``) and the office (``central``): every MQTT message
type, the topic tree and the event MAC. Neither side imports the other's internals; both import this.
"""

SCHEMA_VERSION = 1

"""Why an MQTT connection failed, in one log line naming the cause (``wire.connection`` wires it
into every paho client it makes).

paho reports every failure alike (a refused connect, a closed socket, "Unspecified error"); the
installer needs the cause. Each failure streak gets one warning line (again every 10th attempt),
with ``cause`` saying what is wrong and ``hint`` what to change:

- ``mqtt.tls_untrusted``: the broker's certificate is not signed by ``tls_ca_file`` (wrong CA);
- ``mqtt.tls_name_mismatch``: the certificate's CN/SAN does not match ``[mqtt] host``;
- ``mqtt.tls_failed``: the TLS handshake broke off (a TLS client on a plain listener, a protocol
  mismatch);
- ``mqtt.tls_expected``: plain MQTT to a port that speaks TLS (set ``tls_ca_file``): the broker
  closed the connection before its CONNACK and a TLS probe of the port succeeded;
- ``mqtt.closed_before_connack``: closed before the CONNACK, and the port does not speak TLS;
- ``mqtt.login_refused``: the CONNACK refused the login (wrong password, unknown user, not
  authorised, banned, client id refused); the disconnect that follows is not counted as flapping;
- ``mqtt.unreachable``: nothing accepts the TCP connection (wrong host/port, broker down).

``mqtt.session_flapping`` (``log_disconnect``) is left for a session that was established and is
then thrown off repeatedly.
"""

from __future__ import annotations

import socket
import ssl
import sys

import structlog

log = structlog.get_logger("wire.connection")

_LOGIN_REFUSED = {  # MQTT v5 CONNACK reason codes -> the cause in words
    0x85: "the broker refused the client id",
    0x86: "bad user name or password",
    0x87: "not authorised: the broker refused this user (wrong password, or the user may not connect)",
    0x8A: "this client is banned by the broker",
    0x8C: "bad authentication method",
}
_HOSTNAME_MISMATCH = 62  # X509_V_ERR_HOSTNAME_MISMATCH


class Diagnosis:
    """Connection state of one paho client and the cause lines (see module doc). ``config`` is
    the ``wire.connection.MqttConfig``; all methods run on paho's network thread."""

    def __init__(self, config, client_id: str) -> None:
        self.config = config
        self.client_id = client_id
        self.connacked = False  # a CONNACK arrived on the current connection
        self.refused = False  # ... and it refused the login
        self._counts: dict[str, int] = {}

    # -- events --------------------------------------------------------------------------------
    def connect_failed(self, exc: BaseException | None) -> None:
        """TCP or TLS connect failed (paho's ``on_connect_fail``; ``exc`` from ``sys.exc_info``)."""
        self.connacked = self.refused = False
        tls = bool(self.config.tls_ca_file)
        if isinstance(exc, ssl.SSLCertVerificationError):
            if exc.verify_code == _HOSTNAME_MISMATCH or "hostname mismatch" in str(exc).lower():
                self._say("mqtt.tls_name_mismatch",
                          cause=f"the broker's certificate does not name host {self.config.host!r} (CN/SAN)",
                          hint="make [mqtt] host the name or address in the certificate, or reissue it")
            else:
                self._say("mqtt.tls_untrusted",
                          cause=f"the broker's certificate is not signed by tls_ca_file: {exc.verify_message}",
                          hint=f"use the CA that signed the broker's certificate ({self.config.tls_ca_file})")
        elif tls and isinstance(exc, (ssl.SSLError, ConnectionResetError, ConnectionAbortedError, EOFError)):
            self._say("mqtt.tls_failed", cause=f"the TLS handshake failed: {type(exc).__name__}: {exc}",
                      hint=f"is {self.config.host}:{self.config.port} the broker's TLS listener? a plain "
                           "listener resets a TLS client")
        else:
            self._say("mqtt.unreachable", cause=f"{type(exc).__name__}: {exc}" if exc else "connect failed",
                      hint="check [mqtt] host and port and that the broker runs")

    def connack(self, reason_code) -> None:
        """A CONNACK arrived (success or refusal)."""
        self.connacked = True
        self.refused = bool(getattr(reason_code, "is_failure", False))
        if not self.refused:
            self._counts.clear()
            return
        value = getattr(reason_code, "value", None)
        user = self.config.username
        who = f"username {user!r}" if user else "an anonymous client (no [mqtt] username)"
        self._say("mqtt.login_refused", reason=str(reason_code),
                  cause=f"{_LOGIN_REFUSED.get(value, 'login refused')} ({who})",
                  hint=("check the password in password_file against the broker's password file; a "
                        "gate's MQTT username is its gate id") if user else
                       "set [mqtt] username and password_file")

    def disconnected(self, reason_code) -> bool:
        """The connection closed. Returns True if the session had been established (a CONNACK
        accepted it): only those count towards flapping."""
        was_session = self.connacked and not self.refused
        if not self.connacked and getattr(reason_code, "is_failure", False):
            if not self.config.tls_ca_file and _speaks_tls(self.config.host, self.config.port):
                self._say("mqtt.tls_expected",
                          cause=f"{self.config.host}:{self.config.port} speaks TLS and the client sent plain MQTT",
                          hint="set [mqtt] tls_ca_file (the CA of the broker's certificate), or use the plain port")
            else:
                self._say("mqtt.closed_before_connack", reason=str(reason_code),
                          cause="the broker closed the connection before answering CONNECT",
                          hint="see the broker's log for this client id")
        self.connacked = self.refused = False
        return was_session

    # -- output ----------------------------------------------------------------------------------
    def _say(self, event: str, **fields) -> None:
        n = self._counts[event] = self._counts.get(event, 0) + 1
        if n == 1 or n % 10 == 0:
            log.warning(event, client_id=self.client_id, host=self.config.host, port=self.config.port,
                        attempts=n, **fields)


def current_exception() -> BaseException | None:
    """The exception being handled (paho calls ``on_connect_fail`` inside its ``except``)."""
    return sys.exc_info()[1]


def _speaks_tls(host: str, port: int, timeout: float = 2.0) -> bool:
    """True if ``host:port`` completes a TLS handshake (certificate not checked: a probe only)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        with socket.create_connection((host, port), timeout=timeout) as raw:
            with ctx.wrap_socket(raw, server_hostname=host):
                return True
    except (OSError, ssl.SSLError):
        return False

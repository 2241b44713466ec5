"""How gates and the office connect to the broker: one config struct and one paho client factory.

Both sides use paho-mqtt 2.x with ``CallbackAPIVersion.VERSION2`` and MQTT v5. Sessions are always
persistent: ``clean_start=False`` with a session expiry (DESIGN.md: a v5 session first created with
``clean_start=True`` is lost when mosquitto restarts, so we never use it). ``protocol = "3.1.1"``
(a NATS cluster's MQTT listener, issue 37) uses MQTT 3.1.1 with ``clean_session=False`` instead,
and ``hosts`` lists several brokers, the next one tried on every reconnect.
"""

from __future__ import annotations

import ssl
import struct
import time
from collections.abc import Callable

import msgspec
import paho.mqtt.client as mqtt
import structlog
from paho.mqtt.enums import CallbackAPIVersion
from paho.mqtt.exception import MalformedPacket
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from portgate.config import read_secret
from wire.diagnosis import Diagnosis, current_exception
from wire.qos1_batch import Qos1Batch
from wire.mqtt_config import MqttConfig, parse_host  # noqa: F401 - re-exported: the config struct lives apart from paho


class _Client(Qos1Batch, mqtt.Client):
    """paho's client whose ``on_connect`` setter wraps the callback, so ``diagnosis`` sees every
    CONNACK whoever sets the callback (the gate's sync, the office's ingest)."""

    diagnosis: Diagnosis | None = None  # set by make_client right after construction
    brokers: list[tuple[str, int]] = []  # MqttConfig.brokers(); several: rotated on reconnect
    _connects = 0

    def reconnect(self):
        """paho's reconnect, first moved to the next of several ``brokers`` (not before the first
        connect): a gate whose node died finds another node of the cluster."""
        if len(self.brokers) > 1:
            if self._connects:
                self._host, self._port = self.brokers[self._connects % len(self.brokers)]
                if self.diagnosis is not None:  # its lines name the broker tried now
                    self.diagnosis.config = msgspec.structs.replace(self.diagnosis.config, host=self._host,
                                                                    port=self._port)
            self._connects += 1
        return super().reconnect()

    @property
    def on_connect(self):
        return mqtt.Client.on_connect.fget(self)

    @on_connect.setter
    def on_connect(self, func) -> None:
        diagnosis = self.diagnosis
        if diagnosis is None:
            mqtt.Client.on_connect.fset(self, func)
            return

        def on_connect(client, userdata, flags, reason_code, properties) -> None:
            diagnosis.connack(reason_code)
            if func is not None:
                func(client, userdata, flags, reason_code, properties)

        mqtt.Client.on_connect.fset(self, on_connect)

    # -- reading: one recv() per socket buffer, every whole packet in it per select() ----------------
    _rsock = None  # the socket ``_rbuf`` was read from (a new connection discards what is left)
    _rbuf = b""
    _rpos = 0

    def _sock_recv(self, bufsize: int) -> bytes:
        """paho asks for 1 byte (the command), then the length byte by byte, then the rest: one
        system call each, 4 per message measured. Here one ``recv`` of up to ``READ_CHUNK`` bytes
        serves them all from memory. Raises what paho's own raises (``BlockingIOError`` when
        nothing is buffered and the socket has nothing)."""
        if not self._buffered():
            data = self._fill()
            if not data:
                return data
        pos = self._rpos
        self._rpos = pos + bufsize
        return self._rbuf[pos:pos + bufsize]

    # A callback ``(mid, topic, payload)`` (``int``, the topic's UTF-8 ``bytes``, ``bytes``) taking
    # the fast path's QoS 1 PUBLISHes (no properties; dup and retain flags not passed) instead of
    # ``on_message``: no ``MQTTMessage``, no topic decoding, no filter matching. With
    # ``manual_ack`` the caller acknowledges them (``ack_many``). None: all go to ``on_message``.
    on_raw_publish: Callable[[int, bytes, bytes], None] | None = None

    def _packet_read(self):
        """A packet wholly in the read buffer cut out in one step (paho reads command, length bytes
        and rest apart); PUBLISH to ``on_raw_publish``, PUBACK to ``_fast_puback`` when they apply."""
        if self._in_packet["command"] != 0:
            return super()._packet_read()
        if not self._buffered():
            try:
                data = self._fill()
            except BlockingIOError:
                return mqtt.MQTTErrorCode.MQTT_ERR_AGAIN
            except OSError:
                return super()._packet_read()  # paho's reader meets the error again and reports it
            if not data:
                return super()._packet_read()  # the broker closed the connection: paho's handling
        buf, start = self._rbuf, self._rpos
        n = len(buf)
        length, mult, i = 0, 1, start + 1
        while i < n and i < start + 5:
            byte = buf[i]
            length += (byte & 127) * mult
            mult <<= 7
            i += 1
            if not byte & 128:
                break
        else:
            return super()._packet_read()  # the length runs past the buffer (or over 4 bytes)
        end = i + length
        if end > n:
            return super()._packet_read()
        self._rpos = end
        header = buf[start]
        if header == _PUBACK and (rc := self._fast_puback(buf, i, length)) is not None:
            return rc  # wire.qos1_batch
        raw = self.on_raw_publish
        if raw is not None and (header & 0xF6) == 0x32 and self._fast_publish():
            t_end = i + 2 + ((buf[i] << 8) | buf[i + 1]) if length >= 5 else end
            if t_end + 3 <= end and buf[t_end + 2] == 0:
                mid = (buf[t_end] << 8) | buf[t_end + 1]
                raw(mid, buf[i + 2:t_end], buf[t_end + 3:end])
                return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS if self._manual_ack else self._send_puback(mid)
        self._in_packet = {"command": header, "have_remaining": 1, "remaining_count": list(buf[start + 1:i]),
                           "remaining_mult": mult, "remaining_length": length, "packet": bytearray(buf[i:end]),
                           "to_process": 0, "pos": 0}
        try:
            rc = self._packet_handle()
        except MalformedPacket:
            rc = mqtt.MQTTErrorCode.MQTT_ERR_PROTOCOL
        self._in_packet = {"command": 0, "have_remaining": 0, "remaining_count": [], "remaining_mult": 1,
                           "remaining_length": 0, "packet": bytearray(b""), "to_process": 0, "pos": 0}
        return rc

    def _fast_publish(self) -> bool:
        """MQTT v5 and no paho logger: the PUBLISH fast paths apply."""
        return self._protocol == mqtt.MQTTv5 and self._logger is None and self._on_log is None

    def ack_many(self, mids) -> None:
        """Acknowledge the QoS 1 messages ``mids`` (``manual_ack``): their PUBACKs queued as one
        write (``client.ack`` queues a packet, and wakes the network thread, per message)."""
        if mids:
            self._packet_queue(_PUBACK, struct.pack(f">{len(mids)}I", *[_PUBACK_WORD | m for m in mids]), 0, 1)

    def loop_read(self, max_packets: int = 1):
        """Handle up to ``PACKETS_PER_READ`` packets per readable socket (paho's: one, so each
        message cost a ``select()``), stopping when the socket has nothing more."""
        for _ in range(max(max_packets, PACKETS_PER_READ)):
            if self._sock is None:
                return mqtt.MQTTErrorCode.MQTT_ERR_NO_CONN
            rc = self._packet_read()
            if rc > 0:
                return self._loop_rc_handle(rc)
            if rc == mqtt.MQTTErrorCode.MQTT_ERR_AGAIN:
                return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
        return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS

    def _fill(self) -> bytes:
        """One ``recv`` of up to ``READ_CHUNK`` bytes into the read buffer (what it returned; empty:
        the connection closed). Raises what paho's ``_sock_recv`` raises."""
        self._rbuf, self._rpos, self._rsock = b"", 0, None
        data = super()._sock_recv(READ_CHUNK)
        if data:
            self._rbuf, self._rsock = data, self._sock
            with self._msgtime_mutex:  # (paho notes it per packet; here per read, as the bytes came)
                self._last_bytes_received = mqtt.time_func()
        return data

    def _buffered(self) -> bool:
        return self._rsock is not None and self._rsock is self._sock and self._rpos < len(self._rbuf)

    def _loop(self, timeout: float = 1.0):
        """paho's loop step; bytes already read into the buffer (left by ``PACKETS_PER_READ``) are
        handled first and ``select()`` then does not wait: the socket would not wake it for them."""
        if self._buffered():
            rc = self.loop_read()
            if rc:
                return rc
            if self._buffered():
                timeout = 0.0
        return super()._loop(timeout)

    def _handle_publish(self):
        """paho's PUBLISH handling, with a fast path for the common packet: MQTT v5, QoS 1, no
        properties, no paho logger. paho builds and clears a ``Properties`` object for every
        message (27 names walked with ``hasattr`` and ``str.replace``: about a third of an ingest
        worker's CPU, docs/performance.md); here the message gets one shared empty ``Properties``
        (read-only for callbacks) and everything else as paho sets it. Any other packet (QoS 0 or
        2, properties present, too short, MQTT 3.1.1, a logger set) goes through paho's own code."""
        packet, header = self._in_packet["packet"], self._in_packet["command"]
        if (header & 0x06) != 0x02 or len(packet) < 5 or not self._fast_publish():
            return super()._handle_publish()
        end = 2 + ((packet[0] << 8) | packet[1])
        if len(packet) < end + 3 or packet[end + 2] != 0:
            return super()._handle_publish()
        mid = (packet[end] << 8) | packet[end + 1]
        raw = self.on_raw_publish
        if raw is not None:
            raw(mid, bytes(packet[2:end]), bytes(packet[end + 3:]))
            return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS if self._manual_ack else self._send_puback(mid)
        message = mqtt.MQTTMessage(mid=mid, topic=bytes(packet[2:end]))
        message.dup = (header & 0x08) != 0
        message.qos = 1
        message.retain = (header & 0x01) != 0
        message.properties = _NO_PROPERTIES
        message.payload = bytes(packet[end + 3:])
        message.timestamp = mqtt.time_func()
        self._handle_on_message(message)
        if self._manual_ack:
            return mqtt.MQTTErrorCode.MQTT_ERR_SUCCESS
        return self._send_puback(mid)


_PUBACK = 0x40
_PUBACK_WORD = 0x40020000  # a v5 PUBACK with reason "success" left out: 0x40, length 2, then the mid
_NO_PROPERTIES = Properties(PacketTypes.PUBLISH)  # shared by the fast path's messages (never written)
READ_CHUNK = 65536  # bytes asked of the socket per recv()
PACKETS_PER_READ = 200  # packets handled per readable socket before writes (PUBACKs) get their turn


def make_client(config: MqttConfig, client_id: str, *, manual_ack: bool = False) -> mqtt.Client:
    """A paho v5 client with credentials/TLS from ``config`` and the reconnect back-off set; every
    connection failure is logged with its cause (``wire.diagnosis``).

    Raises ``ConfigError`` if a password file is unreadable or too open.
    """
    v5 = config.protocol == "5"
    client = _Client(
        CallbackAPIVersion.VERSION2,
        client_id=client_id,
        protocol=mqtt.MQTTv5 if v5 else mqtt.MQTTv311,
        clean_session=None if v5 else False,
        manual_ack=manual_ack,
    )
    client.brokers = config.brokers()
    host, port = client.brokers[0]
    client.diagnosis = diagnosis = Diagnosis(msgspec.structs.replace(config, host=host, port=port), client_id)
    client.on_connect = None
    if config.username:
        password = read_secret(config.password_file, what="MQTT password").decode() if config.password_file else None
        client.username_pw_set(config.username, password)
    if config.tls_ca_file:
        client.tls_set(
            ca_certs=config.tls_ca_file,
            certfile=config.tls_cert_file,
            keyfile=config.tls_key_file,
            tls_version=ssl.PROTOCOL_TLS_CLIENT,
        )
    client.reconnect_delay_set(min_delay=max(1, int(config.reconnect_min_s)), max_delay=int(config.reconnect_max_s))
    client.on_connect_fail = lambda _client, _userdata: diagnosis.connect_failed(current_exception())
    client.on_disconnect = log_disconnect(client_id, diagnosis=diagnosis)
    return client


def log_disconnect(client_id: str, *, window_s: float = 60.0, flapping_after: int = 3,
                   diagnosis: Diagnosis | None = None):
    """An ``on_disconnect`` callback that logs why the broker closed the session. A connection
    that never became a session (closed before its CONNACK, login refused) is explained by
    ``diagnosis`` instead. Being thrown off an established session ``flapping_after`` times within
    ``window_s`` is logged as an error: another process using the same client id (two offices or
    two gates configured alike take turns on the broker; v5 reason "Session taken over", which
    mosquitto may report as an unspecified error), or the broker's ACL refusing what the client
    publishes (mosquitto then closes the connection)."""
    log = structlog.get_logger("wire.connection")
    recent: list[float] = []

    def on_disconnect(_client, _userdata, _flags, reason_code, _properties) -> None:
        if diagnosis is not None and not diagnosis.disconnected(reason_code):
            return  # never a session: the cause line is already written
        if not getattr(reason_code, "is_failure", False):
            return  # our own clean disconnect
        now = time.monotonic()
        recent[:] = [t for t in recent if now - t < window_s] + [now]
        reason = str(reason_code)
        log.warning("mqtt.disconnected", client_id=client_id, reason=reason)
        if "taken over" in reason.lower() or len(recent) == flapping_after:
            log.error("mqtt.session_flapping", client_id=client_id, disconnects=len(recent),
                      window_s=window_s, reason=reason,
                      hint="another client may use this client id (give each process its own), or "
                           "the broker's ACL refuses a topic it publishes (see the broker's log)")

    return on_disconnect


def connect_properties(config: MqttConfig, *, receive_maximum: int | None = None) -> Properties:
    """CONNECT properties: the session expiry and how many unacked messages we accept at once."""
    props = Properties(PacketTypes.CONNECT)
    props.SessionExpiryInterval = config.session_expiry_s
    props.ReceiveMaximum = min(65535, receive_maximum or config.receive_maximum)
    return props


def start(client: mqtt.Client, config: MqttConfig, *, receive_maximum: int | None = None) -> None:
    """Connect asynchronously with ``clean_start=False`` (MQTT 3.1.1: the client's
    ``clean_session=False``) to the first broker and run paho's network thread, which reconnects
    with back-off forever (also when the broker is down at start), to the next broker each time."""
    host, port = config.brokers()[0]
    if config.protocol == "3.1.1":
        client.connect_async(host, port, keepalive=config.keepalive_s)
    else:
        client.connect_async(
            host,
            port,
            keepalive=config.keepalive_s,
            clean_start=False,
            properties=connect_properties(config, receive_maximum=receive_maximum),
        )
    client.loop_start()

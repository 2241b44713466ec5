"""A subscriber that takes a topic filter's messages and throws them away, in its own process.

A gate keeps a row in its outbox while the broker answers "No matching subscribers" (the office is
not subscribed: ``edge.sync.service``), so a benchmark that drains a gate needs someone subscribed,
as the office is in production. ``Sink`` runs that subscriber as a child process (its CPU is not
the benchmark's GIL) at QoS 1, like the office ingest, so the broker does the same forwarding work
for the baseline and for the code measured.

    with Sink(broker.host, broker.port, "portgate/v1/bench/gate/+/events"):
        ...   # publishes are routed to the sink

Raises ``BrokerUnavailable`` if the subscription is not confirmed within ``timeout`` seconds.
"""

from __future__ import annotations

import subprocess
import sys
import threading

from portgate.errors import BrokerUnavailable


class Sink:
    """A throw-away QoS 1 subscriber on ``topic`` at ``host:port`` while the ``with`` block runs."""

    def __init__(self, host: str, port: int, topic: str, *, timeout: float = 10.0) -> None:
        self.args = [sys.executable, "-m", "testkit.sink", host, str(port), topic]
        self.timeout = timeout
        self.proc: subprocess.Popen | None = None

    def __enter__(self) -> Sink:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        line = _first_line(self.proc, self.timeout)
        if line.strip() != "subscribed":
            self.__exit__()
            raise BrokerUnavailable(f"sink subscriber on {self.args[3:]} did not subscribe within {self.timeout} s")
        return self

    def __exit__(self, *_exc) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def _first_line(proc: subprocess.Popen, timeout: float) -> str:
    """The child's first stdout line, or "" after ``timeout`` seconds (the child is left running)."""
    out: list[str] = []
    reader = threading.Thread(target=lambda: out.append(proc.stdout.readline()), daemon=True)
    reader.start()
    reader.join(timeout)
    return out[0] if out else ""


def _main(host: str, port: str, topic: str) -> None:
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    client = mqtt.Client(CallbackAPIVersion.VERSION2, protocol=mqtt.MQTTv5)
    client.on_connect = lambda c, _u, _f, _rc, _p: c.subscribe(topic, qos=1)

    def on_subscribe(_c, _u, _mid, reason_codes, _p) -> None:
        print("subscribed" if not reason_codes[0].is_failure else f"refused {reason_codes[0]}", flush=True)

    client.on_subscribe = on_subscribe
    client.connect(host, int(port))
    client.loop_forever()


if __name__ == "__main__":
    _main(*sys.argv[1:4])

"""The wire contract: topics, message round trips, generated files up to date."""

from __future__ import annotations

import datetime as dt

import pytest

from portgate.errors import BadInput
from wire import downlink as dl
from wire import generate, topics


def test_topic_tree():
    assert topics.gate_events("santos", "g1") == "portgate/v1/santos/gate/g1/events"
    assert topics.gate_status("santos", "g1") == "portgate/v1/santos/gate/g1/status"
    assert topics.gate_cmd("santos", "g1") == "portgate/v1/santos/gate/g1/cmd"
    assert topics.downlink("santos", "escala", "delta") == "portgate/v1/santos/down/escala/delta"
    assert topics.shared_gate_events("santos") == "$share/ledger/portgate/v1/santos/gate/+/events"
    assert topics.parse_gate_topic("portgate/v1/santos/gate/g1/events") == ("santos", "g1", "events")


@pytest.mark.parametrize("bad", ["", "a/b", "+", "#", " g1", "$x"])
def test_ids_that_would_break_the_topic_tree_are_refused(bad):
    with pytest.raises(BadInput):
        topics.gate_events("santos", bad)


def test_a_command_round_trips_and_a_wrong_schema_version_is_refused():
    cmd = dl.ReplayCommand(seq_from=3, seq_to=9, at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC))
    assert dl.decode(dl.encode(cmd), dl.Command) == cmd
    with pytest.raises(BadInput, match="schema"):
        dl.decode(dl.encode(cmd).replace(b'"schema":1', b'"schema":99'), dl.Command)
    with pytest.raises(BadInput, match="malformed"):
        dl.decode(b"[]", dl.Command, where="t")


def test_committed_schemas_and_asyncapi_are_up_to_date():
    for rel, text in generate.render().items():
        path = generate.HERE / rel
        assert path.exists() and path.read_text(encoding="utf-8") == text, f"run `portgate wire generate` ({rel})"


def test_an_unreachable_broker_is_logged_as_a_warning():
    import time

    from structlog.testing import capture_logs

    from wire.connection import MqttConfig, make_client, start

    config = MqttConfig(host="127.0.0.1", port=1, reconnect_min_s=1, reconnect_max_s=1)
    client = make_client(config, "probe-unreachable")
    with capture_logs() as logs:
        start(client, config)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(e["event"] == "mqtt.unreachable" for e in logs):
            time.sleep(0.05)
        client.loop_stop()
    warning = next(e for e in logs if e["event"] == "mqtt.unreachable")
    assert warning["log_level"] == "warning" and warning["port"] == 1


def test_a_broker_port_out_of_range_is_a_config_error():
    import pytest

    from portgate.config import ConfigError, convert
    from wire.connection import MqttConfig

    with pytest.raises(ConfigError, match="port"):
        convert({"host": "h", "port": 99999}, MqttConfig)


def test_a_second_client_with_the_same_id_is_logged_as_an_error(tmp_path):
    import time

    from structlog.testing import capture_logs

    from app.demo.mosquitto import Mosquitto
    from wire.connection import MqttConfig, make_client, start

    with Mosquitto(tmp_path / "broker") as broker:
        config = MqttConfig(host=broker.host, port=broker.port, reconnect_min_s=1, reconnect_max_s=1)
        first = make_client(config, "same-id")
        with capture_logs() as logs:
            start(first, config)
            time.sleep(0.5)
            second = make_client(config, "same-id")
            start(second, config)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and not any(e["event"] == "mqtt.session_flapping" for e in logs):
                time.sleep(0.05)
            for c in (first, second):
                c.disconnect()
                c.loop_stop()
    taken = [e for e in logs if e["event"] == "mqtt.session_flapping"]
    assert taken and taken[0]["log_level"] == "error" and taken[0]["client_id"] == "same-id"


@pytest.mark.parametrize("field, value", [
    ("sig", "A" * 128), ("sig", "g" + "0" * 127), ("sig", "0" * 127), ("sig", "0" * 130), ("sig", " " + "0" * 127),
    ("prev", "F" * 64), ("prev", "0" * 63), ("prev", "0" * 65), ("prev", "0" * 62 + " 0"),
])
def test_prev_and_sig_are_empty_or_exact_lower_case_hex(field, value):
    import json

    from wire.events import AlertPayload, Event, decode, encode

    ev = Event(event_id="00000000-0000-4000-8000-000000000001", port="p", gate_id="g", boot_id="b", seq=2,
               occurred_at=dt.datetime(2026, 3, 1, tzinfo=dt.UTC), clock_trusted=True, mono_ns=1,
               payload=AlertPayload(code="X", detail=""), prev="ab" * 32, sig="cd" * 64)
    assert decode(encode(ev)) == ev
    doc = json.loads(encode(ev)) | {field: value}
    with pytest.raises(BadInput, match=f"malformed event: {field}: not"):
        decode(json.dumps(doc).encode())

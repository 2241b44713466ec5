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

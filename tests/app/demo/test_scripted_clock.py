import datetime as dt

from edge.scripted_clock import ScriptedClock, set_scripted_time


def test_scripted_clock_follows_the_file(tmp_path):
    path = tmp_path / "clock.json"
    clock = ScriptedClock(path)
    at = dt.datetime(2026, 3, 15, 3, 40, tzinfo=dt.UTC)
    set_scripted_time(path, at)
    first = clock.now()
    assert first.clock_trusted
    assert first.wall == at
    later = dt.datetime(2026, 3, 16, 5, 30, tzinfo=dt.UTC)
    set_scripted_time(path, later)
    assert clock.wall() == later


def test_scripted_clock_keeps_last_value_when_file_is_garbage(tmp_path):
    path = tmp_path / "clock.json"
    clock = ScriptedClock(path)
    at = dt.datetime(2026, 3, 15, 3, 40, tzinfo=dt.UTC)
    set_scripted_time(path, at)
    assert clock.wall() >= at
    path.write_text("not json")
    assert clock.wall() == at

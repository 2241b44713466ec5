"""Rulebook and port configuration loading: a bad file stops with ConfigError naming the key."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from central.pay.calendar import load_port_config
from central.pay.rulebook import load_rulebook, parse_rulebook
from portgate.errors import ConfigError

ROOT = Path(__file__).resolve().parents[3]
DEFAULT = ROOT / "config/rulebooks/decreto-83611-1979.toml"


def raw():
    return tomllib.loads(DEFAULT.read_text(encoding="utf-8"))


def test_both_shipped_rulebooks_and_the_port_example_load():
    assert load_rulebook(DEFAULT).id == "decreto-83611-1979"
    assert load_rulebook(ROOT / "config/rulebooks/example-cct-2026.toml").id == "example-cct-2026"
    port = load_port_config(ROOT / "config/port.example.toml")
    assert Path(port.rulebook) == DEFAULT.resolve()


@pytest.mark.parametrize(("mutate", "key"), [
    (lambda r: r["terms"][0]["lines"][1].__setitem__("rate", "abc"), "$.terms[0].lines[1].rate"),
    (lambda r: r["terms"][0].__setitem__("rounding", "floor"), "$.terms[0].rounding"),
    (lambda r: r["terms"][0].__setitem__("night_window", "19-19"), "$.terms[0].night_window"),
    (lambda r: r["terms"][0]["lines"][6].__setitem__("of", ["P9"]), "$.terms[0].lines[6].of"),
    (lambda r: r["day_wages"][0].__setitem__("amount", "-1"), "$.day_wages[0].amount"),
    (lambda r: r.__setitem__("timezone", "Mars/Olympus"), "$.timezone"),
    (lambda r: r["terms"][0].__setitem__("surprise", 1), "$.terms[0].surprise"),
    (lambda r: r["terms"][0]["functions"].__setitem__("vigia", "0"), "$.terms[0].functions.vigia"),
    (lambda r: r["terms"][0]["lines"][0].__setitem__("when", "sometimes"), "$.terms[0].lines[0].when"),
])
def test_invalid_rulebook_names_the_key(mutate, key):
    data = raw()
    mutate(data)
    with pytest.raises(ConfigError) as exc:
        parse_rulebook(data, path="book.toml")
    assert exc.value.key == key
    assert "book.toml" in str(exc.value)


def test_missing_or_broken_files_are_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_rulebook(tmp_path / "none.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("id = [", encoding="utf-8")
    with pytest.raises(ConfigError, match="TOML"):
        load_rulebook(bad)
    port = tmp_path / "port.toml"
    port.write_text('port_id = "X"\nstate = "SP"\nrulebook = "r.toml"\n'
                    '[[municipal_holidays]]\ndate = "13-45"\nname = "x"\n', encoding="utf-8")
    from central.pay.calendar import HolidayCalendar
    with pytest.raises(ConfigError) as exc:
        HolidayCalendar.from_config(load_port_config(port))
    assert exc.value.key == "municipal_holidays[0].date"

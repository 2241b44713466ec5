"""Gate rulebook files: defaults, versions by effective date, errors naming the key."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from edge.rules.rulebook import GateRulebook, GateRulebooks, default_gate_rulebook, load_gate_rulebook
from portgate.errors import ConfigError

DEFAULT_FILE = Path(__file__).resolve().parents[3] / "config" / "rulebooks" / "gate-default.toml"


def test_shipped_default_file_matches_the_built_in_defaults():
    books = load_gate_rulebook(DEFAULT_FILE)
    book = books.for_date(dt.date(2026, 6, 1))
    assert book == GateRulebook(effective_from=dt.date(2026, 1, 1))
    assert default_gate_rulebook().g7.rest_hours == 11
    assert book.g4.pairing_window_s == 15 and book.g9.debounce_s == 3 and book.g10.inspector_mode_s == 60


def _write(tmp_path, text: str) -> Path:
    path = tmp_path / "gate.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_for_date_picks_the_latest_version_in_force(tmp_path):
    books = load_gate_rulebook(_write(tmp_path, """
[[version]]
effective_from = 2026-07-01
[version.g7]
mode = "warn"
[[version]]
effective_from = 2026-01-01
"""))
    assert books.for_date(dt.date(2026, 6, 30)).g7.mode == "deny"
    assert books.for_date(dt.date(2026, 7, 1)).g7.mode == "warn"
    with pytest.raises(ConfigError, match="no gate rulebook version in force on 2025-12-31"):
        books.for_date(dt.date(2025, 12, 31))


@pytest.mark.parametrize("body,key", [
    ('[version.g7]\nmode = "sometimes"', "$.version[0].g7.mode"),
    ("[version.g6]\nearly_tolerance_min = -1", "$.version[0].g6.early_tolerance_min"),
    ("[version.g9]\ndebounce = 3", "$.version[0].g9.debounce"),
    ("[version.g1]\nenabled = false", "$.version[0].g1"),
    ('port_timezone = "Mars/Olympus"', "$.version[0]"),
    ("[version.g3]\nbooklet_revalidation_month = 13", "$.version[0].g3.booklet_revalidation_month"),
    # minute/hour settings bounded to sane ranges (out of them every entry was an INTERNAL deny)
    ("[version.g9]\nexit_grace_min = 100000000000", "$.version[0].g9.exit_grace_min"),
    ("[version.g9]\nmin_stay_minutes = 1441", "$.version[0].g9.min_stay_minutes"),
    ("[version.g6]\nlate_tolerance_min = 99999999", "$.version[0].g6.late_tolerance_min"),
    ("[version.g7]\nrest_hours = 100000", "$.version[0].g7.rest_hours"),
    ("[version.g8]\ndata_max_age_hours = 100000000", "$.version[0].g8.data_max_age_hours"),
    ("[version.g4]\npairing_window_s = 100000", "$.version[0].g4.pairing_window_s"),
    ("[version.g11]\ncoverage_grace_min = 100000", "$.version[0].g11.coverage_grace_min"),
    ("[version.g3]\nhealth_exam_max_age_months = 100000", "$.version[0].g3.health_exam_max_age_months"),
])
def test_invalid_file_names_the_key(tmp_path, body, key):
    path = _write(tmp_path, f"[[version]]\neffective_from = 2026-01-01\n{body}\n")
    with pytest.raises(ConfigError) as info:
        load_gate_rulebook(path)
    assert info.value.key == key and str(path) in str(info.value)


def test_duplicate_effective_dates_are_refused(tmp_path):
    path = _write(tmp_path, "[[version]]\neffective_from = 2026-01-01\n[[version]]\neffective_from = 2026-01-01\n")
    with pytest.raises(ConfigError, match="same effective_from"):
        load_gate_rulebook(path)


def test_missing_and_unparsable_files(tmp_path):
    with pytest.raises(ConfigError, match="file not found"):
        load_gate_rulebook(tmp_path / "absent.toml")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_gate_rulebook(_write(tmp_path, "[[version]\n"))


def test_G13_an_estimated_clock_or_a_date_before_every_version_decides_on_the_newest_version():
    import datetime as dt

    from edge.rules.rulebook import GateRulebook, GateRulebooks, G7Settings

    books = GateRulebooks(version=(GateRulebook(effective_from=dt.date(2026, 1, 1)),
                                   GateRulebook(effective_from=dt.date(2026, 6, 1), g7=G7Settings(rest_hours=12))))
    march = dt.datetime(2026, 3, 15, 12, tzinfo=dt.UTC)
    assert books.in_force(march).g7.rest_hours == 11  # a trusted date: the version in force
    assert books.in_force(march, estimated=True).g7.rest_hours == 12  # G13: the newest held
    assert books.in_force(dt.datetime(1970, 1, 1, tzinfo=dt.UTC)).g7.rest_hours == 12  # never raises
    assert books.first_start == dt.datetime(2026, 1, 1, 3, tzinfo=dt.UTC)  # local midnight, Sao Paulo


def test_G13_the_built_in_default_rulebook_has_the_shipped_files_first_version_and_boot_floor():
    assert GateRulebooks().first_start == load_gate_rulebook(DEFAULT_FILE).first_start
    assert GateRulebooks().first_start == dt.datetime(2026, 1, 1, 3, tzinfo=dt.UTC)


def test_G4_an_unknown_badge_category_is_refused_naming_the_key(tmp_path):
    path = _write(tmp_path, '[[version]]\neffective_from = 2026-01-01\n'
                  '[version.g4]\ncard_and_badge_categories = ["estivadr"]\n')
    with pytest.raises(ConfigError) as info:
        load_gate_rulebook(path)
    assert "g4.card_and_badge_categories: unknown category 'estivadr'" in str(info.value)
    assert info.value.key == "$.version[0]"


def test_a_version_without_effective_from_is_refused_naming_the_key(tmp_path):
    path = _write(tmp_path, "[[version]]\neffective_from = 2026-01-01\n"
                  "[[version]]\n[version.g7]\nmode = \"warn\"\n")
    with pytest.raises(ConfigError) as info:
        load_gate_rulebook(path)
    assert info.value.key == "$.version[1].effective_from" and str(path) in str(info.value)

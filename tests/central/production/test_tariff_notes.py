"""The model table's notes on the dock-work tariffs (DL 3.844/1941; issue 31 items 5 and 6), through
``portgate production pay``.

C7 (note a): unless the port's table says otherwise for a class, a tariff applies per tonne or
fraction of a tonne: each tally line's tonnes are rounded up before they are multiplied; the 30 t
test of C2 uses the weighed tonnage. C8 (notes d-f): a class the port's table marks pays tariff
no. 2 plus 25% (d, e) or 50% (f), and the labour line names the surcharge.
Hand figures: SD = R$ 180.00 (dl-3844-1941), half day 90.00, hourly 22.50.
"""

from __future__ import annotations

import pytest

from tests.central.production.cli_files import lines, member, pay, refused, write
from tests.central.production.conftest import EXAMPLES

GANG = "gang_id,registration,role,minutes_worked\nT1,W1,worker,300\nT1,W2,worker,300\n"
HEAD = "gang_id,ship,date,period,cargo_class,quantity\n"
TARIFFS = ("cargo_class,unit,labour_tariff,effective_from,per_fraction,surcharge\n"
           "general,t,4.50,2026-01-01,,\n"
           "bulk_weighed,t,3.20,2026-01-01,no,\n"
           "cement,t,4.00,2026-01-01,,e\n"
           "green_hides_in_brine,t,4.00,2026-01-01,,f\n"
           "explosives,t,4.00,2026-01-01,,d\n")


def _tally(*rows: str) -> str:
    return HEAD + "".join(f"T1,9123456,2026-03-10,07-13,{r}\n" for r in rows)


def test_c7_each_line_per_tonne_or_fraction_and_the_30_t_test_on_the_weighed_tonnage(tmp_path, capsys):
    # C7: general 15.2 t → 16 t × 4.50 = 72.00; general 14.3 t → 15 t × 4.50 = 67.50 (today:
    #   68.40 + 64.35). Labour 139.50; 2 quotas: 69.75 each.
    # C2: weighed 15.2 + 14.3 = 29.5 t, not more than 30 t (the rounded 31 t would be): half day
    #   90.00, top-up 20.25; total 90.00 (with 31 t: hourly 22.50 × 5 h = 112.50).
    argv = write(tmp_path, gang=GANG, tally=_tally("general,15.2", "general,14.3"), tariffs=TARIFFS,
                 rulebook="dl-3844-1941")
    doc = pay(capsys, argv, "--lang", "pt-BR")
    summary = doc["gangs"][0]["summary"]
    assert [(x["amount"], x["description"]) for x in summary["labour_lines"]] == [
        ("72.00", "general: 16 t × R$ 4.50 (pesado 15.2 t: tonelada ou fração, C7)"),
        ("67.50", "general: 15 t × R$ 4.50 (pesado 14.3 t: tonelada ou fração, C7)")]
    assert (summary["labour_amount"], summary["tonnes"]) == ("139.50", "29.5")
    w1 = member(doc, "W1")
    assert lines(w1) == [("C1", "69.75"), ("C2", "20.25")] and w1["total"] == "90.00"


def test_c7_a_class_the_table_says_is_weighed_and_a_whole_tonnage_are_not_rounded(tmp_path, capsys):
    # bulk_weighed (per_fraction = no): 10.2 t × 3.20 = 32.64; general 10 t × 4.50 = 45.00 (a whole
    # tonnage: no note). Labour 77.64, 38.82 each; 20.2 t: half day 90.00, top-up 51.18.
    argv = write(tmp_path, gang=GANG, tally=_tally("bulk_weighed,10.2", "general,10"), tariffs=TARIFFS,
                 rulebook="dl-3844-1941")
    doc = pay(capsys, argv)
    assert [(x["amount"], x["description"]) for x in doc["gangs"][0]["summary"]["labour_lines"]] == [
        ("32.64", "bulk_weighed: 10.2 t × R$ 3.20"), ("45.00", "general: 10 t × R$ 4.50")]
    assert lines(member(doc, "W2")) == [("C1", "38.82"), ("C2", "51.18")]


def test_c7_is_a_dock_work_rule_stevedoring_tonnes_stay_as_weighed(tmp_path, capsys):
    # dl-2032-1940 has no C7: general 10.2 t × 4.50 = 45.90.
    argv = write(tmp_path, gang=GANG.replace("worker", "stevedore"), tally=_tally("general,10.2"),
                 tariffs=TARIFFS)
    assert pay(capsys, argv)["gangs"][0]["summary"]["labour_amount"] == "45.90"


def test_c8_surcharges_of_notes_d_e_f_named_on_the_labour_line(tmp_path, capsys):
    # C8 note e: cement 10 t × 4.00 × 1.25 = 50.00.
    # C8 note f with C7: green hides 10.2 t → 11 t × 4.00 × 1.50 = 66.00.
    # C8 note d: explosives 2 t × 4.00 × 1.25 = 10.00.
    # Labour 126.00; 63.00 each; 22.2 t: half day 90.00, top-up 27.00.
    argv = write(tmp_path, gang=GANG, tariffs=TARIFFS, rulebook="dl-3844-1941",
                 tally=_tally("cement,10", "green_hides_in_brine,10.2", "explosives,2"))
    doc = pay(capsys, argv, "--lang", "pt-BR")
    assert [(x["amount"], x["description"]) for x in doc["gangs"][0]["summary"]["labour_lines"]] == [
        ("50.00", "cement: 10 t × R$ 4.00 + 25% (C8, obs. e)"),
        ("66.00", "green_hides_in_brine: 11 t × R$ 4.00 (pesado 10.2 t: tonelada ou fração, C7) + 50% (C8, obs. f)"),
        ("10.00", "explosives: 2 t × R$ 4.00 + 25% (C8, obs. d)")]
    assert doc["gangs"][0]["summary"]["labour_amount"] == "126.00"
    assert lines(member(doc, "W1")) == [("C1", "63.00"), ("C2", "27.00")]
    doc = pay(capsys, argv, "--lang", "en")
    assert doc["gangs"][0]["summary"]["labour_lines"][1]["description"] == (
        "green_hides_in_brine: 11 t × R$ 4.00 (weighed 10.2 t: per tonne or fraction, C7) + 50% surcharge (C8, note f)")


def test_the_example_tariffs_carry_the_model_tables_surcharge_classes(tmp_path, capsys):
    # config/examples/production/tariffs.csv: cement (e) 4.80 × 1.25 × 1 t = 6.00; green hides (f)
    # 4.80 × 1.5 × 1 t = 7.20; explosives (d) 4.80 × 1.25 = 6.00. Labour 19.20.
    argv = write(tmp_path, gang=GANG, tariffs=(EXAMPLES / "tariffs.csv").read_text(encoding="utf-8"),
                 rulebook="dl-3844-1941",
                 tally=_tally("cement,1", "green_hides_in_brine,1", "explosives,1"))
    summary = pay(capsys, argv)["gangs"][0]["summary"]
    assert [x["amount"] for x in summary["labour_lines"]] == ["6.00", "7.20", "6.00"]
    text = (EXAMPLES / "tariffs.csv").read_text(encoding="utf-8")
    for cls, note in (("explosives", "d"), ("spoiled_cargo", "d"), ("lime", "e"), ("cement", "e"),
                      ("dry_salted_hides", "e"), ("sulphur", "e"), ("potash", "e"), ("blood", "e"),
                      ("horns", "e"), ("bones", "e"), ("slag", "e"), ("rails", "e"), ("hooves", "e"),
                      ("iron_bars", "e"), ("green_hides_in_brine", "f")):
        assert any(line.startswith(f"{cls},t,") and line.endswith(f",{note}") for line in text.splitlines()), cls


@pytest.mark.parametrize(("row", "message"), [
    ("general,t,4.50,2026-01-01,maybe,", r"tariffs\.csv:2: per_fraction 'maybe' is not yes\|no"),
    ("containers,unit,25.00,2026-01-01,yes,", r"tariffs\.csv:2: per_fraction yes is for a tariff per tonne"),
    ("general,t,4.50,2026-01-01,,2 5", r"tariffs\.csv:2: surcharge '2 5' is not a note"),
])
def test_a_bad_per_fraction_or_surcharge_cell_is_refused_naming_file_row_and_field(tmp_path, capsys, row, message):
    argv = write(tmp_path, gang=GANG, tally=_tally("general,1"), rulebook="dl-3844-1941",
                 tariffs="cargo_class,unit,labour_tariff,effective_from,per_fraction,surcharge\n" + row + "\n")
    assert __import__("re").search(message, refused(capsys, argv))


def test_a_surcharge_the_rulebook_does_not_have_is_refused_naming_the_tally_and_tariff_rows(tmp_path, capsys):
    # stevedoring (dl-2032-1940) has no C8 table; the dock rulebook has d, e, f but no z
    argv = write(tmp_path, gang=GANG.replace("worker", "stevedore"), tally=_tally("cement,1"), tariffs=TARIFFS)
    err = refused(capsys, argv)
    assert "tally.csv:2: cargo class 'cement' (" in err and "tariffs.csv:4): surcharge 'e' is not in this " \
        "rulebook's surcharge table (none; C8" in err
    argv = write(tmp_path, gang=GANG, tally=_tally("general,1"), rulebook="dl-3844-1941",
                 tariffs=TARIFFS.replace("general,t,4.50,2026-01-01,,", "general,t,4.50,2026-01-01,,z"))
    assert "surcharge 'z' is not in this rulebook's surcharge table (d|e|f; C8" in refused(capsys, argv)


def test_a_rulebook_surcharge_of_zero_percent_is_refused_naming_the_key(tmp_path):
    from central.production.rulebook import find_rulebook
    from portgate.errors import ConfigError
    from tests.central.production.conftest import ROOT

    text = (ROOT / "config" / "rulebooks" / "dl-3844-1941.toml").read_text(encoding="utf-8")
    assert 'percent = "50"' in text
    (tmp_path / "bad.toml").write_text(text.replace('percent = "50"', 'percent = "0"'), encoding="utf-8")
    with pytest.raises(ConfigError, match=r"surcharges\.f"):
        find_rulebook(str(tmp_path / "bad.toml"))

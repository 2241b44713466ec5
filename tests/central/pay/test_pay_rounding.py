"""RULES.md rounding for watchmen's pay: amounts by time are divided last (SDe × rate × minutes ÷
(ordinary hours × 60)), so an exact half cent rounds up; and a shift before the rulebook's wage table
is refused naming its row and the rulebook, and paid once a [[day_wages]] row is added (docs/pay.md,
Past days)."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

from app.cli import main
from central.pay.watchmen import pay_shift
from tests.central.pay.test_pay_watchmen import BOOK, CAL, CCT, amounts, shift, t

import datetime as dt

ROOT = Path(__file__).resolve().parents[3]


def test_extension_by_minute_divides_last_so_a_half_cent_rounds_up():
    # CCT: SD 210.00, minute rounding, tolerance 5; 7 min at +50%:
    # 210.00 × 1.50 × 7 ÷ 360 = 6.125 -> 6.13 (SH = 35 then 7/60 h would give 6.12499… -> 6.12)
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=7)), CCT, CAL)
    assert amounts(st_)["CCT-2a"] == "6.13"
    assert st_.total == sum((line.amount for line in st_.lines), Decimal(0))


def test_ceil_hour_extension_unchanged_by_dividing_last():
    # default rulebook, vigia SD 180: 61 min -> 2 h; 180 × 1.20 × 120 ÷ 360 = 72.00
    st_ = pay_shift(shift(t(2026, 3, 10, 7), exit_after=dt.timedelta(minutes=61)), BOOK, CAL)
    assert amounts(st_)["P2"] == "72.00" and st_.extension_hours == 2


def _csv(path: Path, day: str) -> Path:
    path.write_text(
        "registration,function,ship,berth,period_start,period_end,admit_at,exit_at,meal_worked\n"
        f"100,vigia,9300001,berthed,2026-03-10T07:00:00-03:00,2026-03-10T13:00:00-03:00,"
        f"2026-03-10T07:00:00-03:00,2026-03-10T13:00:00-03:00,no\n"
        f"101,vigia,9300001,berthed,{day}T07:00:00-03:00,{day}T13:00:00-03:00,"
        f"{day}T07:00:00-03:00,{day}T13:00:00-03:00,no\n", encoding="utf-8")
    return path


def test_a_day_before_the_wage_table_names_row_and_rulebook_exit_2(tmp_path, capsys):
    code = main(["pay", "--shifts", str(_csv(tmp_path / "shifts.csv", "2024-06-04"))])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "shifts.csv:3: rulebook decreto-83611-1979 has no day wage in force on 2024-06-04" in err
    assert "shifts.csv:2" not in err  # the good row is not blamed


def test_a_past_wage_row_lets_past_days_be_paid(tmp_path, capsys):
    book = (ROOT / "config/rulebooks/decreto-83611-1979.toml").read_text(encoding="utf-8")
    book = book.replace("[[day_wages]]\neffective_from = 2025-01-01",
                        "[[day_wages]]\neffective_from = 2024-01-01\namount = \"150.00\"\n\n"
                        "[[day_wages]]\neffective_from = 2025-01-01", 1)
    (tmp_path / "rulebook.toml").write_text(book, encoding="utf-8")
    port = (ROOT / "config/port.example.toml").read_text(encoding="utf-8")
    port = port.replace('rulebook = "rulebooks/decreto-83611-1979.toml"', 'rulebook = "rulebook.toml"')
    (tmp_path / "port.toml").write_text(port, encoding="utf-8")
    code = main(["pay", "--shifts", str(_csv(tmp_path / "shifts.csv", "2024-06-04")),
                 "--port-config", str(tmp_path / "port.toml")])
    rows = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert code == 0
    totals = {r["registration"]: r["amount"] for r in rows if r["rule"] == "TOTAL"}
    assert totals == {"100": "180.00", "101": "150.00"}  # 2024-06-04 is a Tuesday: P1 only


def test_in_the_ledger_a_day_before_the_wage_table_is_held_not_a_crash():
    from central.pay.statements_store import pay_shifts
    from central.pay.shifts_csv import as_ledger_shift
    from zoneinfo import ZoneInfo

    zone = ZoneInfo("America/Sao_Paulo")
    old = as_ledger_shift(shift(t(2024, 6, 4, 7)), zone)
    new = as_ledger_shift(shift(t(2026, 3, 10, 7)), zone)
    run = pay_shifts([old, new], BOOK, CAL)
    assert [s.total for s in run.statements] == [Decimal("180.00")]
    assert len(run.held) == 1 and "no day wage in force on 2024-06-04" in run.held[0].reasons[0]

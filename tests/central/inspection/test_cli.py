"""``portgate crew`` end to end: real files in, books out, clear errors and nothing half-written."""

from __future__ import annotations

import csv
import json

import pytest

from app.cli import main
from tests.central.inspection.conftest import period_row


def run(argv, capsys):
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def read(path):
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


GOOD = [
    period_row("A", "2024-06-10T08:00-03:00", "2024-06-10T12:00-03:00", port_traffic="true"),
    period_row(
        "A",
        "2024-06-10T13:00-03:00",
        "2024-06-10T17:10-03:00",
        port_traffic="true",
        compensation="pay",
    ),
    period_row(
        "B", "2024-06-10T00:00-03:00", "2024-06-10T04:01-03:00", kind="watch", watch_type="engine"
    ),
    period_row("C", "2024-06-10T08:00-03:00", "2024-06-10T12:00-03:00", ship="other"),
]


def test_hours_writes_the_overtime_book_transgressions_and_printable_book(
    periods_csv, tmp_path, capsys
):
    out = tmp_path / "books"
    code, stdout, _ = run(
        [
            "crew",
            "hours",
            "--periods",
            str(periods_csv(GOOD)),
            "--ship",
            "9300001",
            "--from",
            "2024-06-10",
            "--to",
            "2024-06-16",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "book.html",
        "overtime_book.csv",
        "transgressions.csv",
    ]
    book = read(out / "overtime_book.csv")
    assert [
        (
            r["crew_id"],
            r["worked_min"],
            r["overtime_min"],
            r["overtime_hours"],
            r["port_traffic_overtime_min"],
            r["compensation"],
        )
        for r in book
    ] == [("A", "490", "10", "1", "10", "pay"), ("B", "241", "0", "0", "0", "")]
    (t,) = read(out / "transgressions.csv")
    assert (t["crew_id"], t["rule"], t["amount_min"], t["source"]) == (
        "B",
        "K2_WATCH_LENGTH",
        "241",
        "periods.csv:4",
    )
    assert t["start"] == "2024-06-10T00:00:00-03:00"
    page = (out / "book.html").read_text(encoding="utf-8")
    assert "K2_WATCH_LENGTH" in page and "Navio 9300001" in page and "<table>" in page
    assert "1 transgression(s)" in stdout


def test_hours_replaces_the_files_of_an_existing_output_directory(periods_csv, tmp_path, capsys):
    out = tmp_path / "books"
    out.mkdir()
    (out / "overtime_book.csv").write_text("old\n")
    args = [
        "crew",
        "hours",
        "--periods",
        str(periods_csv(GOOD)),
        "--ship",
        "9300001",
        "--from",
        "2024-06-10",
        "--to",
        "2024-06-10",
        "--out",
        str(out),
    ]
    assert run(args, capsys)[0] == 0
    assert read(out / "overtime_book.csv")[0]["crew_id"] == "A"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (
            period_row("A", "2024-06-10T11:00-03:00", "2024-06-10T13:30-03:00"),
            "periods.csv:6: period of crew_id A",
        ),
        (period_row("D", "2024-06-10T11:00", "2024-06-10T13:30-03:00"), "periods.csv:6: start"),
        (
            period_row("D", "2024-06-10T11:00-03:00", "2024-06-10T13:30-03:00", kind="rest"),
            "periods.csv:6: kind 'rest' is not one of work|watch",
        ),
        (
            period_row(
                "D", "2024-06-10T11:00-03:00", "2024-06-10T13:30-03:00", port_traffic="maybe"
            ),
            "periods.csv:6: port_traffic 'maybe'",
        ),
        (
            period_row(
                "D", "2024-06-10T11:00-03:00", "2024-06-10T13:30-03:00", compensation="cash"
            ),
            "periods.csv:6: compensation 'cash'",
        ),
    ],
)
def test_a_bad_period_row_is_named_and_nothing_is_written(
    periods_csv, tmp_path, capsys, bad, message
):
    out = tmp_path / "books"
    code, _, err = run(
        [
            "crew",
            "hours",
            "--periods",
            str(periods_csv(GOOD + [bad])),
            "--ship",
            "9300001",
            "--from",
            "2024-06-10",
            "--to",
            "2024-06-16",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2
    assert message in err
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["periods.csv"]


def test_a_failure_while_writing_leaves_no_output(periods_csv, tmp_path, capsys, mocker):
    # A full disk cannot be produced on demand: the second file's write fails.
    import central.inspection.files as files

    real_fsync = files.os.fsync
    calls = []

    def fsync(fd):
        calls.append(fd)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    mocker.patch.object(files.os, "fsync", fsync)
    out = tmp_path / "books"
    code, _, err = run(
        [
            "crew",
            "hours",
            "--periods",
            str(periods_csv(GOOD)),
            "--ship",
            "9300001",
            "--from",
            "2024-06-10",
            "--to",
            "2024-06-10",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2 and "No space left" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["periods.csv"]


def test_hours_refuses_an_unknown_time_zone_and_a_missing_file(periods_csv, tmp_path, capsys):
    code, _, err = run(
        [
            "crew",
            "hours",
            "--periods",
            str(periods_csv(GOOD)),
            "--ship",
            "9300001",
            "--from",
            "2024-06-10",
            "--to",
            "2024-06-10",
            "--out",
            str(tmp_path / "o"),
            "--tz",
            "Mars/Base",
        ],
        capsys,
    )
    assert code == 2 and "unknown time zone 'Mars/Base'" in err
    code, _, err = run(
        [
            "crew",
            "hours",
            "--periods",
            str(tmp_path / "none.csv"),
            "--ship",
            "S",
            "--from",
            "2024-06-10",
            "--to",
            "2024-06-10",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "none.csv: file not found" in err


CREW = [
    ["1", "Ana", "BR", "officer", "deck", "imediato"],
    ["2", "Ben", "GB", "officer", "deck", "comandante"],
    ["3", "Caio", "BR", "graduated_rating", "engine", "condutor"],
    ["4", "Dan", "PH", "graduated_rating", "engine", "condutor"],
    ["5", "Eva", "PH", "non_graduated_rating", "other", "cozinheira"],
]


def test_share_from_kind_and_days_as_json(crew_csv, capsys):
    code, out, _ = run(
        [
            "crew",
            "share",
            "--kind",
            "offshore_support",
            "--days",
            "90",
            "--crew",
            str(crew_csv(CREW)),
            "--format",
            "json",
        ],
        capsys,
    )
    assert code == 0
    data = json.loads(out)
    (check,) = data["checks"]
    assert (check["rule"], check["share"], check["required"], check["brazilians"]) == (
        "N1",
        "1/3",
        2,
        2,
    )  # 5/3 = 1.67 -> 2
    assert data["complies"] is True
    assert [i["key"] for i in data["checklist"]][:2] == ["ship_registry", "crew_list"]


def test_share_from_a_vessel_file_as_text(crew_csv, tmp_path, capsys):
    vessel = tmp_path / "vessel.toml"
    vessel.write_text('name = "Nordic Star"\nimo = "9300002"\nkind = "cabotage"\ndays = 180\n')
    code, out, _ = run(
        ["crew", "share", "--vessel", str(vessel), "--crew", str(crew_csv(CREW))], capsys
    )
    assert code == 0
    assert "Nordic Star" in out
    assert "officer/deck" in out and "NÃO CUMPRE" not in out.split("officer/deck")[1].split("\n")[0]
    assert "not counted (branch other): 5" in out
    assert "[ ] Certificado de Autorização de Afretamento" in out


@pytest.mark.parametrize(
    ("row", "message"),
    [
        (["6", "Fay", "BR", "captain", "deck", ""], "crew.csv:7: level 'captain'"),
        (["6", "Fay", "BR", "officer", "galley", ""], "crew.csv:7: branch 'galley'"),
        (
            ["1", "Ana again", "BR", "officer", "deck", ""],
            "crew.csv:7: crew_id 1 already listed at crew.csv:2",
        ),
    ],
)
def test_share_names_the_bad_crew_row(crew_csv, capsys, row, message):
    code, out, err = run(
        [
            "crew",
            "share",
            "--kind",
            "cruise",
            "--days",
            "31",
            "--crew",
            str(crew_csv(CREW + [row])),
        ],
        capsys,
    )
    assert code == 2 and message in err and out == ""


def test_share_exit_status_is_one_when_the_vessel_does_not_comply(crew_csv, capsys):
    code, out, _ = run(
        [
            "crew",
            "share",
            "--kind",
            "fishing_leased",
            "--days",
            "10",
            "--crew",
            str(crew_csv(CREW)),
        ],
        capsys,
    )
    assert code == 1  # 2 Brazilians of 5, 2/3 of 5 = 3.33 -> 4 required
    assert "N4" in out and "NÃO CUMPRE / DOES NOT COMPLY" in out


def test_share_refuses_negative_days_and_bad_vessel_keys(crew_csv, tmp_path, capsys):
    code, _, err = run(
        ["crew", "share", "--kind", "cabotage", "--days", "-3", "--crew", str(crew_csv(CREW))],
        capsys,
    )
    assert code == 2 and "days -3" in err
    vessel = tmp_path / "vessel.toml"
    vessel.write_text('kind = "cabotage"\ndays = -1\n')
    code, _, err = run(
        ["crew", "share", "--vessel", str(vessel), "--crew", str(crew_csv(CREW))], capsys
    )
    assert code == 2 and "$.days" in err
    vessel.write_text('kind = "tanker"\ndays = 10\n')
    code, _, err = run(
        ["crew", "share", "--vessel", str(vessel), "--crew", str(crew_csv(CREW))], capsys
    )
    assert code == 2 and "$.kind" in err


def test_share_needs_either_a_vessel_or_kind_and_days(crew_csv, capsys):
    code, _, err = run(
        ["crew", "share", "--kind", "cabotage", "--crew", str(crew_csv(CREW))], capsys
    )
    assert code == 2 and "--kind and --days" in err


def test_checklist_command(capsys):
    code, out, _ = run(["crew", "checklist"], capsys)
    assert code == 0
    assert out.count("[ ]") == 6 and "Crew payroll" not in out and "crew payroll" in out
    code, out, _ = run(
        ["crew", "checklist", "--kind", "offshore_support", "--format", "json"], capsys
    )
    assert [i["key"] for i in json.loads(out)][-4:] == ["caa", "work_permits", "visas", "logbook"]


def test_a_file_without_a_required_column_is_refused(tmp_path, capsys):
    path = tmp_path / "crew.csv"
    path.write_text("crew_id,name,nationality,level\n1,Ana,BR,officer\n", encoding="utf-8")
    code, _, err = run(
        ["crew", "share", "--kind", "cruise", "--days", "40", "--crew", str(path)], capsys
    )
    assert code == 2 and "crew.csv:1: header lacks column(s) branch" in err


def test_every_bad_row_is_listed_at_once(periods_csv, tmp_path, capsys):
    rows = GOOD + [
        period_row("D", "x", "2024-06-10T13:30-03:00"),
        period_row("E", "2024-06-10T11:00-03:00", "2024-06-10T13:30-03:00", kind=""),
    ]
    code, _, err = run(
        [
            "crew",
            "hours",
            "--periods",
            str(periods_csv(rows)),
            "--ship",
            "9300001",
            "--from",
            "2024-06-10",
            "--to",
            "2024-06-10",
            "--out",
            str(tmp_path / "o"),
        ],
        capsys,
    )
    assert code == 2 and "periods.csv:6: start 'x'" in err and "periods.csv:7: kind ''" in err

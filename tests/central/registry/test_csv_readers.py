"""admissions.csv and shipowners.csv read through the kernel's table reader (portgate/tables.py):
the line of a row after a quoted newline is the file's line, a header lacking a column names the
file and line 1, a NUL character is one ``BadInput``, never a crash."""

from __future__ import annotations

import pytest

from central.pay.billing_store import read_shipowners
from central.registry.admission_store import read_admissions
from central.rotation.requisition_checks import read_details
from portgate.errors import BadInput


def test_an_admission_row_after_a_quoted_newline_is_named_by_its_file_line(tmp_path):
    path = tmp_path / "admissions.csv"
    path.write_text("registration,birth_date,nationality,registered_on,vision,vision_on\n"
                    'V1,1990-05-01,BR,2026-03-01,"exam\nsecond line",2026-02-10\n'
                    "V2,1990-13-01,BR,2026-03-01,,\n", encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_admissions(path)
    assert caught.value.reason == "admissions.csv:4: birth_date '1990-13-01' is not an ISO date (YYYY-MM-DD)"


def test_a_good_admissions_file_keeps_each_rows_place(tmp_path):
    path = tmp_path / "admissions.csv"
    path.write_text("registration,birth_date,nationality,registered_on\nV1,1990-05-01,br,2026-03-01\n",
                    encoding="utf-8-sig")
    [adm] = read_admissions(path)
    assert (adm.registration, adm.nationality, adm.source) == ("V1", "BR", "admissions.csv:2")


@pytest.mark.parametrize("read,name,header", [
    (read_admissions, "admissions.csv", "registration,birth_date,nationality"),
    (read_shipowners, "owners.csv", "ship"),
])
def test_a_header_lacking_a_column_names_the_file_and_line_1(tmp_path, read, name, header):
    path = tmp_path / name
    path.write_text(header + "\n", encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read(path)
    assert caught.value.where == f"{name}:1" and "header lacks column(s)" in caught.value.reason


def test_shipowners_after_a_quoted_newline_and_with_a_nul_character(tmp_path):
    path = tmp_path / "owners.csv"
    path.write_text('ship,shipowner\n9300001,"Line\nTwo"\n9300001,B\n', encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_shipowners(path)
    assert caught.value.reason == "owners.csv:4: ship 9300001 is listed twice"
    path.write_text("ship,shipowner\n9300001,A\x00\n", encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_shipowners(path)
    assert (caught.value.where, caught.value.reason) == ("owners.csv:2", "contains a NUL character")


def test_requisition_details_name_the_file_line_and_a_missing_file(tmp_path):
    path = tmp_path / "requisitions.csv"
    path.write_text('ref,cargo,holds\nA1,"café\nsacaria",1\nA2,soja,two\n', encoding="utf-8")
    with pytest.raises(BadInput) as caught:
        read_details(path)
    assert caught.value.reason == "requisitions.csv:4: holds and units must be whole numbers"
    with pytest.raises(BadInput) as caught:
        read_details(tmp_path / "absent.csv")
    assert caught.value.reason == "file not found"

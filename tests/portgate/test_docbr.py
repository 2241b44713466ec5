"""CPF, PIS/NIS and CNPJ cells (``portgate.docbr``): known-valid numbers accepted with or without
their punctuation, a mistyped digit, a wrong length, one repeated digit and letters refused naming
the column; the demo's fictitious numbers are check-digit correct; a workers.csv row with a bad CPF
is refused by file and line, and the identifiers never enter the ``Worker`` the gates receive."""

from __future__ import annotations

import dataclasses

import pytest
from validate_docbr import CPF, PIS

from portgate import docbr
from portgate.errors import BadInput
from portgate.records import COLUMNS, Worker, WorkerIds, load_csv, load_csv_rows

# numbers published as examples of valid ones (Receita Federal's mod-11 rules)
VALID_CPF = ["529.982.247-25", "11144477735", "  111.444.777-35 "]
VALID_PIS = ["120.56174.45-8", "17033259504"]
VALID_CNPJ = ["11.222.333/0001-81", "11222333000181", "12.ABC.345/01DE-35"]


@pytest.mark.parametrize("text", VALID_CPF)
def test_a_valid_cpf_is_its_eleven_digits(text):
    assert docbr.cpf(text) == text.strip().replace(".", "").replace("-", "")


@pytest.mark.parametrize("text", VALID_CNPJ)
def test_a_valid_cnpj_numeric_or_alphanumeric_is_its_fourteen_characters(text):
    assert len(docbr.cnpj(text)) == 14


def test_a_valid_pis_is_its_eleven_digits():
    for text in VALID_PIS:
        assert PIS().validate(text)  # the library agrees they are valid examples
        assert docbr.pis(text) == text.replace(".", "").replace("-", "")


@pytest.mark.parametrize("parse, text, words", [
    (docbr.cpf, "529.982.247-24", "fails its check digits"),  # last digit mistyped
    (docbr.cpf, "529.982.274-25", "fails its check digits"),  # two digits swapped
    (docbr.cpf, "111.111.111-11", "fails its check digits"),  # one repeated digit passes mod 11
    (docbr.cpf, "52998224725 ", None),
    (docbr.cpf, "5299822472", "is not 11 digits"),  # a digit lost: never padded with a zero
    (docbr.cpf, "529.982.247-2X", "is not 11 digits"),
    (docbr.pis, "170.33259.50-5", "fails its check digits"),
    (docbr.pis, "00000000000", "fails its check digits"),
    (docbr.pis, "1703325950", "is not 11 digits"),
    (docbr.cnpj, "11.222.333/0001-82", "fails its check digits"),
    (docbr.cnpj, "11.222.333/0001", "is not 14 digits"),
])
def test_a_bad_number_is_refused_naming_its_column_and_value(parse, text, words):
    if words is None:
        assert parse(text)
        return
    with pytest.raises(BadInput) as exc:
        parse(text, "the_column")
    assert str(exc.value).startswith(f"the_column {text.strip()!r} {words}")


def test_an_empty_cell_is_none_when_optional_and_required_otherwise():
    assert docbr.cpf("") is None and docbr.pis(None) is None
    with pytest.raises(BadInput, match="cnpj is required"):
        docbr.cnpj("  ")


def test_the_masks_print_the_usual_punctuation():
    assert docbr.masked_cpf("52998224725") == "529.982.247-25"
    assert docbr.masked_pis("17033259504") == "170.33259.50-4"
    assert docbr.masked_cnpj("11222333000181") == "11.222.333/0001-81"
    assert docbr.masked_cpf(None) == ""


@pytest.mark.parametrize("n", [1, 7, 17, 40, 999])
def test_the_fictitious_generators_agree_with_the_library(n):
    cpf, pis = docbr.cpf_digits(f"000000{n:03d}"), docbr.pis_digits(f"0000000{n:03d}")
    assert CPF().validate(cpf) and PIS().validate(pis)
    assert docbr.cpf(cpf) == cpf and docbr.pis(pis) == pis
    assert not CPF().validate(cpf[:-1] + str((int(cpf[-1]) + 1) % 10))


def test_a_workers_csv_row_with_a_bad_cpf_is_refused_by_line(tmp_path):
    f = tmp_path / "workers.csv"
    f.write_text("registration,name,category,status,cpf,pis\n"
                 "V1,Ana,vigia,active,529.982.247-25,170.33259.50-4\n"
                 "V2,Bia,vigia,active,529.982.247-24,\n"
                 "V3,Caio,vigia,active,,1703325950\n", encoding="utf-8")
    with pytest.raises(BadInput) as exc:
        load_csv_rows(f, Worker)
    lines = str(exc.value).splitlines()
    assert lines == ["workers.csv:3: cpf '529.982.247-24' fails its check digits (a digit mistyped?)",
                     "workers.csv:4: pis '1703325950' is not 11 digits (000.00000.00-0, e.g. 170.33259.50-4)"]


def test_the_identifiers_stay_out_of_the_worker_record_the_gates_receive(tmp_path):
    f = tmp_path / "workers.csv"
    f.write_text("registration,name,category,status,cpf,pis\nV1,Ana,vigia,active,529.982.247-25,\n", encoding="utf-8")
    [w] = load_csv(f, Worker)
    assert "cpf" not in COLUMNS[Worker] and "cpf" not in {x.name for x in dataclasses.fields(Worker)}
    assert w.registration == "V1"
    assert WorkerIds.from_row({"cpf": "529.982.247-25", "pis": ""}) == WorkerIds("52998224725", None)

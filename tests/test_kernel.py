"""The shared kernel: UIDs, CSV records, configuration and the event MAC."""

import datetime as dt

import msgspec
import pytest

from portgate.config import ConfigError, convert, load_toml, read_secret, write_secret
from portgate.errors import BadInput
from portgate.records import Card, EscalaEntry, Worker, load_csv
from portgate.uid import UidFormat, canonical_uid, convert_uid
from wire.events import Event, TapPayload, decode, encode, new_event_id, sign, verify


def test_canonical_uid_normalises_case_and_separators():
    assert canonical_uid("1a:2b:3c:4d") == "1A2B3C4D"


@pytest.mark.parametrize("raw", ["", "XYZ12345", "123", "0000", "AA" * 11])
def test_canonical_uid_rejects_bad_text(raw):
    with pytest.raises(BadInput):
        canonical_uid(raw)


def test_site_formats_convert_without_guessing():
    assert convert_uid("0439041101", UidFormat.DECIMAL10) == "1A2B3C4D"
    assert convert_uid("4D3C2B1A", UidFormat.HEX_REVERSED) == "1A2B3C4D"
    assert convert_uid("01200042", UidFormat.WIEGAND26) == "0C002A"
    assert convert_uid("0000000001", UidFormat.DECIMAL10) == "00000001"
    with pytest.raises(BadInput):
        convert_uid("1A2B3C4D", UidFormat.DECIMAL10)


def test_escala_period_crossing_midnight_ends_next_day():
    entry = EscalaEntry.from_row(dict(date="2026-03-15", period="19-01", ship="9123456", ship_name="X",
                                      voyage="long_haul", berth="anchored", gate_id="g1", post="portalo",
                                      function="vigia", registration="V001"))
    start, end = entry.bounds("America/Sao_Paulo")
    assert start == dt.datetime(2026, 3, 15, 22, 0, tzinfo=dt.UTC)
    assert end == dt.datetime(2026, 3, 16, 4, 0, tzinfo=dt.UTC)


def test_load_csv_names_every_bad_row(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text("uid,kind,registration,status\n1A2B3C4D,control,V1,active\nZZ,control,V2,active\n"
                    "1A2B3C4E,wallet,V3,active\n", encoding="utf-8")
    with pytest.raises(BadInput) as err:
        load_csv(path, Card)
    assert "cards.csv:3" in str(err.value) and "cards.csv:4" in str(err.value)


def test_load_csv_reports_missing_header_column(tmp_path):
    path = tmp_path / "workers.csv"
    path.write_text("registration,name\nV1,Ana\n", encoding="utf-8")
    with pytest.raises(BadInput, match="category"):
        load_csv(path, Worker)


class _Gate(msgspec.Struct, forbid_unknown_fields=True):
    gate_id: str
    debounce_ms: int = 1500


class _Conf(msgspec.Struct, forbid_unknown_fields=True):
    gate: _Gate


def test_config_error_names_the_key(tmp_path):
    path = tmp_path / "gate.toml"
    path.write_text('[gate]\ngate_id = "g1"\ndebounce_ms = "soon"\n')
    with pytest.raises(ConfigError, match=r"\$\.gate\.debounce_ms"):
        load_toml(path, _Conf)
    with pytest.raises(ConfigError, match="bogus"):
        convert({"gate": {"gate_id": "g", "bogus": 1}}, _Conf)


def test_secret_files_must_be_private(tmp_path):
    path = tmp_path / "key"
    write_secret(path, b"s3cret\n")
    assert read_secret(path) == b"s3cret"
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        read_secret(path)


def _event(**kw):
    base = dict(event_id=new_event_id(), port="santos", gate_id="g1", boot_id="b1", seq=1,
                occurred_at=dt.datetime(2026, 3, 10, 10, tzinfo=dt.UTC), clock_trusted=True, mono_ns=1,
                payload=TapPayload(uid="1A2B3C4D", reader_id="r1", reader_kind="control", decision="admit"))
    base.update(kw)
    return Event(**base)


def test_event_mac_round_trips_and_detects_tampering():
    signed = sign(_event(), b"gate-key")
    back = decode(encode(signed))
    assert verify(back, b"gate-key")
    assert not verify(back, b"other-key")
    assert not verify(msgspec.structs.replace(back, seq=2), b"gate-key")


def test_decode_rejects_malformed_payload():
    with pytest.raises(BadInput):
        decode(b'{"event_id": 1}')
    with pytest.raises(BadInput):
        decode(b"\xff not json")


def test_load_csv_refuses_a_file_that_is_not_csv(tmp_path):
    path = tmp_path / "workers.csv"
    path.write_text("registration,name,category,status\nV1," + "A" * 200_000 + ",vigia,active\n")
    with pytest.raises(BadInput, match="not a valid CSV file"):
        load_csv(path, Worker)


def test_load_csv_reports_a_short_row(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text("uid,kind,registration,status\n1A2B3C4D,control\n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"cards.csv:2: missing column\(s\) registration, status"):
        load_csv(path, Card)


def test_a_suspension_that_ends_before_it_starts_is_refused(tmp_path):
    path = tmp_path / "workers.csv"
    path.write_text("registration,name,category,status,suspended_from,suspended_until,health_exam_date,"
                    "booklet_revalidated_year,rotation_number\n"
                    "V1,Ana,vigia,suspended,2026-03-20,2026-03-10,2025-06-01,,1\n"
                    "V2,Bia,vigia,active,,,2025-06-01,,-1\n", encoding="utf-8")
    with pytest.raises(BadInput) as err:
        load_csv(path, Worker)
    assert "workers.csv:2: suspended_from 2026-03-20 is after" in str(err.value)
    assert "workers.csv:3: rotation_number -1 is negative" in str(err.value)


def test_a_csv_saved_with_a_byte_order_mark_reads_like_any_other(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text("\ufeffuid,kind,registration,status\n1A2B3C4D,control,V1,active\n", encoding="utf-8")
    assert load_csv(path, Card)[0].uid == "1A2B3C4D"

"""The shared kernel: UIDs, CSV records, configuration and the event MAC."""

import datetime as dt
import uuid

import msgspec
import pytest

from portgate.config import ConfigError, convert, load_toml, read_secret, write_secret
from portgate.errors import BadInput
from portgate.records import Card, EscalaEntry, Worker, load_csv
from portgate.rest import MIN_REST_HOURS, rest_between
from portgate.uid import UidFormat, canonical_uid, enrol_uid, parse_read, read_uid
from wire.events import Event, TapPayload, decode, encode, new_event_id, sign, sign_encoded, verify
from wire.flags import HOLD_FLAGS, REVIEW_FLAGS, Flag, ShiftFlag


def test_canonical_uid_normalises_case_and_separators():
    assert canonical_uid("1a:2b:3c:4d") == "1A2B3C4D"


@pytest.mark.parametrize("raw", ["", "XYZ12345", "123", "0000", "AA" * 11])
def test_canonical_uid_rejects_bad_text(raw):
    with pytest.raises(BadInput):
        canonical_uid(raw)


def test_reader_forms_read_without_guessing():
    assert read_uid("4D3C2B1A", UidFormat.HEX_REVERSED).text == "1A2B3C4D"
    assert read_uid("0439041101", UidFormat.DECIMAL10).text == "decimal10:1A2B3C4D"  # low 32 bits
    assert read_uid("0000000001", UidFormat.DECIMAL10).text == "decimal10:00000001"
    assert read_uid("01200042", UidFormat.WIEGAND26).text == "wiegand26:0C002A"  # 012 / 00042
    assert read_uid("00786474", UidFormat.DEZ8).text == "dez8:0C002A"
    # little-endian 10 digits (13.56 MHz wedges): 0xC3B2A104 = 3283263748 is the UID 04A1B2C3
    assert read_uid("3283263748", UidFormat.DECIMAL10_LE).text == "04A1B2C3"
    for raw, fmt in [("1A2B3C4D", UidFormat.DECIMAL10), ("4294967296", UidFormat.DECIMAL10),
                     ("25600000", UidFormat.WIEGAND26), ("16777216", UidFormat.DEZ8), ("123", UidFormat.DEZ8)]:
        with pytest.raises(BadInput, match=fmt.value):
            read_uid(raw, fmt)


def test_one_em_card_is_matched_by_each_of_its_numbers():
    em = "62E3086CD5"  # EM4100 ID as a serial RDM6300 gives it; printed DEZ10 3808980181, W26 008,27861
    dez10 = read_uid("3808980181", UidFormat.DECIMAL10)
    w26 = read_uid("00827861", UidFormat.WIEGAND26)
    dez8 = read_uid(f"{0x086CD5:08d}", UidFormat.DEZ8)
    assert [r.matches(em) for r in (dez10, w26, dez8)] == [True, True, True]
    assert (dez10.bits, dez10.collision_prone, w26.bits, w26.collision_prone) == (32, False, 24, True)
    assert not dez10.matches("63E3086CD6")
    assert parse_read(w26.text) == w26 and parse_read(em).text == em
    with pytest.raises(BadInput):
        parse_read("wiegand26:E3086CD5")  # 24 bits are 6 hex digits


def test_ten_decimal_digits_in_cards_csv_need_a_form():
    with pytest.raises(BadInput, match="uid_form"):
        enrol_uid("0439041101", None)
    assert enrol_uid("0439041101", "hex") == "0439041101"
    assert enrol_uid("0439041101", "decimal10") == "1A2B3C4D"
    assert enrol_uid("3283263748", "decimal10_le") == "04A1B2C3"
    assert enrol_uid("62e3086cd5", None) == "62E3086CD5"
    with pytest.raises(BadInput, match="24 bits"):
        enrol_uid("22727861", "wiegand26")
    with pytest.raises(BadInput, match="uid_form"):
        enrol_uid("0439041101", "octal")


def test_cards_csv_refuses_an_ambiguous_uid_and_reads_its_form(tmp_path):
    path = tmp_path / "cards.csv"
    path.write_text("uid,kind,registration,status\n0439041101,control,V1,active\n", encoding="utf-8")
    with pytest.raises(BadInput, match=r"cards.csv:2: uid 0439041101 is 10 decimal digits"):
        load_csv(path, Card)
    path.write_text("uid,kind,registration,status,uid_form\n0439041101,control,V1,active,hex\n"
                    "3283263748,badge,V1,active,decimal10_le\n", encoding="utf-8")
    assert [c.uid for c in load_csv(path, Card)] == ["0439041101", "04A1B2C3"]
    # the office's copy holds canonical UIDs: no form is asked for there
    assert Card.from_row({"uid": "0439041101", "kind": "control", "registration": "V1",
                          "status": "active"}).uid == "0439041101"


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


def test_sign_encoded_gives_the_signed_event_and_its_wire_bytes_in_one_go():
    hostile = ',"mac":"","mono_ns":1,"x":"\\"'  # a payload text carrying the key's own bytes
    cases = [
        _event(),
        _event(payload=TapPayload(uid="04A1B2C3", reader_id=hostile, reader_kind="control", decision="deny",
                                  rules_failed=["G1"], flags=[], message=hostile)),
        msgspec.structs.replace(_event(), prev="ab" * 32),  # chained, not yet signed
        msgspec.structs.replace(_event(), prev="ab" * 32, sig="cd" * 64),  # signed: the general path
        msgspec.structs.replace(_event(), mac="0" * 64),  # an old MAC is replaced
    ]
    for event in cases:
        signed, body = sign_encoded(event, b"gate-key")
        assert signed == sign(event, b"gate-key")
        assert body == encode(sign(event, b"gate-key"))
        assert verify(decode(body), b"gate-key")


def test_event_ids_are_distinct_uuid4_texts():
    ids = [new_event_id() for _ in range(2000)]
    assert len(set(ids)) == len(ids)
    for text in ids:
        u = uuid.UUID(text)
        assert str(u) == text and u.version == 4 and u.variant == uuid.RFC_4122


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


def test_gc_paused_restores_the_collector_also_after_an_error():
    import gc

    from portgate.gctune import paused

    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with paused():
            assert not gc.isenabled()
            raise RuntimeError("boom")
    assert gc.isenabled()
    gc.disable()
    try:
        with paused():
            pass
        assert not gc.isenabled()  # a caller's own pause is left as it was
    finally:
        gc.enable()


def test_gc_paused_long_lived_moves_the_burst_to_the_oldest_generation_unscanned():
    import gc

    from portgate.gctune import paused

    class Kept:  # a tracked object (instances of Python classes are)
        pass

    with paused(long_lived=True):
        kept = [Kept() for _ in range(5_000)]
        assert gc.get_count()[0] >= 5_000  # the young generation's count piles up while paused
    assert gc.isenabled()
    assert gc.get_count()[0] < 5_000  # not left to start a young collection over the burst
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept[0]) in oldest and id(kept[-1]) in oldest
    assert gc.get_freeze_count() == 0


def test_gc_paused_long_lived_leaves_a_service_s_frozen_objects_frozen():
    import gc

    from portgate.gctune import paused

    # The collector is off around the block (and restored off by it): another thread of this
    # worker allocating (a web test's server) cannot start the young collections that would move
    # the fresh objects to the oldest generation on their own between the block and the check.
    gc.freeze()
    gc.disable()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with paused(long_lived=True):
            fresh = [[] for _ in range(100)]
        assert gc.get_freeze_count() == frozen and not gc.isenabled()
        assert id(fresh[0]) not in {id(o) for o in gc.get_objects(generation=2)}
    finally:
        gc.enable()
        gc.unfreeze()
    with pytest.raises(RuntimeError):  # and an error restores the collector without promoting
        with paused(long_lived=True):
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_tune_for_service_inherited_freezes_without_a_collection_first():
    import gc
    import weakref

    from portgate.gctune import GEN0, GEN1, GEN2, tune_for_service

    class Node:
        pass

    def garbage_cycle() -> weakref.ref:
        a, b = Node(), Node()
        a.other, b.other = b, a
        return weakref.ref(a)

    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.disable()  # no automatic collection in between (an explicit one still runs)
    try:
        left = garbage_cycle()
        tune_for_service(inherited=True)  # a forkserver child: nothing walked, all frozen as it is
        assert left() is not None and gc.get_freeze_count() > 0
        assert gc.get_threshold() == (GEN0, GEN1, GEN2)
        gc.unfreeze()
        tune_for_service()  # a service's own start: collected first, then the survivors frozen
        assert left() is None and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
        if enabled:
            gc.enable()


def test_the_rest_between_two_shifts_is_never_negative():
    end = dt.datetime(2026, 3, 10, 13, tzinfo=dt.UTC)
    assert rest_between(end, end + dt.timedelta(hours=MIN_REST_HOURS)) == dt.timedelta(hours=11)
    assert rest_between(end, end - dt.timedelta(hours=2)) == dt.timedelta(0)  # an extension into the next period


def test_every_flag_is_its_own_wire_text_and_the_shared_ones_agree():
    for member in (*Flag, *ShiftFlag):
        assert member.name == member.value  # the database and the wire store the text
    assert {"NO_ENTRY", "DOUBLE_ASSIGNMENT", "EARLY_EXIT"} <= set(Flag) & set(ShiftFlag)
    assert HOLD_FLAGS == {"NO_ENTRY", "DOUBLE_ASSIGNMENT", "CLOCK_UNPLACEABLE", "CLOCK_BACKWARDS"}
    assert REVIEW_FLAGS == {"EARLY_EXIT", "CHAIN_BREAK"}


def test_gc_freeze_start_up_takes_the_start_up_objects_out_of_every_collection_thresholds_kept():
    import gc

    from portgate.gctune import freeze_start_up

    class Kept:
        pass

    thresholds = gc.get_threshold()
    kept = [Kept() for _ in range(2_000)]
    try:
        frozen = freeze_start_up()
        assert frozen == gc.get_freeze_count() >= 2_000
        assert gc.get_threshold() == thresholds  # the gate keeps CPython's (RSS budget)
        later = Kept()
        walked = {id(o) for o in gc.get_objects()}  # what a full collection walks
        assert id(kept[0]) not in walked and id(kept[-1]) not in walked
        assert id(later) in walked  # what the loop makes afterwards is still collected
    finally:
        gc.unfreeze()

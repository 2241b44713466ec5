"""EM4100 frame parser (pure) and its fuzzing."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from drivers.em4100 import Frame, FrameParser, Rejected, encode_frame

GOOD = encode_frame("0102030405")


def parse(*chunks: bytes) -> list:
    parser = FrameParser()
    out = []
    for chunk in chunks:
        out += parser.feed(chunk)
    return out


def test_a_frame_gives_its_uid_as_ten_hex_digits():
    assert parse(encode_frame("62e3086cd5")) == [Frame("62E3086CD5")]


def test_garbage_before_a_frame_is_skipped():
    assert parse(b"\xff\x00junk\x03\r\n" + GOOD) == [Frame("0102030405")]


def test_port_opened_mid_frame_resynchronises_on_next_stx():
    assert parse(GOOD[7:] + GOOD) == [Frame("0102030405")]


def test_frame_split_in_single_bytes():
    assert parse(*[bytes([b]) for b in GOOD]) == [Frame("0102030405")]


def test_cr_lf_before_etx_is_tolerated():
    assert parse(encode_frame("0102030405", eol=b"\r\n")) == [Frame("0102030405")]


def test_bad_checksum_is_rejected():
    (item,) = parse(encode_frame("0102030405", checksum=0x00))
    assert isinstance(item, Rejected) and item.reason == "bad_checksum"


def test_all_zero_id_is_rejected():
    (item,) = parse(encode_frame("0000000000"))
    assert isinstance(item, Rejected) and item.reason == "zero_id"


def test_truncated_frame_followed_by_a_good_one():
    items = parse(GOOD[:9] + GOOD)
    assert items[-1] == Frame("0102030405")
    assert [i for i in items if isinstance(i, Frame)] == [Frame("0102030405")]


def test_non_hex_inside_frame_is_malformed():
    (item,) = parse(b"\x020102G30405\x03")
    assert isinstance(item, Rejected) and item.reason == "malformed"


def test_discarded_bytes_are_counted():
    parser = FrameParser()
    parser.feed(b"abc" + GOOD)
    assert parser.discarded == 3


def test_a_frame_without_its_stx_is_stray_bytes_and_a_malformed_frames_tail_is_not():
    """A frame whose STX another reader took is stray (counted by the driver as a bad frame); the
    rest of a frame already rejected as malformed is not counted a second time."""
    parser = FrameParser()
    assert parser.feed(GOOD[1:] + GOOD) == [Frame("0102030405")]
    assert parser.stray == parser.discarded == len(GOOD) - 1 and parser.stray_runs == 1
    short = GOOD[:1] + GOOD[2:]  # the first byte after STX lost: malformed at the ETX
    (rejected, good) = parser.feed(short + b"\r\n" + GOOD)
    assert rejected.reason == "malformed" and good == Frame("0102030405")
    assert parser.stray == len(GOOD) - 1 and parser.discarded == len(GOOD) - 1 + 3  # ETX, CR, LF: its tail
    assert parser.stray_runs == 1
    assert parser.feed(b"x") == [] and parser.feed(b"yz" + GOOD[:5]) == [] and parser.stray_runs == 2  # one run
    assert parser.pending == GOOD[:5]


# -- fuzzing -------------------------------------------------------------------------------------
VALID = re.compile(rb"\x02([0-9A-Fa-f]{12})[\r\n]{0,2}\x03")


def reference(data: bytes) -> list[Frame]:
    """Every valid frame in ``data``: the property the parser must match exactly."""
    frames = []
    for m in VALID.finditer(data):
        raw = bytes.fromhex(m.group(1).decode())
        body, check = raw[:5], raw[5]
        if body[0] ^ body[1] ^ body[2] ^ body[3] ^ body[4] == check and any(body):
            frames.append(Frame(body.hex().upper()))
    return frames


frame_bytes = st.builds(
    lambda uid, eol, bad: encode_frame(uid.hex(), eol=eol, checksum=0x5A if bad else None),
    st.binary(min_size=5, max_size=5),
    st.sampled_from([b"", b"\r", b"\n", b"\r\n", b"\r\n\r"]),
    st.booleans(),
)
pieces = st.one_of(
    st.binary(max_size=20),
    frame_bytes,
    frame_bytes.map(lambda f: f[: len(f) // 2]),
    st.sampled_from([b"\x02", b"\x03", b"\r\n"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(pieces, max_size=12), st.lists(st.integers(1, 17), max_size=10))
def test_parser_yields_exactly_the_valid_frames_however_the_bytes_are_split(parts, cuts):
    data = b"".join(parts)
    chunks, pos = [], 0
    for cut in cuts:
        chunks.append(data[pos : pos + cut])
        pos += cut
    chunks.append(data[pos:])
    frames = [i for i in parse(*chunks) if isinstance(i, Frame)]
    assert frames == reference(data)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_parser_never_raises_and_never_reads_random_bytes_that_are_not_frames(data):
    frames = [i for i in parse(data) if isinstance(i, Frame)]
    assert frames == reference(data)

"""PC/SC driver against the real stack: a private pcscd, vpcd and our virtual card."""

from __future__ import annotations

import threading
import time

import pytest
from prometheus_client import REGISTRY

from drivers.base import FaultKind, ReaderState
from drivers.pcsc import DataFile, PcscReader, interpret_get_data
from portgate.records import ReaderKind
from app.demo.pcsc import VpcdEntry, free_port_pair

pytestmark = pytest.mark.pcsc

SLOT0, SLOT1 = "Virtual PCD * 00", "Virtual PCD * 01"


def control_reader(pattern: str = SLOT0, reader_id: str = "ctl", **kwargs):  # type: ignore[no-untyped-def]
    return lambda on_status: PcscReader(
        reader_id, ReaderKind.CONTROL, pattern, on_status=on_status, poll_ms=300, **kwargs
    )


def faults(reader_id: str, kind: FaultKind) -> float:
    value = REGISTRY.get_sample_value(
        "portgate_reader_faults_total", {"reader_id": reader_id, "kind": kind.value}
    )
    return value or 0.0


def up(reader_id: str) -> float | None:
    return REGISTRY.get_sample_value("portgate_reader_up", {"reader_id": reader_id})


# -- pure part ------------------------------------------------------------------------------------
def test_get_data_ok_gives_canonical_uid():
    assert interpret_get_data(bytes.fromhex("04a1b2c39000")).uid == "04A1B2C3"


def test_get_data_6cxx_asks_for_retry_with_that_length():
    answer = interpret_get_data(bytes.fromhex("6C07"))
    assert (answer.uid, answer.retry_le) == (None, 7)


@pytest.mark.parametrize("response", ["6A81", "6D00", "9000", "01", "", "0102030405060708090A0B9000"])
def test_get_data_other_answers_are_unsupported(response):
    answer = interpret_get_data(bytes.fromhex(response))
    assert answer.uid is None and answer.retry_le is None


# -- real stack ----------------------------------------------------------------------------------
def test_card_present_at_start_up_is_read(card, run_reader):
    card.insert("04A1B2C3D4E5F6")
    time.sleep(0.6)  # pcscd polls vpcd every 400 ms: let it see the card before the driver starts
    running = run_reader(control_reader())
    read = running.next_read()
    assert (read.uid, read.reader_id, read.kind) == ("04A1B2C3D4E5F6", "ctl", ReaderKind.CONTROL)
    assert read.wall.tzinfo is not None
    assert up("ctl") == 1


def test_one_read_per_insertion_and_a_new_read_after_removal(card, run_reader):
    running = run_reader(control_reader())
    running.wait_status(lambda s: s.state is ReaderState.READY)
    card.insert("11223344")
    assert running.next_read().uid == "11223344"
    assert running.no_read(1.0)  # card stays: no second read
    card.remove()
    time.sleep(0.6)  # pcscd polls vpcd every 400 ms: a faster re-tap is invisible to PC/SC
    card.insert("11223344")
    assert running.next_read().uid == "11223344"


def test_card_asking_for_exact_length_with_6cxx_is_read(card, run_reader):
    card.behaviour.want_le = True
    running = run_reader(control_reader())
    card.insert("A1B2C3D4E5F607")
    assert running.next_read().uid == "A1B2C3D4E5F607"


def test_unsupported_status_word_gives_no_read_and_a_status(card, run_reader):
    before = faults("ctl-unsup", FaultKind.UNSUPPORTED_CARD)
    card.behaviour.get_data_sw = b"\x6a\x81"
    running = run_reader(control_reader(reader_id="ctl-unsup"))
    card.insert("11223344")
    status = running.wait_status(lambda s: s.fault is FaultKind.UNSUPPORTED_CARD)
    assert "6A81" in status.detail and status.state is ReaderState.READY
    assert faults("ctl-unsup", FaultKind.UNSUPPORTED_CARD) == before + 1
    card.remove()
    card.behaviour.get_data_sw = None
    card.insert("55667788")
    assert running.next_read().uid == "55667788"


def test_card_removed_mid_transaction_gives_no_read_then_recovers(card, run_reader):
    card.behaviour.vanish_on_get_data = True
    running = run_reader(control_reader(reader_id="ctl-mid"))
    card.insert("11223344")
    status = running.wait_status(lambda s: s.fault is not None)
    assert status.fault in (FaultKind.CARD_REMOVED, FaultKind.PCSC_ERROR)
    assert running.reads.empty()
    card.behaviour.vanish_on_get_data = False
    card.insert("99887766")
    assert running.next_read().uid == "99887766"


def test_data_file_is_read_after_the_uid(card, run_reader):
    card.behaviour.files[b"\xe1\x04"] = b"REG=12345;CAT=vigia"
    data_file = DataFile(bytes.fromhex("00A4000C02E104"), bytes.fromhex("00B0000000"))
    running = run_reader(control_reader(data_file=data_file))
    card.insert("11223344")
    read = running.next_read()
    assert (read.uid, read.data) == ("11223344", b"REG=12345;CAT=vigia")


def test_missing_data_file_still_gives_the_uid(card, run_reader):
    data_file = DataFile(bytes.fromhex("00A4000C02E104"), bytes.fromhex("00B0000000"))
    running = run_reader(control_reader(data_file=data_file))
    card.insert("11223344")
    read = running.next_read()
    assert (read.uid, read.data) == ("11223344", None)


def test_two_readers_map_to_their_own_ids_and_kinds(card, card2, run_reader):
    control = run_reader(control_reader(SLOT0, "gate1-control"))
    badge = run_reader(
        lambda cb: PcscReader("gate1-badge", ReaderKind.BADGE, SLOT1, on_status=cb, poll_ms=300)
    )
    card2.insert("BADBADBA")
    card.insert("C0C0C0C0")
    b, c = badge.next_read(), control.next_read()
    assert (b.uid, b.reader_id, b.kind) == ("BADBADBA", "gate1-badge", ReaderKind.BADGE)
    assert (c.uid, c.reader_id, c.kind) == ("C0C0C0C0", "gate1-control", ReaderKind.CONTROL)
    assert badge.reads.empty() and control.reads.empty()


def test_pcscd_restart_is_survived_and_the_next_tap_is_read(pcscd, card, run_reader):
    before = faults("ctl-restart", FaultKind.DAEMON_LOST)
    running = run_reader(control_reader(reader_id="ctl-restart"))
    card.insert("11223344")
    assert running.next_read().uid == "11223344"
    card.remove()
    pcscd.stop()
    status = running.wait_status(lambda s: s.state is ReaderState.ABSENT)
    assert status.fault is FaultKind.DAEMON_LOST
    assert up("ctl-restart") == 0
    time.sleep(0.5)  # a few back-off rounds with pcscd down
    pcscd.start()
    running.wait_status(lambda s: s.state is ReaderState.READY)
    card.insert("55667788")
    assert running.next_read().uid == "55667788"
    assert faults("ctl-restart", FaultKind.DAEMON_LOST) >= before + 1
    assert up("ctl-restart") == 1


def test_driver_started_while_pcscd_is_down_waits_for_it(pcscd, card, run_reader):
    pcscd.stop()
    running = run_reader(control_reader(reader_id="ctl-late"))
    running.wait_status(lambda s: s.state is ReaderState.ABSENT)
    pcscd.start()
    card.insert("11223344")
    assert running.next_read().uid == "11223344"


def test_reader_gone_after_restart_is_absent_then_back(pcscd, card, run_reader):
    """The reader disappears from pcscd (restarted without its reader.conf entry) and returns."""
    running = run_reader(control_reader(reader_id="ctl-unplug"))
    running.wait_status(lambda s: s.state is ReaderState.READY)
    default = list(pcscd.entries)
    pcscd.set_entries([VpcdEntry("Other PCD", free_port_pair())])
    pcscd.restart()
    running.wait_status(lambda s: s.state is ReaderState.ABSENT and "nenhum leitor" in s.detail)
    pcscd.set_entries(default)
    pcscd.restart()
    running.wait_status(lambda s: s.state is ReaderState.READY)
    card.insert("11223344")
    assert running.next_read().uid == "11223344"


def test_reader_unplugged_while_context_lives_is_reported(pcscd, card, run_reader, mocker):
    """pcsc-lite 1.9.9 cannot unplug a vpcd reader while running (SIGUSR1 does not rescan
    reader.conf), so the unplug is simulated at the reader list: the one fault the real stack
    cannot produce on demand."""
    from drivers import pcsc as module

    real_list = module.scard.SCardListReaders
    unplugged = threading.Event()

    def list_readers(context, groups):  # type: ignore[no-untyped-def]
        hresult, names = real_list(context, groups)
        if unplugged.is_set():
            names = [n for n in names if not n.endswith(" 00")]
        return hresult, names

    mocker.patch.object(module.scard, "SCardListReaders", list_readers)
    before = faults("ctl-pnp", FaultKind.READER_LOST)
    running = run_reader(control_reader(reader_id="ctl-pnp"))
    running.wait_status(lambda s: s.state is ReaderState.READY)
    unplugged.set()
    status = running.wait_status(lambda s: s.fault is FaultKind.READER_LOST)
    assert status.state is ReaderState.ABSENT
    assert faults("ctl-pnp", FaultKind.READER_LOST) == before + 1
    unplugged.clear()
    running.wait_status(lambda s: s.state is ReaderState.READY)
    card.insert("11223344")
    assert running.next_read().uid == "11223344"


def test_no_matching_reader_is_absent(pcscd, run_reader):
    running = run_reader(control_reader("No Such Reader*", "ctl-none"))
    status = running.wait_status(lambda s: s.state is not None)
    assert status.state is ReaderState.ABSENT
    assert up("ctl-none") == 0


def test_close_from_another_thread_returns_promptly(pcscd, run_reader):
    running = run_reader(
        lambda cb: PcscReader("ctl-close", ReaderKind.CONTROL, SLOT0, on_status=cb, poll_ms=60_000)
    )
    running.wait_status(lambda s: s.state is ReaderState.READY)
    time.sleep(0.2)  # now blocked in SCardGetStatusChange for up to 60 s
    running.reader.close()
    running.thread.join(5)
    assert not running.thread.is_alive()

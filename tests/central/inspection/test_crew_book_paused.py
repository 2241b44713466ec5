"""The crew hours book's builders run with the cyclic collector paused (portgate.gctune.paused(), issue
32 item 6): a fifth of the book's time went to collector passes over its acyclic records."""

from __future__ import annotations

import datetime as dt
import gc

import pytest

from central.inspection import book_render, crew_hours, files
from central.inspection.hours_book import HoursBook
from central.inspection.work_periods import Kind, WorkPeriod


def test_the_crew_books_builders_run_with_the_collector_off_and_leave_it_on(monkeypatch):
    seen = []

    def spy(out):
        return lambda *a, **k: seen.append(gc.isenabled()) or out

    monkeypatch.setattr(files, "build_cells", spy([]))
    monkeypatch.setattr(crew_hours, "_check_sorted", spy(None))
    monkeypatch.setattr(book_render, "_csv", spy(""))
    monkeypatch.setattr(book_render, "_overtime_table", spy(""))
    was = gc.isenabled()
    gc.enable()
    try:
        files.read_periods("periods.csv")  # build_cells reads nothing: the file is not opened
        start = dt.datetime(2024, 1, 1, 8, tzinfo=dt.UTC)
        crew_hours.compute_book([WorkPeriod("S", "C1", "Ana", "cook", start, start + dt.timedelta(hours=2),
                                            Kind.WORK)], ship="S", date_from=dt.date(2024, 1, 1),
                                date_to=dt.date(2024, 1, 1), tz="UTC")
        book = HoursBook("S", dt.date(2024, 1, 1), dt.date(2024, 1, 1), "UTC", [], [], [])
        book_render.overtime_csv(book), book_render.transgressions_csv(book), book_render.book_html(book)
        assert seen == [False] * 5 and gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


@pytest.mark.parametrize("fn", [files.read_periods, crew_hours.compute_book, book_render.book_html])
def test_the_wrapped_function_keeps_its_name_and_doc(fn):
    assert fn.__name__ == fn.__wrapped__.__name__ and fn.__doc__ == fn.__wrapped__.__doc__

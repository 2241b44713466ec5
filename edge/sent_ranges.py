"""The set of a journal's delivered seqs, as sorted disjoint inclusive ranges (pure, no I/O).

The gate journal keeps "sent" outside its event rows (``edge.journal``, table ``journal_sent``): in
order of acknowledgement the set is one range ``first..n`` growing at its top, plus a few
exceptions (priority rows sent ahead of the backlog, PUBACKs out of order inside the window). A
mark then rewrites one or two ~20-byte rows instead of every ~300-byte event row it covers.

``SentRanges.merge`` never adds a seq that was not passed in (a run is only ever the seqs of one
PUBACK group: DESIGN.md, a row leaves the outbox only on the PUBACK of its own message id;
STYLE.md 7).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Iterator

Range = tuple[int, int]  # (lo, hi), inclusive, lo <= hi


class SentRanges:
    """Sorted, disjoint, non-adjacent inclusive ranges of sent seqs.

    ``ranges``: any iterable of ``(lo, hi)`` (overlapping or adjacent ones are merged; ranges with
    ``hi < lo`` dropped). Not thread-safe (the journal holds its lock)."""

    def __init__(self, ranges: Iterable[Range] = ()) -> None:
        self._lo: list[int] = []
        self._hi: list[int] = []
        for lo, hi in sorted(ranges):
            if hi < lo:
                continue
            if self._hi and lo <= self._hi[-1] + 1:
                self._hi[-1] = max(self._hi[-1], hi)
            else:
                self._lo.append(lo)
                self._hi.append(hi)

    def __iter__(self) -> Iterator[Range]:
        return iter(zip(self._lo, self._hi))

    def __len__(self) -> int:
        """The number of ranges (not of seqs; see ``count``)."""
        return len(self._lo)

    def count(self) -> int:
        """How many seqs are in the set."""
        return sum(hi - lo + 1 for lo, hi in self)

    def covers(self, seq: int) -> bool:
        i = bisect.bisect_right(self._lo, seq) - 1
        return i >= 0 and seq <= self._hi[i]

    def first_unsent(self, start: int) -> int:
        """The lowest seq ``>= start`` not in the set."""
        i = bisect.bisect_right(self._lo, start) - 1
        if i >= 0 and start <= self._hi[i]:
            return self._hi[i] + 1
        return start

    def next_range(self, seq: int) -> Range | None:
        """The first range whose ``lo > seq``, or None."""
        i = bisect.bisect_right(self._lo, seq)
        return (self._lo[i], self._hi[i]) if i < len(self._lo) else None

    def merge(self, runs: Iterable[Range]) -> tuple[SentRanges, int, list[Range], list[int]]:
        """The set with ``runs`` added, without changing this one: ``(new set, seqs newly added,
        ranges of the new set that are new or grew, lo of every old range absorbed into one of
        them)``. ``runs``: sorted, disjoint inclusive ranges (``seq_runs``)."""
        lo, hi = list(self._lo), list(self._hi)
        added = 0
        touched: dict[int, int] = {}  # new lo -> hi of the changed ranges
        gone: list[int] = []
        for a, b in runs:
            i = bisect.bisect_left(hi, a - 1)  # first range that ends at or after a - 1
            j = i
            inside = 0
            new_lo, new_hi = a, b
            while j < len(lo) and lo[j] <= b + 1:
                inside += max(0, min(hi[j], b) - max(lo[j], a) + 1)
                new_lo, new_hi = min(new_lo, lo[j]), max(new_hi, hi[j])
                j += 1
            fresh = (b - a + 1) - inside
            if fresh == 0:
                continue
            added += fresh
            for k in range(i, j):
                touched.pop(lo[k], None)
                if lo[k] != new_lo:
                    gone.append(lo[k])
            lo[i:j] = [new_lo]
            hi[i:j] = [new_hi]
            touched[new_lo] = new_hi
        out = SentRanges()
        out._lo, out._hi = lo, hi
        return out, added, sorted(touched.items()), sorted(set(gone) - set(touched))


def seq_runs(seqs: Iterable[int]) -> list[tuple[int, int]]:
    """Sorted, de-duplicated ``seqs`` as inclusive contiguous runs: ``[5, 1, 2, 3, 9, 2]`` ->
    ``[(1, 3), (5, 5), (9, 9)]``. Every seq of every run is one of ``seqs``."""
    runs: list[tuple[int, int]] = []
    for s in sorted(set(seqs)):
        if runs and s == runs[-1][1] + 1:
            runs[-1] = (runs[-1][0], s)
        else:
            runs.append((s, s))
    return runs

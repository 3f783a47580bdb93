"""The timeline's cache lane: the idle gap before each request against the cache's lifetimes, and what each
request wrote to the cache by cause, with the words that explain them to someone new to prompt caches."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from foldscope.core.forensics.cache_report import GAP_MARKS, CacheReport, cache_report
from foldscope.core.forensics.causes import CAUSES, gaps
from foldscope.core.model.session import Session
from foldscope.core.readout.cost_facts import duration

# What each write cause means, short enough for a legend and a tooltip.
CAUSE_LABELS = {
    "first": "first",
    "append": "append",
    "rewrite": "rewrite",
    "expired": "expired",
    "provider": "provider miss",
    "unexplained": "unexplained",
}
BANDS = ("short", "past_5m", "past_1h")  # an idle gap within the 5-minute lifetime, past it, past an hour
BAND_LABELS = {"short": "under 5 min", "past_5m": "past 5 min", "past_1h": "past 1 h"}
LEGEND = (
    "Idle: the wait before each request (log scale). The provider keeps cached text 5 minutes "
    "(1 hour for 1-hour marks); after a longer wait it is stored again and paid for again."
)


@dataclass(frozen=True)
class LaneRow:
    """One request in the lane: the gap before it and its cache write by cause (empty while not yet known)."""

    index: int
    gap_s: float | None
    causes: dict[str, int] = field(default_factory=dict)
    written: int = 0
    known: bool = False  # the causes are attributed (False: only the gap, from the timestamps)
    # An implicit cache (core.forensics.reads): `causes` and `written` are what broke its read and the tokens it
    # fell short by, in the same causes' colours; `read` what it read. No write is billed.
    implicit: bool = False
    read: int = 0

    @property
    def band(self) -> str | None:
        return band(self.gap_s)


def band(seconds: float | None) -> str | None:
    """Which of the lifetimes a gap passed: None without timestamps."""
    if seconds is None:
        return None
    five, hour = GAP_MARKS
    return "past_1h" if seconds > hour else "past_5m" if seconds > five else "short"


def gap_rows(session: Session) -> list[LaneRow]:
    """The lane from the timestamps alone (no count): the same gaps the cache report gives."""
    return [LaneRow(r.index, g) for r, g in zip(session.trace, gaps(session.trace))]


def lane_rows(session: Session, policy=None, counter=None) -> list[LaneRow]:
    """The lane with every cache write's causes: core.forensics.cache_report's, the Cost panel's (its rows made now:
    the report made for them is not kept)."""
    return list(lane_rows_of(cache_report(session, policy, counter)))


def lane_rows_of(report: CacheReport) -> LaneRows:
    """The lane read from a cache report already made (the Cost panel's, from the trace's own count)."""
    return LaneRows(report.rows)


def lane_written(row: Any) -> int:
    """What a cache report row's lane row draws in its writes row: an implicit cache's shortfall, else its write."""
    if row.read is not None:
        return row.read.short
    usage = row.causes.usage
    return usage.cache_write if usage is not None else 0


def lane_row(row: Any) -> LaneRow:
    """One request's lane row from its cache report row (core.forensics.cache_report.CacheRow)."""
    c = row.causes
    if row.read is not None:
        read = c.usage.cache_read if c.usage is not None else 0
        broke = {k: v for k, v in row.read.broke.items() if v}
        return LaneRow(c.index, c.gap_s, broke, lane_written(row), c.usage is not None, True, read)
    return LaneRow(c.index, c.gap_s, {k: v for k, v in c.causes.items() if v}, lane_written(row), c.usage is not None)


def lane_facts(rows: Sequence[LaneRow]) -> tuple[bool, bool, int]:
    """Whether any row has anything to draw (a gap's time or a write), whether any is an implicit cache's, and the most
    any wrote: of a report's rows (LaneRows) read from them, no lane row made (11,384 at 50,000 messages, each with its
    causes' dict, on the GUI thread as the counted document first paints)."""
    if isinstance(rows, LaneRows):  # (gap, written, implicit) of each row, read from the report's rows
        facts = ((r.causes.gap_s, lane_written(r), r.read is not None) for r in rows.report_rows)
    else:
        facts = ((r.gap_s, r.written, r.implicit) for r in rows)
    shown, implicit, most = False, False, 0
    for gap, written, is_implicit in facts:
        shown = shown or gap is not None or bool(written)
        implicit = implicit or is_implicit
        most = max(most, written)
    return shown, implicit, most


def lane_cells(rows: Sequence[LaneRow]) -> Iterator[tuple[int, float | None, int, Mapping[str, int]]]:
    """Each row's (index, gap, written, causes) as the lane paints it: of a report's rows (LaneRows) read from them,
    no lane row made (11,384 at 50,000 messages, each a frozen dataclass and its causes' dict, on the GUI thread as the
    counted document first paints: 41 -> 15 ms at load 7). A cause with no tokens may be in the causes, as 0."""
    if isinstance(rows, LaneRows):
        for r in rows.report_rows:
            c = r.causes
            yield c.index, c.gap_s, lane_written(r), (r.read.broke if r.read is not None else c.causes)
    else:
        for row in rows:
            yield row.index, row.gap_s, row.written, row.causes


class LaneRows(Sequence[LaneRow]):
    """The lane's rows read from a cache report's rows, each made when asked for (a paint, a tooltip): the report is
    kept for the Cost panel all the same, so the lane keeps no row a request beside it (3.6 MiB at 50,000 messages,
    made as the counted document was painted, at the window's peak). Equal to any sequence of the same rows."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Sequence[Any]) -> None:
        self._rows = rows

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def report_rows(self) -> Sequence[Any]:
        """The cache report's rows these are read from."""
        return self._rows

    @overload
    def __getitem__(self, k: int) -> LaneRow: ...
    @overload
    def __getitem__(self, k: slice) -> list[LaneRow]: ...
    def __getitem__(self, k: int | slice) -> LaneRow | list[LaneRow]:
        if isinstance(k, slice):
            return [lane_row(row) for row in self._rows[k]]
        return lane_row(self._rows[k])

    def __iter__(self) -> Iterator[LaneRow]:
        return map(lane_row, self._rows)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if not isinstance(other, Sequence):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other))

    __hash__ = None  # type: ignore[assignment]


def lane_sentence(row: LaneRow) -> str:
    """One request's gap and write in words, for the timeline's tooltip."""
    if row.gap_s is None:
        idle = "no time recorded before it"
    else:
        idle = f"idle {duration(row.gap_s)} before it"
        if row.band == "past_1h":
            idle += ", past even the 1-hour cache lifetime"
        elif row.band == "past_5m":
            idle += ", past the 5-minute cache lifetime"
    if not row.known:
        return f"{idle}."
    if row.implicit:
        said = f"{idle}; it read {row.read:,} tokens from the cache (the provider caches by itself, no write is billed)"
        if not row.written:
            return f"{said}."
        causes = ", ".join(f"{CAUSE_LABELS[c]} {n:,}" for c in CAUSES if (n := row.causes.get(c)))
        return f"{said}, {row.written:,} short of the prefix the request before had sent ({causes})."
    if not row.written:
        return f"{idle}; it stored nothing new in the cache."
    causes = ", ".join(f"{CAUSE_LABELS[c]} {n:,}" for c in CAUSES if (n := row.causes.get(c)))
    return f"{idle}; it stored {row.written:,} tokens in the cache ({causes})."

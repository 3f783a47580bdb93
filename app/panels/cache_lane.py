"""The cache lane under the timeline: the idle gap before each request against the 5-minute and 1-hour cache
lifetimes, each request's cache write coloured by cause, and a legend (facts from core.readout.cache_lane)."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from foldscope.app.panels.cost import WRITE_CAUSES, part_colour
from foldscope.app.qt import QColor, QPainter, QPen, QPointF, QRectF, Qt
from foldscope.app.theme import is_dark, muted_colour
from foldscope.core.forensics.cache_report import GAP_MARKS
from foldscope.core.readout.cache_lane import BAND_LABELS, BANDS, CAUSE_LABELS, LaneRow, lane_cells, lane_facts
from foldscope.core.readout.cache_lane import band as gap_band

# The rows' heights (idle, writes, the space between, the legend): roomy in a tall timeline, compact in the
# window's first 170 pixels so the plot keeps most of them (a minimum height would push a 768-pixel screen).
# A 768-pixel screen's first timeline (124 pixels) gets the lean lane, which keeps its legend: without it a new user
# at 1366x768 saw coloured bars nothing named. Only under that (a tall dock dragged up) is the lane tight and drops
# its legend (the tooltips and the Cost panel say the same), so the plot above keeps enough pixels to be read.
ROOMY, COMPACT = (24.0, 16.0, 3.0, 16.0), (15.0, 10.0, 2.0, 14.0)
LEAN, TIGHT = (8.0, 7.0, 1.0, 12.0), (9.0, 8.0, 1.0, 0.0)
ROOMY_FROM = 230  # timeline heights from here get the roomy lane
COMPACT_FROM = 150  # and from here the compact one
LEAN_FROM = 120  # and from here the lean one; below, the tight one


def rows_for(height: float) -> tuple[float, float, float, float]:
    if height >= COMPACT_FROM:
        return ROOMY if height >= ROOMY_FROM else COMPACT
    return LEAN if height >= LEAN_FROM else TIGHT


def lane_height(height: float) -> float:
    """What the lane takes under the timeline's plot, for a timeline this tall."""
    idle, write, gap, legend = rows_for(height)
    return idle + gap + write + gap + legend


CAP = 4 * 3600.0  # the idle scale's top: gaps longer than this are drawn at the top
LOG_CAP = math.log1p(CAP)
WRITE_CAUSE_SET = frozenset(WRITE_CAUSES)  # the causes a write is drawn by, for a membership test (their order is WRITE_CAUSES)


def band_colour(band: str) -> QColor:
    """Short gaps muted; past 5 minutes the expired cause's colour; past an hour a deeper red."""
    if band == "short":
        return QColor("#9aa5b1" if not is_dark() else "#6b7785")
    if band == "past_5m":
        return part_colour("expired")
    return QColor("#b03a2e" if not is_dark() else "#ff6f61")


# One shape of the lane's: ("gap", request, seconds, band, bar) or ("write", request, cause, tokens, segment).
Shape = tuple[str, int, float | str, str | int, QRectF]


def _no_shapes() -> Iterator[Shape]:
    return iter(())


@dataclass
class Drawn:
    """What the lane last painted, for tests and tooltips: each gap bar, each cause segment, the lines, the legend.
    The bars and segments are laid out again when asked for (`shapes`: the paint's own layout of the rows it drew),
    not kept a shape a request: 2.8 MiB at 50,000 messages, made as the counted document was painted."""

    shapes: Callable[[], Iterator[Shape]] = _no_shapes
    lines: list[tuple[str, float]] = field(default_factory=list)  # ("5 min" | "1 h", y)
    legend: list[tuple[str, QColor, QRectF]] = field(default_factory=list)  # (words, colour, square)
    left_off: int = 0  # the legend's items a narrow lane had no room for (its line says so)
    idle: QRectF = field(default_factory=QRectF)
    written: QRectF = field(default_factory=QRectF)

    @property
    def gaps(self) -> list[tuple[int, float, str, QRectF]]:
        """Each gap bar drawn: (request, seconds, band, bar)."""
        return [(k, seconds, band, bar) for kind, k, seconds, band, bar in self.shapes() if kind == "gap"]  # type: ignore[misc]

    @property
    def writes(self) -> list[tuple[int, str, int, QRectF]]:
        """Each cause segment drawn: (request, cause, tokens, segment)."""
        return [(k, cause, n, segment) for kind, k, cause, n, segment in self.shapes() if kind == "write"]  # type: ignore[misc]


def idle_y(seconds: float, bottom: float, height: float) -> float:
    """A gap's height on a log scale from 1 s to CAP, so seconds, minutes and hours all show, in a row `height` tall
    ending at `bottom` (numbers, not the row's QRectF: read once a paint, not twice a request)."""
    share = math.log1p(min(max(seconds, 0.0), CAP)) / LOG_CAP
    return bottom - height * share


class CacheLane:
    """Paints the lane for the rows it holds; `slot_rect(k)` gives the x extent of request k on the timeline."""

    def __init__(self) -> None:
        self.rows: Sequence[LaneRow] = []  # replaced, never changed in place (a LaneRows reads a cache report's)
        self.drawn = Drawn()
        self._facts: tuple[Sequence[LaneRow], bool, bool, int] | None = None  # (rows, shown, implicit, most written)

    def _rows_facts(self) -> tuple[bool, bool, int]:
        """Whether there is anything to draw, whether any row is an implicit cache's, the most any wrote: one pass
        over the rows they hold, kept until they are replaced."""
        rows = self.rows
        if self._facts is None or self._facts[0] is not rows:
            self._facts = (rows, *lane_facts(rows))
        return self._facts[1:]

    def shown(self) -> bool:
        """Whether there is anything to draw: a timestamp or a reported cache write."""
        return self._rows_facts()[0]

    def paint(
        self,
        painter: QPainter,
        left: float,
        top: float,
        right: float,
        slots: tuple[float, float],
        label_width: float,
        text: QColor,
        height: float,
    ) -> None:
        """`slots`: where the timeline's slot 0 starts and how wide each slot is (slot k starts k widths on)."""
        drawn = self.drawn = Drawn()
        idle_h, write_h, gap, legend_h = rows_for(height)
        idle = QRectF(left, top, right - left, idle_h)
        written = QRectF(left, top + idle_h + gap, right - left, write_h)
        drawn.idle, drawn.written = idle, written
        muted = muted_colour()
        small = painter.font()
        small.setPointSizeF(max(small.pointSizeF() - 1.5, 6.5))
        painter.setFont(small)
        painter.setPen(muted)
        flags = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(QRectF(0, idle.top(), label_width - 6, idle.height()), flags, "idle")
        _, implicit, most = self._rows_facts()  # implicit: a cache read, never billed as a write: its short reads
        painter.drawText(QRectF(0, written.top(), label_width - 6, written.height()), flags, "short" if implicit else "writes")
        painter.fillRect(idle, QColor(127, 127, 127, 18))
        painter.fillRect(written, QColor(127, 127, 127, 18))
        # Each colour made once a paint, not once a request (the theme cannot change during a paint).
        bands = {band: band_colour(band) for band in BANDS}
        causes = {cause: part_colour(cause) for cause in WRITE_CAUSES}
        drawn.shapes = functools.partial(_shapes, self.rows, most, slots, left, right, idle, written)
        rect = QRectF()  # set to each shape's edges in turn: a QRectF made a shape cost 1 us more (22,768 at 50k)
        for kind, _, cause, band, x, y, w, h in _laid_out(self.rows, most, slots, left, right, idle, written):
            rect.setRect(x, y, w, h)
            if kind == "gap":
                painter.fillRect(rect, bands.get(band) or band_colour(band))  # type: ignore[arg-type]
            else:
                painter.fillRect(rect, causes[cause])  # type: ignore[index]
        # The lifetimes across the idle row, labelled at its right end.
        for seconds, label in zip(GAP_MARKS, ("5 min", "1 h")):
            y = idle_y(seconds, idle.bottom(), idle.height())
            painter.setPen(QPen(band_colour("past_5m" if label == "5 min" else "past_1h"), 1, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(idle.left(), y), QPointF(idle.right(), y))
            drawn.lines.append((label, y))
        self._legend(painter, QRectF(left, written.bottom() + gap, right - left, legend_h), drawn, text, implicit)

    def _legend(self, painter: QPainter, rect: QRectF, drawn: Drawn, text: QColor, implicit: bool = False) -> None:
        """One line: the idle bands, then the write causes (an implicit cache's: what broke a short read), each a
        square in its colour and its words."""
        if rect.height() < 8:
            return  # a tight lane has no legend row
        metrics = painter.fontMetrics()
        items = [(f"idle {BAND_LABELS[b]}", band_colour(b)) for b in BANDS]
        if implicit:
            items += [(f"read short: {CAUSE_LABELS[c]}", part_colour(c)) for c in WRITE_CAUSES if c not in ("first", "append")]
        else:
            items += [(f"{CAUSE_LABELS[c]} write", part_colour(c)) for c in WRITE_CAUSES]
        x, side = rect.left(), min(9.0, rect.height() - 4)
        painter.setPen(text)
        baseline = rect.center().y() + metrics.ascent() / 2 - 1
        head = "dashed: the 5 min and 1 h cache lifetimes  ·  "
        painter.drawText(QPointF(x, baseline), head)
        x += metrics.horizontalAdvance(head)
        tail = "… more: hover a bar"  # a lane too narrow for every item says where the rest are, never cuts one
        for n, (words, colour) in enumerate(items):
            need = side + 4 + metrics.horizontalAdvance(words) + 12
            room = rect.right() - (0 if n == len(items) - 1 else metrics.horizontalAdvance(tail))
            if x + need > room:
                drawn.left_off = len(items) - n
                painter.drawText(QPointF(x, baseline), tail)
                break
            square = QRectF(x, rect.center().y() - side / 2, side, side)
            painter.fillRect(square, colour)
            painter.setPen(text)
            painter.drawText(QPointF(x + side + 4, baseline), words)
            drawn.legend.append((words, colour, square))
            x += need

    def row_at(self, index: int) -> LaneRow | None:
        return self.rows[index] if 0 <= index < len(self.rows) and self.rows[index].index == index else None


def _shapes(
    rows: Sequence[LaneRow], most: int, slots: tuple[float, float], left: float, right: float, idle: QRectF, written: QRectF
) -> Iterator[Shape]:
    """The lane's bars and segments in the order they are painted, each with its rectangle (_laid_out's)."""
    for kind, index, what, value, x, y, w, h in _laid_out(rows, most, slots, left, right, idle, written):
        yield (kind, index, what, value, QRectF(x, y, w, h))


def _laid_out(
    rows: Sequence[LaneRow], most: int, slots: tuple[float, float], left: float, right: float, idle: QRectF, written: QRectF
) -> Iterator[tuple[str, int, float | str, str | int, float, float, float, float]]:
    """The lane's bars and segments in the order they are painted, their rectangles' left, top, width and height: each
    row's gap bar on the idle row, then its write's segments by cause, bottom up (`most`: the most any row wrote;
    `slots`: where the timeline's slot 0 starts and how wide each slot is)."""
    start, slot = slots
    pad = max(slot * 0.15, 0.5)
    width = max(slot - 2 * pad, 1.0)
    # The rows' edges read once, not once a shape (a QRectF's bottom and height are calls into Qt).
    idle_bottom, idle_height = idle.bottom(), idle.height()
    written_bottom, written_height = written.bottom(), written.height()
    edge = right + 0.5
    for index, gap_s, wrote, causes in lane_cells(rows):  # a cache report's rows read as they are, no LaneRow made
        inner_left = start + index * slot + pad
        if inner_left < left or inner_left + width > edge:  # out of the zoomed timeline's view
            continue
        if gap_s is not None and (passed := gap_band(gap_s)) is not None:
            y = idle_y(gap_s, idle_bottom, idle_height)
            yield ("gap", index, gap_s, passed, inner_left, y, width, max(idle_bottom - y, 1.0))
        if wrote and most:
            # The height grows as the square root of what was written, so a small append still shows beside
            # the first write; the segments split it by cause, bottom up in WRITE_CAUSES' order (a write of one
            # cause, nearly every one, read without asking each cause).
            y, total = written_bottom, written_height * math.sqrt(wrote / most)
            for cause in causes if len(causes) == 1 else WRITE_CAUSES:
                n = causes.get(cause, 0)
                if not n or cause not in WRITE_CAUSE_SET:
                    continue
                h = total * n / wrote
                yield ("write", index, cause, n, inner_left, y - h, width, h)
                y -= h

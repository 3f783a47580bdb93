"""The window map's blocks in numbers: each bar's messages laid out by size, and what a paint fills per pixel column."""

from __future__ import annotations

import math
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import accumulate

from foldscope.app.qt import (
    QColor,
    QPointF,
    QRectF,
    Qt,
)
from foldscope.app.theme import colour_for_key, kind_key
from foldscope.core.readout.document import Document, is_note

LEFT, RIGHT = 100, 16
BAR_HEIGHT = 26
VIEW_Y = 44.0
STRIP = 20.0  # between the bars: the protected first round's bracket
# Copies and notes carry a pattern as well as a colour, so they stay distinct in grey or for colour-blind eyes.
LEGEND_FROM = 140  # the height from which the legend row is drawn under the bars
SUMMARY_TOP = 2  # the summary line's box starts here
PATTERNS = {"clipped_copy": Qt.BrushStyle.BDiagPattern, "note": Qt.BrushStyle.DiagCrossPattern}
# What leads the view bar, belonging to no message the file holds: named in the legend when the shown request has it.
LEAD_LEGEND = (("unseen_head", "unseen head"), ("framing", "framing"), ("scale", "scale"))
TAKEN_LABEL = "taken by the chosen fold record"
LEAD_COLOURS = {"unseen_head": QColor(150, 150, 150, 160), "framing": QColor(150, 150, 150, 60), "scale": QColor(150, 150, 150, 110)}
LEAD_WORDS = {
    "unseen_head": "unseen head: what the provider counted that the file does not hold (its system prompt and tools)",
    "system": "system prompt and tools",
    "framing": "framing: the JSON around and between the blocks, spread over the whole request",
    "scale": "scale margin: what the scale (calibrated from reported input) adds to the count, spread over the request",
}


@dataclass
class PaintPlan:
    """A paint's shapes, at most a few per pixel column of the map whatever the number of messages."""

    # (rectangle, colour, pattern, a line at its right edge): in order, as the next fill covers half that line
    fills: list[tuple[QRectF, QColor, Qt.BrushStyle | None, bool]] = field(default_factory=list)
    taken: list[tuple[float, float]] = field(default_factory=list)  # spans under the record bar a fold record took


def message_styles(doc: Document, start: int = 0) -> list[tuple[str, Qt.BrushStyle | None]]:
    """Each record message's kind key and pattern, in record order from `start`: what plan_paint asks of every
    block. A message never changes and the record only grows, so a map keeps these per record, adding what it gains."""
    out = []
    record = doc.session.record
    shared: dict[tuple[str, Qt.BrushStyle | None], tuple[str, Qt.BrushStyle | None]] = {}  # one tuple a style, not a message
    for i in range(start, len(record)):
        message = record[i]
        key = kind_key(message)  # "clipped_copy" for a copy; "note" for any message a note's key names, so the few
        # keyed "note" are asked whether they are notes, and no other message is (a copy's key is never a kind)
        pattern = PATTERNS[key] if key == "clipped_copy" or (key == "note" and is_note(message)) else None
        style = (key, pattern)
        out.append(shared.setdefault(style, style))
    return out


@dataclass
class Bar:
    """One bar's blocks as numbers, not shapes: block p is message `indexes[p]`, from `lefts[p]`, `widths[p]` wide
    (lefts[p + 1] is its right edge: each left is the last plus its width, as the blocks were laid end to end).
    A step lays the view bar out in floats; a rectangle is made only for what is drawn or asked for. Typed arrays (8
    bytes an entry, where a list of Python ints or floats takes 32-36), the full record's indexes a range: its bar of
    a 50,000-message session is 0.8 MB, not 5, held beside the session for as long as it is shown."""

    indexes: Sequence[int]  # a range (the full record's bar) or an array of the view's indexes
    lefts: array[float]  # one more than the blocks: the last is the bar's end
    widths: array[float]
    top: float
    in_view_bar: bool
    _positions: dict[int, int] | None = field(default=None, repr=False)

    @classmethod
    def laid(cls, indexes: Sequence[int], widths: list[float], start: float, top: float, in_view_bar: bool) -> Bar:
        # Made from lists, which an array copies in one pass: filled from an iterator it grows as it goes (twice the time).
        held = indexes if isinstance(indexes, range) else array("q", indexes)
        return cls(held, array("d", list(accumulate(widths, initial=start))), array("d", widths), top, in_view_bar)

    def __len__(self) -> int:
        return len(self.indexes)

    def rect(self, position: int) -> QRectF:
        return QRectF(self.lefts[position], self.top, self.widths[position], BAR_HEIGHT)

    def position_of(self, index: int) -> int | None:
        """The block showing a record index (its first, should a view name a message twice)."""
        if self._positions is None:
            # Built in C from the last block back, so a message named twice keeps its first block.
            count = len(self.indexes)
            self._positions = dict(zip(reversed(self.indexes), range(count - 1, -1, -1)))
        return self._positions.get(index)

    def blocks(self) -> list[tuple[int, QRectF, bool]]:
        return [(index, self.rect(p), self.in_view_bar) for p, index in enumerate(self.indexes)]

    def hit(self, point: QPointF) -> int | None:
        """The first block whose rectangle, with a pixel of grace either side, holds the point (the block a scan
        of every block finds): found by bisection, then checked on the rectangle itself."""
        x = point.x()
        # Rights (lefts[1:]) never decrease: the first block that can hold x ends at or after x - 0.5.
        start = max(0, bisect_left(self.lefts, x - 0.5 - 1e-6, 1) - 2)
        for p in range(start, len(self.indexes)):
            if self.lefts[p] - 0.5 > x + 1e-6:
                break
            if self.rect(p).adjusted(-0.5, 0, 0.5, 0).contains(point):
                return self.indexes[p]
        return None


def column_spans(bar: Bar, height: float = BAR_HEIGHT) -> list[tuple[int, QRectF, bool, bool]]:
    """The blocks a paint draws, by pixel column: (record index, rectangle, in the view bar, a line at its right).
    Blocks a pixel or wider are kept as they are; narrower ones share their pixel column, drawn as the block
    covering its centre (unsmoothed, a fill paints the pixels whose centre it covers, and the last one painted
    over a column is the one seen there). Geometry only, from the bar's numbers: a rectangle per column drawn."""
    out: list[tuple[int, QRectF, bool, bool]] = []
    top, in_view_bar = bar.top, bar.in_view_bar
    indexes, lefts, widths = bar.indexes, bar.lefts, bar.widths
    wide = [p for p, width in enumerate(widths) if width >= 1.0]
    start = 0
    for p in wide + [len(widths)]:
        if start < p:
            out.extend((indexes[q], QRectF(at, top, 1.0, height), in_view_bar, False) for at, q in _narrow_columns(lefts, widths, start, p))
        if p < len(widths):
            out.append((indexes[p], QRectF(lefts[p], top, widths[p], height), in_view_bar, widths[p] > 3))
        start = p + 1
    return out


def _narrow_columns(lefts: array[float], widths: array[float], start: int, end: int) -> list[tuple[int, int]]:
    """(pixel column, block) for the narrow blocks start..end-1 (each under a pixel wide), one a column whose
    centre one of them covers. Laid end to end (each left the last plus its width), at most one block covers a
    centre: the last that starts at or before it, if it ends past it. Found by bisection, a step a pixel column,
    not a block: a 25,000-message view was 25,000 turns of a loop on every paint."""
    found: list[tuple[int, int]] = []
    first, last = math.ceil(lefts[start] - 0.5), math.ceil(lefts[end - 1] - 0.5)
    for at in range(first, last + 1):
        centre = at + 0.5
        q = bisect_right(lefts, centre, start, end) - 1
        if q >= start and centre < lefts[q] + widths[q] and math.ceil(lefts[q] - 0.5) == at:
            found.append((at, q))
    return found


def plan_paint(
    doc: Document,
    columns: list[tuple[int, QRectF, bool, bool]],
    record: Bar,
    highlighted: frozenset[int],
    styles: list[tuple[str, Qt.BrushStyle | None]] | None = None,
) -> PaintPlan:
    """The fills of `columns` (column_spans of both bars), each in the style (kind, fade, pattern) of its message,
    and the spans a chosen fold record took under the `record` bar. Colours are made once per style, not per
    message; `styles` (message_styles, kept by the map) spares asking each message its kind on every paint."""
    plan = PaintPlan()
    if styles is None or len(styles) < doc.record_size:
        styles = message_styles(doc)
    in_view = doc.view_position
    colours: dict[tuple[str, bool], QColor] = {}

    def colour(kind: str, faded: bool) -> QColor:
        if (kind, faded) not in colours:
            made = QColor(colour_for_key(kind))
            if faded:
                made.setAlpha(70)
            colours[kind, faded] = made
        return colours[kind, faded]

    for index, rect, in_view_bar, divider in columns:
        kind, pattern = styles[index]
        faded = not in_view_bar and index not in in_view and index not in highlighted
        plan.fills.append((rect, colour(kind, faded), pattern, divider))
    for index in sorted(i for i in highlighted if 0 <= i < len(record)):  # the record bar's block i is message i
        left = record.lefts[index]
        right = left + record.widths[index]
        if plan.taken and left <= plan.taken[-1][1] + 1:  # touching spans make one line
            plan.taken[-1] = (plan.taken[-1][0], max(plan.taken[-1][1], right))
        else:
            plan.taken.append((left, right))
    return plan

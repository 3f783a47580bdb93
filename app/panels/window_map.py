"""The window map: the shown active view as blocks proportional to tokens, the full record beneath, rules across."""

from __future__ import annotations

import math
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, repeat
from operator import attrgetter, mul

from foldscope.app.highlight import plain_tip
from foldscope.app.qt import (
    QBrush,
    QColor,
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPointF,
    QRectF,
    QSize,
    Qt,
    QToolTip,
    QWidget,
    Signal,
)
from foldscope.app.theme import KIND_LEGEND, colour_for_key, kind_key, rule_colour, taken_colour
from foldscope.core.readout.document import Document, is_note, kind_label, record_index
from foldscope.core.readout.head_split import sources_for
from foldscope.core.readout.marks_facts import Mark, mark_text  # noqa: F401 (re-exported for the panels)
from foldscope.core.readout.trace_facts import rule_label, rule_names

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


_id_of = attrgetter("id")


def message_styles(doc: Document, start: int = 0) -> list[tuple[str, Qt.BrushStyle | None]]:
    """Each record message's kind key and pattern, in record order from `start`: what plan_paint asks of every
    block. A message never changes and the record only grows, so a map keeps these per record, adding what it gains."""
    out = []
    record = doc.session.record
    for i in range(start, len(record)):
        message = record[i]
        pattern = PATTERNS.get("clipped_copy" if message.is_clipped_copy else "note" if is_note(message) else "")
        out.append((kind_key(message), pattern))
    return out


@dataclass
class Bar:
    """One bar's blocks as numbers, not shapes: block p is message `indexes[p]`, from `lefts[p]`, `widths[p]` wide
    (lefts[p + 1] is its right edge: each left is the last plus its width, as the blocks were laid end to end).
    A step lays the view bar out in floats; a rectangle is made only for what is drawn or asked for."""

    indexes: list[int]
    lefts: list[float]  # one more than the blocks: the last is the bar's end
    widths: list[float]
    top: float
    in_view_bar: bool
    _positions: dict[int, int] | None = field(default=None, repr=False)

    @classmethod
    def laid(cls, indexes: list[int], widths: list[float], start: float, top: float, in_view_bar: bool) -> Bar:
        return cls(indexes, list(accumulate(widths, initial=start)), widths, top, in_view_bar)

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


def _narrow_columns(lefts: list[float], widths: list[float], start: int, end: int) -> list[tuple[int, int]]:
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


class WindowMap(QWidget):
    """Two bars at one scale: the active view shown (top) and the full record (below, out rows faded).

    Clicking a block emits `message_clicked(index)`; with focus, ←/→ move through the view's blocks.
    """

    message_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.selected: int | None = None
        self.highlighted: frozenset[int] = frozenset()  # what a chosen fold record took
        self.marks: tuple[Mark, ...] = ()
        self.marks_note = ""  # why there are no marks, when there are none
        self._bars: tuple[tuple[int, int], Bar, Bar] | None = None  # ((revision, width), the view bar, the full record's)
        self._blocks: tuple[tuple, list] | None = None  # blocks(), made only when asked
        self._plan: tuple[tuple, PaintPlan] | None = None
        self._systems_cache: tuple[int, set[int]] = (0, set())  # (revision, the view's system messages)
        self._styles: tuple[object, list] = (None, [])  # message_styles, kept per record (held, so its id is not reused)
        self._record_total: tuple[int, int] = (0, 0)  # the full record's size, kept per facts' revision
        self._record_bar: tuple[tuple, Bar] | None = None  # the full record's blocks: the same at every step
        self._record_columns: tuple[tuple, list] = ((), [])  # column_spans of the full record's, kept with them
        self._widths: tuple[int, tuple[float, dict[int, float]]] | None = None
        self._lead_parts: list[tuple[str, float]] = []
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Window map")
        self.setMouseTracking(True)
        self.setMinimumHeight(LEGEND_FROM - 24)  # below LEGEND_FROM the legend gives its row to the lists

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(800, 146)

    def _shown(self) -> Document:
        """The shown document, for the layout and paint helpers: they are reached only while one is shown (paint,
        blocks, the summary and the mouse handlers return early without one)."""
        assert self.document is not None, "the window map laid out with no document shown"
        return self.document

    def set_document(self, document: Document | None) -> None:
        self.document = document
        self.selected = None
        self.highlighted = frozenset()
        self.marks, self.marks_note = (), ""
        self.update()

    def set_marks(self, marks: tuple[Mark, ...], note: str = "") -> None:
        """The cache marks of the shown request, as the compiler placed them; `note` says why there are none."""
        self.marks, self.marks_note = tuple(marks), note
        self.update()

    def set_highlighted(self, indexes) -> None:
        self.highlighted = frozenset(indexes)
        self.update()

    def set_selected(self, index: int | None) -> None:
        self.selected = index
        self.update()

    # -- geometry ------------------------------------------------------------------------

    def view_widths(self) -> tuple[float, dict[int, float]]:
        """The shown request in estimate tokens: what the file does not hold and the JSON framing (one block
        first), and each view message's part (a system message carries the system prompt and tools). They add
        up to the request's size as every other panel shows it (core.request.measure.Composition)."""
        doc = self._shown()
        key = doc.revision  # the shown view and every size: the workspace moves it at each change
        if (self._widths is None or self._widths[0] != key) and not doc.is_counted:
            # Before the counts land: each view message by its characters, no head or framing (not known yet).
            self._widths = (key, (0.0, {i: float(doc.chars[i]) for i in doc.view_position}))
        elif self._widths is None or self._widths[0] != key:
            parts, scale = doc.shown_composition()
            record = doc.session.record
            messages, counts = zip(*parts.messages) if parts.messages else ((), ())
            places = record.indexes_of(map(_id_of, messages))
            # Built in C, a dict per step: a 25,000-message view is one zip, not 25,000 stores (a view naming a
            # message twice keeps its last part, as a loop would). A message is drawn at its count, as on the record
            # bar: the view is never drawn longer than the record it comes from; what the scale adds leads the bar.
            widths = dict(zip(places, map(float, counts)))
            stable = float(parts.system + parts.tools)
            systems = self._systems()
            leading = [("unseen_head", float(parts.unseen_head))]
            if systems:
                widths[min(systems)] = widths.get(min(systems), 0.0) + stable
            else:  # no system message to carry them: the system prompt and tools get their own block, in its colour
                leading.append(("system", stable))
            leading.append(("framing", float(parts.framing)))
            leading.append(("scale", parts.total * (scale - 1.0)))
            self._lead_parts = [(name, tokens) for name, tokens in leading if tokens > 0]
            self._widths = (key, (sum(tokens for _, tokens in self._lead_parts), widths))
        return self._widths[1]

    def lead_parts(self) -> list[tuple[str, float]]:
        """The blocks before the first message on the view bar, (name, estimate tokens): the unseen head, the
        system prompt and tools when no system message carries them, and the framing. They add up to the lead."""
        self.view_widths()
        return list(self._lead_parts)

    def lead_rects(self) -> list[tuple[str, QRectF]]:
        scale = self._scale()
        x, out = float(LEFT), []
        for name, tokens in self.lead_parts():
            out.append((name, QRectF(x, VIEW_Y, tokens * scale, BAR_HEIGHT)))
            x += tokens * scale
        return out

    def summary(self) -> list[str]:
        """The map's line, in order of need: the shown request's size (as every panel shows it), the marks, how to read it."""
        doc = self.document
        if doc is None:
            return []
        which = "the next request" if doc.shown is None else f"request {doc.shown}"
        if not doc.is_counted:
            view_chars = sum(doc.chars[i] for i in doc.view_position)
            reading = doc.reading_note()
            return [
                f"{which}: {view_chars:,} characters · full record {sum(doc.chars):,} characters" + (f" ({reading})" if reading else ""),
                "blocks sized by characters until the tokens are counted",
                "click a block to select it",
            ]
        marks = f"{len(self.marks)} cache marks ▼" if self.marks else f"no cache marks{self.marks_note}"
        return [
            f"{which}: estimate {doc.shown_size:,} tokens · full record {doc.record_tokens():,}",
            marks,
            "blocks sized by their tokens",
            "click a block to select it",
        ]

    def _scale(self) -> float:
        doc = self._shown()
        lead, widths = self.view_widths()
        sizes_key = doc.facts_revision  # the record's sizes: not moved by a step
        if self._record_total[0] != sizes_key:
            self._record_total = (sizes_key, sum(doc.sizes))
        total = max(self._record_total[1], lead + sum(widths.values()), 1)
        if doc.rules is not None:
            total = max([total] + [doc.rules.at(name) or 0 for name in rule_names(doc.rules)])
        return (self.width() - LEFT - RIGHT) / (total * 1.02)

    def _rows(self) -> tuple[float, float]:
        return VIEW_Y, VIEW_Y + BAR_HEIGHT + STRIP

    def bars(self) -> tuple[Bar, Bar]:
        """The view bar and the full record's, laid out in numbers; kept until the view or the width changes."""
        doc = self._shown()
        key = (doc.revision, self.width())
        if self._bars is None or self._bars[0] != key:
            self._bars = (key, *self._layout(doc))
        return self._bars[1], self._bars[2]

    def blocks(self) -> list[tuple[int, QRectF, bool]]:
        """(record index, rectangle, in the view bar) for every block, the view bar's first (made when asked: a
        paint and a step read the bars' numbers)."""
        if self.document is None:
            return []
        view, record = self.bars()
        assert self._bars is not None  # laid out by bars()
        key = self._bars[0]
        if self._blocks is None or self._blocks[0] != key:
            self._blocks = (key, view.blocks() + record.blocks())
        return self._blocks[1]

    def _layout(self, doc: Document) -> tuple[Bar, Bar]:
        scale = self._scale()
        view_y, record_y = self._rows()
        lead, widths = self.view_widths()
        order = list(doc.view_position)  # in view order: the mapping is built position by position
        # The unseen head and the framing lead the bar, drawn as one plain block.
        view = Bar.laid(order, list(map(mul, map(widths.get, order, repeat(0.0)), repeat(scale))), float(LEFT) + lead * scale, view_y, True)
        key = (doc.facts_revision, scale, record_y)
        if self._record_bar is None or self._record_bar[0] != key:
            sizes = doc.sizes
            self._record_bar = (
                key,
                Bar.laid(list(range(doc.record_size)), [size * scale for size in sizes[: doc.record_size]], float(LEFT), record_y, False),
            )
        return view, self._record_bar[1]

    def block_at(self, point: QPointF) -> int | None:
        """The message whose block is under the point (tiny blocks get a pixel of grace so every one can be hit)."""
        if self.document is None:
            return None
        for bar in self.bars():
            if bar.top <= point.y() <= bar.top + BAR_HEIGHT:
                found = bar.hit(point)
                if found is not None:
                    return found
        return None

    # -- drawing -------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        text = self.palette().windowText().color()
        title = QFont(self.font())
        title.setBold(True)
        painter.setFont(title)
        painter.setPen(text)
        painter.drawText(QPointF(6, 15), "Window map")
        painter.setFont(self.font())
        doc = self.document
        if doc is None:
            return
        view_y, record_y = self._rows()
        label_align = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(QRectF(4, view_y, LEFT - 10, BAR_HEIGHT), label_align, "Active view")
        painter.drawText(QRectF(4, record_y, LEFT - 10, BAR_HEIGHT), label_align, "Full record")
        plan = self.paint_plan()
        border = self.palette().window().color()
        for name, rect in self.lead_rects():  # part of the request, no message's: the unseen head, the framing
            painter.fillRect(rect, LEAD_COLOURS.get(name) or colour_for_key(name))
        painter.setPen(QPen(border, 1))
        for rect, colour, pattern, divider in plan.fills:
            painter.fillRect(rect, colour)
            if pattern is not None:
                painter.fillRect(rect, QBrush(border, pattern))
            if divider:
                painter.drawLine(rect.topRight(), rect.bottomRight())
        painter.setPen(QPen(taken_colour(), 4))
        under = record_y + BAR_HEIGHT + 3
        for left, right in plan.taken:
            painter.drawLine(QPointF(left, under), QPointF(right, under))
        selected_rects = [r for i, r, _ in self._selected_blocks()]
        painter.setPen(QPen(text, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for rect in selected_rects:
            painter.drawRect(rect.adjusted(-1, -2, 1, 2))
        labels = self._draw_rules(painter, view_y, record_y + BAR_HEIGHT)
        self._draw_first_round(painter, view_y + BAR_HEIGHT, text)
        self._draw_marks(painter, view_y, text)
        if self.height() >= LEGEND_FROM:
            self._draw_legend(painter, record_y + BAR_HEIGHT + 6, text)
        # The parts in order of need: on a narrow map the least needed go first, never cut mid-word.
        parts = self.summary()
        # The summary line starts after the title and after any rule label stacked up into its line (one whose
        # letters, cap height above its baseline, reach the summary's box).
        metrics = painter.fontMetrics()
        reach = SUMMARY_TOP + metrics.height() + metrics.capHeight()
        start = max([200.0] + [right + 12 for _, right, baseline in labels if baseline < reach])
        room = int(self.width() - 10 - start)
        while len(parts) > 1 and painter.fontMetrics().horizontalAdvance("   ·   ".join(parts)) > room:
            parts.pop()
        summary = painter.fontMetrics().elidedText("   ·   ".join(parts), Qt.TextElideMode.ElideRight, room)
        painter.setPen(text)
        painter.drawText(QRectF(start, SUMMARY_TOP, room, 16), Qt.AlignmentFlag.AlignRight, summary)

    def _draw_rules(self, painter: QPainter, top: float, bottom: float) -> list[tuple[float, float, float]]:
        """The rules and their labels; returns each label's (left, right, baseline)."""
        rules = self._shown().rules
        if rules is None:
            return []
        scale = self._scale()
        taken: list[tuple[float, float, float]] = []  # (left, right, baseline) of labels drawn
        for name in rule_names(rules):
            value = rules.at(name)
            if value is None:  # rule_names names only the rules that are set
                continue
            x = LEFT + value * scale
            painter.setPen(QPen(rule_colour(name), 2, Qt.PenStyle.SolidLine if name == "ceiling" else Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, top - 14), QPointF(x, bottom + 2))
            label = rule_label(rules, name)
            width = painter.fontMetrics().horizontalAdvance(label)
            # Near the right edge the label goes left of its rule so it is never cut off.
            left = x + 4 if x + 4 + width < self.width() else x - 4 - width
            # Rules close together: the next label goes a line higher rather than over the last one.
            baseline = top - 4
            while any(a < left + width and left < b and y == baseline for a, b, y in taken) and baseline > top - 20:
                baseline -= 13
            taken.append((left, left + width, baseline))
            painter.drawText(QPointF(left, baseline), label)
        return taken

    def paint_plan(self) -> PaintPlan:
        """What a paint draws, by pixel column: kept until the layout, the highlight or the palette changes."""
        view, record = self.bars()
        dark = self.palette().window().color().lightnessF() < 0.5
        key = (self._bars[0] if self._bars is not None else None, self.highlighted, dark)
        if self._plan is None or self._plan[0] != key:
            doc = self._shown()
            # Per record, not per document: a load's first step and its counted document share one record.
            kept_record, styles = self._styles
            if kept_record is not doc.session.record:
                styles = []
            if len(styles) < doc.record_size:
                styles.extend(message_styles(doc, len(styles)))  # the map's own list: grown in place, not copied
            self._styles = (doc.session.record, styles)
            assert self._record_bar is not None  # laid out by bars()
            record_key = self._record_bar[0]
            if self._record_columns[0] != record_key:
                self._record_columns = (record_key, column_spans(record))
            columns = column_spans(view) + self._record_columns[1]
            self._plan = (key, plan_paint(doc, columns, record, self.highlighted, self._styles[1]))
        return self._plan[1]

    def _selected_blocks(self) -> list[tuple[int, QRectF, bool]]:
        if self.selected is None or self.document is None:
            return []
        out = []
        view, _ = self.bars()
        position = view.position_of(self.selected)
        if position is not None:
            out.append((self.selected, view.rect(position), True))
        record_rect = self._record_rect(self.selected)
        if record_rect is not None:
            out.append((self.selected, record_rect, False))
        return out

    def _record_rect(self, index: int) -> QRectF | None:
        _, record = self.bars()
        return record.rect(index) if 0 <= index < len(record) else None

    def _view_span(self, indexes: set[int]) -> tuple[float, float] | None:
        view, _ = self.bars()
        positions = [p for p in (view.position_of(i) for i in indexes) if p is not None]
        if not positions:
            return None
        return (min(view.lefts[p] for p in positions), max(view.lefts[p] + view.widths[p] for p in positions))

    def _draw_first_round(self, painter: QPainter, y: float, text: QColor) -> None:
        """A bracket under the view bar spanning the protected first round the view still holds."""
        doc = self._shown()
        cache = doc.session.branch_metadata.get("prompt_cache")
        ids = cache.get("protected") if isinstance(cache, dict) else None
        if isinstance(ids, dict):  # core.request.first_round's decision: its members, included or not
            ids = ids.get("members")
        if not isinstance(ids, list):
            return
        record = doc.session.record
        span = self._view_span({record.index_of(mid) for mid in ids if isinstance(mid, str) and mid in record})
        if span is None:
            return
        left, right = span
        painter.setPen(QPen(text, 1.5))
        painter.drawLine(QPointF(left, y + 3), QPointF(left, y + 7))
        painter.drawLine(QPointF(left, y + 7), QPointF(right, y + 7))
        painter.drawLine(QPointF(right, y + 3), QPointF(right, y + 7))
        small = QFont(self.font())
        small.setPointSizeF(max(self.font().pointSizeF() - 1.5, 6.0))
        painter.setFont(small)
        painter.drawText(QPointF(right + 4, y + 11), "protected first round")
        painter.setFont(self.font())

    def mark_x(self, mark: Mark) -> float | None:
        """Where a mark sits on the view bar: the end of the block it closes (the stable segment: its system blocks)."""
        if mark.index is None:
            span = self._view_span(self._systems())
            return span[1] if span else float(LEFT)
        span = self._view_span({mark.index})
        return span[1] if span else None

    def mark_at(self, point: QPointF) -> Mark | None:
        """The mark whose tick (the triangle above the view bar) is under the point."""
        if not VIEW_Y - 10 <= point.y() < VIEW_Y:
            return None
        for mark in self.marks:
            x = self.mark_x(mark)
            if x is not None and abs(point.x() - x) <= 6:
                return mark
        return None

    def _systems(self) -> set[int]:
        """The view's system messages (the stable segment), kept with the layout: marks ask on every paint."""
        doc = self._shown()
        key = doc.revision
        if self._systems_cache[0] != key:
            in_view = doc.view_position
            self._systems_cache = (key, {i for i in record_index(doc.session.record).systems if i in in_view})
        return self._systems_cache[1]

    def _last_system(self) -> int | None:
        return max(self._systems(), default=None)

    def _draw_marks(self, painter: QPainter, y: float, text: QColor) -> None:
        painter.setPen(QPen(text, 1.5))
        painter.setBrush(text)
        for mark in self.marks:
            x = self.mark_x(mark)
            if x is None:
                continue
            painter.drawLine(QPointF(x, y - 2), QPointF(x, y + BAR_HEIGHT + 2))
            painter.drawPolygon([QPointF(x - 5, y - 9), QPointF(x + 5, y - 9), QPointF(x, y - 2)])
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def legend_entries(self) -> list[tuple[str, str]]:
        """The coloured squares of the legend row: every kind, then the lead's parts the shown request has."""
        leading = {name for name, _ in self.lead_parts()} if self.document is not None else set()
        return list(KIND_LEGEND) + [item for item in LEAD_LEGEND if item[0] in leading]

    def legend_places(self, metrics) -> list[tuple[str, str, float]]:
        """(key, label, x) of each legend item: every kind, the lead's parts, the cache mark and the fold's span.
        Past the map's width it starts at the left edge with tighter gaps, then shortens the last label
        between words, so nothing is drawn past the edge."""
        items = [*self.legend_entries(), ("mark", "cache mark"), ("taken", TAKEN_LABEL)]

        def lay(start: float, gap: float) -> list[tuple[str, str, float]]:
            out, x = [], start
            for key, label in items:
                out.append((key, label, x))
                x += (16 if key == "taken" else 14) + metrics.horizontalAdvance(label) + gap
            return out

        room = self.width() - 4
        places = lay(float(LEFT), 16)
        if self._legend_end(places, metrics) > room:
            places = lay(6.0, 10)
        key, label, x = places[-1]
        words = label.split(" ")
        while len(words) > 1 and self._legend_end(places[:-1] + [(key, " ".join(words), x)], metrics) > room:
            words.pop()
        places[-1] = (key, " ".join(words), x)
        return places

    @staticmethod
    def _legend_end(places: list[tuple[str, str, float]], metrics) -> float:
        key, label, x = places[-1]
        return x + (16 if key == "taken" else 14) + metrics.horizontalAdvance(label)

    def _draw_legend(self, painter: QPainter, y: float, text: QColor) -> None:
        border = self.palette().window().color()
        for key, label, x in self.legend_places(painter.fontMetrics()):
            if key == "mark":
                painter.setPen(text)
                painter.setBrush(text)
                painter.drawPolygon([QPointF(x, y + 4), QPointF(x + 10, y + 4), QPointF(x + 5, y + 11)])
                painter.setBrush(Qt.BrushStyle.NoBrush)
                painter.drawText(QPointF(x + 14, y + 12), label)
            elif key == "taken":
                painter.setPen(QPen(taken_colour(), 4))
                painter.drawLine(QPointF(x, y + 12), QPointF(x + 12, y + 12))
                painter.setPen(text)
                painter.drawText(QPointF(x + 16, y + 12), label)
            else:
                box = QRectF(x, y + 3, 10, 10)
                painter.fillRect(box, LEAD_COLOURS.get(key) or colour_for_key(key))
                if key in PATTERNS:
                    painter.fillRect(box, QBrush(border, PATTERNS[key]))
                painter.setPen(text)
                painter.drawText(QPointF(x + 14, y + 12), label)

    # -- input ---------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        index = self.block_at(event.position())
        if index is not None:
            self.setFocus()
            self.message_clicked.emit(index)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        index = self.block_at(event.position())
        mark = self.mark_at(event.position()) if self.document is not None else None
        if mark is not None:
            QToolTip.showText(event.globalPosition().toPoint(), f"cache mark: {mark_text(mark)}", self)
            return
        lead = (
            None
            if index is not None or self.document is None
            else next((name for name, rect in self.lead_rects() if rect.contains(event.position())), None)
        )
        if lead is not None:
            tokens = dict(self.lead_parts())[lead]
            tip = f"{LEAD_WORDS[lead]} · {round(tokens):,} tokens"
            if (
                lead == "unseen_head" and self.document is not None
            ):  # its parts where the machine or a --head file names them (the Composition tab's)
                split = sources_for(self.document.session).split(round(tokens))
                tip += "".join(f"\n  {p.name}: {p.tokens:,}" for p in split if len(split) > 1)
            QToolTip.showText(event.globalPosition().toPoint(), plain_tip(tip), self)
            return
        if index is None or self.document is None:
            QToolTip.hideText()
            return
        doc = self.document
        where = "in the active view" if doc.in_view(index) else f"out: {doc.out_reason.get(index, '')}"
        tip = f"#{index} {kind_label(doc, index)} · {doc.size_label(index)} · {where}"
        for mark in self.marks:
            if mark.index == index or (mark.index is None and index == self._last_system()):
                tip += f"\ncache mark at its end: {mark_text(mark)}"
        QToolTip.showText(event.globalPosition().toPoint(), plain_tip(tip), self)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        doc = self.document
        moves: dict[int, int] = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1}  # event.key() is an int
        if doc is None or event.key() not in moves or doc.view_size == 0:
            super().keyPressEvent(event)
            return
        position = doc.view_position.get(self.selected, -1) if self.selected is not None else -1
        position = max(0, min(position + moves[event.key()], doc.view_size - 1))
        self.message_clicked.emit(doc.view_index(position))

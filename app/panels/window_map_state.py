"""The window map's model: the document shown, the selection, the marks and the highlight, and where each block sits."""

from __future__ import annotations

from collections.abc import Callable
from itertools import repeat
from operator import mul

from foldscope.app.panels.window_map_blocks import BAR_HEIGHT, LEFT, LEGEND_FROM, RIGHT, STRIP, VIEW_Y, Bar, PaintPlan
from foldscope.app.qt import (
    QPointF,
    QRectF,
    QSize,
    Qt,
    QWidget,
)
from foldscope.core.readout.document import Document
from foldscope.core.readout.map_facts import view_bar, view_systems
from foldscope.core.readout.marks_facts import Mark
from foldscope.core.readout.trace_facts import rule_names

SEPARATOR = "   ·   "  # between the parts of the map's line


class MapLayout(QWidget):
    """What the map shows and where: the shown view and the full record as two bars at one scale, laid out in numbers
    and kept per revision and width; the blocks, marks and lead under a point."""

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
        if self._widths is None or self._widths[0] != key:
            bar = view_bar(doc, self._systems())  # core.readout.map_facts: the figures; the map lays them out
            self._lead_parts = list(bar.lead)
            self._widths = (key, (bar.lead_total, bar.widths))
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

    def fitted_summary(self, advance: Callable[[str], float], room: float) -> list[str]:
        """summary()'s parts that fit in `room` (`advance`: a text's width), the least needed dropped first. Where no
        mark is placed, the marks' part said with its why (core.model.caching.map_words) may not fit beside the size on
        a narrow map; it is then said by the state alone, 'no cache marks (caching as recorded)', rather than dropped: the
        request panel and the status bar's tooltip give the why."""
        parts = self.summary()
        brief = self._brief_marks()
        while len(parts) > 1 and advance(SEPARATOR.join(parts)) > room:
            if len(parts) == 2 and brief is not None and parts[1] != brief:
                parts[1] = brief
                continue
            parts.pop()
        return parts

    def _brief_marks(self) -> str | None:
        """The marks' part by the state alone (the note's words before its first colon), None where marks are placed."""
        note = self.marks_note.strip()
        if self.marks or not (note.startswith("(") and note.endswith(")")):
            return None
        return f"no cache marks ({note[1:-1].split(':')[0]})"

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
                Bar.laid(range(doc.record_size), [size * scale for size in sizes[: doc.record_size]], float(LEFT), record_y, False),
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
            self._systems_cache = (key, view_systems(doc))
        return self._systems_cache[1]

    def _last_system(self) -> int | None:
        return max(self._systems(), default=None)

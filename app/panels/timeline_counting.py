"""The loading timeline: the trace's counts drawn as they come in, by pixel column, with the reported input's dots."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from foldscope.app.panels.timeline_state import TimelineState
from foldscope.app.qt import (
    QColor,
    QPainter,
    QPen,
    QPixmap,
    QPointF,
    QRectF,
    Qt,
    QWidget,
)
from foldscope.app.theme import muted_colour
from foldscope.core.readout.document import Document
from foldscope.core.readout.words import plural


class CountingColumns:
    """The trace's counts so far as a loading timeline draws them: one bar per request while the requests fit the
    plot's pixel columns, else the tallest count of each column (each count folded in once, as it comes); the
    reported input's dots one per column and pixel row (the plot's `rows` span at least the largest). So a
    paint while the trace is measured costs the plot's width, not the number of requests."""

    def __init__(self, columns: int, requests: int, reported: Sequence[int], rows: int = 1000) -> None:
        self.per_request = requests <= columns
        self.columns = requests if self.per_request else columns
        self.requests = max(1, requests)
        self.tallest = [0] * self.columns
        self.folded = 0  # how many counts are in `tallest`
        self.most_counted = 0
        self.most_reported = max(reported[:requests], default=0)
        unit = max(self.most_reported / max(rows, 1), 1.0)  # under a pixel: the plot's top is above the largest
        dots: list[dict[int, int]] = [{} for _ in range(self.columns)]
        for k, value in enumerate(reported[:requests]):
            if value:
                dots[self.column(k)].setdefault(round(value / unit), value)
        self.dots = [tuple(values.values()) for values in dots]

    def column(self, request: int) -> int:
        return request * self.columns // self.requests

    def fold(self, counts: Sequence[int]) -> None:
        """Fold in the counts that came since the last paint (a shorter sequence is another load: start again)."""
        if len(counts) < self.folded:
            self.tallest = [0] * self.columns
            self.folded = self.most_counted = 0
        tallest = self.tallest
        for k in range(self.folded, min(len(counts), self.requests)):
            count = counts[k]
            column = k * self.columns // self.requests
            if count > tallest[column]:
                tallest[column] = count
            if count > self.most_counted:
                self.most_counted = count
        self.folded = len(counts)


# The loading plot's top steps through these (times a power of ten): a top that followed the largest count would
# move with nearly every paint once the counts pass the reported inputs, and each move redraws every column and dot.
TOP_STEPS = (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0)


def counting_top(largest: float) -> float:
    """The loading plot's top: the first step at or over the largest value and a little room (8%), so a paint while
    counting redraws the plot only when the counts pass a step, a few times over a load."""
    wanted = max(largest, 1) * 1.08
    power = 10.0 ** math.floor(math.log10(wanted))
    return next(step * power for step in TOP_STEPS if step * power >= wanted)


@dataclass
class _CountingBars:
    """The loading timeline's bars drawn so far (Timeline._counting_bars): for which columns and plot, the pixmap,
    each pixel column's count as drawn, and how many counts were drawn."""

    columns: CountingColumns
    key: tuple
    layer: QPixmap
    drawn: list[int]
    requests: int = 0


class CountingTimeline(TimelineState):
    """The timeline while a load measures the trace: its bars and dots kept across paints, each paint adding what came."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._columns: tuple[tuple, CountingColumns, object] | None = None  # the counts so far by pixel column, while loading
        self._dots: tuple[tuple, QPixmap] | None = None  # the reported input's dots while loading, drawn once
        # The bars of the counts so far while loading: (their columns, the plot's top and size, the pixmap, what each
        # column or request was drawn at), each paint adding what came in (_counting_bars).
        self._bars: _CountingBars | None = None

    def set_document(self, document: Document | None) -> None:
        # The loading layers are one load's first step's: let go as any document is shown (at 1600x1000 two
        # widget-sized pixmaps, about 1 MiB each, were kept beside the counted layer its paint makes, at the window's peak).
        self._columns = self._dots = self._bars = None
        super().set_document(document)

    def _draw_counting(self, painter: QPainter, text: QColor) -> None:
        """The first step of a load: a bar per request as its count comes in, with the reported input's dots.
        No axis figures: a count without its unseen head and scale is progress, not the size shown later.
        More requests than pixel columns are drawn a column at a time (CountingColumns)."""
        counts, requests = self.counting
        plot = self._plot()
        columns = self._counting_columns(plot, requests)
        columns.fold(counts)
        top = counting_top(max(columns.most_counted, columns.most_reported, 1))
        width = plot.width() / (max(requests, 1) if columns.per_request else columns.columns)
        painter.drawPixmap(0, 0, self._counting_bars(columns, counts, plot, top, width))
        painter.drawPixmap(0, 0, self._dots_layer(columns, plot, top, width, text))
        painter.setPen(QPen(muted_colour(), 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.setPen(text)
        reading = self._shown().reading_note()
        legend = (
            f"{plural(requests, 'request')} in {reading}   ·   dots: reported input"
            if reading
            else f"Measuring the requests: {len(counts):,} of {requests:,} counted   ·   dots: reported input   ·   "
            "the sizes and stepping come when every request is measured"
        )
        painter.drawText(QRectF(200, 2, self.width() - 210, 16), Qt.AlignmentFlag.AlignRight, legend)

    def _counting_bars(self, columns: CountingColumns, counts: Sequence[int], plot: QRectF, top: float, width: float) -> QPixmap:
        """The bars of the counts so far, in a pixmap kept across the paints of one load: a paint draws only what
        changed since the one before (every bar again when the plot's top moves), so a paint while counting costs
        the counts that came in, not the plot's width. One bar per request: a request's count never changes, so
        only the new ones are drawn, in order. A bar per pixel column (each one pixel wide, the plot being
        `columns.columns` pixels wide): a column whose tallest count grew is cleared and drawn again, alone; no
        other column shares its pixels. Either way the pixmap ends as a paint of every bar at once leaves it."""
        ratio = self.devicePixelRatioF()
        bar = muted_colour()
        key = (top, width, plot.getRect(), self.size().toTuple(), ratio, bar.rgba())
        kept = self._bars
        if kept is None or kept.columns is not columns or kept.key != key or len(counts) < kept.requests:
            layer, painter = self._blank_layer(ratio)
            painter.end()
            kept = self._bars = _CountingBars(columns, key, layer, [0] * columns.columns)
        painter = QPainter(kept.layer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        if columns.per_request:
            for k in range(kept.requests, min(len(counts), columns.columns)):
                y = self._y(counts[k], plot, top)
                painter.fillRect(QRectF(plot.left() + k * width, y, max(width * 0.7, 0.5), plot.bottom() - y), bar)
            kept.requests = max(kept.requests, min(len(counts), columns.columns))
        else:
            drawn = kept.drawn
            for c, count in enumerate(columns.tallest):
                if count != drawn[c]:
                    x = plot.left() + c * width
                    if drawn[c]:
                        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_Clear)
                        painter.fillRect(QRectF(x, plot.top() - 1, width, plot.height() + 2), bar)
                        painter.setCompositionMode(QPainter.CompositionMode.CompositionMode_SourceOver)
                    y = self._y(count, plot, top)
                    painter.fillRect(QRectF(x, y, width, plot.bottom() - y), bar)
                    drawn[c] = count
            kept.requests = len(counts)
        painter.end()
        return kept.layer

    def _blank_layer(self, ratio: float) -> tuple[QPixmap, QPainter]:
        """A transparent pixmap the widget's size at this pixel ratio, and an antialiased painter on it."""
        layer = QPixmap(self.size() * ratio)
        layer.setDevicePixelRatio(ratio)
        layer.fill(Qt.GlobalColor.transparent)
        painter = QPainter(layer)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        return layer, painter

    def _dots_layer(self, columns: CountingColumns, plot: QRectF, top: float, width: float, text: QColor) -> QPixmap:
        """The reported input's dots, drawn once per load, size and scale (the scale moves only when a count
        passes every reported input): a paint while counting draws the bars so far over it."""
        ratio = self.devicePixelRatioF()
        key = (self._columns[0] if self._columns is not None else None, top, width, self.size().toTuple(), ratio, text.rgba())
        if self._dots is not None and self._dots[0] == key:
            return self._dots[1]
        layer, painter = self._blank_layer(ratio)
        painter.setPen(QPen(text, 1))
        painter.setBrush(text)
        for c, values in enumerate(columns.dots):
            x = plot.left() + (c + 0.5) * width
            for reported in values:
                painter.drawEllipse(QPointF(x, self._y(reported, plot, top)), 1.5, 1.5)
        painter.end()
        self._dots = (key, layer)
        return layer

    def _counting_columns(self, plot: QRectF, requests: int) -> CountingColumns:
        """The counts so far by pixel column, kept across the paints of one load (each count folded in once)."""
        doc = self._shown()
        key = (doc.revision, requests, int(plot.width()), int(plot.height()))
        kept = self._columns
        if kept is None or kept[0] != key:
            reported = [r.usage.reported_input if r.usage is not None else 0 for r in doc.session.trace]
            kept = self._columns = (key, CountingColumns(int(plot.width()), requests, reported, int(plot.height())), doc.session)
        return kept[1]

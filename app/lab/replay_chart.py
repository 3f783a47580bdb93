"""One Replay chart drawn with QPainter: a line per strategy over the trace's requests, a legend, clickable points."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from foldscope.app.qt import (
    QColor,
    QFont,
    QFontMetrics,
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
from foldscope.app.theme import muted_colour, rule_colour, strategy_colour

LEFT, RIGHT, TOP, BOTTOM = 72, 14, 24, 20
LINE = 18  # a header row: the title, and the legend beside it or (when they would touch) under it
HEADROOM = 6  # between the header and the widest dot at the plot's top, so a point at 100 % never touches the words
HIT_PIXELS = 14  # how near a click must fall to a point to choose it


def nice_ticks(maximum: float, count: int = 5) -> list[float]:
    """Round axis values (1, 2 or 5 times a power of ten, fractions too) from 0 up to about `maximum`."""
    if maximum <= 0:
        return [0.0]
    raw = maximum / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return [i * step for i in range(int(maximum / step + 1e-9) + 1)]


@dataclass(frozen=True)
class Series:
    """One strategy's line: per row of its run, the recorded request it stands for and the value drawn."""

    strategy: str
    requests: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class Rule:
    """A horizontal line across the chart (the ceiling), with its label."""

    value: float
    label: str
    colour: str = "ceiling"


class ReplayChart(QWidget):
    """Values per request for each strategy; `point_clicked(strategy, row)` names the run's row clicked."""

    point_clicked = Signal(str, int)

    def __init__(self, title: str, fmt: Callable[[float], str], parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.fmt = fmt
        self.series: list[Series] = []
        self.rules: list[Rule] = []
        self.requests = 0  # how many recorded requests the x axis spans
        self.top: float | None = None  # a fixed top of the y axis (1.0 for a share), else from the data
        self.selected: int | None = None  # the request drawn as chosen
        self._plot: tuple[tuple, QRectF] | None = None
        self.setMouseTracking(True)
        self.setMinimumHeight(110)  # three in a 768-pixel screen leave the totals 8 rows (app.lab.replay)
        self.setAccessibleName(title)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(700, 200)

    def set_series(self, series: list[Series], requests: int, rules: list[Rule] | None = None, top: float | None = None) -> None:
        self.series, self.requests, self.rules, self.top = series, requests, rules or [], top
        self.selected = None
        self.update()

    def select(self, request: int | None) -> None:
        self.selected = request
        self.update()

    # -- geometry ------------------------------------------------------------------------

    def title_rect(self) -> QRectF:
        bold = QFont(self.font())
        bold.setBold(True)
        return QRectF(6, 2, QFontMetrics(bold).horizontalAdvance(self.title), LINE - 4)

    def legend_rects(self) -> list[tuple[str, QRectF]]:
        """(strategy, where its swatch and name go), right-aligned beside the title, or on a row of their own
        under it when the chart is too narrow for both."""
        metrics = QFontMetrics(self.font())
        widths = [20 + metrics.horizontalAdvance(s.strategy) for s in self.series]
        total = sum(widths) + 14 * max(len(widths) - 1, 0)
        y = 2.0 if self.title_rect().right() + 24 + total <= self.width() - RIGHT else 2.0 + LINE
        out, x = [], float(self.width() - RIGHT - total)
        for s, width in zip(self.series, widths):
            out.append((s.strategy, QRectF(x, y, width, LINE - 4)))
            x += width + 14
        return out

    def plot(self) -> QRectF:
        key = (self.width(), self.height(), self.font().toString(), self.title, tuple(s.strategy for s in self.series))
        if self._plot is None or self._plot[0] != key:  # asked for every point drawn or hit: worked out once
            self._plot = (key, self._plot_rect())
        return QRectF(self._plot[1])

    def _plot_rect(self) -> QRectF:
        legend = self.legend_rects()
        header = max(rect.bottom() for _, rect in legend) if legend else self.title_rect().bottom()
        top = max(header + HEADROOM + self.dot_radius(0), TOP)
        return QRectF(LEFT, top, max(self.width() - LEFT - RIGHT, 10), max(self.height() - top - BOTTOM, 10))

    def y_top(self) -> float:
        if self.top is not None:
            return self.top
        values = [v for s in self.series for v in s.values] + [r.value for r in self.rules]
        return max(max(values, default=1.0), 1e-9) * 1.08

    def point(self, request: int, value: float) -> QPointF:
        plot = self.plot()
        span = max(self.requests - 1, 1)
        x = plot.left() + plot.width() * request / span
        y = plot.bottom() - plot.height() * min(value / self.y_top(), 1.05)
        return QPointF(x, y)

    def point_of(self, strategy: str, row: int) -> QPointF:
        """Where a run's row is drawn (tests click here)."""
        s = next(s for s in self.series if s.strategy == strategy)
        return self.point(s.requests[row], s.values[row])

    def nearest(self, pos: QPointF) -> tuple[str, int] | None:
        """The (strategy, row) drawn nearest to pos, if within reach."""
        best: float = HIT_PIXELS**2
        found: tuple[str, int] | None = None
        for s in self.series:
            for row, (request, value) in enumerate(zip(s.requests, s.values)):
                p = self.point(request, value)
                d = (p.x() - pos.x()) ** 2 + (p.y() - pos.y()) ** 2
                if d <= best:
                    best, found = d, (s.strategy, row)
        return found

    # -- drawing -------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        bold = QFont(self.font())
        bold.setBold(True)
        painter.setFont(bold)
        painter.setPen(text)
        painter.drawText(self.title_rect(), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, self.title)
        painter.setFont(self.font())
        if not self.series:
            painter.setPen(muted_colour())
            painter.drawText(self.rect(), Qt.AlignmentFlag.AlignCenter, "Run the replay to draw this chart")
            return
        plot = self.plot()
        self._draw_axes(painter, plot, text)
        if self.selected is not None:
            x = self.point(self.selected, 0).x()
            painter.setPen(QPen(self.palette().highlight().color(), 2))
            painter.drawLine(QPointF(x, plot.top()), QPointF(x, plot.bottom()))
        for rule in self.rules:
            y = self.point(0, rule.value).y()
            painter.setPen(QPen(rule_colour(rule.colour), 1.5, Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
            painter.drawText(QPointF(plot.left() + 4, y - 3), rule.label)
        dots = max((len(s.values) for s in self.series), default=0) <= 120
        for n, s in enumerate(self.series):
            # Earlier lines are drawn wider, so a strategy that coincides with a later one still shows at its edges.
            width = self.line_width(n)
            colour = strategy_colour(s.strategy)
            points = [self.point(r, v) for r, v in zip(s.requests, s.values)]
            painter.setPen(QPen(colour, width))
            painter.drawPolyline(points)
            if dots:
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(colour)
                for p in points:
                    painter.drawEllipse(p, self.dot_radius(n), self.dot_radius(n))
        self._draw_legend(painter, text)

    def _draw_axes(self, painter: QPainter, plot: QRectF, text: QColor) -> None:
        painter.setPen(QPen(muted_colour(), 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        painter.drawLine(plot.topLeft(), plot.bottomLeft())
        top = self.y_top()
        for value in nice_ticks(top if self.top is not None else top / 1.08):
            y = self.point(0, value).y()
            painter.drawText(QRectF(0, y - 8, LEFT - 6, 16), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, self.fmt(value))
        painter.setPen(text)
        step = max(1, self.requests // 12)
        for k in range(0, self.requests, step):
            x = self.point(k, 0).x()
            painter.drawText(QRectF(x - 20, plot.bottom() + 2, 40, 16), Qt.AlignmentFlag.AlignHCenter, str(k))

    def line_width(self, n: int) -> float:
        return 2.0 + 1.0 * (len(self.series) - 1 - n)

    def dot_radius(self, n: int) -> float:
        return self.line_width(n) / 2 + 1.5

    def _draw_legend(self, painter: QPainter, text: QColor) -> None:
        for strategy, rect in self.legend_rects():
            middle = rect.center().y()
            painter.setPen(QPen(strategy_colour(strategy), 3))
            painter.drawLine(QPointF(rect.left(), middle), QPointF(rect.left() + 14, middle))
            painter.setPen(text)
            painter.drawText(rect.adjusted(20, 0, 0, 0), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, strategy)

    # -- input ---------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        found = self.nearest(event.position())
        if found is not None:
            self.point_clicked.emit(*found)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        found = self.nearest(event.position())
        if found is None:
            QToolTip.hideText()
            return
        strategy, row = found
        s = next(s for s in self.series if s.strategy == strategy)
        tip = f"{strategy}, request {s.requests[row]}: {self.fmt(s.values[row])} (click to open its view)"
        QToolTip.showText(event.globalPosition().toPoint(), tip, self)

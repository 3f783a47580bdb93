"""The timeline of requests: each request's size and reported input against the ceiling; steps by key."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from foldscope.app.panels.cache_lane import ROOMY_FROM, CacheLane, lane_height
from foldscope.app.panels.timeline_scale import Scale, above_label, nice_ticks, timeline_scale
from foldscope.app.panels.timeline_zoom import ZOOM_KEYS, Zoom, wheel
from foldscope.app.qt import (
    QColor,
    QFont,
    QKeyEvent,
    QMouseEvent,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QPointF,
    QRectF,
    QSize,
    Qt,
    QToolTip,
    QWheelEvent,
    QWidget,
    Signal,
)
from foldscope.app.theme import is_dark, muted_colour, panel_colour, rule_colour
from foldscope.app.worker import Task, run_task
from foldscope.core.model.session import estimated_usage
from foldscope.core.readout.cache_lane import LEGEND, gap_rows, lane_rows, lane_rows_of, lane_sentence
from foldscope.core.readout.document import Document
from foldscope.core.readout.trace_facts import rule_label, rule_names, unseen_head_note
from foldscope.core.readout.usage_precision import APPROXIMATE, approximate
from foldscope.core.readout.words import counted, scaled_words

LEFT, RIGHT, TOP, BOTTOM = 64, 16, 22, 22
# A request predicted at a few tokens on a plot of thousands (the first request, before any report shows the agent's
# unseen head) still draws a bar this tall: a dot over nothing reads as a request with no size.
BAR_MIN = 2.0
PLOT_MIN = 32  # the fewest pixels the plot keeps at the timeline's minimum height, its cache lane tight below it
# Up to this many requests the cache lane's causes are attributed at once, on the document's warm counter
# (about 0.3 s for 1,000 requests); a longer trace shows its gaps at once and its causes from a worker.
SYNC_REQUESTS = 1500
BRANCH_COLOUR = QColor("#e67e22")  # the what-if series: distinct from the bars and the rules in both themes


def spaced(lefts: Sequence[float], widths: Sequence[float], gap: float = 6.0) -> list[int]:
    """Which labels to draw, left to right, so none covers the one before: a label starting at `lefts[i]`, `widths[i]`
    wide, is drawn when it starts at least `gap` after the last one drawn ends (the first is always drawn)."""
    chosen: list[int] = []
    end = float("-inf")
    for i in sorted(range(len(lefts)), key=lambda i: lefts[i]):
        if lefts[i] >= end + gap:
            chosen.append(i)
            end = lefts[i] + widths[i]
    return chosen


# The Go menu's keys (app/window.py builds it from these) and the hint the header shows for them: one set, said alike.
STEP_KEYS = {
    "previous": "Alt+Left",
    "next": "Alt+Right",
    "previous fold": "Alt+Shift+Left",
    "next fold": "Alt+Shift+Right",
    "now": "Alt+End",
}
KEY_HINT = "Alt+←/→ step, Alt+Shift+←/→ previous/next fold"
# What the window says with no session open: what to do, with the keys (the File menu's).
NO_SESSION_HINT = (
    "No session open: File > Open… (Ctrl+O) a session file, File > Open Agent Session… (Ctrl+Alt+O) "
    "one of the agent sessions on this machine, File > Open the Demo Session, "
    "or drop a file here"
)


@dataclass(frozen=True)
class BranchSeries:
    """A what-if drawn beside the original: the original's estimates (and now), and the branch's from `start` on."""

    start: int
    estimates: tuple[int, ...]  # the branch's requests start.. as replayed
    original: tuple[int, ...]  # every request of the original
    original_now: int
    folds: tuple[int, ...] = ()  # fold passes that landed before each branch request


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


class Timeline(QWidget):
    """One bar per request (its size) with a dot for the reported input, the rules across, folds marked.

    The last slot is "now": the active view as the file left it. `request_selected(k)` says which
    slot the user stepped to; k == len(requests) means now.
    """

    request_selected = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.branch: BranchSeries | None = None  # a what-if from a request, drawn beside the original
        self.current = 0
        # While a load measures the trace: the requests counted so far, out of how many (app.loading.TraceCounts).
        self.counting: tuple[tuple[int, ...], int] = ((), 0)
        self._layer: tuple[tuple, QPixmap] | None = None  # the bars, drawn once per requests, size and theme
        self._columns: tuple[tuple, CountingColumns, object] | None = None  # the counts so far by pixel column, while loading
        self._dots: tuple[tuple, QPixmap] | None = None  # the reported input's dots while loading, drawn once
        # The bars of the counts so far while loading: (their columns, the plot's top and size, the pixmap, what each
        # column or request was drawn at), each paint adding what came in (_counting_bars).
        self._bars: _CountingBars | None = None
        # The fold and rule labels the bars' layer drew: (their box, the label, its baseline's start, its colour).
        self.label_boxes: list[tuple[QRectF, str, QPointF, QColor]] = []
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Timeline of requests")
        self.setMouseTracking(True)
        self.setMinimumHeight(100)
        self.lane = CacheLane()  # idle gaps and cache writes by cause, under the plot
        self._lane_task: Task | None = None
        self._lane_for: int | None = None  # the trace's revision the lane's rows were made for
        self.zoom = Zoom()  # app.panels.timeline_zoom: a long session's bars made wider, the shown request in view

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(800, ROOMY_FROM if self.lane.shown() else 160)

    def _shown(self) -> Document:
        """The shown document, for the geometry and paint helpers: they are reached only while one is shown (paint
        and the mouse handlers return early without one)."""
        assert self.document is not None, "the timeline laid out with no document shown"
        return self.document

    def set_document(self, document: Document | None) -> None:
        if document is None or self.document is None or document.path != self.document.path:
            self.zoom.reset()  # another session: all of it in view
        self.document = document
        self.counting = ((), len(document.session.trace) if document is not None else 0)
        self.current = self.slots() - 1
        self._fill_lane()
        self.update()

    def set_counting(self, counts: tuple[int, ...], requests: int) -> None:
        """The trace's counts so far, while the document is not counted yet: the bars fill in as they come."""
        self.counting = (tuple(counts), requests)
        self.update()

    def _fill_lane(self) -> None:
        """The lane's rows for the document's trace: at once for a trace of moderate length, else the gaps at once
        and the causes from a worker (the Cost panel's attribution either way)."""
        doc = self.document
        key = None if doc is None else doc.trace_revision  # the trace and the policy: not an action, not a step
        if key == self._lane_for:
            return
        if self._lane_task is not None:
            self._lane_task.cancel()
            self._lane_task = None
        self._lane_for = key
        if doc is None or not doc.is_counted or not doc.session.trace:  # the first step of a load: no lane yet
            self.lane.rows = []
        elif (report := doc.cache_report()) is not None:  # the Cost panel's cache report, made at load from the trace's count
            self.lane.rows = lane_rows_of(report)
        elif len(doc.session.trace) <= SYNC_REQUESTS:
            self.lane.rows = lane_rows(doc.session, doc.policy, doc.counter)
        else:
            self.lane.rows = gap_rows(doc.session)
            session, policy = doc.session, doc.policy
            self._lane_task = run_task(
                lambda progress: lane_rows(session, policy), "cache lane", self, succeeded=lambda rows, k=key: self._lane_ready(k, rows)
            )
        self.updateGeometry()

    def _lane_ready(self, key: tuple, rows: list) -> None:
        if key == self._lane_for:
            self._lane_task = None
            self.lane.rows = rows
            self.update()

    def _bottom(self) -> float:
        """The space under the plot: the request numbers, and the cache lane when there is one."""
        return BOTTOM + (lane_height(self.height()) + 2 if self.lane.shown() else 0)

    def set_branch(self, branch: BranchSeries | None) -> None:
        self.branch = branch
        self.update()

    def slots(self) -> int:
        if self.branch is not None:
            return len(self.branch.original) + 1
        return len(self.document.requests) + 1 if self.document is not None else 0

    def last_slot(self) -> int:
        """The last slot one can step to: now, or in a what-if the request it starts from (its view, editable)."""
        return self.branch.start if self.branch is not None else self.slots() - 1

    def step_to(self, slot: int) -> None:
        if self.document is None:
            return
        slot = max(0, min(slot, self.last_slot()))
        if slot != self.current:
            self.current = slot
            self.zoom.show(slot, self.slots())
            self.update()
            self.request_selected.emit(slot)

    def zoom_by(self, step: int) -> None:
        """Zoom in (1), out (-1) or back to the whole session (0), the shown request kept in view."""
        # Not while a load counts: its bars are drawn by pixel column, unzoomed (_draw_counting).
        if self.document is not None and self.document.is_counted and self.zoom.zoom(step, self.slots(), self.current):
            self.update()

    def fold_slots(self) -> list[int]:
        return [r.index for r in self.document.requests if r.folded_before] if self.document else []

    def step_fold(self, direction: int) -> None:
        folds = self.fold_slots()
        ahead = [k for k in folds if (k - self.current) * direction > 0]
        if ahead:
            self.step_to(min(ahead) if direction > 0 else max(ahead))

    # -- geometry ------------------------------------------------------------------------

    def _scale(self) -> Scale:
        """The plot's top, and the rules far above the bars and dots that it leaves out (timeline_scale)."""
        doc = self._shown()
        values = [r.headline for r in doc.requests] + [r.reported_input or 0 for r in doc.requests]
        values.append(doc.now_predicted or doc.now_size)
        if self.branch is not None:
            values += list(self.branch.estimates) + list(self.branch.original) + [self.branch.original_now]
        rules = {} if doc.rules is None else {name: doc.rules.at(name) or 0 for name in rule_names(doc.rules)}
        return timeline_scale(max(values, default=1), rules, (self.fontMetrics().height() + 3) / self._plot().height())

    def _plot(self) -> QRectF:
        return QRectF(LEFT, TOP, max(self.width() - LEFT - RIGHT, 10), max(self.height() - TOP - self._bottom(), 10))

    def _slot_rect(self, slot: int, plot: QRectF) -> QRectF:
        span = self.zoom.span(plot, self.slots())
        width = span.width() / max(self.slots(), 1)
        return QRectF(span.left() + slot * width, plot.top(), width, plot.height())

    def _y(self, value: float, plot: QRectF, top: float) -> float:
        return plot.bottom() - plot.height() * min(value / top, 1.05)

    def slot_at(self, x: float) -> int | None:
        plot = self._plot()
        if self.document is None or not (plot.left() <= x <= plot.right()):
            return None
        span = self.zoom.span(plot, self.slots())
        return min(max(int((x - span.left()) / (span.width() / self.slots())), 0), self.slots() - 1)

    # -- drawing -------------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        text = self.palette().windowText().color()
        doc = self.document
        title = QFont(self.font())
        title.setBold(True)
        painter.setFont(title)
        painter.setPen(text)
        painter.drawText(QPointF(6, 15), "Timeline of requests" + self.zoom.words())
        painter.setFont(self.font())
        if doc is not None and not doc.is_counted:
            self._draw_counting(painter, text)
            return
        if doc is None or not doc.requests:
            painter.setPen(muted_colour())
            painter.drawText(
                self.rect().adjusted(12, 20, -12, 0),
                Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap,
                NO_SESSION_HINT if doc is None else "No requests recorded in this session",
            )
            return
        plot = self._plot()
        shown = 0 <= self.current < self.slots()
        shade = QColor(self.palette().highlight().color())
        shade.setAlpha(60)
        if shown:  # the step shown: under the bars, so only it changes when stepping
            painter.fillRect(self._slot_rect(self.current, plot), shade)
        painter.drawPixmap(0, 0, self._bars_layer(plot, text))
        if shown:  # a label's box over the step shown is shaded with it, its letters drawn again on top
            slot = self._slot_rect(self.current, plot)
            for box, label, at, colour in self.label_boxes:
                if box.intersects(slot):
                    painter.save()
                    painter.setClipRect(box.intersected(slot))
                    painter.fillRect(box, shade)
                    painter.setPen(colour)
                    painter.drawText(at, label)
                    painter.restore()
        self._draw_legend(painter, text)

    def _bars_layer(self, plot: QRectF, text: QColor) -> QPixmap:
        """Everything but the step shown (bars, dots, folds, rules, axes), drawn once into a pixmap and kept until
        the document's requests, the sizes of now, the rules, a what-if, the size or the theme change: a step
        repaints the shade and the legend, not one shape per request."""
        doc = self._shown()
        ratio = self.devicePixelRatioF()
        key = (
            self.size().toTuple(),
            ratio,
            doc.facts_revision,  # the requests, the sizes of now, the rules
            self.branch,
            is_dark(),
            text.rgba(),
            self.font().key(),
            tuple(self.lane.rows),
            self.lane.shown(),
            self.zoom.key(),
        )  # the cache lane is drawn in it too
        if self._layer is not None and self._layer[0] == key:
            return self._layer[1]
        layer, painter = self._blank_layer(ratio)
        painter.setFont(self.font())
        self.label_boxes = []
        self._draw_bars(painter, plot, text)
        painter.end()
        self._layer = (key, layer)
        return layer

    def _draw_bars(self, painter: QPainter, plot: QRectF, text: QColor) -> None:
        doc = self._shown()
        scale = self._scale()
        top = scale.top
        bar = QColor("#5d8fd6" if not is_dark() else "#4a78bd")
        now_bar = QColor("#8fa9cc" if not is_dark() else "#5b6f8c")
        folds: list[tuple[float, str]] = []  # (label's left, label) of each fold's line
        # Each slot's geometry in plain numbers, as _slot_rect, QRectF.adjusted and _y work it out (the same
        # floating-point steps, so the same pixels): a long trace draws one rectangle per bar, not four.
        slots, requests = self.slots(), doc.requests
        span = self.zoom.span(plot, slots)
        left, plot_top, height, bottom = span.left(), plot.top(), plot.height(), plot.bottom()
        width = span.width() / max(slots, 1)
        pad = max(width * 0.15, 0.5)
        inner_width = width + -pad - pad
        dot_pen, fold_pen = QPen(text, 1), QPen(rule_colour("tier"), 2, Qt.PenStyle.DashLine)
        pen = None  # the pen this loop last set (with the dots' brush), so a dot after a dot sets neither again
        painter.setClipRect(QRectF(plot.left(), 0, plot.width(), self.height()))  # zoomed in: the bars cut at the plot's edges
        for slot in self.zoom.in_view(slots):
            x = left + slot * width
            if self.branch is not None and slot > self.branch.start:
                self._draw_original_bar(painter, self.branch, slot, QRectF(x, plot_top, width, height), plot, top)
                pen = None
                continue
            is_now = slot == len(requests)
            request = None if is_now else requests[slot]
            size = (doc.now_predicted or doc.now_size) if request is None else request.headline
            y = bottom - height * min(size / top, 1.05)
            if size and bottom - y < BAR_MIN:
                y = bottom - BAR_MIN
            painter.fillRect(QRectF(x + pad, y, inner_width, bottom - y), now_bar if request is None else bar)
            if request is None:
                continue
            if request.reported_input:
                if pen is not dot_pen:
                    painter.setPen(pen := dot_pen)
                    painter.setBrush(text)
                painter.drawEllipse(QPointF(x + width / 2, bottom - height * min(request.reported_input / top, 1.05)), 3, 3)
            if request.folded_before:
                painter.setPen(fold_pen)
                pen = fold_pen
                painter.drawLine(QPointF(x, plot_top), QPointF(x, bottom))
                folds.append((x + 3, "compaction" if request.compacted_before else "fold"))
        painter.setClipping(False)
        ruled = self._draw_rules(painter, plot, top, scale.above)
        # Each fold's line is drawn; its label only where it runs into neither the last one (dozens of compactions)
        # nor a rule's label in the same band (a short plot).
        # Each label on a box of the panel's colour: the folds it leaves unlabelled draw their lines, in the same
        # colour, through it otherwise (34 compactions on a 1366-pixel screen), and the bars run under it.
        painter.setPen(QPen(rule_colour("tier"), 2))
        baseline = plot.top() + 11
        metrics = painter.fontMetrics()
        widths = [metrics.horizontalAdvance(label) for _, label in folds]
        for i in spaced([x for x, _ in folds], widths):
            x, label = folds[i]
            if x + widths[i] <= plot.right() + RIGHT and not any(
                a < x + widths[i] and x < b and abs(base - baseline) < 12 for a, b, base in ruled
            ):
                self._label_on_box(painter, QPointF(x, baseline), label, widths[i])
        if self.branch is not None:
            self._draw_branch(painter, self.branch, plot, top)
        self._draw_axes(painter, plot, top, text)
        if self.lane.shown():
            self._fill_lane()  # a followed file may have grown
            painter.save()
            self.lane.paint(
                painter,
                plot.left(),
                plot.bottom() + BOTTOM,
                plot.right(),
                (span.left(), span.width() / max(self.slots(), 1)),
                LEFT,
                text,
                self.height(),
            )
            painter.restore()

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
            f"{counted(requests, 'request')} in {reading}   ·   dots: reported input"
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

    def _draw_original_bar(self, painter: QPainter, branch: BranchSeries, slot: int, rect: QRectF, plot: QRectF, top: float) -> None:
        """After a what-if's start: the original's request, drawn as an outline to compare the branch with."""
        size = branch.original_now if slot >= len(branch.original) else branch.original[slot]
        inner = rect.adjusted(max(rect.width() * 0.15, 0.5), 0, -max(rect.width() * 0.15, 0.5), 0)
        y = self._y(size, plot, top)
        painter.setPen(QPen(muted_colour(), 1.5))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        painter.drawRect(QRectF(inner.left(), y, inner.width(), plot.bottom() - y))

    def _draw_branch(self, painter: QPainter, branch: BranchSeries, plot: QRectF, top: float) -> None:
        """The what-if's estimates as a second series: a line with a dot per request, from where it starts."""
        points = [
            QPointF(self._slot_rect(branch.start + i, plot).center().x(), self._y(v, plot, top)) for i, v in enumerate(branch.estimates)
        ]
        painter.setPen(QPen(BRANCH_COLOUR, 2.5))
        painter.drawPolyline(points)
        painter.setBrush(BRANCH_COLOUR)
        for point in points:
            painter.drawEllipse(point, 3.5, 3.5)
        painter.setBrush(Qt.BrushStyle.NoBrush)

    def _draw_rules(self, painter: QPainter, plot: QRectF, top: float, above: tuple[str, ...] = ()) -> list[tuple[float, float, float]]:
        """The ceiling, line and target with their labels, those `above` the scale as a label at its top edge;
        returns each label's (left, right, baseline)."""
        rules = self._shown().rules
        if rules is None:
            return []
        taken: list[tuple[float, float, float]] = []  # (left, right, baseline) of labels drawn
        # rule_names names only the rules that are set: a value is never None here.
        heights = [(name, self._y(value, plot, top)) for name in rule_names(rules) if (value := rules.at(name)) is not None]
        heights = [(name, plot.top() if name in above else y) for name, y in heights]
        for name, y in heights:  # every line first: rules close together (a short plot) run through the labels above
            if name in above:
                continue  # no line: the scale stops below it, its label says so at the top edge
            painter.setPen(QPen(rule_colour(name), 1.5, Qt.PenStyle.SolidLine if name == "ceiling" else Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(plot.left(), y), QPointF(plot.right(), y))
        metrics = painter.fontMetrics()
        labels = {name: above_label(name, rules.at(name) or 0) if name in above else rule_label(rules, name) for name, _ in heights}
        # Rules above the scale: their labels in a row ending before "now" (shown at first, shaded), the folds' left of it.
        end = min(plot.right(), self._slot_rect(self.slots() - 1, plot).left())
        row = end - 4 - sum(metrics.horizontalAdvance(labels[name]) + 10 for name in above) + 10
        for name, y in heights:
            label = labels[name]
            # Rules close together: each label starts after the one it would cover.
            # Above its line, unless that would reach the heading over the plot: then under it.
            below = y - 3 - metrics.ascent() - 1 < plot.top()
            base = y + metrics.ascent() + 2 if below else y - 3
            x = max([plot.left() + 4, row if name in above else 0.0] + [right + 10 for _, right, b in taken if abs(b - base) < 12])
            width = metrics.horizontalAdvance(label)
            painter.setPen(QPen(rule_colour(name), 1.5))
            self._label_on_box(painter, QPointF(x, base), label, width, bottom=None if below else y - 1)  # the rule's own line stays
            taken.append((x, x + width, base))
        return taken

    def _label_on_box(self, painter: QPainter, at: QPointF, label: str, width: float, bottom: float | None = None) -> None:
        """A label drawn at `at` (its baseline) on a box of the panel's colour a pixel or two around it, down to
        `bottom` when given: the fold lines and bars under it stop at its edge, so it reads (label_boxes keeps
        where each box went: the step shown is shaded over it, and the tests read it)."""
        metrics = painter.fontMetrics()
        top = at.y() - metrics.ascent() - 1
        box = QRectF(at.x() - 2, top, width + 4, (bottom if bottom is not None else at.y() + metrics.descent() + 1) - top)
        painter.fillRect(box, panel_colour())
        painter.drawText(at, label)
        self.label_boxes.append((box, label, QPointF(at), painter.pen().color()))

    def _draw_axes(self, painter: QPainter, plot: QRectF, top: float, text: QColor) -> None:
        painter.setPen(QPen(muted_colour(), 1))
        painter.drawLine(plot.bottomLeft(), plot.bottomRight())
        # As many values as fit a line apart: a short plot (a 768-pixel screen) gets two, a tall one four.
        for value in nice_ticks(top / 1.08, max(1, min(4, int(plot.height() // 16)))):
            y = self._y(value, plot, top)
            painter.drawText(QRectF(0, y - 8, LEFT - 6, 16), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, f"{value:,.0f}")
        painter.setPen(text)
        step = max(1, int(self.zoom.visible(self.slots())) // 12)
        # Each request number is centred on its slot at its own width (a slot can be a pixel wide), and one that
        # would run into the number before is left out rather than drawn over it or cut.
        metrics = painter.fontMetrics()
        ticks = [
            (self._slot_rect(slot, plot).center().x(), "now" if slot == self.slots() - 1 else f"{slot:,}")
            for slot in self.zoom.in_view(self.slots())
            if slot % step == 0
        ]
        widths = [metrics.horizontalAdvance(label) for _, label in ticks]
        lefts = [min(max(x - w / 2, 0.0), self.width() - w) for (x, _), w in zip(ticks, widths)]
        for i in spaced(lefts, widths):
            painter.drawText(QRectF(lefts[i], plot.bottom() + 2, widths[i] + 1, 16), Qt.AlignmentFlag.AlignLeft, ticks[i][1])

    def legend(self) -> str:
        """The line above the plot: what is shown, and what its bars and dots are."""
        if self.branch is not None:
            return (
                f"What-if from request {self.branch.start}   ·   orange line: the what-if's estimates, replayed   ·   "
                "outlined bars: the original's"
            )
        doc = self._shown()
        current = "now (the active view)" if self.current == len(doc.requests) else f"request {self.current}"
        # Usage shared out of totals is foldscope's estimate, not the provider's report: the dots say which they are;
        # an agent's rounded figures (Aider's) are approximate.
        dots = (
            "dots: foldscope's estimate of the input (totals only)"
            if estimated_usage(doc.session) is not None
            else "dots: reported input, approximate (~)"
            if approximate(doc.session.format)
            else "dots: reported input"
        )
        return f"Showing {current}   ·   bars: predicted input   ·   {dots}   ·   {KEY_HINT}"

    def _draw_legend(self, painter: QPainter, text: QColor) -> None:
        painter.setPen(text)
        painter.drawText(QRectF(200, 2, self.width() - 210, 16), Qt.AlignmentFlag.AlignRight, self.legend())

    # -- input ---------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key = event.key()
        moves: dict[int, int] = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1}  # event.key() is an int
        if key in moves:
            self.step_to(self.current + moves[key])
        elif key == Qt.Key.Key_Home:
            self.step_to(0)
        elif key == Qt.Key.Key_End:
            self.step_to(self.slots() - 1)
        elif key == Qt.Key.Key_N:
            self.step_fold(1)
        elif key == Qt.Key.Key_P:
            self.step_fold(-1)
        elif key in ZOOM_KEYS:
            self.zoom_by(ZOOM_KEYS[key])
        else:
            super().keyPressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt override)
        if not wheel(self, event):
            super().wheelEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        slot = self.slot_at(event.position().x())
        if slot is not None:
            self.setFocus()
            self.step_to(slot)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        slot = self.slot_at(event.position().x())
        if slot is None or self.document is None:
            return
        QToolTip.showText(event.globalPosition().toPoint(), self.tip_for(slot), self)

    def tip_for(self, slot: int) -> str:
        """What hovering over a slot says: the request's size as every panel shows it, and how it was reached."""
        assert self.document is not None
        if not self.document.is_counted:
            counts, requests = self.counting
            return f"measuring the requests: {len(counts):,} of {requests:,} counted; sizes come when all are measured"
        branch = self.branch
        if branch is not None and slot >= branch.start and slot - branch.start < len(branch.estimates):
            i = slot - branch.start
            change = branch.estimates[i] - branch.original[slot]
            folds = f"; {branch.folds[i]} fold passes kept before it" if i < len(branch.folds) and branch.folds[i] else ""
            tip = (
                f"request {slot}: what-if estimate {branch.estimates[i]:,} tokens, the original's {branch.original[slot]:,}"
                f" ({change:+,}){folds}"
            )
        elif branch is not None and slot > branch.start:
            tip = f"now in the original: {branch.original_now:,} tokens (the what-if stops at the last request)"
        elif slot == len(self.document.requests):
            doc = self.document
            tip = (
                f"now: the active view, predicted {doc.now_predicted:,} tokens (estimate {doc.now_size:,})"
                if doc.now_predicted
                else f"now: the active view, estimate {doc.now_size:,} tokens"
            )
        else:
            r = self.document.requests[slot]
            near = APPROXIMATE if approximate(self.document.session.format) else ""  # the agent's rounded figures
            reported = f"{near}{r.reported_input:,}" if r.reported_input else "not recorded"
            share = f"; the next request repeats {r.prefix_share:.0%} of it" if r.prefix_share is not None else ""
            tip = (
                f"request {slot}: {counted(len(r.view), 'message')}, predicted {r.predicted:,} tokens, reported input "
                f"{reported}"
                + (f" (difference {r.difference()})" if r.reported_input else "")
                + f"; estimate {r.estimate:,} ({scaled_words(r.counted, r.unseen_head, r.scale)}){share}"
                + unseen_head_note(r)
            )
            row = self.lane.row_at(slot)
            if row is not None and self.lane.shown():
                tip += f"\nCache: {lane_sentence(row)}\n{LEGEND}"
        return tip

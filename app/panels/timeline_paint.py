"""The counted timeline's paint: the bars, dots, folds, rules and axes in a layer kept between steps, a what-if's
series, the step shown and the legend."""

from __future__ import annotations

from collections.abc import Sequence

from foldscope.app.panels.timeline_counting import CountingTimeline
from foldscope.app.panels.timeline_scale import above_label, nice_ticks
from foldscope.app.panels.timeline_state import BOTTOM, KEY_HINT, LEFT, NO_SESSION_HINT, RIGHT, BranchSeries
from foldscope.app.qt import (
    QColor,
    QFont,
    QPainter,
    QPaintEvent,
    QPen,
    QPixmap,
    QPointF,
    QRectF,
    Qt,
    QWidget,
)
from foldscope.app.theme import is_dark, muted_colour, panel_colour, rule_colour
from foldscope.core.model.session import estimated_usage
from foldscope.core.readout.trace_facts import rule_label, rule_names
from foldscope.core.readout.usage_precision import approximate

# A request predicted at a few tokens on a plot of thousands (the first request, before any report shows the agent's
# unseen head) still draws a bar this tall: a dot over nothing reads as a request with no size.
BAR_MIN = 2.0
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


class PaintedTimeline(CountingTimeline):
    """Paints the timeline: the loading bars while counting (CountingTimeline), else the counted trace."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layer: tuple[tuple, QPixmap] | None = None  # the bars, drawn once per requests, size and theme
        # The fold and rule labels the bars' layer drew: (their box, the label, its baseline's start, its colour).
        self.label_boxes: list[tuple[QRectF, str, QPointF, QColor]] = []

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
            self.lane.rows,  # replaced, never changed in place: the same object is the same rows
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
        rect = QRectF()  # set to each bar's edges in turn: a QRectF made a bar cost 1 us more (11,385 at 50k)
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
            rect.setRect(x + pad, y, inner_width, bottom - y)
            painter.fillRect(rect, now_bar if request is None else bar)
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
            if approximate(doc.session)
            else "dots: reported input"
        )
        return f"Showing {current}   ·   bars: predicted input   ·   {dots}   ·   {KEY_HINT}"

    def _draw_legend(self, painter: QPainter, text: QColor) -> None:
        painter.setPen(text)
        painter.drawText(QRectF(200, 2, self.width() - 210, 16), Qt.AlignmentFlag.AlignRight, self.legend())

    # -- input ---------------------------------------------------------------------------

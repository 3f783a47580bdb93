"""The window map's paint: the lead, the blocks by pixel column, the rules, the first round, the marks, the legend and
the summary line."""

from __future__ import annotations

from foldscope.app.panels.window_map_blocks import (
    BAR_HEIGHT,
    LEAD_COLOURS,
    LEAD_LEGEND,
    LEFT,
    LEGEND_FROM,
    PATTERNS,
    SUMMARY_TOP,
    TAKEN_LABEL,
    PaintPlan,
    column_spans,
    message_styles,
    plan_paint,
)
from foldscope.app.panels.window_map_state import SEPARATOR, MapLayout
from foldscope.app.qt import (
    QBrush,
    QColor,
    QFont,
    QPainter,
    QPaintEvent,
    QPen,
    QPointF,
    QRectF,
    Qt,
)
from foldscope.app.theme import KIND_LEGEND, colour_for_key, rule_colour, taken_colour
from foldscope.core.readout.trace_facts import rule_label, rule_names


class PaintedMap(MapLayout):
    """Paints the map from its layout (MapLayout), a paint's shapes kept until the layout, highlight or palette change."""

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
        # The summary line starts after the title and after any rule label stacked up into its line (one whose
        # letters, cap height above its baseline, reach the summary's box).
        metrics = painter.fontMetrics()
        reach = SUMMARY_TOP + metrics.height() + metrics.capHeight()
        start = max([200.0] + [right + 12 for _, right, baseline in labels if baseline < reach])
        room = int(self.width() - 10 - start)
        # The parts in order of need: on a narrow map the least needed go first, never cut mid-word.
        parts = self.fitted_summary(metrics.horizontalAdvance, room)
        summary = metrics.elidedText(SEPARATOR.join(parts), Qt.TextElideMode.ElideRight, room)
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

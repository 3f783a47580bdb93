"""The window map: the shown active view as blocks proportional to tokens, the full record beneath, rules across."""

from __future__ import annotations

from app.document import Document
from app.qt import QColor, QFont, QKeyEvent, QMouseEvent, QPainter, QPaintEvent, QPen, QPointF, QRectF, QSize, Qt, QToolTip, QWidget, Signal
from app.models import kind_label
from app.trace_facts import rule_label, rule_names
from app.theme import KIND_LEGEND, colour_for_key, kind_colour, rule_colour

LEFT, RIGHT = 100, 16
BAR_HEIGHT = 26


class WindowMap(QWidget):
    """Two bars at one scale: the active view shown (top) and the full record (below, out rows faded).

    Clicking a block emits `message_clicked(index)`; with focus, ←/→ move through the view's blocks.
    """

    message_clicked = Signal(int)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.selected: int | None = None
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Window map")
        self.setMouseTracking(True)
        self.setMinimumHeight(124)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(800, 128)

    def set_document(self, document: Document | None) -> None:
        self.document = document
        self.selected = None
        self.update()

    def set_selected(self, index: int | None) -> None:
        self.selected = index
        self.update()

    # -- geometry ------------------------------------------------------------------------

    def _scale(self) -> float:
        doc = self.document
        total = max(doc.record_tokens(), doc.view_tokens(), 1)
        if doc.rules is not None:
            total = max([total] + [doc.rules.at(name) or 0 for name in rule_names(doc.rules)])
        return (self.width() - LEFT - RIGHT) / (total * 1.02)

    def _rows(self) -> tuple[float, float]:
        return 40.0, 40.0 + BAR_HEIGHT + 8

    def blocks(self) -> list[tuple[int, QRectF, bool]]:
        """(record index, rectangle, in the view bar) for every block drawn."""
        doc = self.document
        if doc is None:
            return []
        scale = self._scale()
        view_y, record_y = self._rows()
        out: list[tuple[int, QRectF, bool]] = []
        x = float(LEFT)
        for position in range(doc.view_size):
            index = doc.view_index(position)
            width = doc.tokens[index] * scale
            out.append((index, QRectF(x, view_y, width, BAR_HEIGHT), True))
            x += width
        x = float(LEFT)
        for index in range(doc.record_size):
            width = doc.tokens[index] * scale
            out.append((index, QRectF(x, record_y, width, BAR_HEIGHT), False))
            x += width
        return out

    def block_at(self, point: QPointF) -> int | None:
        for index, rect in ((i, r) for i, r, _ in self.blocks()):
            # Tiny blocks get a pixel of grace so every message can be hit.
            if rect.adjusted(-0.5, 0, 0.5, 0).contains(point):
                return index
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
        painter.drawText(QRectF(4, view_y, LEFT - 10, BAR_HEIGHT), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, "Active view")
        painter.drawText(QRectF(4, record_y, LEFT - 10, BAR_HEIGHT), Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, "Full record")
        border = self.palette().window().color()
        selected_rects: list[QRectF] = []
        for index, rect, in_view_bar in self.blocks():
            colour = QColor(kind_colour(doc.message(index)))
            if not in_view_bar and not doc.in_view(index):
                colour.setAlpha(70)
            painter.fillRect(rect, colour)
            if rect.width() > 3:
                painter.setPen(QPen(border, 1))
                painter.drawLine(rect.topRight(), rect.bottomRight())
            if index == self.selected:
                selected_rects.append(rect)
        painter.setPen(QPen(text, 2))
        painter.setBrush(Qt.BrushStyle.NoBrush)
        for rect in selected_rects:
            painter.drawRect(rect.adjusted(-1, -2, 1, 2))
        self._draw_rules(painter, view_y, record_y + BAR_HEIGHT)
        self._draw_legend(painter, record_y + BAR_HEIGHT + 6, text)
        summary = (
            f"blocks sized by each message's own tokens: the active view {doc.view_tokens():,}"
            f" of {doc.record_tokens():,} in the full record   ·   click a block to select it"
        )
        painter.setPen(text)
        painter.drawText(QRectF(200, 2, self.width() - 210, 16), Qt.AlignmentFlag.AlignRight, summary)

    def _draw_rules(self, painter: QPainter, top: float, bottom: float) -> None:
        rules = self.document.rules
        if rules is None:
            return
        scale = self._scale()
        for name in rule_names(rules):
            value = rules.at(name)
            x = LEFT + value * scale
            painter.setPen(QPen(rule_colour(name), 2, Qt.PenStyle.SolidLine if name == "ceiling" else Qt.PenStyle.DashLine))
            painter.drawLine(QPointF(x, top - 14), QPointF(x, bottom + 2))
            label = rule_label(rules, name)
            width = painter.fontMetrics().horizontalAdvance(label)
            # Near the right edge the label goes left of its rule so it is never cut off.
            painter.drawText(QPointF(x + 4 if x + 4 + width < self.width() else x - 4 - width, top - 4), label)

    def _draw_legend(self, painter: QPainter, y: float, text: QColor) -> None:
        x = float(LEFT)
        metrics = painter.fontMetrics()
        for key, label in KIND_LEGEND:
            painter.fillRect(QRectF(x, y + 3, 10, 10), colour_for_key(key))
            painter.setPen(text)
            painter.drawText(QPointF(x + 14, y + 12), label)
            x += 14 + metrics.horizontalAdvance(label) + 16

    # -- input ---------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        index = self.block_at(event.position())
        if index is not None:
            self.setFocus()
            self.message_clicked.emit(index)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        index = self.block_at(event.position())
        if index is None or self.document is None:
            QToolTip.hideText()
            return
        doc = self.document
        where = "in the active view" if doc.in_view(index) else f"out: {doc.out_reason.get(index, '')}"
        tip = f"#{index} {kind_label(doc, index)} · {doc.tokens[index]:,} tokens · {where}"
        QToolTip.showText(event.globalPosition().toPoint(), tip, self)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        doc = self.document
        moves = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1}
        if doc is None or event.key() not in moves or doc.view_size == 0:
            super().keyPressEvent(event)
            return
        position = doc.view_position.get(self.selected, -1) if self.selected is not None else -1
        position = max(0, min(position + moves[event.key()], doc.view_size - 1))
        self.message_clicked.emit(doc.view_index(position))

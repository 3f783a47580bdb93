"""A legend of coloured squares, each with its words, wrapping to the width it is given (the Cost tab's bar)."""

from __future__ import annotations

from foldscope.app.qt import QColor, QFontMetrics, QMouseEvent, QPainter, QPaintEvent, QRectF, QSize, QSizePolicy, Qt, QWidget

SWATCH = 10  # the square's side, in pixels
GAP = 4  # between a square and its words
SPACING = 18  # between one item and the next


class SwatchLegend(QWidget):
    """Items (colour, words, tooltip) laid out left to right, wrapping between items, never inside one."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.items: list[tuple[QColor, str, str]] = []
        policy = QSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Preferred)
        policy.setHeightForWidth(True)
        self.setSizePolicy(policy)
        self.setMouseTracking(True)

    def set_items(self, items: list[tuple[QColor, str, str]]) -> None:
        self.items = list(items)
        self._hold_height()
        self.updateGeometry()
        self.update()

    def text(self) -> str:
        """The legend's words in order, as a reader (or a test) sees them."""
        return "  ·  ".join(words for _, words, _ in self.items)

    def _line_height(self) -> int:
        return max(SWATCH, QFontMetrics(self.font()).height()) + 4

    def places(self, width: int) -> list[tuple[QRectF, QRectF]]:
        """(square, words) rectangles for each item at this width."""
        metrics = QFontMetrics(self.font())
        line = self._line_height()
        out: list[tuple[QRectF, QRectF]] = []
        x, y = 0, 0
        for _, words, _ in self.items:
            wide = SWATCH + GAP + metrics.horizontalAdvance(words)
            if x and x + wide > width:
                x, y = 0, y + line
            square = QRectF(x, y + (line - SWATCH) / 2, SWATCH, SWATCH)
            out.append((square, QRectF(x + SWATCH + GAP, y, wide - SWATCH - GAP, line)))
            x += wide + SPACING
        return out

    def hasHeightForWidth(self) -> bool:  # noqa: N802 (Qt override)
        return True

    def heightForWidth(self, width: int) -> int:  # noqa: N802 (Qt override)
        places = self.places(width)
        return int(places[-1][1].bottom()) if places else 0

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(400, self.heightForWidth(self.width() if self.width() > 0 else 400))

    def _hold_height(self) -> None:
        # A scroll area's layout does not ask for height-for-width: the legend holds its own wrapped height,
        # so the sentence under it is never drawn over its second row.
        needed = self.heightForWidth(self.width())
        if self.minimumHeight() != needed:
            self.setMinimumHeight(needed)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._hold_height()

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(SWATCH * 4, self._line_height() if self.items else 0)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        painter = QPainter(self)
        painter.setPen(self.palette().windowText().color())
        for (colour, words, _), (square, place) in zip(self.items, self.places(self.width())):
            painter.fillRect(square, colour)
            painter.drawText(place, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, words)
        painter.end()

    def item_at(self, x: float, y: float) -> int | None:
        for i, (square, place) in enumerate(self.places(self.width())):
            if square.united(place).adjusted(0, 0, GAP, 0).contains(x, y):
                return i
        return None

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        i = self.item_at(event.position().x(), event.position().y())
        self.setToolTip("" if i is None else self.items[i][2])

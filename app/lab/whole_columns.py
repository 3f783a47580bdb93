"""A table whose columns share its width but never cut a header: each column at least as wide as its header and cells."""

from __future__ import annotations

from foldscope.app.qt import QHeaderView, Qt, QTableView, QTimer


def shared_widths(needs: list[int], width: int) -> list[int]:
    """Widths for columns needing `needs`, filling `width`: as equal as they can be, none under its need (water-filling:
    a column that needs more than the equal share keeps its need, the rest share what is left). Over `width` when the
    needs are (the table then scrolls rather than cut a header)."""
    n = len(needs)
    if not n:
        return []
    wide: set[int] = set()
    while True:
        rest = n - len(wide)
        share = (width - sum(needs[i] for i in wide)) // rest if rest else 0
        more = {i for i in range(n) if i not in wide and needs[i] > share}
        if not more:
            break
        wide |= more
        if len(wide) == n:
            return list(needs)
    widths = [needs[i] if i in wide else share for i in range(n)]
    left = width - sum(widths)  # the rounding's pixels, to the last shared column so the row ends at the edge
    shared = [i for i in range(n) if i not in wide]
    if shared and left > 0:
        widths[shared[-1]] += left
    return widths


class WholeColumns(QHeaderView):
    """A horizontal header that sizes its sections by shared_widths: as Stretch does while every header fits in an
    equal share, wider where one would be cut (the lab's "recorded, as billed" at 1366x768 read "ecorded, as billed")."""

    def __init__(self, table: QTableView) -> None:
        super().__init__(Qt.Orientation.Horizontal, table)
        self.table = table
        self.setSectionsClickable(True)  # as QTableView's own header: a highlighted section measured bold
        self.setHighlightSections(True)
        self.setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self._pending = False

    def setModel(self, model) -> None:  # noqa: N802 (Qt override)
        super().setModel(model)
        if model is not None:
            for signal in (model.modelReset, model.headerDataChanged, model.dataChanged, model.layoutChanged):
                signal.connect(self.refit)
        self.refit()

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self.fit()

    def refit(self, *_) -> None:
        """Fit once the model's change has landed (its new headers and cells measured), not in the middle of it."""
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self, self.fit)  # with the header as context: never called once it is gone

    def needs(self) -> list[int]:
        """Each column's need: its header's hint (text, margins) or its widest cell, whichever is more."""
        return [max(self.sectionSizeHint(i), self.table.sizeHintForColumn(i)) for i in range(self.count())]

    def fit(self) -> None:
        self._pending = False
        for i, width in enumerate(shared_widths(self.needs(), self.width())):
            if self.sectionSize(i) != width:
                self.resizeSection(i, width)

"""Kind and text filters over the full record and active view lists, as a proxy between model and table."""

from __future__ import annotations

from typing import Any

from foldscope.app.models.messages import AcceptRole, MessageTableModel
from foldscope.app.qt import QModelIndex, QObject, QPersistentModelIndex, QSortFilterProxyModel, Qt
from foldscope.app.theme import KIND_LEGEND, kind_key

# (key, label) for the kind filter: "" keeps every kind.
KIND_CHOICES = (("", "all kinds"),) + KIND_LEGEND


class MessageFilter(QSortFilterProxyModel):
    """Keeps the rows whose message is of the chosen kind and whose text holds the filter text."""

    def __init__(self, source: MessageTableModel, parent: QObject | None = None) -> None:
        super().__init__(parent)
        # A row's kind and text never change (the record is append-only): a step that greys rows need not filter
        # every row again, which cost a 10,000-message step most of its time. Appended rows are still filtered.
        self.setDynamicSortFilter(False)
        self.setSourceModel(source)
        self.kind = ""
        self.text = ""
        # Qt asks the source each row's AcceptRole, which is this filter's test, only while the pattern is set:
        # with no filter chosen an empty pattern lets Qt keep every row in C++, never calling into Python. A step
        # resets the view list, and a call a row was a fifth of a 25,000-message view's step.
        self.setFilterRole(AcceptRole)
        source.accepts = self.accepts
        self.source = source
        self._every_row = True  # no filter chosen, and Qt's rows filtered again since: each row is the source's

    def set_filter(self, kind: str | None = None, text: str | None = None) -> None:
        self._every_row = False  # while Qt filters again, its rows are its own until it has
        self.beginFilterChange()
        if kind is not None:
            self.kind = kind
        if text is not None:
            self.text = text.strip().casefold()
        self.setFilterFixedString("1" if self.active else "")
        self.endFilterChange(QSortFilterProxyModel.Direction.Rows)
        self._every_row = not self.active

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # With no filter chosen every source row is kept, in its order (nothing sorts these lists): a row here is the
        # source's row, asked of it in one call into Python. Qt's own mapping makes the source's index first, which
        # asks the source's row and column counts: three calls a role, seven roles a cell, at every paint.
        if self._every_row:
            return self.source.cell(index.row(), index.column(), role)
        return super().data(index, role)

    @property
    def active(self) -> bool:
        return bool(self.kind or self.text)

    def accepts(self, source_row: int) -> bool:
        """Whether a source row's message is of the chosen kind and holds the filter text."""
        if not self.active:
            return True
        model: MessageTableModel = self.sourceModel()  # type: ignore[assignment]
        doc = model.document
        if doc is None:
            return True
        message = doc.message(model.record_index(source_row))
        if self.kind and kind_key(message) != self.kind:
            return False
        if self.text:
            # The whole text, not the preview: a filter must find what the row is, not what fits on it.
            return self.text in message.text.casefold() or self.text in message.id.casefold()
        return True

"""The full record and the active view as titled, keyboard-friendly table views over their models."""

from __future__ import annotations

from app.models import CHARS, INDEX, KIND, PREVIEW, TOKENS, IndexRole, MessageTableModel
from app.qt import (
    QAbstractItemView,
    QHeaderView,
    QItemSelectionModel,
    QLabel,
    QModelIndex,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)


class MessageList(QWidget):
    """A title over a virtual table; `message_selected` says which record index the user chose."""

    message_selected = Signal(int)

    def __init__(self, title: str, model: MessageTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.model = model
        self._selecting = False  # set while the other list or a panel selects here
        self.heading = QLabel(f"<b style='font-size:11pt'>{title}</b>")
        self.heading.setObjectName("listHeading")
        self.table = QTableView()
        self.table.setAccessibleName(title)
        self.table.setModel(model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.setWordWrap(False)
        self.table.verticalHeader().setVisible(False)
        # Uniform row heights keep a 10,000-row list virtual: Qt never measures every row.
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 8)
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        header.setSectionResizeMode(PREVIEW, QHeaderView.ResizeMode.Stretch)
        for column, width in ((INDEX, 46), (KIND, 118), (CHARS, 70), (TOKENS, 62)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, width)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        layout.addWidget(self.heading)
        layout.addWidget(self.table, 1)

    def set_heading(self, detail: str) -> None:
        self.heading.setText(f"<b style='font-size:11pt'>{self.title}</b> &nbsp; {detail}")

    def _current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if current.isValid() and not self._selecting:
            self.message_selected.emit(int(current.data(IndexRole)))

    def selected_index(self) -> int | None:
        current = self.table.currentIndex()
        return int(current.data(IndexRole)) if current.isValid() else None

    def select_index(self, index: int) -> bool:
        """Select the row holding a record index without re-emitting; False (and no selection) when absent."""
        row = self.model.row_of(index)
        selection = self.table.selectionModel()
        self._selecting = True
        try:
            if row is None:
                selection.clear()
                return False
            model_index = self.model.index(row, PREVIEW)
            selection.setCurrentIndex(
                model_index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.table.scrollTo(model_index, QAbstractItemView.ScrollHint.EnsureVisible)
            return True
        finally:
            self._selecting = False

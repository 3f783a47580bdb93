"""The full record and the active view as titled, keyboard-friendly table views over their models."""

from __future__ import annotations

from foldscope.app.follows_changes import FollowsChanges, rows_changed
from foldscope.app.highlight import plain_tip
from foldscope.app.models.filters import KIND_CHOICES, MessageFilter
from foldscope.app.models.messages import CHARS, COLUMNS, INDEX, KIND, PREVIEW, TOKENS, IndexRole, MessageTableModel
from foldscope.app.qt import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QItemSelectionModel,
    QLabel,
    QLineEdit,
    QModelIndex,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)

MIN_ROWS = 8  # rows a list keeps readable however small the window or however many docks are open
PREVIEW_MIN_CHARS = 14  # the Preview column never narrower than this many average characters


class MessageList(QWidget):
    """A title over a virtual table; `message_selected` says which record index the user chose, `message_opened`
    which one they activated (Enter, or a double-click): the window opens the subagent a call started."""

    message_selected = Signal(int)
    message_opened = Signal(int)

    def __init__(self, title: str, model: MessageTableModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = title
        self.model = model
        self._selecting = False  # set while the other list or a panel selects here
        self.heading = QLabel(f"<b style='font-size:11pt'>{title}</b>")
        self.heading.setObjectName("listHeading")
        # At 1366 pixels the detail is wider than the list: it wraps to a second line rather than run on, clipped,
        # into the next list's title.
        self.heading.setWordWrap(True)
        self.filter = MessageFilter(model, self)
        self.kind_filter = QComboBox()
        self.kind_filter.setAccessibleName(f"{title}: kind filter")
        for key, label in KIND_CHOICES:
            self.kind_filter.addItem(label, key)
        self.kind_filter.currentIndexChanged.connect(lambda: self._filter_changed(kind=self.kind_filter.currentData()))
        self.text_filter = QLineEdit()
        self.text_filter.setAccessibleName(f"{title}: text filter")
        self.text_filter.setPlaceholderText("Filter by text (Ctrl+F)")
        self.text_filter.setClearButtonEnabled(True)
        self.text_filter.textChanged.connect(lambda text: self._filter_changed(text=text))
        self.shown = QLabel()
        self.table = QTableView()
        self.table.setAccessibleName(title)
        self.table.setModel(self.filter)
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
        digits = self.table.fontMetrics().horizontalAdvance("000,000") + 14
        for column, width in ((INDEX, 52), (KIND, 118), (CHARS, digits), (TOKENS, digits)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
            header.resizeSection(column, max(width, header.sectionSizeFromContents(column).width()))
        preview = max(header.sectionSizeFromContents(PREVIEW).width(), self.table.fontMetrics().averageCharWidth() * PREVIEW_MIN_CHARS)
        header.setMinimumSectionSize(min(header.sectionSizeFromContents(c).width() for c in range(len(COLUMNS))))
        # The list is never narrower than its columns (the Preview at its least), nor shorter than MIN_ROWS:
        # the splitters and docks around it give way instead.
        frame = 2 * self.table.frameWidth()
        scrollbar = self.table.verticalScrollBar().sizeHint().width()
        self.table.setMinimumWidth(sum(header.sectionSize(c) for c in range(len(COLUMNS)) if c != PREVIEW) + preview + scrollbar + frame)
        self.table.setMinimumHeight(header.sizeHint().height() + MIN_ROWS * self.table.verticalHeader().defaultSectionSize() + frame)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        self.table.activated.connect(lambda index: self.message_opened.emit(int(index.data(IndexRole))) if index.isValid() else None)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        filters = QHBoxLayout()
        filters.setContentsMargins(0, 0, 0, 0)
        filters.addWidget(self.kind_filter)
        filters.addWidget(self.text_filter, 1)
        filters.addWidget(self.shown)
        layout.addWidget(self.heading)
        layout.addLayout(filters)
        layout.addWidget(self.table, 1)
        self.filter.modelReset.connect(self._count_shown)
        # Its rows follow the workspace's changes (follow): an appended copy, the view stepped to, the greying.
        self.follower = FollowsChanges(self, rows_changed, model.show_changes)

    def follow(self, changed) -> None:
        """Keep its rows in step with the workspace's changes (app.undo.SessionEditor.display_changed)."""
        self.follower.follow(changed)

    def _filter_changed(self, kind: str | None = None, text: str | None = None) -> None:
        selected = self.selected_index()
        self.filter.set_filter(kind, text)
        self._count_shown()
        if selected is not None:
            self.select_index(selected)

    def _count_shown(self) -> None:
        shown, total = self.filter.rowCount(), self.model.rowCount()
        self.shown.setText(f"{shown:,} of {total:,} shown" if self.filter.active else "")

    def set_heading(self, detail: str) -> None:
        self.heading.setText(f"<b style='font-size:11pt'>{self.title}</b> &nbsp; {detail}")
        self.heading.setToolTip(plain_tip(f"{self.title} · {detail}"))  # the whole line, when the list is too narrow

    def _current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if current.isValid() and not self._selecting:
            self.message_selected.emit(int(current.data(IndexRole)))

    def selected_index(self) -> int | None:
        current = self.table.currentIndex()
        return int(current.data(IndexRole)) if current.isValid() else None

    def select_index(self, index: int) -> bool:
        """Select the row holding a record index without re-emitting; False (and no selection) when absent or filtered out."""
        row = self.model.row_of(index)
        selection = self.table.selectionModel()
        self._selecting = True
        try:
            if row is None:
                selection.clear()
                return False
            model_index = self.filter.mapFromSource(self.model.index(row, PREVIEW))
            if not model_index.isValid():  # filtered out of this list
                selection.clear()
                return False
            selection.setCurrentIndex(
                model_index,
                QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows,
            )
            self.table.scrollTo(model_index, QAbstractItemView.ScrollHint.EnsureVisible)
            return True
        finally:
            self._selecting = False

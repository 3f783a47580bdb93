"""The fold panel: context_folds records and decision events as a sortable table; choosing one steps to it."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from foldscope.app.follows_changes import FollowsChanges
from foldscope.app.highlight import plain_tip
from foldscope.app.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QDockWidget,
    QHeaderView,
    QLabel,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QSortFilterProxyModel,
    QStyle,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.core.model.commands import Changes
from foldscope.core.readout.document import Document
from foldscope.core.readout.fold_facts import FoldRow
from foldscope.core.readout.words import plural

COLUMNS = ("#", "Kind", "Request", "Stage / action", "Reason", "Messages", "Estimate before", "Estimate after", "Outcome")
NUMBER, KIND, REQUEST, STAGE, REASON, MESSAGES, BEFORE, AFTER, OUTCOME = range(len(COLUMNS))
FOLD_KINDS = ("fold", "clip", "compaction")
NOT_RECORDED = "not recorded"  # an estimate the file's own fold record does not hold
ESTIMATE_TIP = (
    'The estimate the fold record itself gives. "not recorded": the file does not hold one; step to the '
    "row's request to see the timeline's estimate of the view it made."
)
# Said under the table for the rows it has: what a row of that kind is, or why a cell is empty, in one sentence.
KIND_SENTENCES = {
    "branch": (
        "A branch row is a rewind: the user went back to an earlier message (or edited a prompt) and the "
        "agent went on from there; what it left stays in the full record, out of the active view."
    ),
}
NUMERIC = (NUMBER, REQUEST, MESSAGES, BEFORE, AFTER)
# How far under a column's widest text (by the font's advance) a cell's text may be and still be the widest cell as
# the view lays it out (its own shaping and rounding): those cells are measured as the view measures them.
FIT_SLACK = 4
SortRole = Qt.ItemDataRole.UserRole + 2
RowRole = Qt.ItemDataRole.UserRole + 3
ROLES = frozenset(
    {Qt.ItemDataRole.DisplayRole, SortRole, RowRole, Qt.ItemDataRole.TextAlignmentRole, Qt.ItemDataRole.ToolTipRole}
)  # the roles FoldModel.data answers


class FoldModel(QAbstractTableModel):
    """Maps a row to a FoldRow and a column to one of its facts; nothing is decided here."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.rows: list[FoldRow] = []
        self.now_slot = 0

    def set_rows(self, rows: Sequence[FoldRow], now_slot: int) -> None:
        self.beginResetModel()
        self.rows, self.now_slot = list(rows), now_slot
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section]
            if role == Qt.ItemDataRole.TextAlignmentRole and section in NUMERIC:
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
            if role == Qt.ItemDataRole.ToolTipRole and section in (BEFORE, AFTER):
                return ESTIMATE_TIP
        return None

    def _value(self, row: FoldRow, column: int) -> Any:
        return (row.number, row.kind, row.slot, row.stage, row.reason, row.messages, row.before, row.after, row.outcome)[column]

    def display(self, row: FoldRow, column: int) -> str:
        """The cell's text as the table shows it."""
        value = self._value(row, column)
        if value is None and column in (BEFORE, AFTER) and row.kind in FOLD_KINDS:
            return NOT_RECORDED  # a fold or compaction had an estimate: this file did not record it
        if value is None or value == "":
            return "—"
        if column == REQUEST:
            return "now" if value >= self.now_slot else str(value)
        return f"{value:,}" if isinstance(value, int) and column != NUMBER else str(value)

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        # The view asks each cell for a dozen roles at every resize to contents (a long session's compactions are
        # hundreds of rows): the ones this model never gives are answered first.
        if role not in ROLES or not index.isValid() or not (0 <= index.row() < len(self.rows)) or not (0 <= index.column() < len(COLUMNS)):
            return None
        row, column = self.rows[index.row()], index.column()
        if role == Qt.ItemDataRole.DisplayRole:
            return self.display(row, column)
        value = self._value(row, column)
        if role == SortRole:
            # Numbers sort as numbers, missing values first; text as text.
            return (-1 if value is None else value) if column in NUMERIC else str(value)
        if role == RowRole:
            return row
        if role == Qt.ItemDataRole.TextAlignmentRole and column in NUMERIC:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ToolTipRole:
            took = plural(len(row.affected), "message") if row.affected else "nothing recorded"
            text = json.dumps(dict(row.raw), ensure_ascii=False, default=str)
            return plain_tip(f"{row.kind}: took {took}\n{text[:600]}")
        return None


class FoldPanel(QWidget):
    """The sorted table under its heading (the dock's title bar: app.dock_title); `fold_selected(row)` says which record
    the user chose."""

    fold_selected = Signal(object)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.model = FoldModel(self)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setSortRole(SortRole)
        self.heading = QLabel("<b style='font-size:11pt'>Folds</b>")
        self.table = QTableView()
        self.table.setAccessibleName("Fold records and decisions")
        self.table.setModel(self.proxy)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(NUMBER, Qt.SortOrder.AscendingOrder)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setShowGrid(False)
        self.table.verticalHeader().setVisible(False)
        self.table.verticalHeader().setSectionResizeMode(QHeaderView.ResizeMode.Fixed)
        self.table.verticalHeader().setDefaultSectionSize(self.table.fontMetrics().height() + 6)
        self.table.setMinimumHeight(self.table.horizontalHeader().sizeHint().height() + 4)  # no rows: the header only
        header = self.table.horizontalHeader()
        header.setHighlightSections(False)
        # Each column as wide as its contents, fitted once per set_rows (fit_columns), not kept fitted by the header:
        # ResizeToContents measured every cell again at each layout pass, three times as the rows were first shown.
        header.setStretchLastSection(True)
        self.table.selectionModel().currentRowChanged.connect(self._current_changed)
        layout = self.column = QVBoxLayout(self)
        layout.setContentsMargins(0, 4, 0, 0)
        layout.setSpacing(4)
        self.explained = QLabel()  # what the rows' kinds and empty cells mean, for the rows shown
        self.explained.setTextFormat(Qt.TextFormat.PlainText)
        self.explained.setWordWrap(True)
        self.explained.hide()
        layout.addWidget(self.table, 1)
        layout.addWidget(self.explained)

    def focus_table(self) -> None:
        """View > Folds: the table has the keyboard, shown even when it has no rows."""
        self.table.show()
        self.table.setFocus()

    def follow(self, changed, document: Callable[[], Document | None]) -> None:
        """Redraw its rows from the workspace's changes itself (app.undo.SessionEditor.display_changed): fold records
        appended or taken back (None: anything may have changed), at once while its dock is open and in front, else
        when it is shown. `document` is the document shown."""

        def redraw(changes: Changes | None) -> None:
            doc = document()
            if doc is not None:
                self.set_rows(doc.folds, len(doc.requests))

        self.follower = FollowsChanges(self, lambda changes: changes is None or bool(changes.folds), redraw)
        self.follower.follow(changed)

    def set_waiting(self) -> None:
        """The first step of a load: the fold records are tied to requests once the trace is measured."""
        self.model.set_rows([], 0)
        self._say("the fold records and decisions are shown once the requests are measured")

    def set_rows(self, rows: Sequence[FoldRow], now_slot: int) -> None:
        self.model.set_rows(rows, now_slot)
        self.fit_columns()
        folds = sum(1 for r in rows if r.kind in ("fold", "clip", "compaction"))
        events = len(rows) - folds
        self._say(
            f"{folds:,} {'fold or compaction' if folds == 1 else 'folds and compactions'}"
            f" · {events:,} {'decision or event' if events == 1 else 'decisions and other events'}"
            " · choose one to step to the request it first shaped and mark what it took"
            if rows
            else "this session records no folds or decisions"
        )

        self.explained.setText(explanation(rows))
        self.explained.setVisible(bool(self.explained.text()))
        # No rows: the heading says so and the empty table gives its room to the lists (shown again for the keyboard).
        self.table.setVisible(bool(rows))
        # The panel's minimum follows at once, not at the next posted layout request: the window sizes the dock to
        # fitting_height right after, and a layout pass before then (a loaded machine's) kept the dock at the empty
        # table's minimum for good, two rows of the Composition table's at 1366x768.
        self.column.activate()

    def fit_columns(self) -> None:
        """Each column but the last (which takes the rest of the width) as wide as its widest cell and heading: the
        width resizeColumnToContents gives, which asks the delegate each cell's size (a dozen roles a cell, each a
        call into Python through the proxy: 57 ms for 151 rows, on the GUI thread before the counted document
        paints). A cell's width grows with its text's (one font, no icon), so only the cells whose text is within
        FIT_SLACK pixels of the column's widest are asked; the rest cannot be wider."""
        table, rows = self.table, self.model.rows
        header = table.horizontalHeader()
        if len(rows) > header.resizeContentsPrecision():  # Qt reads only some rows then: its own fit, whatever it finds
            for column in range(len(COLUMNS) - 1):
                table.resizeColumnToContents(column)
            return
        table.ensurePolished()  # the font the cells are measured in, as sizeHintForColumn makes sure of
        advance = table.fontMetrics().horizontalAdvance
        grid = 1 if table.showGrid() else 0
        for column in range(len(COLUMNS) - 1):
            # One cell a text (a column repeats its texts: a kind, a stage), each text's widest line (the view shows a
            # newline as a line break).
            row_of = {self.model.display(row, column): r for r, row in enumerate(rows)}
            widths = {text: max(map(advance, text.split("\n"))) for text in row_of}
            widest = max(widths.values(), default=0)
            content = max(
                (
                    table.sizeHintForIndex(self.proxy.mapFromSource(self.model.index(row_of[text], column))).width()
                    for text, width in widths.items()
                    if width >= widest - FIT_SLACK
                ),
                default=0,
            )
            header.resizeSection(column, max(content + grid, header.sectionSizeHint(column)))

    def _say(self, words: str) -> None:
        """The heading (the dock's title bar): "Folds" and `words`, whole in its tooltip where a narrow dock cuts it."""
        self.heading.setText(f"<b style='font-size:11pt'>Folds</b> &nbsp; {words}")
        self.heading.setToolTip(plain_tip(f"Folds: {words}"))

    def fitting_height(self, max_rows: int) -> int:
        """The dock's height that shows its title (the heading), the header, up to `max_rows` rows and the note under
        them, to the pixel: at 1366x768 every 20 pixels the dock takes is a row of the Composition table's."""
        rows = min(self.model.rowCount(), max_rows)
        table = self.table
        margins = self.column.contentsMargins()
        if table.isHidden():  # no rows (set_rows): the title alone
            return self._title_height() + margins.top() + margins.bottom()
        spacing = self.column.spacing()
        # The note wraps: its height at the panel's width (a wrapping label's sizeHint is for a narrow one, 56 pixels
        # where one line of 14 is drawn), or at a first guess before the panel is laid out.
        note = self.explained.heightForWidth(self.width() if self.width() > 200 else 1200) + spacing if self.explained.text() else 0
        return (
            self._title_height()
            + margins.top()
            + margins.bottom()
            + table.horizontalHeader().sizeHint().height()
            + rows * table.verticalHeader().defaultSectionSize()
            + 2 * table.frameWidth()
            + note
        )

    def _title_height(self) -> int:
        """The title bar of the dock the panel sits in: the heading's (app.dock_title), else QDockWidget's own (a line of its
        font and a margin each side); outside a dock, the heading's line."""
        dock = self.parentWidget()
        if not isinstance(dock, QDockWidget):
            return self.heading.sizeHint().height()
        if dock.titleBarWidget() is not None:
            return dock.titleBarWidget().sizeHint().height()
        margin = dock.style().pixelMetric(QStyle.PixelMetric.PM_DockWidgetTitleMargin, None, dock)
        return dock.fontMetrics().height() + 2 * margin

    def select_number(self, number: int) -> None:
        for row in range(self.proxy.rowCount()):
            index = self.proxy.index(row, NUMBER)
            if index.data(RowRole).number == number:
                self.table.setCurrentIndex(index)
                return

    def _current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        if current.isValid():
            self.fold_selected.emit(current.data(RowRole))


def explanation(rows: Sequence[FoldRow]) -> str:
    """One sentence per kind of row that needs one, and why an estimate cell says "not recorded"."""
    kinds = dict.fromkeys(r.kind for r in rows)
    said = [KIND_SENTENCES[k] for k in kinds if k in KIND_SENTENCES]
    if any(r.kind in FOLD_KINDS and (r.before is None or r.after is None) for r in rows):
        said.append(
            '"not recorded" under an estimate: the file\'s fold record does not give it; the timeline shows '
            "the estimate of each request's view."
        )
    return " ".join(said)

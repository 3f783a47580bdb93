"""Qt table models over the opened session: the full record and the active view, rows virtual."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from foldscope.app.highlight import BODY_KEYS, call_path, plain_tip
from foldscope.app.qt import QAbstractTableModel, QBrush, QColor, QFont, QModelIndex, QObject, QPersistentModelIndex, Qt
from foldscope.app.theme import colour_for_key, highlight_colour, kind_key, muted_colour
from foldscope.core.model.commands import Changes
from foldscope.core.model.one_line import collapsed_start
from foldscope.core.model.session import Message
from foldscope.core.readout.document import KIND_LABELS, Document, kind_label  # noqa: F401 (kind_label: re-exported for the panels)

COLUMNS = ("Index", "Kind", "Preview", "Chars", "Tokens")
INDEX, KIND, PREVIEW, CHARS, TOKENS = range(len(COLUMNS))
COLUMN_COUNT = len(COLUMNS)
PREVIEW_CHARS = 160
PREVIEWS_KEPT = 4096

# The kind as a person reads it in a list (the core's kind names stay in the tooltip).
# The record index of a row, for any role, so views can map rows across the two lists.
IndexRole = Qt.ItemDataRole.UserRole + 1
# "1" when a row passes the list's kind and text filter (app.models.filters.MessageFilter), "0" when not.
AcceptRole = Qt.ItemDataRole.UserRole + 2
# The roles a row answers (MessageTableModel.data); every other one is None.
ANSWERED_ROLES = frozenset(
    {
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.BackgroundRole,
        Qt.ItemDataRole.FontRole,
        Qt.ItemDataRole.ToolTipRole,
        IndexRole,
        AcceptRole,
    }
)
_DISPLAY, _ALIGNMENT, _FOREGROUND, _BACKGROUND, _FONT = (
    int(role)
    for role in (
        Qt.ItemDataRole.DisplayRole,
        Qt.ItemDataRole.TextAlignmentRole,
        Qt.ItemDataRole.ForegroundRole,
        Qt.ItemDataRole.BackgroundRole,
        Qt.ItemDataRole.FontRole,
    )
)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)  # the numbers' columns


def preview_text(message: Message) -> str:
    """What a person wants to see first: a call's function and file, a result's body, else the text."""
    content = message.content
    if message.kind == "action_request":
        path = call_path(content.get("arguments"))
        return f"{content.get('function', '')}({path})" if path else message.text
    if message.kind == "action_response":
        output = content.get("output")
        if isinstance(output, Mapping):
            for key in BODY_KEYS:
                if isinstance(output.get(key), str) and output[key].strip():
                    return output[key]
    return message.text


def preview(document: Document, index: int) -> str:
    line = collapsed_start(preview_text(document.message(index)), PREVIEW_CHARS + 1)
    return line[:PREVIEW_CHARS] + ("…" if len(line) > PREVIEW_CHARS else "")


class MessageTableModel(QAbstractTableModel):
    """Maps a row to a full-record index and a column to one fact; subclasses say which index."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.highlighted: frozenset[int] = frozenset()  # record indexes a chosen fold record took
        self._rows = 0  # the rows the views were last told of; the document may have grown since
        self._bold = QFont()
        self._bold.setBold(True)
        self.accepts: Callable[[int], bool] = lambda row: True  # the filter's test of a row (MessageFilter sets it)
        # What every paint asks again, kept until the document is set again (as the window does after the palette
        # changes, app.window.MainWindow.refresh_theme): the rows' brushes by colour, and each record index's
        # preview (a message never changes; at most PREVIEWS_KEPT, the rows a person scrolls past).
        self._brushes: dict[str, QBrush] = {}
        self._previews: dict[int, str] = {}

    def set_document(self, document: Document | None) -> None:
        self.beginResetModel()
        self.document = document
        self._rows = self._count()
        self._forget()
        self.endResetModel()

    def _forget(self) -> None:
        self._brushes.clear()
        self._previews.clear()

    def _brush(self, key: str, colour: Callable[[], QColor]) -> QBrush:
        brush = self._brushes.get(key)
        if brush is None:
            brush = self._brushes[key] = QBrush(colour())
        return brush

    def _preview(self, doc: Document, index: int) -> str:
        shown = self._previews.get(index)
        if shown is None:
            if len(self._previews) >= PREVIEWS_KEPT:
                self._previews.clear()
            shown = self._previews[index] = preview(doc, index)
        return shown

    def _count(self) -> int:
        raise NotImplementedError

    def refresh(self, view: bool, added: bool, metadata: bool) -> None:
        """Say what an action changed (`view`: the active view; `added`: messages appended to the record;
        `metadata`: what a row shows about its message) and no more, so selection and scroll stay."""
        self._refresh_all()

    def show_changes(self, changes: Changes | None) -> None:
        """Redraw what a change of the workspace moved (None: anything may have): another request shown or another
        policy in force moves the view shown and every row's greying."""
        if changes is None:
            self.refresh(view=True, added=True, metadata=True)
        else:
            self.refresh(bool(changes.view or changes.shown or changes.policy), bool(changes.added), changes.metadata)

    def _refresh_all(self) -> None:
        self.beginResetModel()
        self._rows = self._count()
        self.endResetModel()

    def _refresh_cells(self) -> None:
        if self._rows:
            self.dataChanged.emit(self.index(0, 0), self.index(self._rows - 1, len(COLUMNS) - 1))

    def set_highlighted(self, indexes) -> None:
        """Mark what a fold record folded or clipped; the rows' background says so."""
        self.highlighted = frozenset(indexes)
        if self.rowCount():
            last = self.index(self.rowCount() - 1, len(COLUMNS) - 1)
            self.dataChanged.emit(self.index(0, 0), last, [Qt.ItemDataRole.BackgroundRole])

    def record_index(self, row: int) -> int:
        raise NotImplementedError

    def row_of(self, index: int) -> int | None:
        """The row showing a record index, or None when this list does not hold it."""
        raise NotImplementedError

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        raise NotImplementedError

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and 0 <= section < len(COLUMNS):
            if role == Qt.ItemDataRole.DisplayRole:
                return COLUMNS[section]
            if role == Qt.ItemDataRole.TextAlignmentRole and section in (INDEX, CHARS, TOKENS):
                return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        return self.cell(index.row(), index.column(), role)  # an invalid index has row -1

    def cell(self, row: int, column: int, role: int) -> Any:
        """What the cell at `row`, `column` says in `role` (None where it says nothing)."""
        # A paint asks every visible cell for seven roles, each a call into Python: two no row answers, said before
        # any look-up, and the roles compared as plain ints (a Qt enum's attribute and `|` are Python calls each).
        if role not in ANSWERED_ROLES:
            return None
        doc = self.document
        if doc is None or not (0 <= row < self._rows) or not (0 <= column < COLUMN_COUNT):
            return None
        i = self.record_index(row)
        if role == _DISPLAY:
            if column == PREVIEW:
                return self.preview_of(doc, i)
            if column == INDEX:
                return str(i)
            if column == KIND:
                return kind_label(doc, i)
            if column == CHARS:
                return f"{doc.chars[i]:,}"
            return f"{doc.tokens[i]:,}" if doc.is_counted else ""  # TOKENS: blank until the counts land
        if role == _ALIGNMENT:
            return _RIGHT if column != KIND and column != PREVIEW else None
        if role == _FOREGROUND:
            if i not in doc.view_position:
                return self._brush("muted", muted_colour)
            if column == KIND:
                key = kind_key(doc.message(i))
                return self._brush(key, lambda: colour_for_key(key))
            return None
        if role == _BACKGROUND:
            return self._brush("highlight", highlight_colour) if i in self.highlighted else None
        if role == _FONT:
            return self._bold if column == KIND and i in doc.view_position else None
        if role == IndexRole:
            return i
        if role == AcceptRole:
            return "1" if self.accepts(row) else "0"
        # The tooltip (ANSWERED_ROLES holds no other role).
        message = doc.message(i)
        where = "in the active view" if doc.in_view(i) else f"out of the active view: {doc.out_reason.get(i, '')}"
        took = "\ntaken by the chosen fold record" if i in self.highlighted else ""
        # The kind as the list names it, whole: a narrow Kind column cuts "call exec_command" short.
        return plain_tip(f"#{i} {kind_label(doc, i)} ({message.kind}) · {message.id}\n{where}{took}")

    def preview_of(self, doc: Document, index: int) -> str:
        """The Preview cell of a record index."""
        return self._preview(doc, index)


class RecordModel(MessageTableModel):
    """The full record: one row per message, in order; rows out of the active view are greyed."""

    def _count(self) -> int:
        return self.document.record_size if self.document is not None else 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._rows

    def refresh(self, view: bool, added: bool, metadata: bool) -> None:
        """The record only grows: appended messages are inserted rows; the others' greying and labels redrawn."""
        count = self._count()
        if count < self._rows:
            self._forget()
            self._refresh_all()
            return
        if count > self._rows:
            self.beginInsertRows(QModelIndex(), self._rows, count - 1)
            self._rows = count
            self.endInsertRows()
        if view or metadata:
            self._refresh_cells()

    def record_index(self, row: int) -> int:
        return row

    def row_of(self, index: int) -> int | None:
        return index if self.document is not None and 0 <= index < self._rows else None

    def preview_of(self, doc: Document, index: int) -> str:
        """A row out of the active view says why before its preview."""
        if index in doc.view_position:
            return self._preview(doc, index)
        return f"[{doc.out_reason.get(index, 'out of the active view')}]  {self._preview(doc, index)}"


class ViewModel(MessageTableModel):
    """The active view: one row per id the next request is compiled from, showing record indexes."""

    def _count(self) -> int:
        return self.document.view_size if self.document is not None else 0

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else self._rows

    def refresh(self, view: bool, added: bool, metadata: bool) -> None:
        """A changed view moves rows (a reset); metadata alone redraws the rows in place."""
        if view:
            self._refresh_all()
        elif metadata:
            self._refresh_cells()

    def record_index(self, row: int) -> int:
        assert self.document is not None
        return self.document.view_index(row)

    def row_of(self, index: int) -> int | None:
        if self.document is None:
            return None
        return self.document.view_position.get(index)

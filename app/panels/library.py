"""The library panel: the sessions in the store and full-text search across them; a hit opens its session at the message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldscope.app.highlight import plain_tip
from foldscope.app.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QHeaderView,
    QLabel,
    QLineEdit,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.worker import Task, run_task


def list_sessions(db: str | None) -> list[dict[str, Any]]:
    """The store's sessions; the connection opens and closes in the calling (worker) thread."""
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.list_sessions()


def search_library(db: str | None, query: str) -> list[tuple[int, int, str]]:
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.search(query)


def human_size(size: int | None) -> str:
    if not size:
        return "—"
    for unit in ("bytes", "KB", "MB", "GB"):
        if size < 1024 or unit == "GB":
            return f"{size:,} {unit}" if unit == "bytes" else f"{size:,.1f} {unit}"
        size /= 1024
    return ""


class RowsModel(QAbstractTableModel):
    """Rows of plain values, one column per (title, function of the row); nothing else."""

    def __init__(self, columns: list[tuple[str, Callable[[Any], Any]]], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.columns = columns
        self.rows: list[Any] = []

    def set_rows(self, rows: list[Any]) -> None:
        self.beginResetModel()
        self.rows = list(rows)
        self.endResetModel()

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:
        return 0 if parent.isValid() else len(self.columns)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if orientation == Qt.Orientation.Horizontal and role == Qt.ItemDataRole.DisplayRole and 0 <= section < len(self.columns):
            return self.columns[section][0]
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        if not index.isValid() or not (0 <= index.row() < len(self.rows)) or not (0 <= index.column() < len(self.columns)):
            return None
        if role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole):
            value = self.columns[index.column()][1](self.rows[index.row()])
            shown = f"{value:,}" if isinstance(value, int) else ("—" if value is None else str(value))
            return shown if role == Qt.ItemDataRole.DisplayRole else plain_tip(shown)  # a file name may hold HTML
        return None


def _table(name: str, model: RowsModel) -> QTableView:
    table = QTableView()
    table.setAccessibleName(name)
    table.setModel(model)
    table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    table.setAlternatingRowColors(True)
    table.setShowGrid(False)
    table.setWordWrap(False)
    table.verticalHeader().setVisible(False)
    table.horizontalHeader().setStretchLastSection(True)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


class LibraryPanel(QWidget):
    """Sessions and search hits; Enter or a double click emits `session_chosen(source path, message index or -1)`."""

    session_chosen = Signal(str, int)
    sessions_listed = Signal()
    search_finished = Signal()

    def __init__(self, db: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.db = db
        self._tasks: dict[str, Task] = {}
        self.sessions = RowsModel([
            ("Session", lambda r: Path(r["source"] or "").name or "(no file)"),
            ("Format", lambda r: r["format"]),
            ("Size", lambda r: human_size(r["source_bytes"])),
            ("Messages", lambda r: r["messages"]),
            ("Requests", lambda r: r["requests"]),
            ("Peak reported input", lambda r: r["peak_reported_input"]),
        ], self)
        self.hits = RowsModel([
            ("Session", lambda h: self._session_name(h[0])),
            ("Index", lambda h: h[1]),
            ("Match", lambda h: " ".join(h[2].split())),
        ], self)
        self.search_box = QLineEdit()
        self.search_box.setAccessibleName("Search all sessions")
        self.search_box.setPlaceholderText("Search every session's messages (Enter)")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(lambda: self.search(self.search_box.text()))
        self.session_table = _table("Sessions in the library", self.sessions)
        self.hit_table = _table("Search hits", self.hits)
        self.session_table.activated.connect(self._session_activated)
        self.hit_table.activated.connect(self._hit_activated)
        self.status = QLabel()
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # says the query and the library's errors
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        title = QLabel("<b>Sessions in the library</b> (Enter or double click opens one)")
        title.setWordWrap(True)  # the side tabs stay narrow enough for the lists at 1366 pixels
        layout.addWidget(title)
        layout.addWidget(self.session_table, 2)
        layout.addWidget(self.search_box)
        layout.addWidget(self.status)
        layout.addWidget(self.hit_table, 3)

    def _session_name(self, session_id: int) -> str:
        row = next((r for r in self.sessions.rows if r["id"] == session_id), None)
        return Path(row["source"]).name if row and row["source"] else f"session {session_id}"

    def _run(self, name: str, fn: Callable[[], Any], done: Callable[[Any], None]) -> Task:
        """One query at a time per kind: an older answer arriving late is dropped."""
        # Slots are connected before the task starts (run_task's keywords): a quick query could
        # otherwise finish before a later connect and its answer would be lost.
        holder: list[Task] = []
        task = run_task(
            lambda progress: fn(), name, self,
            succeeded=lambda result: done(result) if holder and self._tasks.get(name) is holder[0] else None,
            failed=lambda exc: self.status.setText(f"The library could not answer: {exc}"),
        )
        holder.append(task)
        self._tasks[name] = task
        return task

    def refresh(self) -> Task:
        """List the sessions again (after an import, or when the panel is shown)."""
        return self._run("list", lambda: list_sessions(self.db), self._listed)

    def _listed(self, rows: list[dict[str, Any]]) -> None:
        self.sessions.set_rows(rows)
        self.sessions_listed.emit()

    def search(self, query: str) -> Task | None:
        if not query.strip():
            self.hits.set_rows([])
            self.status.setText("")
            return None
        self.status.setText(f"Searching for {query!r}…")
        return self._run("search", lambda: (list_sessions(self.db), search_library(self.db, query)),
                         lambda result, q=query: self._found(q, *result))

    def _found(self, query: str, sessions: list[dict[str, Any]], hits: list[tuple[int, int, str]]) -> None:
        self.sessions.set_rows(sessions)
        self.hits.set_rows(hits)
        where = len({h[0] for h in hits})
        self.status.setText(f"{len(hits):,} messages in {where:,} sessions hold {query!r}" if hits else f"No message holds {query!r}")
        self.search_finished.emit()

    def is_busy(self) -> bool:
        return any(not t.is_done for t in self._tasks.values())

    def _session_activated(self, index: QModelIndex) -> None:
        row = self.sessions.rows[index.row()]
        if row["source"]:
            self.session_chosen.emit(row["source"], -1)

    def _hit_activated(self, index: QModelIndex) -> None:
        session_id, message_index, _ = self.hits.rows[index.row()]
        row = next((r for r in self.sessions.rows if r["id"] == session_id), None)
        if row is not None and row["source"]:
            self.session_chosen.emit(row["source"], message_index)

"""The library panel: the sessions in the store and full-text search across them; a hit opens its session at the message."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from foldscope.app import dialogs
from foldscope.app.highlight import plain_tip
from foldscope.app.panels.status import StatusLine
from foldscope.app.qt import (
    QAbstractItemView,
    QAbstractTableModel,
    QFrame,
    QHBoxLayout,
    QHeaderView,
    QKeySequence,
    QLabel,
    QLineEdit,
    QModelIndex,
    QObject,
    QPersistentModelIndex,
    QPushButton,
    QShortcut,
    Qt,
    QTableView,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.app.worker import Task, run_task
from foldscope.core.formats.registry import format_title
from foldscope.core.readout.usage_precision import APPROXIMATE, approximate
from foldscope.core.readout.words import plural


def list_sessions(db: str | None) -> list[dict[str, Any]]:
    """The store's sessions; the connection opens and closes in the calling (worker) thread."""
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.list_sessions()


def library_summary(db: str | None) -> tuple[list[dict[str, Any]], int, str]:
    """(the sessions, the library's size in bytes, where it is), read in the calling (worker) thread."""
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.list_sessions(), library.size(), str(library.path)


def remove_from_library(db: str | None, session_ids: list[int]) -> dict[str, int]:
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.remove_sessions(session_ids)


def search_library(db: str | None, query: str) -> list[tuple[int, int, str]]:
    from foldscope.core.store.library import Library

    with Library(db) as library:
        return library.search(query)


def human_size(size: float | None) -> str:
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
        # The title whole in a tooltip too: a column scrolled half out of sight read "eak reported".
        if (
            orientation == Qt.Orientation.Horizontal
            and role in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.ToolTipRole)
            and 0 <= section < len(self.columns)
        ):
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


def _peak(row: dict[str, Any]) -> int | str | None:
    """A stored session's peak reported input, marked ~ where its format's usage is approximate (Aider's rounded
    figures), as inspect and every screen of the open session mark it."""
    peak = row["peak_reported_input"]
    return f"{APPROXIMATE}{peak:,}" if peak is not None and approximate(row["format"]) else peak


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
    table.verticalHeader().setDefaultSectionSize(table.fontMetrics().height() + 6)  # as the Composition table's rows
    table.horizontalHeader().setStretchLastSection(True)
    table.horizontalHeader().setSectionResizeMode(QHeaderView.ResizeMode.ResizeToContents)
    return table


class _Note(QLabel):
    """A line that takes no height while it says nothing (the sessions' rows at 1366x768 need it)."""

    def setText(self, text: str) -> None:  # noqa: N802 (Qt override)
        super().setText(text)
        self.setVisible(bool(text))


class LibraryPanel(QWidget):
    """Sessions and search hits; Enter or a double click emits `session_chosen(source path, message index or -1)`."""

    session_chosen = Signal(str, int)
    sessions_listed = Signal()
    search_finished = Signal()
    sessions_removed = Signal(list)  # the library ids removed

    def __init__(self, db: str | None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.db = db
        self._tasks: dict[str, Task] = {}
        self.sessions = RowsModel(
            [
                ("Session", lambda r: Path(r["source"] or "").name or "(no file)"),
                ("Format", lambda r: format_title(r["format"])),  # the agent's name, as the status bar and sessions give it
                ("Size", lambda r: human_size(r["source_bytes"])),
                ("Messages", lambda r: r["messages"]),
                ("Requests", lambda r: r["requests"]),
                ("Peak reported input", _peak),
            ],
            self,
        )
        self.hits = RowsModel(
            [
                ("Session", lambda h: self._session_name(h[0])),
                ("Index", lambda h: h[1]),
                ("Match", lambda h: " ".join(h[2].split())),
            ],
            self,
        )
        self.search_box = QLineEdit()
        self.search_box.setAccessibleName("Search all sessions")
        self.search_box.setPlaceholderText("Search every session's messages (Enter)")
        self.search_box.setClearButtonEnabled(True)
        self.search_box.returnPressed.connect(lambda: self.search(self.search_box.text()))
        self.session_table = _table("Sessions in the library", self.sessions)
        self.hit_table = _table("Search hits", self.hits)
        # A long file name takes what the figures leave (cut in its middle, whole in its tooltip): sized to its
        # contents it pushed "Peak reported input" out of sight.
        names = self.session_table.horizontalHeader()
        names.setStretchLastSection(False)
        names.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        self.session_table.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.session_table.activated.connect(self._session_activated)
        self.hit_table.activated.connect(self._hit_activated)
        self.session_table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)
        self.status = _Note()
        self.status.hide()
        # How many sessions, the library's size and where it is. A long library path must not widen the side tabs
        # (and so the window), nor be cut mid-name: the line shows the whole parts that fit, its tooltip all.
        self.size_label = StatusLine()
        self.size_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.remove_button = QPushButton("Remove…")
        self.remove_button.setToolTip("Remove the selected sessions from the library (their files are not touched)")
        self.remove_button.clicked.connect(self.remove_selected)
        remove_key = QShortcut(QKeySequence(QKeySequence.StandardKey.Delete), self.session_table)
        remove_key.setContext(Qt.ShortcutContext.WidgetShortcut)
        remove_key.activated.connect(self.remove_selected)
        self.status.setTextFormat(Qt.TextFormat.PlainText)  # says the query and the library's errors
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        title = QLabel("<b>Sessions in the library</b> (Enter or double click opens one)")
        title.setWordWrap(True)  # the side tabs stay narrow enough for the lists at 1366 pixels
        # One row for the title, the library's size and Remove: a row of their own would cost the lists
        # their height at 1366x768 with a dock open.
        row = QHBoxLayout()
        row.addWidget(title, 2)
        row.addWidget(self.size_label, 1)
        row.addWidget(self.remove_button)
        layout.addLayout(row)
        layout.addWidget(self.session_table, 2)
        layout.addWidget(self.search_box)
        layout.addWidget(self.status)
        layout.addWidget(self.hit_table, 3)
        # The hits only once there is a search: an empty table under the sessions left them 2 rows at 1366x768.
        self.hit_table.hide()

    def _session_name(self, session_id: int) -> str:
        row = next((r for r in self.sessions.rows if r["id"] == session_id), None)
        return Path(row["source"]).name if row and row["source"] else f"session {session_id}"

    def _run(self, name: str, fn: Callable[[], Any], done: Callable[[Any], None]) -> Task:
        """One query at a time per kind: an older answer arriving late is dropped."""
        # Slots are connected before the task starts (run_task's keywords): a quick query could
        # otherwise finish before a later connect and its answer would be lost.
        holder: list[Task] = []
        task = run_task(
            lambda progress: fn(),
            name,
            self,
            succeeded=lambda result: done(result) if holder and self._tasks.get(name) is holder[0] else None,
            failed=lambda exc: self.status.setText(f"The library could not answer: {exc}"),
        )
        holder.append(task)
        self._tasks[name] = task
        return task

    def refresh(self) -> Task:
        """List the sessions again (after an import, or when the panel is shown)."""
        return self._run("list", lambda: library_summary(self.db), self._listed)

    def _listed(self, summary: tuple[list[dict[str, Any]], int, str]) -> None:
        rows, size, where = summary
        self.sessions.set_rows(rows)
        self.size_label.set_parts([f"{len(rows):,} session{'' if len(rows) == 1 else 's'}", human_size(size), where])
        self.size_label.setToolTip(plain_tip(self.size_label.full_text()))
        self.sessions_listed.emit()

    def selected_ids(self) -> list[int]:
        rows = sorted({index.row() for index in self.session_table.selectionModel().selectedRows()})
        return [self.sessions.rows[r]["id"] for r in rows if r < len(self.sessions.rows)]

    def remove_selected(self) -> Task | None:
        """Ask, then remove the selected sessions (and the stored messages only they held) from the library."""
        ids = self.selected_ids()
        if not ids:
            return None
        names = [self._session_name(i) for i in ids]
        if not dialogs.confirm_remove(self, names):
            return None
        self.status.setText(f"Removing {len(ids)} session(s)…")

        def removed(result: dict[str, int]) -> None:
            self.status.setText(f"Removed {result['sessions']} session(s) and {result['bodies']:,} stored messages")
            self.sessions_removed.emit(ids)
            self.refresh()

        return self._run("remove", lambda: remove_from_library(self.db, ids), removed)

    def search(self, query: str) -> Task | None:
        self.hit_table.setVisible(bool(query.strip()))
        if not query.strip():
            self.hits.set_rows([])
            self.status.setText("")
            return None
        self.status.setText(f"Searching for {query!r}…")
        return self._run(
            "search", lambda: (list_sessions(self.db), search_library(self.db, query)), lambda result: self._found(query, *result)
        )

    def _found(self, query: str, sessions: list[dict[str, Any]], hits: list[tuple[int, int, str]]) -> None:
        self.sessions.set_rows(sessions)
        self.hits.set_rows(hits)
        where = len({h[0] for h in hits})
        self.status.setText(
            f"{plural(len(hits), 'message')} in {plural(where, 'session')} hold{'s' if len(hits) == 1 else ''} {query!r}"
            if hits
            else f"No message holds {query!r}"
        )
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


class LibraryBar(QFrame):
    """Above the panels while the library cannot be used: where it is and why, and a way out.

    Sessions still open (from the file, in memory); search and autosave wait until another library is chosen.
    """

    choose_requested = Signal()
    fresh_requested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("libraryBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("The library is unavailable")
        # The palette's tooltip colours: a warning tone that follows the light or dark theme.
        palette = self.palette()
        palette.setColor(palette.ColorRole.Window, palette.color(palette.ColorRole.ToolTipBase))
        palette.setColor(palette.ColorRole.WindowText, palette.color(palette.ColorRole.ToolTipText))
        self.setPalette(palette)
        self.setAutoFillBackground(True)
        self.problem: str | None = None
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)  # the path and the problem are shown as they are
        self.label.setWordWrap(True)
        self.label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.choose_button = QPushButton("Choose another library…")
        self.choose_button.clicked.connect(self.choose_requested)
        self.fresh_button = QPushButton("Create a fresh library…")
        self.fresh_button.clicked.connect(self.fresh_requested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(8, 4, 8, 4)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.choose_button)
        layout.addWidget(self.fresh_button)
        self.hide()

    def show_problem(self, problem: str | None) -> None:
        """Show why the library is unavailable (a LibraryError's line), or hide the bar when it works (None)."""
        self.problem = problem
        if problem is None:
            self.hide()
            return
        self.label.setText(
            f"The library is unavailable: {problem}. Sessions open from their files without "
            "search and autosave until another library is chosen."
        )
        self.show()

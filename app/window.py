"""The main window: the full record and the active view side by side, the inspector, loading and files."""

from __future__ import annotations

from pathlib import Path

from core.model import ReadError

from app.document import Document, open_document
from app.inspector import Inspector
from app.lists import MessageList
from app.models import RecordModel, ViewModel
from app.qt import (
    QAction,
    QDragEnterEvent,
    QDropEvent,
    QFileDialog,
    QKeySequence,
    QLabel,
    QMainWindow,
    QMessageBox,
    QProgressBar,
    QSplitter,
    Qt,
    QToolButton,
    QWidget,
    Signal,
)
from app.settings import WindowSettings
from app.status import status_text
from app.worker import Task

SESSION_FILTER = "Session files (*.json *.jsonl);;All files (*)"


def error_dialog(parent: QWidget, title: str, text: str) -> None:
    """The modal error dialog; tests replace this function instead of clicking it away."""
    QMessageBox.critical(parent, title, text)


def error_line(path: str, exc: BaseException) -> str:
    """One line for the dialog: a ReadError's own line, else the file and what went wrong."""
    if isinstance(exc, ReadError):
        return str(exc)
    return f"{path}: {type(exc).__name__}: {exc}".splitlines()[0]


class MainWindow(QMainWindow):
    """Holds one opened session (a Document) and keeps every panel on the same message."""

    document_loaded = Signal(object)
    load_failed = Signal(str)

    def __init__(self, settings: WindowSettings | None = None, db: str | None = None) -> None:
        super().__init__()
        self.settings = settings or WindowSettings()
        self.db = db
        self.document: Document | None = None
        self.task: Task | None = None
        self._loading_path = ""
        self.setWindowTitle("foldscope")
        self.setAcceptDrops(True)

        self.record_model = RecordModel(self)
        self.view_model = ViewModel(self)
        self.record_list = MessageList("Full record", self.record_model)
        self.view_list = MessageList("Active view", self.view_model)
        self.inspector = Inspector()
        self.record_list.message_selected.connect(self.select_message)
        self.view_list.message_selected.connect(self.select_message)
        self.inspector.message_requested.connect(self.select_message)

        self.lists_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.lists_splitter.setObjectName("listsSplitter")
        self.lists_splitter.addWidget(self.record_list)
        self.lists_splitter.addWidget(self.view_list)
        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.setObjectName("mainSplitter")
        self.main_splitter.addWidget(self.lists_splitter)
        self.main_splitter.addWidget(self.inspector)
        self.main_splitter.setStretchFactor(0, 3)
        self.main_splitter.setStretchFactor(1, 2)
        for splitter in (self.lists_splitter, self.main_splitter):
            splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.main_splitter)
        self.main_splitter.setContentsMargins(6, 6, 6, 0)

        self._build_status_bar()
        self._build_menus()
        self._restore_state()

    # -- building -------------------------------------------------------------------------

    def _build_status_bar(self) -> None:
        self.status_label = QLabel("No session open")
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.clicked.connect(self.cancel_loading)
        bar = self.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.progress)
        bar.addPermanentWidget(self.cancel_button)
        self._show_progress(False)

    def _build_menus(self) -> None:
        file_menu = self.menuBar().addMenu("&File")
        self.open_action = QAction("&Open…", self, shortcut=QKeySequence.StandardKey.Open, triggered=self.open_dialog)
        file_menu.addAction(self.open_action)
        self.recent_menu = file_menu.addMenu("Open &Recent")
        self._rebuild_recent_menu()
        file_menu.addSeparator()
        file_menu.addAction(QAction("&Quit", self, shortcut=QKeySequence.StandardKey.Quit, triggered=self.close))
        view_menu = self.menuBar().addMenu("&View")
        for text, key, widget in (
            ("Full &record", "Ctrl+1", self.record_list.table),
            ("Active &view", "Ctrl+2", self.view_list.table),
            ("&Inspector", "Ctrl+3", self.inspector.tabs),
        ):
            action = QAction(text, self, shortcut=QKeySequence(key))
            action.triggered.connect(widget.setFocus)
            view_menu.addAction(action)

    def _rebuild_recent_menu(self) -> None:
        self.recent_menu.clear()
        files = self.settings.recent_files()
        for number, path in enumerate(files, start=1):
            action = QAction(f"&{number} {Path(path).name}", self)
            action.setToolTip(path)
            action.triggered.connect(lambda checked=False, p=path: self.open_path(p))
            self.recent_menu.addAction(action)
        if files:
            self.recent_menu.addSeparator()
        clear = QAction("&Clear Recent Files", self, triggered=self._clear_recent)
        clear.setEnabled(bool(files))
        self.recent_menu.addAction(clear)

    def _clear_recent(self) -> None:
        self.settings.clear_recent_files()
        self._rebuild_recent_menu()

    def _restore_state(self) -> None:
        geometry = self.settings.state("window/geometry")
        if geometry is not None:
            self.restoreGeometry(geometry)
        else:
            self.resize(1600, 1000)
        for key, splitter in (("splitter/main", self.main_splitter), ("splitter/lists", self.lists_splitter)):
            state = self.settings.state(key)
            if state is not None:
                splitter.restoreState(state)
            else:
                splitter.setSizes([960, 640] if splitter is self.main_splitter else [480, 480])

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.cancel_loading()
        self.settings.set_state("window/geometry", self.saveGeometry())
        self.settings.set_state("splitter/main", self.main_splitter.saveState())
        self.settings.set_state("splitter/lists", self.lists_splitter.saveState())
        self.settings.sync()
        super().closeEvent(event)

    # -- opening --------------------------------------------------------------------------

    def open_dialog(self) -> None:
        start = str(Path(self.document.path).parent) if self.document else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open session", start, SESSION_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path) -> Task:
        """Load a session file in the worker; the window stays usable and shows progress."""
        self.cancel_loading()
        path = str(path)
        self._loading_path = path
        db = self.db
        task = Task(lambda progress: open_document(path, db, progress.report), f"Opening {path}", self)
        task.progressed.connect(self._progressed)
        task.succeeded.connect(lambda document, t=task: self._loaded(t, document))
        task.failed.connect(lambda exc, t=task, p=path: self._failed(t, p, exc))
        task.ended.connect(lambda t=task: self._ended(t))
        self.task = task.start()  # connected first: a queued signal only reaches receivers present at emit
        self.progress.setRange(0, 0)
        self.progress.setFormat(f"Opening {Path(path).name}")
        self._show_progress(True)
        return task

    def cancel_loading(self) -> None:
        if self.task is not None and not self.task.is_done:
            self.task.cancel()

    def _progressed(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label} %p%" if total else label)

    def _loaded(self, task: Task, document: Document) -> None:
        if task is not self.task:
            return
        self.settings.add_recent_file(document.path)
        self._rebuild_recent_menu()
        self.set_document(document)

    def _failed(self, task: Task, path: str, exc: BaseException) -> None:
        if task is not self.task:
            return
        line = error_line(path, exc)
        self.statusBar().showMessage(f"Could not open {Path(path).name}", 8000)
        self.load_failed.emit(line)
        error_dialog(self, "Cannot open session", line)

    def _ended(self, task: Task) -> None:
        if task is self.task:
            self.task = None
            self._show_progress(False)

    def _show_progress(self, visible: bool) -> None:
        self.progress.setVisible(visible)
        self.cancel_button.setVisible(visible)

    def set_document(self, document: Document | None) -> None:
        self.document = document
        self.record_model.set_document(document)
        self.view_model.set_document(document)
        self.inspector.set_document(document)
        self._refresh_headings()
        if document is not None:
            self.setWindowTitle(f"{Path(document.path).name} — foldscope")
            self.view_list.table.setFocus()
        self.document_loaded.emit(document)

    def _refresh_headings(self) -> None:
        doc = self.document
        if doc is None:
            self.status_label.setText("No session open")
            return
        out = doc.record_size - doc.view_size
        self.record_list.set_heading(
            f"{doc.record_size:,} messages · {doc.record_tokens():,} tokens · {out:,} out of the active view"
        )
        self.view_list.set_heading(f"{doc.view_size:,} messages · {doc.view_tokens():,} tokens")
        self.status_label.setText(status_text(doc))

    # -- selection ------------------------------------------------------------------------

    def select_message(self, index: int) -> None:
        """Select one full-record index in both lists and show it in the inspector."""
        if self.document is None:
            return
        self.record_list.select_index(index)
        self.view_list.select_index(index)
        self.inspector.show_message(index)

    # -- drag and drop --------------------------------------------------------------------

    def dragEnterEvent(self, event: QDragEnterEvent) -> None:  # noqa: N802 (Qt override)
        if any(url.isLocalFile() for url in event.mimeData().urls()):
            event.acceptProposedAction()

    def dropEvent(self, event: QDropEvent) -> None:  # noqa: N802 (Qt override)
        for url in event.mimeData().urls():
            if url.isLocalFile():
                self.open_path(url.toLocalFile())
                event.acceptProposedAction()
                return

    def prepare_screenshot(self) -> None:
        """Select a telling message so a screenshot shows the inspector at work."""
        doc = self.document
        if doc is None or doc.record_size == 0:
            return
        copies = [i for i in doc.view_position if doc.message(i).is_clipped_copy]
        index = copies[0] if copies else max(doc.view_position or {0: 0}, key=lambda i: doc.tokens[i])
        self.select_message(index)

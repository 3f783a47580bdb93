"""The main window: the full record and the active view side by side, the inspector, loading and files."""

from __future__ import annotations

from pathlib import Path

from foldscope.app.lab.what_if import install_what_if
from foldscope.app.menus import build_menus
from foldscope.app.models.messages import RecordModel, ViewModel
from foldscope.app.panels.composition import CompositionPanel
from foldscope.app.panels.folds import FoldPanel
from foldscope.app.panels.inspector import Inspector
from foldscope.app.panels.library import LibraryPanel
from foldscope.app.panels.lists import MessageList
from foldscope.app.panels.request import RequestPanel
from foldscope.app.panels.status import status_text, status_tooltip
from foldscope.app.panels.timeline import Timeline
from foldscope.app.panels.window_map import WindowMap
from foldscope.app.qt import (
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
    QTabWidget,
    QToolButton,
    QWidget,
    Signal,
)
from foldscope.app.session_actions import install_session_actions
from foldscope.app.settings import WindowSettings
from foldscope.app.worker import Task
from foldscope.core.model.session import ReadError
from foldscope.core.readout.document import Document, open_document
from foldscope.core.readout.fold_facts import FoldRow
from foldscope.core.readout.marks_facts import cache_marks

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

    def __init__(self, settings: WindowSettings | None = None, db: str | None = None, policy=None) -> None:
        super().__init__()
        self.settings = settings or WindowSettings()
        self.db = db
        self.start_policy = policy  # core.model.policy.Policy every opened session is measured under (None: its launch policy)
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
        self.request_panel = RequestPanel()
        self.composition_panel = CompositionPanel()
        self.composition_panel.message_requested.connect(lambda index: self.select_message(index, reveal=False))
        self.timeline = Timeline()
        self.window_map = WindowMap()
        self.record_list.message_selected.connect(self.select_message)
        self.view_list.message_selected.connect(self.select_message)
        self.inspector.message_requested.connect(self.select_message)
        self.window_map.message_clicked.connect(self.select_message)
        self.timeline.request_selected.connect(self.show_request)
        self.fold_panel = FoldPanel()
        self.fold_panel.fold_selected.connect(self.show_fold)
        self.library_panel = LibraryPanel(db)
        self.library_panel.session_chosen.connect(self.open_at)
        self.side_tabs = QTabWidget()
        self.side_tabs.addTab(self.inspector, "Inspector")
        self.side_tabs.addTab(self.request_panel, "Request")
        self.side_tabs.addTab(self.composition_panel, "Composition")
        self.side_tabs.addTab(self.library_panel, "Library")
        self.side_tabs.currentChanged.connect(self._side_tab_changed)
        self._select_after_load: int | None = None

        self.lists_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.lists_splitter.setObjectName("listsSplitter")
        self.lists_splitter.addWidget(self.record_list)
        self.lists_splitter.addWidget(self.view_list)
        self.folds_splitter = QSplitter(Qt.Orientation.Vertical)
        self.folds_splitter.setObjectName("foldsSplitter")
        self.folds_splitter.addWidget(self.lists_splitter)
        self.folds_splitter.addWidget(self.fold_panel)
        self.folds_splitter.setStretchFactor(0, 1)
        self.main_splitter = QSplitter(Qt.Orientation.Horizontal)
        self.main_splitter.setObjectName("mainSplitter")
        self.main_splitter.addWidget(self.folds_splitter)
        self.main_splitter.addWidget(self.side_tabs)
        self.main_splitter.setStretchFactor(0, 3)
        self.main_splitter.setStretchFactor(1, 2)
        self.top_splitter = QSplitter(Qt.Orientation.Vertical)
        self.top_splitter.setObjectName("topSplitter")
        self.top_splitter.addWidget(self.timeline)
        self.top_splitter.addWidget(self.window_map)
        self.top_splitter.addWidget(self.main_splitter)
        self.top_splitter.setStretchFactor(2, 1)
        for splitter in (self.lists_splitter, self.folds_splitter, self.main_splitter, self.top_splitter):
            splitter.setChildrenCollapsible(False)
        self.setCentralWidget(self.top_splitter)
        self.top_splitter.setContentsMargins(6, 4, 6, 0)

        self._build_status_bar()
        self._build_menus()
        self._restore_state()
        install_session_actions(self)  # issue 8: actions, undo, save, policy editor, fold preview, pager
        install_what_if(self)  # issue 8: a branch of the session at a request, the later requests replayed

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
        build_menus(self)
        # -- Replay lab (issue 9; app/replay_view.py owns it): the session under other strategies --
        from foldscope.app.lab.replay import open_replay_lab

        replay = QAction("Replay &lab…", self, shortcut=QKeySequence("Ctrl+Shift+P"))
        replay.triggered.connect(lambda checked=False: open_replay_lab(self))
        self.menuBar().addMenu("&Lab").addAction(replay)

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
        defaults = {"splitter/main": [1000, 600], "splitter/lists": [500, 500], "splitter/top": [170, 150, 664],
                    "splitter/folds": [500, 150]}
        for key, splitter in self._splitters().items():
            state = self.settings.state(key)
            if state is not None:
                splitter.restoreState(state)
            else:
                splitter.setSizes(defaults[key])

    def _splitters(self) -> dict[str, QSplitter]:
        return {"splitter/main": self.main_splitter, "splitter/lists": self.lists_splitter, "splitter/top": self.top_splitter,
                "splitter/folds": self.folds_splitter}

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        self.cancel_loading()
        self.settings.set_state("window/geometry", self.saveGeometry())
        for key, splitter in self._splitters().items():
            self.settings.set_state(key, splitter.saveState())
        self.settings.sync()
        super().closeEvent(event)

    # -- opening --------------------------------------------------------------------------

    def open_dialog(self) -> None:
        start = str(Path(self.document.path).parent) if self.document else ""
        path, _ = QFileDialog.getOpenFileName(self, "Open session", start, SESSION_FILTER)
        if path:
            self.open_path(path)

    def open_path(self, path: str | Path, select: int | None = None) -> Task | None:
        """Load a session file in the worker (asking first about unsaved changes); then select `select`."""
        actions = getattr(self, "session_actions", None)
        if actions is not None and not actions.saver.may_close():
            return None  # the user kept the unsaved changes of the session shown
        self.cancel_loading()
        self._select_after_load = select
        path = str(path)
        self._loading_path = path
        db, policy = self.db, self.start_policy
        task = Task(lambda progress: open_document(path, db, progress.report, policy), f"Opening {path}", self)
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
        if self._select_after_load is not None:
            self.select_message(self._select_after_load)
        if self.side_tabs.currentWidget() is self.library_panel or self.library_panel.sessions.rows:
            self.library_panel.refresh()  # the import may have added a session

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
        for model in (self.record_model, self.view_model):
            model.highlighted = frozenset()
        self.record_model.set_document(document)
        self.view_model.set_document(document)
        self.inspector.set_document(document)
        self.timeline.set_document(document)
        self.window_map.set_document(document)
        self.request_panel.set_request(document, None)
        self.composition_panel.set_request(document, None)
        self.fold_panel.set_rows(document.folds if document else [], len(document.requests) if document else 0)
        if document is not None and not document.folds:  # an empty fold table gives its room to the lists
            self.folds_splitter.setSizes([sum(self.folds_splitter.sizes()) - 70, 70])
        self._show_marks()
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
        at = "now" if self.timeline.current >= len(doc.requests) else f"at request {self.timeline.current}"
        if at == "now" and getattr(self, "what_if", None) is not None and self.what_if.active:
            at = f"what-if at request {self.what_if.branch.request}"
        self.view_list.set_heading(f"{at} · {doc.view_size:,} messages · {doc.view_tokens():,} tokens")
        self.status_label.setText(status_text(doc))
        self.status_label.setToolTip(status_tooltip(doc))

    # -- selection ------------------------------------------------------------------------

    def select_message(self, index: int, reveal: bool = True) -> None:
        """Select one full-record index in both lists and show it in the inspector (brought to the front if `reveal`)."""
        if self.document is None:
            return
        self.record_list.select_index(index)
        self.view_list.select_index(index)
        self.inspector.show_message(index)
        self.window_map.set_selected(index)
        if reveal and self.side_tabs.currentWidget() is not self.inspector:
            self.side_tabs.setCurrentWidget(self.inspector)

    def show_request(self, slot: int) -> None:
        """Show the active view as it stood at request `slot` (the last slot is now) in every panel."""
        doc = self.document
        if doc is None:
            return
        selected = self.inspector.index
        is_now = slot >= len(doc.requests)
        doc.show_view(doc.session.view if is_now else list(doc.requests[slot].view), at_request=not is_now)
        self.record_model.set_document(doc)
        self.view_model.set_document(doc)
        self.window_map.update()
        self._show_marks()
        self.request_panel.set_request(doc, None if is_now else slot)
        self.composition_panel.set_request(doc, None if is_now else slot)
        self._refresh_headings()
        if selected is not None:
            self.inspector.refresh()
            self.select_message(selected, reveal=False)  # stepping keeps the side panel the user chose

    def _show_marks(self) -> None:
        if self.document is not None:
            self.window_map.set_marks(*cache_marks(self.document, self.document.view))

    def show_fold(self, row: FoldRow) -> None:
        """Step to the request a fold record first shows at; mark what it took; select its note."""
        if self.document is None:
            return
        if row.slot is not None:
            self.timeline.step_to(row.slot)
        for model in (self.record_model, self.view_model):
            model.set_highlighted(row.affected)
        self.window_map.set_highlighted(row.affected)
        target = row.note if row.note is not None else (row.affected[0] if row.affected else None)
        if target is not None:
            self.select_message(target)
            if row.affected:
                self.record_list.table.scrollTo(self.record_list.filter.mapFromSource(self.record_model.index(row.affected[0], 0)))

    def open_at(self, path: str, index: int) -> None:
        """Open a library session (or stay in it, when it is the one shown) at a message; -1: no message."""
        select = index if index >= 0 else None
        if self.document is not None and str(Path(self.document.path).resolve()) == str(Path(path).resolve()):
            self.timeline.step_to(self.timeline.slots() - 1)
            if select is not None:
                self.select_message(select)
            return
        self.open_path(path, select=select)

    def _side_tab_changed(self) -> None:
        if self.side_tabs.currentWidget() is self.library_panel:
            self.library_panel.refresh()

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

    def refresh_theme(self) -> None:
        """Redraw what carries its own colours (kinds, rules, highlighted content) after a palette change."""
        for model in (self.record_model, self.view_model):
            model.set_document(self.document)
        if self.inspector.index is not None:
            index = self.inspector.index
            self.inspector.refresh()
            self.select_message(index)
        self.request_panel.refresh(force=True)
        self.composition_panel.refresh(force=True)
        self.timeline.update()
        self.window_map.update()

    def prepare_screenshot(self) -> None:
        """Select a telling message so a screenshot shows the inspector at work."""
        from foldscope.app.gui import telling_message

        index = telling_message(self.document)
        if index is not None:
            self.select_message(index)

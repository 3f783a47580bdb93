"""The main window: the full record and the active view side by side, the inspector, loading and files."""

from __future__ import annotations

from pathlib import Path

from foldscope.app import dialogs, help_menu
from foldscope.app.following import Following
from foldscope.app.headings import Headings
from foldscope.app.lab.what_if import WhatIf
from foldscope.app.labs import Labs
from foldscope.app.library_actions import LibraryActions
from foldscope.app.loader import Loader, inspect_samples
from foldscope.app.loading import TraceCounts, settle_heap
from foldscope.app.menus import add_action, squeezable_tabs
from foldscope.app.models.messages import RecordModel, ViewModel
from foldscope.app.open_menu import OpenMenu
from foldscope.app.panels.busy import BusyBar
from foldscope.app.panels.composition import CompositionPanel
from foldscope.app.panels.cost import CostPanel
from foldscope.app.panels.folds import FoldPanel
from foldscope.app.panels.inspector import Inspector
from foldscope.app.panels.library import LibraryBar, LibraryPanel
from foldscope.app.panels.library_money import open_at_request
from foldscope.app.panels.lists import MessageList
from foldscope.app.panels.request import RequestPanel
from foldscope.app.panels.status import StatusLine
from foldscope.app.panels.tab_titles import whole_tabs
from foldscope.app.panels.timeline import Timeline
from foldscope.app.panels.timeline_state import NO_SESSION_HINT, STEP_KEYS
from foldscope.app.panels.warnings_bar import WarningsBar
from foldscope.app.panels.window_map import WindowMap
from foldscope.app.qt import (
    QDragEnterEvent,
    QDropEvent,
    QKeySequence,
    QMainWindow,
    QMenu,
    Qt,
    QTabWidget,
    QWidget,
    Signal,
)
from foldscope.app.report_export import ReportExport
from foldscope.app.save import SaveController
from foldscope.app.session_actions import SessionActions
from foldscope.app.settings import WindowSettings
from foldscope.app.subagents import Subagents
from foldscope.app.theme_switch import ThemeSwitch
from foldscope.app.undo import SessionEditor
from foldscope.app.view_menu import fill_view_menu
from foldscope.app.window_layout import lay_out_panels
from foldscope.app.window_sizing import WindowSizing
from foldscope.app.worker import Task
from foldscope.core.model.commands import Changes
from foldscope.core.readout.document import Document
from foldscope.core.readout.fold_facts import FoldRow


class MainWindow(QMainWindow):
    """Holds one opened session (a Document) and keeps every panel on the same message.

    The composition root: it makes every panel and collaborator, hands each what it works with, and
    redraws the panels from the Changes an action returns. No other module reads its attributes.
    """

    document_loaded = Signal(object)  # the counted Document: every panel shows it, stored, every action enabled
    # A load's counted Document shown (sizes, timeline, stepping, and unless the library keeps unsaved work for the
    # file to offer back, the session's actions) while the library stores it.
    document_counted = Signal(object)
    record_shown = Signal(object)  # the first step of a load: the lists and the map, nothing counted yet
    library_imported = Signal(int)  # the open session went into a library chosen after it opened
    load_failed = Signal(str)

    def __init__(self, settings: WindowSettings | None = None, db: str | None = None, policy=None) -> None:
        super().__init__()
        self.settings = settings or WindowSettings()
        self.db = db
        self.start_policy = policy  # core.model.policy.Policy every opened session is measured under (None: its launch policy)
        self.document: Document | None = None
        self.loader = Loader(lambda: self.document, self)  # the load under way: its steps shown as they come
        self.setWindowTitle("foldscope")
        self.setAcceptDrops(True)

        self._build_panels()
        self._lay_out_panels()
        self._build_collaborators()
        self._dock_collaborators()
        self._wire_panels()
        self._wire_collaborators()
        self._wire_loader()
        self._build_menus()
        self.sizing.restore()

    # -- building -------------------------------------------------------------------------

    def _build_panels(self) -> None:
        """Every panel and bar, made; none placed yet."""
        self.record_model = RecordModel(self)
        self.view_model = ViewModel(self)
        self.record_list = MessageList("Full record", self.record_model)
        self.view_list = MessageList("Active view", self.view_model)
        self.inspector = Inspector()
        self.request_panel = RequestPanel()
        self.composition_panel = CompositionPanel()
        self.timeline = Timeline()
        self.window_map = WindowMap()
        self.fold_panel = FoldPanel()
        self.library_panel = LibraryPanel(self.db)
        self.cost_panel = CostPanel()  # where the money went: computed while its tab is shown
        self.cost_panel.library_db = lambda: self.db  # the Cost panel's library view counts this library
        self.side_tabs = QTabWidget()
        self.side_tabs.addTab(self.inspector, "Inspector")
        self.side_tabs.addTab(self.request_panel, "Request")
        self.side_tabs.addTab(self.composition_panel, "Composition")
        self.side_tabs.addTab(self.library_panel, "Library")
        self.side_tabs.addTab(self.cost_panel, "Cost")
        whole_tabs(self.side_tabs)
        squeezable_tabs(self.cost_panel.tabs)
        self.side_tabs.setCurrentWidget(self.composition_panel)  # the README's first step: what fills the window
        self.library_bar = LibraryBar()  # shown while the library cannot be used
        self.warnings_bar = WarningsBar()  # what the reader skipped or could not link, as the CLI prints it
        self._build_status_bar()

    def _lay_out_panels(self) -> None:
        """The panels placed: the timeline and map above the lists and side tabs, the bars above them, the folds dock."""
        self.panes = lay_out_panels(
            self,
            (self.record_list, self.view_list),
            self.side_tabs,
            self.timeline,
            self.window_map,
            (self.library_bar, self.warnings_bar),
            self.fold_panel,
        )

    def _build_collaborators(self) -> None:
        """The collaborators, each handed what it works with (the session actions add their docks)."""
        self.editor = SessionEditor(self)
        self.saver = SaveController(self, self.editor, self.db)
        self.session_actions = SessionActions(
            self, self.editor, self.saver, (self.record_list, self.view_list), lambda: self.inspector.index, self.busy
        )
        self.what_if = WhatIf(
            self,
            self.editor,
            self.saver,
            self.timeline,
            self.busy,
            lambda: self.document,
            lambda document, opened: self.set_document(document, opened),
        )
        self.labs = Labs(self, lambda: self.document, self.document_loaded.connect, self.timeline.step_to)
        # View > Follow: the file read as it grows, into the shown document's workspace
        self.following = Following(
            self, self.editor, self.status_label, lambda: self.document, self.statusBar().showMessage, lambda: self.headings.refresh()
        )
        self.headings = Headings(
            self,
            (self.record_list, self.view_list),
            self.status_label,
            lambda: self.document,
            lambda: self.timeline.current,
            lambda: self.what_if.branch.request if self.what_if.branch is not None else None,
            self.following.show_live,
        )
        self.opening = OpenMenu(self, self.settings, lambda: self.document, self.open_path)
        self.report = ReportExport(self, self.busy, lambda: self.document, self.statusBar().showMessage)
        self.subagents = Subagents(
            self,
            (self.record_list, self.view_list),
            lambda: self.document,
            lambda: self.inspector.index,
            self.open_path,
            self.statusBar().showMessage,
        )
        self.library = LibraryActions(
            self,
            self.library_panel,
            self.library_bar,
            self.saver,
            lambda: self.db,
            self._use_db,
            lambda: self.document,
            self.statusBar().showMessage,
        )
        self.library.imported.connect(self.library_imported)

    def _use_db(self, path: str) -> None:
        """The library at path from now on: opening, saving and the library's panel all use it."""
        self.db = self.saver.db = self.library_panel.db = path

    def _dock_collaborators(self) -> None:
        """The what-if banner under the library's bar; the fold preview and the pager tabbed with the folds; the sizing kept."""
        self.panes.column.insertWidget(1, self.what_if.banner)
        self.tabifyDockWidget(self.panes.folds_dock, self.session_actions.preview_dock)
        self.tabifyDockWidget(self.session_actions.preview_dock, self.session_actions.pager_dock)
        self.panes.folds_dock.raise_()
        actions = self.session_actions
        self.sizing = WindowSizing(
            self,
            self.settings,
            self.panes.splitters,
            self.panes.folds_dock,
            (actions.policy_dock, actions.preview_dock, actions.pager_dock),
        )

    def _wire_panels(self) -> None:
        """What each panel asks for: a message selected, a request stepped to, a session opened."""
        for messages in (self.record_list, self.view_list):
            messages.message_selected.connect(self.select_message)
        self.inspector.message_requested.connect(self.select_message)
        self.composition_panel.message_requested.connect(lambda index: self.select_message(index, reveal=False))
        self.window_map.message_clicked.connect(self.select_message)
        self.timeline.request_selected.connect(self.show_request)
        self.fold_panel.fold_selected.connect(self.show_fold)
        self.library_panel.session_chosen.connect(self.open_at)
        self.cost_panel.request_chosen.connect(lambda k: self.timeline.step_to(k))
        self.cost_panel.library.request_chosen.connect(lambda path, k: open_at_request(self, path, k))
        self.side_tabs.currentChanged.connect(self._side_tab_changed)
        # Each panel follows the workspace's changes itself (an action, undo, redo, a policy edit, a step, a followed
        # file's growth), redrawing what it shows, or once shown when hidden (app.follows_changes).
        changed = self.editor.display_changed
        for panel in (self.record_list, self.view_list, self.timeline, self.window_map, self.inspector):
            panel.follow(changed)
        for side in (self.request_panel, self.composition_panel, self.cost_panel):
            side.follow(changed)
        self.fold_panel.follow(changed, lambda: self.document)

    def _wire_collaborators(self) -> None:
        """The headings and the selection kept after the panels follow a change; the title after the undo stack's."""
        self.following.live.grew.connect(self.show_growth)
        self.headings.follow(self.editor.display_changed)  # connected after the timeline's: they name its slot
        self.editor.display_changed.connect(self._after_change)  # connected after the panels: they have redrawn
        self.editor.stack_changed.connect(self._refresh_title)
        self.session_actions.policy_editor.policy_changed.connect(self.what_if.policy_changed)

    def _build_status_bar(self) -> None:
        self.status_label = StatusLine(NO_SESSION_HINT)  # the parts that fit, the estimate first; all in the tooltip
        self.busy = BusyBar()
        bar = self.statusBar()
        bar.addWidget(self.status_label, 1)
        bar.addPermanentWidget(self.busy)

    def _build_menus(self) -> None:
        """The menu bar, one menu at a time: every panel and every step has a key, so the window works without a mouse."""
        bar, actions = self.menuBar(), self.session_actions
        self._build_file_menu(bar.addMenu("&File"))
        bar.addMenu(actions.edit_menu)
        self.view_menu = bar.addMenu("&View")
        self._build_view_menu(self.view_menu)
        self._build_go_menu(bar.addMenu("&Go"))
        bar.addMenu(actions.actions_menu)
        actions.actions_menu.addSeparator()
        actions.actions_menu.addAction(self.what_if.start_action)
        self.addAction(self.what_if.start_action)
        self.labs.fill_menu(bar.addMenu("&Lab"))
        help_menu.fill_menu(bar.addMenu("&Help"), self, lambda: self.db)

    def _build_file_menu(self, file_menu: QMenu) -> None:
        actions = self.session_actions
        self.recent = self.opening.fill_menu(file_menu)
        actions.row_actions.append(self.subagents.add_open_action(file_menu))  # also on the lists' context menu
        file_menu.addActions(actions.file_actions)
        self.report.add_action(file_menu)
        file_menu.addSeparator()
        add_action(file_menu, self, "&Quit", QKeySequence.StandardKey.Quit, self.close)

    def _build_view_menu(self, view_menu: QMenu) -> None:
        focus = [
            ("Full &record", "Ctrl+1", self.record_list.table.setFocus),
            ("Active &view", "Ctrl+2", self.view_list.table.setFocus),
            ("&Inspector", "Ctrl+3", lambda: self.show_side(self.inspector, self.inspector.tabs)),  # a side tab: to the front
            ("&Timeline", "Ctrl+4", self.timeline.setFocus),
            ("Window &map", "Ctrl+5", self.window_map.setFocus),
            ("&Folds", "Ctrl+6", self._show_folds),
        ]
        sides = (self.request_panel, self.composition_panel, self.library_panel, self.cost_panel)
        lists = (self.record_list, self.view_list)
        theme_menu = fill_view_menu(view_menu, self, focus, self.show_side, sides, lists, self.timeline, self.following.action)
        self.themes = ThemeSwitch(self, self.settings, theme_menu, self.refresh_theme)
        tip = "Put the docks, splitters and window size back as foldscope first opens"
        add_action(view_menu, self, "Reset &layout", None, self.sizing.reset, tip)

    def _show_folds(self) -> None:
        """View > Folds: the dock shown again if it was closed, in front of the docks tabbed with it, its table focused."""
        self.panes.folds_dock.show()
        self.panes.folds_dock.raise_()
        self.fold_panel.focus_table()

    def _build_go_menu(self, go_menu: QMenu) -> None:
        timeline = self.timeline
        for text, key, slot in (
            ("&Previous request", STEP_KEYS["previous"], lambda: timeline.step_to(timeline.current - 1)),
            ("&Next request", STEP_KEYS["next"], lambda: timeline.step_to(timeline.current + 1)),
            ("Previous &fold", STEP_KEYS["previous fold"], lambda: timeline.step_fold(-1)),
            ("Next f&old", STEP_KEYS["next fold"], lambda: timeline.step_fold(1)),
            ("&Now (the active view)", STEP_KEYS["now"], lambda: timeline.step_to(timeline.slots() - 1)),
        ):
            add_action(go_menu, self, text, key, slot)
        go_menu.addSeparator()
        self.subagents.add_back_action(go_menu)

    # -- a followed file grown ------------------------------------------------------

    def show_growth(self, growth) -> None:
        """The followed file grew: the lists, map and timeline grow in place; the selection and the step stay."""
        doc = self.document
        if doc is None:
            return
        old_last = self.timeline.last_slot() - growth.requests
        slot = self.timeline.last_slot() if self.timeline.current >= old_last else self.timeline.current
        self.editor.grown(doc, slot)  # every panel follows it
        self.following.show_live()

    def show_side(self, widget: QWidget, focus: QWidget | None = None) -> None:
        """Bring a side tab to the front and give it (or `focus`) the keyboard."""
        self.side_tabs.setCurrentWidget(widget)
        (focus or widget).setFocus()

    def closeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        # Asked here, not by an event filter on the window: a filter is a call into Python at each of the window's
        # events (a paint and an update request each frame of the busy bar's animation while a file is read, about
        # 120 a second), each taking the interpreter from the load's worker.
        if not self.saver.may_close():  # the user kept the unsaved changes
            event.ignore()
            return
        self.cancel_loading()
        self.labs.close()
        self.sizing.save()
        super().closeEvent(event)

    # -- opening --------------------------------------------------------------------------

    def open_path(self, path: str | Path, select: int | None = None, sample: str | None = None) -> Task | None:
        """Load a session file in the worker (asking first about unsaved changes); then select `select`.

        An Inspect AI log of several samples asks which one first (`sample` names it: ID or ID:EPOCH)."""
        if not self.saver.may_close():
            return None  # the user kept the unsaved changes of the session shown
        if sample is None:
            samples = inspect_samples(str(path))
            if len(samples) > 1:
                sample = dialogs.choose_sample(self, str(path), samples)
                if sample is None:
                    return None
        self.subagents.set_history([])  # another session: Back starts again (Subagents.open_at and go_back set it after)
        task = self.loader.start(str(path), self.db, self.start_policy, sample, select)
        self.busy.begin(f"Opening {Path(path).name}", self.cancel_loading)
        return task

    @property
    def task(self) -> Task | None:
        """The load under way, if any."""
        return self.loader.task

    def cancel_loading(self) -> None:
        self.loader.cancel()

    def _wire_loader(self) -> None:
        loader = self.loader
        loader.progressed.connect(self.busy.report)
        loader.first_shown.connect(self.show_first)
        loader.counts.connect(self._show_counts)
        loader.document_counted.connect(self.show_counted)
        loader.loaded.connect(self._loaded)
        loader.kept.connect(self._kept)
        loader.put_back.connect(lambda before: self.set_document(before, opened=False, announce=False))
        loader.failed.connect(self._failed)
        loader.ended.connect(self.busy.end)

    def _show_counts(self, counts: TraceCounts) -> None:
        """The trace's counts so far, for the timeline to fill in with while the first step is shown."""
        if self.document is not None and not self.document.is_counted:
            self.timeline.set_counting(counts.counts, counts.requests)

    def show_first(self, document: Document) -> None:
        """The first step of a load: the full record and the active view in the lists, the window map sized by
        characters, the timeline waiting for the trace's counts. Nothing that needs a count is shown or
        enabled (actions, the request, composition, cost and fold panels) until the counted Document lands."""
        self._show_record(document)
        self.request_panel.set_request(None, None)
        self.composition_panel.set_request(None, None)
        self.cost_panel.set_document(None)
        self.fold_panel.set_waiting()
        self.resizeDocks([self.panes.folds_dock], [self.fold_panel.fitting_height(max_rows=1)], Qt.Orientation.Vertical)
        self.session_actions.set_document(None, False)
        self.what_if.document_loaded(document)
        self.headings.refresh()
        self._refresh_title()
        self.view_list.table.setFocus()
        self.record_shown.emit(document)

    def show_counted(self, document: Document, acting: bool = True) -> None:
        """The counted Document while the library stores it: every size, the timeline and stepping, and (`acting`)
        the actions that change the session: the store reads a copy taken when it was counted, so an edit made now
        changes only the session shown, and is written to the library once it holds the session. `acting` False
        (the library keeps unsaved work for the file, offered once stored): the actions wait for the store."""
        self.set_document(document, opened=False, announce=False, acting=acting)
        self.document_counted.emit(document)

    def _kept(self, doc: Document, why: str) -> None:
        """A load stopped (cancelled, failed) after its counted Document was acted on: it stays shown, with whatever
        was done to it, outside the library (as with a library that cannot be used: no autosave)."""
        self.statusBar().showMessage(f"{Path(doc.path).name} {why}; autosave is off until it is opened again", 15_000)
        self.document_loaded.emit(doc)

    def _loaded(self, document: Document, acted_on: bool) -> None:
        self.recent.add(document.path)
        self.library_bar.show_problem(document.library_problem)
        if acted_on:  # acted on since it was counted (show_counted): what was done is kept now
            self.saver.session_stored(document)
            self._refresh_title()
            self.document_loaded.emit(document)
        elif document is self.document:  # shown when counted (show_counted): now stored, the actions may act on it
            self.session_actions.set_document(document)
            self._refresh_title()
            self.document_loaded.emit(document)
        else:
            self.set_document(document)
            self.document_counted.emit(document)
        if self.loader.select is not None:
            self.select_message(self.loader.select)
        settle_heap()  # the session before is let go (the loader's, the document it replaced): collect, then freeze
        if self.side_tabs.currentWidget() is self.library_panel or self.library_panel.sessions.rows:
            self.library_panel.refresh()  # the import may have added a session

    def _failed(self, path: str, line: str) -> None:
        self.statusBar().showMessage(f"Could not open {Path(path).name}", 8000)
        self.load_failed.emit(line)
        dialogs.error_dialog(self, "Cannot open session", line)

    def _show_record(self, document: Document | None) -> None:
        """What both steps of a load show: the lists, the inspector, the reader's warnings, timeline and map."""
        if self.following.live.active and document is not self.document:
            self.following.live.stop("another session is shown")
        self.document = document
        for model in (self.record_model, self.view_model):
            model.highlighted = frozenset()
        self.record_model.set_document(document)
        self.view_model.set_document(document)
        self.inspector.set_document(document)
        self.warnings_bar.set_warnings(document.file_warnings() if document is not None else [])
        self.timeline.set_document(document)
        self.window_map.set_document(document)

    def set_document(self, document: Document | None, opened: bool = True, announce: bool = True, acting: bool = True) -> None:
        """Show `document` in every panel; `opened` (not shown again after a what-if) offers what autosave kept;
        `announce` emits document_loaded (not when a failed load puts the document before it back); `acting`
        False keeps the session's actions off (a counted load still being stored)."""
        self._show_record(document)
        self.request_panel.set_request(document, None)
        self.composition_panel.set_request(document, None)
        self.cost_panel.set_document(document)
        self.fold_panel.set_rows(document.folds if document else [], len(document.requests) if document else 0)
        if document is not None:  # the fold table as tall as its rows (a few at most): the rest is the lists'
            height = self.sizing.folds_height(lambda rows: self.fold_panel.fitting_height(max_rows=rows), rows=5)
            self.resizeDocks([self.panes.folds_dock], [height], Qt.Orientation.Vertical)
        self.window_map.show_marks()
        self.headings.refresh()
        self.session_actions.set_document(document if acting else None, opened)
        self._refresh_title()
        if document is not None:
            self.view_list.table.setFocus()
        self.what_if.document_loaded(document)
        if announce:
            self.document_loaded.emit(document)

    def _refresh_title(self) -> None:
        doc = self.document
        if doc is None:
            self.setWindowTitle("foldscope")
            return
        mark = "*" if self.editor.is_modified else ""
        shown = self.saver.save_path or doc.path  # after Save As, the file this window now writes
        self.setWindowTitle(f"{mark}{Path(shown).name} — foldscope")

    # -- after a change -------------------------------------------------------------------

    def _after_change(self, changes: Changes | None) -> None:
        """Once the panels have followed a change: the message selected kept in the lists, the inspector and the map."""
        if self.document is not None and self.inspector.index is not None:
            self.select_message(self.inspector.index, reveal=False)

    # -- selection ------------------------------------------------------------------------

    def select_message(self, index: int, reveal: bool = True) -> None:
        """Select one full-record index in both lists and show it in the inspector (brought to the front if `reveal`)."""
        if self.document is None:
            return
        self.record_list.select_index(index)
        self.view_list.select_index(index)
        self.inspector.show_message(index)
        self.window_map.set_selected(index)
        self.subagents.message_selected(index)
        if reveal and self.side_tabs.currentWidget() is not self.inspector:
            self.side_tabs.setCurrentWidget(self.inspector)

    def show_request(self, slot: int) -> None:
        """Show the active view as it stood at request `slot` (the last slot is now): every panel follows."""
        doc = self.document
        if doc is None or not doc.is_counted:
            return
        self.editor.show_request(doc, slot)

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

"""Manual actions in the window: menus, toolbar, context menus and keys over the core commands, with undo and save."""

from __future__ import annotations

import html
from collections.abc import Callable

from foldscope.app import dialogs
from foldscope.app.panels.busy import BusyBar
from foldscope.app.panels.fold_preview import FoldPreviewPanel
from foldscope.app.panels.lists import MessageList
from foldscope.app.panels.pager import Pager
from foldscope.app.panels.policy_editor import PolicyEditor
from foldscope.app.qt import (
    QAbstractItemView,
    QAction,
    QDockWidget,
    QKeySequence,
    QMainWindow,
    QMenu,
    QObject,
    Qt,
    QWidget,
    Signal,
)
from foldscope.app.save import SaveController
from foldscope.app.undo import SessionEditor
from foldscope.core.actions.commands import Clip, Compact, Evict, EvictActionResults, Expand, Restore, stands_in_view
from foldscope.core.actions.recovery import Peek
from foldscope.core.readout.document import Document, is_note
from foldscope.core.readout.words import plural


class SessionActions(QObject):
    """The manual actions over the open session, with their menus, toolbar, context menus and docks.

    The window hands in what the actions work with: the host for docks and menus, the editor that runs
    commands, the saver, the two lists, which message is selected, and the busy bar. `policy_applied()`
    follows another policy put in force (an edit, or its undo or redo: every count and rule may have moved).
    """

    policy_applied = Signal()

    def __init__(
        self,
        window: QMainWindow,
        editor: SessionEditor,
        saver: SaveController,
        lists: tuple[MessageList, MessageList],
        selected: Callable[[], int | None],
        busy: BusyBar,
    ) -> None:
        super().__init__(window)
        self.window = window
        self.editor, self.saver, self.busy = editor, saver, busy
        self.record_list, self.view_list = lists
        self.selected = selected
        self._showing_policy = False  # the policy editor is being set to the policy in force: nothing to put in force
        self.row_actions: list[QAction] = []  # the window's own actions on the selected row (open its subagent)
        self.policy_editor = PolicyEditor()
        self.preview = FoldPreviewPanel(self.editor)
        self.pager = Pager()
        self.policy_dock = self._dock("Policy", "policyDock", self.policy_editor, Qt.DockWidgetArea.RightDockWidgetArea)
        self.preview_dock = self._dock("Fold preview", "foldPreviewDock", self.preview, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.pager_dock = self._dock("read_result pager", "pagerDock", self.pager, Qt.DockWidgetArea.BottomDockWidgetArea)
        window.tabifyDockWidget(self.preview_dock, self.pager_dock)
        for dock in (self.policy_dock, self.preview_dock, self.pager_dock):
            dock.hide()
        self.policy_editor.policy_changed.connect(self._policy_changed)
        self.editor.changed.connect(self._changed)
        self.editor.stack_changed.connect(self._update_actions)
        self._build_actions()
        self._build_menus()
        self._update_actions()

    def _dock(self, title: str, name: str, widget: QWidget, area) -> QDockWidget:
        dock = QDockWidget(title, self.window)
        dock.setObjectName(name)
        dock.setWidget(widget)
        self.window.addDockWidget(area, dock)
        return dock

    # -- building --------------------------------------------------------------------------

    def _action(self, text: str, key: str | QKeySequence.StandardKey | None, slot, tip: str = "") -> QAction:
        action = QAction(text, self.window)
        if key is not None:
            action.setShortcut(QKeySequence(key))
        action.setToolTip(tip or text.replace("&", "").rstrip("…"))
        action.setStatusTip(tip)
        action.triggered.connect(lambda checked=False: slot())
        self.window.addAction(action)
        return action

    def _build_actions(self) -> None:
        a = self._action
        self.undo_action = a("&Undo", QKeySequence.StandardKey.Undo, self.undo)
        self.redo_action = a("&Redo", QKeySequence.StandardKey.Redo, self.editor.redo)
        self.save_action = a("&Save", QKeySequence.StandardKey.Save, self.saver.save, "Write the native session file")
        self.save_as_action = a("Save &As…", QKeySequence.StandardKey.SaveAs, self.saver.save_as)
        self.preview_action = a(
            "&Preview fold",
            "Ctrl+Shift+O",
            self.preview_fold,
            "Run the fold on a copy under the policy and show each pass; nothing changes until Apply",
        )
        self.restore_action = a("&Restore", "Ctrl+Shift+R", self.restore, "Bring the selected message back into the active view")
        self.clip_action = a("&Clip to length…", "Ctrl+Shift+C", self.clip, "Clip the selected tool result by hand")
        self.evict_action = a("&Evict", "Delete", self.evict, "Take the selected message out of the active view")
        self.evict_old_action = a("Evict &old tool results…", "Ctrl+Shift+E", self.evict_old)
        self.compact_action = a("Co&mpact span…", "Ctrl+Shift+M", self.compact, "Replace the selected span with a note")
        self.peek_action = a("Pee&k note", "Ctrl+Shift+K", self.peek, "Read what the selected note replaced")
        self.expand_action = a("E&xpand note", "Ctrl+Shift+X", self.expand, "Put back what the selected note replaced")
        self.read_action = a("Read result (&pager)", "Ctrl+Shift+G", self.read_result, "Page the original with read_result")
        self.policy_action = self.policy_dock.toggleViewAction()
        self.policy_action.setText("&Policy editor")
        self.policy_action.setShortcut(QKeySequence("Ctrl+Shift+L"))
        self.message_actions = [
            self.restore_action,
            self.clip_action,
            self.evict_action,
            self.peek_action,
            self.expand_action,
            self.read_action,
        ]

    def _build_menus(self) -> None:
        """The Edit and Actions menus and the toolbar; the window places them (and Save, Save As in its File menu)."""
        self.edit_menu = QMenu("&Edit", self.window)
        self.edit_menu.addActions([self.undo_action, self.redo_action])
        self.actions_menu = QMenu("&Actions", self.window)
        self.actions_menu.addActions([self.preview_action, self.policy_action])
        self.actions_menu.addSeparator()
        self.actions_menu.addActions(self.message_actions[:3] + [self.evict_old_action, self.compact_action] + self.message_actions[3:])
        self.file_actions = [self.save_action, self.save_as_action]
        self.toolbar = self.window.addToolBar("Actions")
        self.toolbar.setObjectName("actionsToolbar")
        self.toolbar.addActions([self.save_action, self.undo_action, self.redo_action])
        self.toolbar.addSeparator()
        self.toolbar.addActions([self.preview_action, self.policy_action])
        self.toolbar.addSeparator()
        self.toolbar.addActions([self.restore_action, self.clip_action, self.evict_action, self.read_action])
        for table in (self.record_list.table, self.view_list.table):
            table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            table.customContextMenuRequested.connect(lambda pos, t=table: self.context_menu(t).popup(t.viewport().mapToGlobal(pos)))
        # A span to compact is chosen with Shift or Ctrl in the active view.
        self.view_list.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)

    def context_menu(self, table) -> QMenu:
        """The menu a right click on a list shows."""
        menu = QMenu(table)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addActions(self.message_actions[:3] + [self.compact_action] + self.message_actions[3:])
        if self.row_actions:
            menu.addSeparator()
            menu.addActions(self.row_actions)
        menu.addSeparator()
        menu.addActions([self.undo_action, self.redo_action])
        return menu

    # -- state -----------------------------------------------------------------------------

    def set_document(self, document: Document | None, opened: bool = True) -> None:
        """Act on `document`; `opened` (not shown again after a what-if) offers what autosave kept."""
        self.editor.set_document(document)
        self.saver.set_document(document)
        self.preview.set_document(document)
        self.pager.set_document(document)
        if document is not None:
            # The fields show the policy the document was measured under: showing it puts nothing in force.
            self._showing_policy = True
            try:
                self.policy_editor.set_session(document.session.model, document.policy, document.session)
            finally:
                self._showing_policy = False
        self._update_actions()
        if document is not None and opened:
            self.saver.offer_recovery()

    def _policy_changed(self, policy) -> None:
        """The edited policy in force, as a command on the session's workspace (Ctrl+Z undoes it): its rules on the
        timeline and window map, the next request under it. The pager pages under its result bound."""
        self.pager.max_chars = policy.tool_result_max_chars
        if not self._showing_policy:
            self.editor.set_policy(policy)

    def _update_actions(self) -> None:
        doc = self.editor.document
        self.undo_action.setText(self.editor.undo_text())
        self.redo_action.setText(self.editor.redo_text())
        self.undo_action.setEnabled(self.editor.can_undo)
        self.redo_action.setEnabled(self.editor.can_redo)
        for action in (self.save_action, self.save_as_action, self.preview_action, self.evict_old_action, self.compact_action):
            action.setEnabled(doc is not None)
        for action in self.message_actions:
            action.setEnabled(doc is not None)

    def _changed(self, changes) -> None:
        """The pager shows a page of the session: read it again after a change (the panels follow the rest). After
        another policy in force (an edit, its undo or redo) the fields show it."""
        doc = self.editor.document
        if changes is not None and changes.policy and doc is not None and doc.policy is not None:
            self._showing_policy = True
            try:
                self.policy_editor.set_policy(doc.policy)
            finally:
                self._showing_policy = False
            self.pager.max_chars = doc.policy.tool_result_max_chars
            self.policy_applied.emit()
        if doc is not None and self.pager.index is not None and self.pager.index < doc.record_size:
            self.pager.read(self.pager.offset.value())
        self._update_actions()

    # -- running commands ------------------------------------------------------------------

    def undo(self):
        """Undo the last action; when the record keeps what it appended (a copy, a note), say so."""
        changes = self.editor.undo()
        kept = self.editor.kept_out_of_view()
        if changes is not None and kept:
            where = ", ".join(f"#{i}" for i in kept[:5]) + ("…" if len(kept) > 5 else "")
            self.window.statusBar().showMessage(
                f"Undone. The record keeps {plural(len(kept), 'message')} the undone action added ({where}); "
                "the active view no longer shows it, and Save writes it",
                12000,
            )
        return changes

    def run(self, command, label: str, title: str):
        changes = self.editor.do(command, label)
        if not changes.success:
            dialogs.show_message(self.window, title, changes.message)
        elif changes.message:
            self.window.statusBar().showMessage(changes.message, 6000)
        return changes

    def preview_fold(self):
        policy = self.policy_editor.policy()
        if self.editor.document is None:
            return None
        if policy is None:
            self.policy_dock.show()
            dialogs.show_message(self.window, "Preview fold", "The policy has invalid fields; fix them in the policy editor.")
            return None
        self.preview_dock.show()
        self.preview_dock.raise_()
        self._leave_room_for_lists(self.preview_dock, grow=True)  # its passes and their diff need the room
        task = self.preview.start(policy, progressed=self.busy.report, ended=self._preview_ended)
        if task is not None:  # None: no ceiling, nothing runs (the panel says why), so nothing is busy
            self.busy.begin("Previewing the fold", self.preview.cancel)
        return task

    def _preview_ended(self) -> None:
        self.busy.end()
        self._update_actions()

    def restore(self):
        index = self.selected()
        if index is None:
            return None
        # Under the policy the editor shows (None while a field is invalid: no admission check, as with no ceiling).
        policy, workspace = self.policy_editor.policy(), self.editor.workspace
        admits = workspace.admission(policy) if policy is not None and workspace is not None else None
        changes = self.editor.do(Restore([index], admits), f"restore of #{index}")
        if not changes.success:
            if dialogs.show_refusal(self.window, changes.message):
                self.open_pager(index)
        return changes

    def clip(self):
        index = self.selected()
        doc = self.editor.document
        if index is None or doc is None or doc.message(index).kind != "action_response":
            dialogs.show_message(self.window, "Clip", "Choose a tool result (or its clipped copy) to clip.")
            return None
        # A result out of the view would come back as its copy and make the request larger: only when asked to.
        into_view = not stands_in_view(doc.session, index)
        if into_view and not dialogs.ask_clip_into_view(self.window, index):
            return None
        keep = dialogs.ask_clip_length(self.window, doc, index)
        if keep is None:
            return None
        return self.run(Clip(index, keep, into_view=into_view), f"clip of #{index} to {keep:,} characters", "Clip")

    def evict(self):
        index = self.selected()
        return None if index is None else self.run(Evict([index]), f"evict of #{index}", "Evict")

    def evict_old(self):
        keep = dialogs.ask_keep_last(self.window)
        if keep is None:
            return None
        return self.run(EvictActionResults(keep), f"evict of tool results but the newest {keep}", "Evict old tool results")

    def compact(self):
        doc = self.editor.document
        if doc is None:
            return None
        rows = sorted({self.view_list.filter.mapToSource(i).row() for i in self.view_list.table.selectionModel().selectedRows()})
        indices = [doc.view_index(r) for r in rows if r < doc.view_size]
        span: tuple[int, int] | None
        if len(indices) > 1:
            span = (indices[0], indices[-1])
        else:
            at = indices[0] if indices else (self.selected() or 0)
            span = dialogs.ask_span(self.window, at, at)
        if span is None:
            return None
        first, last = span
        return self.run(Compact(first, last), f"compact of #{first}–#{last}", "Compact span")

    def _note_index(self) -> int | None:
        index = self.selected()
        doc = self.editor.document
        if index is None or doc is None or not is_note(doc.message(index)):
            dialogs.show_message(self.window, "Notes", "Choose a note (a message a fold or compaction wrote).")
            return None
        return index

    def peek(self):
        index, doc = self._note_index(), self.editor.document
        if index is None or doc is None:
            return None
        command = Peek(index)
        command.do(doc.session)
        if not command.result.get("success"):
            dialogs.show_message(self.window, "Peek", command.result.get("error", "peek failed"))
            return command.result
        r = command.result
        check = {True: "SHA-256 verified", False: "SHA-256 does NOT match", None: "no SHA-256 recorded"}[r["verified"]]
        body = f"<p>Note #{index} replaced {plural(len(r['messages']), 'message')} ({check}).</p>" + "".join(
            f"<h4>#{m['index']} {html.escape(m['kind'])}</h4><pre style='white-space:pre-wrap'>{html.escape(m['text'][:4000])}</pre>"
            for m in r["messages"]
        )
        dialogs.show_peek(self.window, f"Peek at note #{index}", body)
        return r

    def expand(self):
        index = self._note_index()
        return None if index is None else self.run(Expand(index), f"expand of note #{index}", "Expand note")

    def read_result(self):
        index = self.selected()
        return None if index is None else self.open_pager(index)

    def _leave_room_for_lists(self, dock: QDockWidget, grow: bool = False) -> None:
        """A bottom dock takes at most a third of the window, so the lists above it keep readable rows
        (with `grow`, a third: the fold preview shows passes and a diff)."""
        window = self.window
        if grow or dock.height() > window.height() // 3 or not dock.isVisible():
            window.resizeDocks([dock], [window.height() // 3], Qt.Orientation.Vertical)

    def open_pager(self, index: int) -> dict:
        self.pager_dock.show()
        self.pager_dock.raise_()
        self._leave_room_for_lists(self.pager_dock)
        return self.pager.open_index(index)

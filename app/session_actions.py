"""Manual actions in the window: menus, toolbar, context menus and keys over the core commands, with undo and save."""

from __future__ import annotations

import html

from foldscope.app.dialogs import ask_clip_length
from foldscope.app.panels.fold_preview import FoldPreviewPanel
from foldscope.app.panels.pager import Pager
from foldscope.app.panels.policy_editor import PolicyEditor
from foldscope.app.qt import (
    QAction,
    QDialog,
    QDockWidget,
    QInputDialog,
    QKeySequence,
    QMenu,
    QMessageBox,
    QObject,
    Qt,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)
from foldscope.app.save import SaveController
from foldscope.app.undo import SessionEditor
from foldscope.core.actions.commands import Clip, Compact, Evict, EvictActionResults, Expand, Restore
from foldscope.core.actions.recovery import Peek
from foldscope.core.fold.fold import Fold
from foldscope.core.readout.document import is_note


def show_refusal(parent: QWidget, text: str) -> bool:
    """A refused restore: the reason, and whether to read the omitted part instead; tests replace this."""
    box = QMessageBox(QMessageBox.Icon.Warning, "Restore refused", text, QMessageBox.StandardButton.Close, parent)
    read = box.addButton("Read with read_result", QMessageBox.ButtonRole.AcceptRole)
    box.exec()
    return box.clickedButton() is read


def show_message(parent: QWidget, title: str, text: str) -> None:
    """A refused action's reason; tests replace this."""
    QMessageBox.information(parent, title, text)


def ask_keep_last(parent: QWidget) -> int | None:
    value, ok = QInputDialog.getInt(parent, "Evict old tool results", "Keep the newest results:", 5, 0, 10_000)
    return value if ok else None


def ask_span(parent: QWidget, first: int, last: int) -> tuple[int, int] | None:
    """The full-record indices of a span to compact; tests replace this."""
    text, ok = QInputDialog.getText(parent, "Compact a span", "First and last index (e.g. 10-24):", text=f"{first}-{last}")
    try:
        a, b = (int(part) for part in text.replace("–", "-").split("-", 1))
    except ValueError:
        return None
    return (a, b) if ok else None


def show_peek(parent: QWidget, title: str, body: str) -> None:
    """What a note replaced, in a window of its own (not modal: peek changes nothing)."""
    dialog = QDialog(parent)
    dialog.setWindowTitle(title)
    browser = QTextBrowser()
    browser.setHtml(body)
    QVBoxLayout(dialog).addWidget(browser)
    dialog.resize(720, 520)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    dialog.show()


class SessionActions(QObject):
    """Everything issue 8 adds to the window, installed by one call; it reads the window's public parts only."""

    def __init__(self, window) -> None:
        super().__init__(window)
        self.window = window
        self.editor = SessionEditor(self)
        self.policy_editor = PolicyEditor()
        self.preview = FoldPreviewPanel(self.editor)
        self.pager = Pager()
        self.saver = SaveController(window, self.editor)
        self.returning = False  # a session shown again (back from a what-if), not opened: nothing to recover
        self.policy_dock = self._dock("Policy", "policyDock", self.policy_editor, Qt.DockWidgetArea.RightDockWidgetArea)
        self.preview_dock = self._dock("Fold preview", "foldPreviewDock", self.preview, Qt.DockWidgetArea.BottomDockWidgetArea)
        self.pager_dock = self._dock("read_result pager", "pagerDock", self.pager, Qt.DockWidgetArea.BottomDockWidgetArea)
        window.tabifyDockWidget(self.preview_dock, self.pager_dock)
        for dock in (self.policy_dock, self.preview_dock, self.pager_dock):
            dock.hide()
        self.policy_editor.policy_changed.connect(self._policy_changed)
        self.editor.changed.connect(self._changed)
        self.editor.stack_changed.connect(self._update_actions)
        window.document_loaded.connect(self.set_document)
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
        self.undo_action = a("&Undo", QKeySequence.StandardKey.Undo, self.editor.undo)
        self.redo_action = a("&Redo", QKeySequence.StandardKey.Redo, self.editor.redo)
        self.save_action = a("&Save", QKeySequence.StandardKey.Save, self.saver.save, "Write the native session file")
        self.save_as_action = a("Save &As…", QKeySequence.StandardKey.SaveAs, self.saver.save_as)
        self.preview_action = a("&Preview fold", "Ctrl+Shift+F", self.preview_fold,
                                "Run the fold on a copy under the policy and show each pass; nothing changes until Apply")
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
        self.message_actions = [self.restore_action, self.clip_action, self.evict_action, self.peek_action,
                                self.expand_action, self.read_action]

    def _build_menus(self) -> None:
        bar = self.window.menuBar()
        file_menu = next((act.menu() for act in bar.actions() if act.text() == "&File"), None)
        if file_menu is not None:
            before = next((act for act in file_menu.actions() if act.isSeparator()), None)
            file_menu.insertActions(before, [self.save_action, self.save_as_action])
        edit = QMenu("&Edit", self.window)
        edit.addActions([self.undo_action, self.redo_action])
        bar.insertMenu(bar.actions()[1] if len(bar.actions()) > 1 else None, edit)
        self.actions_menu = bar.addMenu("&Actions")
        self.actions_menu.addActions([self.preview_action, self.policy_action])
        self.actions_menu.addSeparator()
        self.actions_menu.addActions(self.message_actions[:3] + [self.evict_old_action, self.compact_action]
                                     + self.message_actions[3:])
        toolbar = self.window.addToolBar("Actions")
        toolbar.setObjectName("actionsToolbar")
        toolbar.addActions([self.save_action, self.undo_action, self.redo_action])
        toolbar.addSeparator()
        toolbar.addActions([self.preview_action, self.policy_action])
        toolbar.addSeparator()
        toolbar.addActions([self.restore_action, self.clip_action, self.evict_action, self.read_action])
        for table in (self.window.record_list.table, self.window.view_list.table):
            table.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            table.customContextMenuRequested.connect(
                lambda pos, t=table: self.context_menu(t).popup(t.viewport().mapToGlobal(pos)))
        # A span to compact is chosen with Shift or Ctrl in the active view.
        from foldscope.app.qt import QAbstractItemView

        self.window.view_list.table.setSelectionMode(QAbstractItemView.SelectionMode.ExtendedSelection)

    def context_menu(self, table) -> QMenu:
        """The menu a right click on a list shows."""
        menu = QMenu(table)
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.addActions(self.message_actions[:3] + [self.compact_action] + self.message_actions[3:])
        menu.addSeparator()
        menu.addActions([self.undo_action, self.redo_action])
        return menu

    # -- state -----------------------------------------------------------------------------

    def set_document(self, document) -> None:
        self.editor.set_document(document)
        self.saver.set_document(document)
        self.preview.set_document(document)
        self.pager.set_document(document)
        if document is not None:
            self.policy_editor.set_session(document.session.model, document.policy)
        self._update_actions()
        if document is not None and not self.returning:
            self.saver.offer_recovery()

    def _policy_changed(self, policy) -> None:
        """Draw the edited policy's ceiling, line and target on the timeline and window map."""
        self.pager.max_chars = policy.tool_result_max_chars
        doc = self.editor.document
        if doc is None or doc.rules is None:
            return
        from dataclasses import replace

        from foldscope.core.model.policy import resolve_ceiling

        resolution = resolve_ceiling(policy, policy.model or doc.session.model)
        doc.rules = replace(doc.rules, ceiling=resolution.ceiling, line=policy.fold_at, target=policy.fold_target,
                            source=resolution.why if "policy editor" in resolution.why else f"{resolution.why} (the policy editor)")
        if doc.policy is None or doc.policy.as_record() != policy.as_record():
            # The edited policy is now in force: the next request compiles (and places its marks) under it.
            from foldscope.app.undo import refresh_document

            doc.policy = policy
            refresh_document(doc)
            self.window.request_panel.invalidate()
        self.window.show_request(self.window.timeline.current)
        self.window.timeline.update()

    def selected(self) -> int | None:
        return self.window.inspector.index

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
        if doc is not None:
            mark = "*" if self.editor.is_modified else ""
            from pathlib import Path

            self.window.setWindowTitle(f"{mark}{Path(doc.path).name} — foldscope")

    def _changed(self, changes) -> None:
        """The core said what changed: show the active view as it now stands in every panel, the folds with it."""
        window = self.window
        doc = self.editor.document
        if doc is not None:
            from foldscope.core.readout.fold_facts import fold_rows
            from foldscope.core.request.trace import build_trace

            views = [r.view for r in doc.requests] + [tuple(doc.session.view)]
            doc.folds = fold_rows(doc.session, views, [r.at for r in build_trace(doc.session)])
            window.fold_panel.set_rows(doc.folds, len(doc.requests))
        window.timeline.current = window.timeline.last_slot()
        window.show_request(window.timeline.current)
        window.timeline.update()
        if self.pager.index is not None and self.pager.index < self.editor.document.record_size:
            self.pager.read(self.pager.offset.value())
        self._update_actions()

    # -- running commands ------------------------------------------------------------------

    def run(self, command, label: str, title: str):
        changes = self.editor.do(command, label)
        if not changes.success:
            show_message(self.window, title, changes.message)
        elif changes.message:
            self.window.statusBar().showMessage(changes.message, 6000)
        return changes

    def _fold(self) -> Fold | None:
        doc, policy = self.editor.document, self.policy_editor.policy()
        measure = doc.measure_for(policy) if policy else None
        if measure is None or measure.ceiling is None:
            return None
        session = doc.session
        session.scale = max(session.scale, doc.scale)
        # The fold's own count (core.fold.fold.default_count) compiles as the next request would:
        # bound, tools, envelope, marks and an included first round's frozen bound.
        return Fold(session, measure)

    def preview_fold(self):
        policy = self.policy_editor.policy()
        if self.editor.document is None:
            return None
        if policy is None:
            self.policy_dock.show()
            show_message(self.window, "Preview fold", "The policy has invalid fields; fix them in the policy editor.")
            return None
        self.preview_dock.show()
        self.preview_dock.raise_()
        self._leave_room_for_lists(self.preview_dock)
        w = self.window
        w.progress.setRange(0, 0)
        w.progress.setFormat("Previewing the fold")
        w.progress.setVisible(True)
        w.cancel_button.setVisible(True)
        w.cancel_button.clicked.connect(self.preview.cancel)
        return self.preview.start(policy, progressed=w._progressed, ended=self._preview_ended)

    def _preview_ended(self) -> None:
        w = self.window
        w.cancel_button.clicked.disconnect(self.preview.cancel)
        w._show_progress(False)
        self._update_actions()

    def restore(self):
        index = self.selected()
        if index is None:
            return None
        fold = self._fold()
        changes = self.editor.do(Restore([index], fold.fits if fold else None), f"restore of #{index}")
        if not changes.success:
            if show_refusal(self.window, changes.message):
                self.open_pager(index)
        return changes

    def clip(self):
        index = self.selected()
        doc = self.editor.document
        if index is None or doc.message(index).kind != "action_response":
            show_message(self.window, "Clip", "Choose a tool result (or its clipped copy) to clip.")
            return None
        keep = ask_clip_length(self.window, doc, index)
        if keep is None:
            return None
        return self.run(Clip(index, keep), f"clip of #{index} to {keep:,} characters", "Clip")

    def evict(self):
        index = self.selected()
        return None if index is None else self.run(Evict([index]), f"evict of #{index}", "Evict")

    def evict_old(self):
        keep = ask_keep_last(self.window)
        if keep is None:
            return None
        return self.run(EvictActionResults(keep), f"evict of tool results but the newest {keep}", "Evict old tool results")

    def compact(self):
        doc = self.editor.document
        rows = sorted({i.row() for i in self.window.view_list.table.selectionModel().selectedRows()})
        indices = [doc.view_index(r) for r in rows if r < doc.view_size]
        if len(indices) > 1:
            span = (indices[0], indices[-1])
        else:
            at = indices[0] if indices else (self.selected() or 0)
            span = ask_span(self.window, at, at)
        if span is None:
            return None
        first, last = span
        return self.run(Compact(first, last), f"compact of #{first}–#{last}", "Compact span")

    def _note_index(self) -> int | None:
        index = self.selected()
        doc = self.editor.document
        if index is None or not is_note(doc.message(index)):
            show_message(self.window, "Notes", "Choose a note (a message a fold or compaction wrote).")
            return None
        return index

    def peek(self):
        index = self._note_index()
        if index is None:
            return None
        command = Peek(index)
        command.do(self.editor.document.session)
        if not command.result.get("success"):
            show_message(self.window, "Peek", command.result.get("error", "peek failed"))
            return command.result
        r = command.result
        check = {True: "SHA-256 verified", False: "SHA-256 does NOT match", None: "no SHA-256 recorded"}[r["verified"]]
        body = f"<p>Note #{index} replaced {len(r['messages'])} messages ({check}).</p>" + "".join(
            f"<h4>#{m['index']} {html.escape(m['kind'])}</h4><pre style='white-space:pre-wrap'>"
            f"{html.escape(m['text'][:4000])}</pre>" for m in r["messages"])
        show_peek(self.window, f"Peek at note #{index}", body)
        return r

    def expand(self):
        index = self._note_index()
        return None if index is None else self.run(Expand(index), f"expand of note #{index}", "Expand note")

    def read_result(self):
        index = self.selected()
        return None if index is None else self.open_pager(index)

    def _leave_room_for_lists(self, dock: QDockWidget) -> None:
        """A bottom dock takes at most a third of the window, so the lists above it keep readable rows."""
        window = self.window
        if dock.height() > window.height() // 3 or not dock.isVisible():
            window.resizeDocks([dock], [window.height() // 3], Qt.Orientation.Vertical)

    def open_pager(self, index: int) -> dict:
        self.pager_dock.show()
        self.pager_dock.raise_()
        self._leave_room_for_lists(self.pager_dock)
        return self.pager.open_index(index)


def install_session_actions(window) -> SessionActions:
    """Issue 8's one hook into the main window: actions, undo, save, policy, fold preview and pager."""
    window.session_actions = SessionActions(window)
    return window.session_actions

"""Subagents in the window: open the child session a call started, and Go > Back to the session it came from."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from foldscope.app import dialogs
from foldscope.app.menus import add_action
from foldscope.app.panels.lists import MessageList
from foldscope.app.qt import QAction, QMenu, QObject, QWidget
from foldscope.app.worker import Task
from foldscope.core.readout.document import Document


class Subagents(QObject):
    """Opens a subagent's session from the row that started it, keeps the way back, and offers both as actions.

    The window hands in its two lists (whose Enter or double-click opens a row's subagent, and whose filters are
    cleared in another session), which document is shown (`current`) and which message is selected (`selected`), how
    to open a file (`open_path(path, select=None)`, None when it did not start) and how to say a line on the status
    bar (`say(text, ms)`); it calls `add_open_action` and `add_back_action` when it builds its menus.
    """

    def __init__(
        self,
        parent: QWidget,
        lists: tuple[MessageList, MessageList],
        current: Callable[[], Document | None],
        selected: Callable[[], int | None],
        open_path: Callable[..., Task | None],
        say: Callable[[str, int], None],
    ) -> None:
        super().__init__(parent)
        self.parent_widget, self.lists = parent, lists
        self.current, self.selected, self.open_path, self.say = current, selected, open_path, say
        self.history: list[tuple[str, int]] = []  # (path, message index) of each session a subagent was opened from
        self.open_action = QAction(self)
        self.back_action = QAction(self)
        for messages in lists:
            messages.message_opened.connect(self.open_at)

    def add_open_action(self, menu: QMenu) -> QAction:
        """File > Open Subagent of the Selected Call, off until a row that started one is selected."""
        self.open_action = add_action(
            menu,
            self.parent_widget,
            "Open S&ubagent of the Selected Call",
            None,
            self.open_selected,
            "The child session a Task (agent) call started, or the compaction summariser's call",
        )
        self.open_action.setEnabled(False)
        return self.open_action

    def add_back_action(self, menu: QMenu) -> QAction:
        """Go > Back to the Parent Session, off until a subagent was opened."""
        self.back_action = add_action(
            menu,
            self.parent_widget,
            "&Back to the Parent Session",
            "Alt+Up",
            self.go_back,
            "The session a subagent was opened from, at the call that started it",
        )
        self.back_action.setEnabled(False)
        return self.back_action

    def message_selected(self, index: int) -> None:
        """The open action is on while the selected message started a subagent."""
        self.open_action.setEnabled(self.child_started_by(index) is not None)

    def open_selected(self) -> None:
        """Open the child session the selected message started (its Task call), or the summariser of a note."""
        index = self.selected()
        if index is None:
            return
        if not self.open_at(index):
            dialogs.show_message(self.parent_widget, "No subagent", "The selected message did not start a subagent session.")

    def child_started_by(self, index: int | None):
        """The child session the message at record index `index` started (its Task call, a note's summariser), or None."""
        doc = self.current()
        if doc is None or index is None or not 0 <= index < len(doc.session.record):
            return None
        mid = doc.session.record[index].id
        return next(
            (child for child in doc.session.children if mid in (child.extras.get("parent_call"), child.extras.get("compaction_note"))), None
        )

    def open_at(self, index: int) -> bool:
        """Open the child session the row at `index` started (Enter or a double-click on it), its filters cleared, with
        Go > Back to the session that started it; False when none."""
        child = self.child_started_by(index)
        if child is None:
            return False
        doc = self.current()
        assert doc is not None  # child_started_by found the child in it
        history = [*self.history, (doc.path, index)]
        if self.open_path(child.source) is not None:
            self.set_history(history)
            self.clear_filters()
            self.say(
                f"Opened the session message {index} started; Go > Back to "
                f"{Path(doc.path).name} ({self.back_action.shortcut().toString()})",
                15_000,
            )
        return True

    def go_back(self) -> Task | None:
        """Go > Back: the session a subagent was opened from, at the message that started it."""
        if not self.history:
            return None
        *rest, (path, index) = self.history
        task = self.open_path(path, select=index)
        if task is not None:
            self.set_history(rest)
            self.clear_filters()
        return task

    def set_history(self, history: list[tuple[str, int]]) -> None:
        """The sessions Back returns through, last first; empty when another session is opened."""
        self.history = history
        self.back_action.setEnabled(bool(history))
        where = f"Back to {Path(history[-1][0]).name}, at message {history[-1][1]}" if history else "Back"
        self.back_action.setToolTip(where)
        self.back_action.setStatusTip(where)

    def clear_filters(self) -> None:
        """Both lists show every row again: a filter chosen for one session means nothing in another."""
        for messages in self.lists:
            messages.text_filter.clear()
            messages.kind_filter.setCurrentIndex(0)

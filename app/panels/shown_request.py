"""The base of panels that show one request of a document and do their work only while visible."""

from __future__ import annotations

from typing import Any

from foldscope.app.follows_changes import FollowsChanges
from foldscope.app.qt import QWidget
from foldscope.core.readout.document import Document


class ShownRequestPanel(QWidget):
    """Keeps the document and the slot shown; `refresh` (the subclass's) runs now if visible, else when shown.

    `_shown` is the key of what is on screen, so a refresh that would show the same thing does nothing;
    `invalidate` clears it when the session or the policy in force changed under the same key.
    """

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.slot: int | None = None
        self._shown: Any = None
        # Every change moves the request shown (a step) or what it holds (an action, another policy).
        self.follower = FollowsChanges(self, lambda changes: True, lambda changes: self._follow())

    def follow(self, changed) -> None:
        """Show the request the workspace shows after each of its changes (app.undo.SessionEditor.display_changed)."""
        self.follower.follow(changed)

    def _follow(self) -> None:
        if self.document is not None:
            self.slot = self.document.shown  # None: now
            self.invalidate()

    def set_request(self, document: Document | None, slot: int | None) -> None:
        self.document, self.slot = document, slot
        if self.isVisible():
            self.refresh()

    def invalidate(self) -> None:
        """The session or the policy in force changed: show it again (now if visible, else when shown)."""
        self._shown = None
        if self.isVisible():
            self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self.refresh()

    def refresh(self, force: bool = False) -> None:
        raise NotImplementedError

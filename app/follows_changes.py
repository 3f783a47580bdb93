"""A panel's hold on the open session's changes: redrawn at a change it shows while it can be seen, else once shown."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.qt import QEvent, QObject, QWidget
from foldscope.core.model.commands import Changes


def session_changed(changes: Changes | None) -> bool:
    """A change of the session or the policy in force, not only another request shown (None: anything may have)."""
    return changes is None or bool(changes.view or changes.added or changes.metadata or changes.folds or changes.policy)


def rows_changed(changes: Changes | None) -> bool:
    """What a list's rows show moved: the view shown, the record, a row's metadata, the sizes under the policy."""
    return changes is None or bool(changes.view or changes.added or changes.metadata or changes.shown or changes.policy)


def view_changed(changes: Changes | None) -> bool:
    """The view shown, the record or the sizes under the policy moved: what the lists, the map and the headings show."""
    return changes is None or bool(changes.view or changes.added or changes.shown or changes.policy)


class FollowsChanges(QObject):
    """Connects a panel to the workspace's changes itself, as Anki's screens filter `operation_did_execute`.

    `follow(changed)` hooks it to a signal that carries each change (app.undo.SessionEditor.changed, None: anything
    may have changed); `wants(changes)` says whether a change touches what the panel shows; `redraw(changes)` redraws
    it. A panel that cannot be seen when the change comes (an unselected side tab, a closed or covered dock) is only
    marked stale, and redrawn once it is shown (`redraw(None)`: the changes since are not kept): a step at 50,000
    messages costs the panels on screen, not every one.
    """

    def __init__(self, panel: QWidget, wants: Callable[[Changes | None], bool], redraw: Callable[[Changes | None], None]) -> None:
        super().__init__(panel)
        self.panel, self.wants, self._redraw = panel, wants, redraw
        self.stale = False  # a change it shows came while it could not be seen
        self.redraws = 0  # how many times it redrew: what the tests count
        panel.installEventFilter(self)

    def follow(self, changed) -> None:
        """Redraw on each change `changed` (a Qt signal of Changes | None) carries that the panel wants."""
        changed.connect(self.changed)

    def changed(self, changes: Changes | None) -> None:
        if not self.wants(changes):
            return
        if self.can_be_seen():
            self.redraw(changes)
        else:
            self.stale = True

    def can_be_seen(self) -> bool:
        """Shown, or to be shown with its window: in the side tab in front, in an open dock (a window not shown yet,
        as in a test or a screenshot, hides nothing it holds)."""
        return self.panel.isVisibleTo(self.panel.window())

    def redraw(self, changes: Changes | None = None) -> None:
        self.stale = False
        self.redraws += 1
        self._redraw(changes)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.panel and event.type() == QEvent.Type.Show and self.stale:
            self.redraw()
        return False

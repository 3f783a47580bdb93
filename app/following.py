"""View > Follow in the window: the menu item that starts and stops following, and the status line while it runs."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.follow import LiveFollow
from foldscope.app.highlight import plain_tip
from foldscope.app.panels.status import StatusLine, status_text
from foldscope.app.qt import QAction, QObject, QWidget
from foldscope.app.undo import SessionEditor
from foldscope.core.readout.document import Document


class Following(QObject):
    """Owns the LiveFollow of the session shown and the checkable `action` the window puts in its View menu.

    The window hands in the editor (whose workspace the follow loads into, and which says when the session has
    unsaved changes), the status line, which document is shown (`current`), how to say a line on the status bar
    (`say(text, ms)`) and what to redraw when following stops (`stopped()`); it connects `live.grew` itself.
    """

    def __init__(
        self,
        parent: QWidget,
        editor: SessionEditor,
        status_label: StatusLine,
        current: Callable[[], Document | None],
        say: Callable[[str, int], None],
        stopped: Callable[[], None],
    ) -> None:
        super().__init__(parent)
        self.editor, self.status_label, self.current, self.say, self.on_stopped = editor, status_label, current, say, stopped
        # the file read as it grows, into the shown document's workspace
        self.live = LiveFollow(self._workspace, self)
        self.action = QAction("F&ollow the file as it grows", parent, checkable=True)
        self.action.setToolTip("Read the lines an agent adds to the session file as they land")
        self.action.toggled.connect(self.set_following)
        self.live.limits_crossed.connect(self._limits_crossed)
        self.live.stopped.connect(self._stopped)

    def _workspace(self):
        doc = self.current()
        return self.editor.workspace_for(doc) if doc is not None else None

    def set_following(self, on: bool) -> None:
        """Follow the open session's file (View > Follow), or stop."""
        if not on:
            self.live.stop("")
            return
        why = (
            "save or undo your own changes first: following shows the file as the agent writes it"
            if self.editor.session_modified
            else self.live.start()
        )
        if why:
            self._set_checked(False)
            self.say(f"Cannot follow: {why}", 10_000)

    def _set_checked(self, on: bool) -> None:
        blocked = self.action.blockSignals(True)
        self.action.setChecked(on)
        self.action.blockSignals(blocked)

    def show_live(self) -> None:
        """While following, the status line is the next request against its limits; the usual line is its tooltip."""
        nxt, doc = self.live.next, self.current()
        if nxt is None or doc is None or not self.live.active:
            return
        self.status_label.setText(f"Following · {nxt.text()}")
        self.status_label.setToolTip(
            plain_tip(
                "\n".join([status_text(doc), *(f"{lim.name}: {lim.source}" for lim in nxt.agent + nxt.policy)])
                + (
                    "\nThe size is the estimate (the count × the scale): predicted input is not computed yet"
                    if nxt.size_name == "estimate"
                    else ""
                )
            )
        )

    def _limits_crossed(self, names: list) -> None:
        nxt = self.live.next
        size = f" ({nxt.size_name} {nxt.size:,})" if nxt is not None else ""
        self.say(f"Notice: the next request will cross the {', '.join(names)}{size}", 15_000)

    def _stopped(self, why: str) -> None:
        self._set_checked(False)
        self.on_stopped()
        if why:
            self.say(f"Following stopped: {why}", 15_000)

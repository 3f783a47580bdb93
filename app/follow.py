"""Following a live session (View > Follow, `foldscope --follow FILE`): new lines are read as they land.

A watcher thread (watchfiles) says when the file changed; on the GUI thread the Follower (core.formats.follow)
reads only the lines added since, the workspace loads them (core.readout.workspace.Workspace.load_more), and the window
redraws in place, keeping the selection. The status bar says how the next request stands against the model's
context window, the agent's compaction point and the policy's line and ceiling, with a notice when it crosses one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from foldscope.app.qt import QObject, QTimer, Signal
from foldscope.core.formats.follow import Follower, Growth, followable
from foldscope.core.formats.registry import followed, format_title
from foldscope.core.model.session import ReadError
from foldscope.core.readout.document import Document
from foldscope.core.readout.live import NextRequest, crossed, next_request
from foldscope.core.readout.workspace import Workspace

DEBOUNCE_MS = 150  # lines an agent writes together arrive as one change
# A poll this often besides the watcher: catches lines written before the watcher was set up, and files on
# filesystems that send no change events. A poll that finds nothing costs one stat and one empty read.
SAFETY_MS = 2_000


class LiveFollow(QObject):
    """Keeps one document in step with its file while following is on; the window redraws on `grew`."""

    grew = Signal(object)  # the Growth a poll read (only when something was added)
    limits_crossed = Signal(list)  # the names of the limits the next request newly reaches
    stopped = Signal(str)  # following ended, and why ("" when the user turned it off)
    file_changed = Signal()  # from the watcher thread: the file changed (queued to the GUI thread)

    def __init__(self, workspace: Callable[[], Workspace | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._workspace = workspace
        self.follower: Follower | None = None
        self.next: NextRequest | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(DEBOUNCE_MS)
        self._timer.timeout.connect(self.poll)
        self.file_changed.connect(self._timer.start)
        self._safety = QTimer(self)
        self._safety.setInterval(SAFETY_MS)
        self._safety.timeout.connect(self.poll)

    @property
    def active(self) -> bool:
        return self.follower is not None

    def can_follow(self, document: Document | None) -> str:
        """Why this document cannot be followed ("" when it can)."""
        if document is None:
            return "no session is open"
        if not followable(document.session.format):
            return f"following reads {', '.join(s.title for s in followed())} files, not {format_title(document.session.format)}'s"
        if not Path(document.path).is_file():
            return f"{document.path} is not a file"
        return ""

    def start(self) -> str:
        """Follow the open document's file; the answer says why not ("" when following began)."""
        workspace = self._workspace()
        document = workspace.document if workspace is not None else None
        why = self.can_follow(document)
        if why:
            return why
        assert workspace is not None and document is not None
        self.stop("")
        try:
            follower = Follower(document.path, document.session.format)
            follower.poll()  # what the file holds now: its messages replace the opened ones, alike
        except ReadError as exc:
            return str(exc)
        self.follower = follower
        workspace.load_more(follower.session())
        self.next = next_request(document)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(str(document.path), self._stop), name="foldscope-follow", daemon=True)
        self._thread.start()
        self._safety.start()
        self.grew.emit(Growth(0, 0, 0))
        return ""

    def stop(self, why: str = "") -> None:
        if self.follower is None:
            return
        self.follower = None
        self._stop.set()
        self._timer.stop()
        self._safety.stop()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None
        self.stopped.emit(why)

    def _watch(self, path: str, stop: threading.Event) -> None:
        """The watcher thread: only says that the file changed; reading happens on the GUI thread."""
        from watchfiles import watch

        try:
            for _ in watch(
                path, stop_event=stop, debounce=DEBOUNCE_MS, step=50, rust_timeout=500, yield_on_timeout=False, raise_interrupt=False
            ):
                if stop.is_set():
                    return
                self.file_changed.emit()
        except Exception:  # noqa: BLE001 - a watcher that fails (the file removed) ends quietly; a poll says why
            if not stop.is_set():
                self.file_changed.emit()

    def poll(self) -> Growth | None:
        """Read what the file gained; grow the document by it; say which limits the next request newly reaches."""
        follower, workspace = self.follower, self._workspace()
        if follower is None or workspace is None:
            return None
        document = workspace.document
        messages, requests = len(document.session.record), len(document.session.trace)
        try:
            growth = follower.poll()
        except ReadError as exc:
            # The good lines read before the bad one in this poll are shown, then following stops with the line's
            # problem: what was read is never dropped.
            workspace.load_more(follower.session())
            gained = Growth(1, len(document.session.record) - messages, len(document.session.trace) - requests)
            if gained.messages or gained.requests:
                self.next = next_request(document)
                self.grew.emit(gained)
            self.stop(str(exc))
            return None
        if not growth:
            return growth
        workspace.load_more(follower.session())
        before, self.next = self.next, next_request(document)
        self.grew.emit(growth)
        reached = crossed(before, self.next)
        if reached:
            self.limits_crossed.emit(reached)
        return growth

"""Saving the session: Save and Save As to the native file, the unsaved-changes prompt, autosave into the library."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

from foldscope.app import dialogs
from foldscope.app.qt import QMainWindow, QObject, QTimer, Signal
from foldscope.app.undo import SessionEditor
from foldscope.app.worker import Task
from foldscope.core.formats.lionagi import message_from_dict
from foldscope.core.formats.lionagi_write import input_paths, message_dict, write_session
from foldscope.core.model.commands import Changes, Command
from foldscope.core.model.launch import read_launch_policy, to_save
from foldscope.core.model.session import LibraryError, Session
from foldscope.core.store.library import WORKING_STATE, Library
from foldscope.core.store.library_file import source_key

AUTOSAVE_MS = 1500  # quiet time after an action before the working state is written to the library
AUTOSAVE_MAX_MS = 5000  # while edits keep coming, the longest an edit waits unsaved: steady work is still kept
AUTOSAVE_RETRY_MS = (2_000, 60_000)  # after a failed autosave: the first wait, doubling up to the last
BUSY_S = 3.0  # how long a write from the GUI thread waits for another writer before it counts as failed


def default_save_path(source: str, avoid: list[Path] | tuple[Path, ...] = ()) -> str:
    """Beside the source, never over it nor over another file it was read from: session.jsonl ->
    session.foldscope.json; a native X.foldscope.json -> X-2.foldscope.json."""
    path = Path(source)
    stem = path.name.split(".")[0] or "session"
    taken = {_resolved(p) for p in (path, *avoid)}
    candidate, number = path.with_name(f"{stem}.foldscope.json"), 2
    while _resolved(candidate) in taken:
        candidate, number = path.with_name(f"{stem}-{number}.foldscope.json"), number + 1
    return str(candidate)


def _resolved(path: Path) -> str:
    try:
        return str(path.resolve())
    except OSError:
        return str(path.absolute())


def why_not_saved(exc: BaseException) -> str:
    """A failed save's reason for the dialog, in one line."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    if isinstance(exc, RecursionError):
        return "the session nests deeper than this foldscope can write"
    if isinstance(exc, MemoryError):
        return "not enough memory to write it"
    return (str(exc) or type(exc).__name__).splitlines()[0]


def working_state(session: Session, base_length: int, source: str | None = None, session_id: int | None = None) -> dict[str, Any]:
    """What autosave keeps: the messages appended since the import, the view, branch metadata, manifest, scale,
    and what recovery is keyed by: the source path and the library version (`session_id`) the work started from."""
    return {
        "source": source_key(source),
        "session_id": session_id,
        "base_length": base_length,
        "added": [message_dict(session.record[i]) for i in range(base_length, len(session.record))],
        "view": list(session.view),
        "branch_metadata": session.branch_metadata,
        "manifest": session.manifest,
        "scale": session.scale,
    }


def common_prefix(a: list[str], b: list[str]) -> int:
    """How many leading items a and b share."""
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def recover(session: Session, state: dict[str, Any], unchanged: int | None = None) -> None:
    """Put a working state autosave kept back on the session.

    `unchanged` is how many leading messages of the session are still those the work started from (the
    longest unchanged prefix); by default all of them, and then the session must be as it was imported (its
    record at base_length). When the source grew or changed after that prefix, the state is applied where its
    messages are still there: the view keeps what it held of the prefix and the messages autosave added,
    and every message after the prefix (new or changed since) stays in the view as it is now.
    """
    base = state["base_length"]
    if unchanged is None:
        if len(session.record) != base:
            raise ValueError(f"the working state starts at {base} messages, the session has {len(session.record)}")
        unchanged = base
    unchanged = min(unchanged, base, len(session.record))
    ids = session.record.ids()
    kept, later = set(ids[:unchanged]), ids[unchanged:]
    added: set[str] = set()
    for place, item in enumerate(state["added"]):
        message = message_from_dict(item, "the library", f"working_state.added[{place}]")
        if message.id not in session.record:
            session.record.append(message)
            added.add(message.id)
    view = [i for i in state["view"] if i in kept or i in added]
    shown = set(view)
    session.set_view(view + [i for i in later if i not in shown])
    session.branch["metadata"] = copy.deepcopy(state["branch_metadata"])
    session.manifest = copy.deepcopy(state["manifest"])
    session.scale = state["scale"]


class Recovery(Command):
    """A working state autosave kept, put back on the session (recover) through its workspace. No undo reaches
    the state before it: the session was never saved so."""

    label = "recovery"
    undoable = False

    def __init__(self, state: dict[str, Any], unchanged: int | None) -> None:
        super().__init__()
        self.state, self.unchanged = state, unchanged

    def apply(self, session: Session) -> Changes:
        length = len(session.record)
        recover(session, self.state, self.unchanged)
        return Changes(view=True, added=tuple(session.record[i].id for i in range(length, len(session.record))), metadata=True)


def write_working_state(db: str | None, library_id: int, view: list[str], cause: str, state: dict[str, Any]) -> int:
    """One autosave's write (on a worker thread): the library's version written."""
    with Library(db, timeout=BUSY_S) as library:
        return library.write_working_state(library_id, view, cause, state)


def latest_working_state(db: str | None, library_id: int | None, with_time: bool = False, source: str | None = None):
    """The newest working state autosave wrote for this source path (any version of it) or library session, or
    None (also once it was saved or discarded: a cleared state is written then); `with_time` gives
    (state, when written) instead."""
    with Library(db, timeout=BUSY_S) as library:
        found = library.latest_working_state(source_key(source), library_id)
    if found is None or found["data"].get("cleared"):
        return None
    state = {"session_id": found["session_id"], **found["data"]}
    return (state, str(found["at"])) if with_time else state


def work_to_recover(db: str | None, path: str) -> bool:
    """Whether the library keeps a working state autosave wrote for this file and nobody saved or discarded: opening
    it offers that work back once the session is stored. True also when the library cannot tell (then, as before,
    the session's actions wait for the store and the offer)."""
    try:
        return latest_working_state(db, None, source=path) is not None
    except LibraryError:
        return True


def applicable_prefix(db: str | None, state: dict[str, Any], library_id: int) -> int:
    """How much of the session now open (library_id) the working state still fits: the longest prefix of its
    messages unchanged since the version the work started from (0: none, so nothing to offer)."""
    base = state.get("base_length")
    if not isinstance(base, int) or base <= 0:
        return 0
    started = state.get("session_id") or library_id
    if started == library_id:
        return base
    with Library(db, timeout=BUSY_S) as library:
        before, now = library.message_hashes(started)[:base], library.message_hashes(library_id)
    return common_prefix(before, now) if len(before) == base else 0


def changes_anything(session: Session, state: dict[str, Any], unchanged: int | None = None) -> bool:
    """Whether putting a working state back would change the session as imported (of a grown session: its
    first `unchanged` messages, those the work started from)."""
    if state["added"] or state["manifest"] != session.manifest:
        return True
    if unchanged is None:
        return list(state["view"]) != list(session.view)
    kept = set(session.record.ids()[:unchanged])
    return [i for i in state["view"] if i in kept] != [i for i in session.view if i in kept]


class SaveController(QObject):
    """Save, Save As, the prompt on close and autosave, for the window's open session."""

    saved = Signal(str)  # the path written
    autosaved = Signal(int)  # the library's view version written
    autosave_failed = Signal(str)  # why (one line); autosave tries again later

    def __init__(self, window: QMainWindow, editor: SessionEditor, db: str | None) -> None:
        super().__init__(window)
        self.window, self.editor, self.db = window, editor, db
        self.save_path: str | None = None  # a native file this window wrote; Save writes there again
        self.base_length = 0
        self.retry_ms = 0  # the wait before the next try after a failed autosave (0: none failed)
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(AUTOSAVE_MS)
        self.timer.timeout.connect(self.autosave)
        self.pending_since: float | None = None  # when the oldest change not yet autosaved was made
        self.writing: Task | None = None  # the autosave being written off the GUI thread (one at a time)
        self.again = False  # a change came while it was written: write once more when it ends
        editor.changed.connect(lambda changes: self.schedule())

    def schedule(self) -> None:
        """An edit was made: autosave after a quiet AUTOSAVE_MS, but never later than AUTOSAVE_MAX_MS after the
        oldest unsaved edit (a debounce alone never fires while edits keep coming)."""
        now = time.monotonic()
        if self.pending_since is None:
            self.pending_since = now
        if self.retry_ms:
            self.timer.start(self.retry_ms)
            return
        left = AUTOSAVE_MAX_MS - (now - self.pending_since) * 1000
        self.timer.start(round(max(0, min(AUTOSAVE_MS, left))))

    def set_document(self, document) -> None:
        self.timer.stop()
        self.save_path = None
        self.base_length = len(document.session.record) if document is not None else 0

    def snapshot(self) -> tuple:
        return self.save_path, self.base_length

    def resume(self, snapshot: tuple) -> None:
        self.save_path, self.base_length = snapshot

    # -- saving ----------------------------------------------------------------------------

    def save(self) -> bool:
        if self.editor.document is None:
            return False
        if self.save_path is None:
            return self.save_as()
        return self.write(self.save_path)

    def save_as(self) -> bool:
        doc = self.editor.document
        if doc is None:
            return False
        start = self.save_path or default_save_path(doc.path, input_paths(doc.session))
        path = dialogs.save_path_dialog(self.window, start)
        return self.write(path) if path else False

    def write(self, path: str) -> bool:
        doc = self.editor.document
        if doc is None:  # save and save_as ask only while a session is open
            return False
        try:
            # the launch record and startup fields of the policy the session is measured under (Amendment 3)
            policy = doc.policy if doc.policy is not None else read_launch_policy(doc.session)
            write_session(to_save(doc.session, policy), path)
        except Exception as exc:  # whatever stops a save is said, never swallowed (a RecursionError too)
            reason = why_not_saved(exc)
            dialogs.error_dialog(
                self.window,
                "Cannot save session",
                f"{path}: {reason.removeprefix(f'{path}: ')}\nNothing was written; the session is as it was.",
            )
            return False
        self.save_path = path
        self.editor.mark_saved()
        self.clear_working_state(f"saved to {path}")
        self.window.statusBar().showMessage(f"Saved {Path(path).name}", 6000)
        self.saved.emit(path)
        return True

    # -- closing ---------------------------------------------------------------------------

    def may_close(self) -> bool:
        """True when the window may close: nothing unsaved, or the user saved or discarded it."""
        doc = self.editor.document
        if doc is None or not self.editor.is_modified:  # nothing open is nothing unsaved
            return True
        answer = dialogs.ask_unsaved(self.window, Path(doc.path).name)
        if answer == "save":
            return self.save()
        if answer == "discard":
            self.clear_working_state("discarded")
        return answer == "discard"

    # -- autosave --------------------------------------------------------------------------

    def autosave(self) -> Task | None:
        """Write the working state into the library, so a crash loses nothing. The state is taken here, on the GUI
        thread; the write runs on the worker pool (its own connection, opened and closed there), so a library
        another process holds never stalls the window. `autosaved(version)` or `autosave_failed(why)` follows."""
        doc = self.editor.document
        if doc is None or doc.library_id is None:
            return None
        if self.writing is not None:  # writes keep their order: the newest state follows this one
            self.again = True
            return self.writing
        stack = self.editor.stack
        label = (stack.undo_label if stack is not None and stack.can_undo else None) or "undo to the start"
        state = working_state(doc.session, self.base_length, doc.path, doc.library_id)
        # The session's live dicts are copied: the GUI may edit them while the worker encodes them.
        state["branch_metadata"], state["manifest"] = copy.deepcopy(state["branch_metadata"]), copy.deepcopy(state["manifest"])
        db, library_id, view, cause = self.db, doc.library_id, list(doc.session.view), f"manual: {label}"
        self.pending_since = None
        task = Task(lambda progress: write_working_state(db, library_id, view, cause, state), "Autosave", self)
        task.succeeded.connect(self._autosaved)
        task.failed.connect(lambda exc: self._autosave_failed(why_not_saved(exc) if not isinstance(exc, LibraryError) else exc.problem))
        task.ended.connect(self._written)
        self.writing = task.start()
        return task

    def _autosaved(self, version: int) -> None:
        if self.retry_ms:
            self.window.statusBar().showMessage("Autosave works again: the changes are kept in the library", 6000)
        self.retry_ms = 0
        self.autosaved.emit(version)

    def _written(self) -> None:
        self.writing = None
        if self.again:
            self.again = False
            self.autosave()

    def wait_written(self, ms: int = 10_000) -> None:
        """Let an autosave being written end (closing the window, or a test reading the library next)."""
        from foldscope.app.worker import pool

        if self.writing is not None:
            pool().waitForDone(ms)

    def _autosave_failed(self, problem: str) -> None:
        """Say so in the status bar and try again later, waiting longer each time (the changes stay unsaved)."""
        first, last = AUTOSAVE_RETRY_MS
        self.retry_ms = min(last, self.retry_ms * 2 if self.retry_ms else first)
        self.window.statusBar().showMessage(
            f"Autosave failed: {problem}; trying again in {self.retry_ms / 1000:.0f} s", max(self.retry_ms, 6000)
        )
        self.autosave_failed.emit(problem)
        self.timer.start(self.retry_ms)

    def clear_working_state(self, why: str) -> None:
        """The changes were saved or discarded: a reopened session offers nothing to recover."""
        doc = self.editor.document
        self.timer.stop()
        if doc is None or doc.library_id is None:
            return
        try:
            with Library(self.db, timeout=BUSY_S) as library:
                library.add_event(doc.library_id, WORKING_STATE, {"cleared": True, "why": why, "source": source_key(doc.path)})
        except LibraryError as exc:
            # The next open may offer these changes again; say so rather than fail the save or the close.
            self.window.statusBar().showMessage(f"The library could not note that: {exc.problem}", 8000)

    def session_stored(self, document) -> None:
        """The library now holds `document`, whose actions came on before it was stored: what was done meanwhile is
        written to it at once (autosave had no library session to write to until now); when nothing was done, the
        work an earlier run kept, if any, is offered as on any open."""
        if self.editor.document is not document:  # a what-if shows a branch: the original was unchanged when it began
            return
        if self.editor.is_modified:
            self.timer.stop()
            self.autosave()
        elif not (self.editor.can_undo or self.editor.can_redo):
            self.offer_recovery()

    # -- crash recovery --------------------------------------------------------------------

    def offer_recovery(self) -> bool:
        """A session opened with a working state autosave kept and nobody saved: ask to put it back."""
        doc = self.editor.document
        if doc is None or doc.library_id is None:
            return False
        try:
            found = latest_working_state(self.db, doc.library_id, with_time=True, source=doc.path)
            if found is None:
                return False
            state, when = found
            unchanged = applicable_prefix(self.db, state, doc.library_id)
        except LibraryError:
            return False  # the window's library bar already says what is wrong with it
        grown = len(doc.session.record) - state["base_length"]
        if unchanged == 0 or not changes_anything(doc.session, state, unchanged):
            return False
        if not dialogs.ask_recover(self.window, Path(doc.path).name, when):
            self.clear_working_state("recovery declined")
            return False
        self.editor.do(Recovery(state, unchanged))
        self.editor.mark_unsaved()
        since = f"; the session has {grown:,} more messages since, kept in the view" if grown > 0 else ""
        self.window.statusBar().showMessage(f"Recovered the unsaved changes autosave kept{since}", 8000)
        return True

"""Saving the session: Save and Save As to the native file, the unsaved-changes prompt, autosave into the library."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from foldscope.app import dialogs
from foldscope.app.qt import QEvent, QMainWindow, QObject, QTimer, Signal
from foldscope.app.undo import SessionEditor, refresh_document
from foldscope.core.formats.lionagi import message_from_dict
from foldscope.core.formats.lionagi_write import message_dict, write_session
from foldscope.core.model.launch import read_launch_policy, to_save
from foldscope.core.model.session import Session
from foldscope.core.store.library import Library

AUTOSAVE_MS = 1500  # quiet time after an action before the working state is written to the library
WORKING_STATE = "working_state"  # the library event kind autosave writes


def default_save_path(source: str) -> str:
    """Beside the source, never over it: session.jsonl -> session.foldscope.json."""
    path = Path(source)
    stem = path.name.split(".")[0] or "session"
    return str(path.with_name(f"{stem}.foldscope.json"))


def working_state(session: Session, base_length: int) -> dict[str, Any]:
    """What autosave keeps: the messages appended since the import, the view, branch metadata, manifest, scale."""
    return {"base_length": base_length,
            "added": [message_dict(session.record[i]) for i in range(base_length, len(session.record))],
            "view": list(session.view), "branch_metadata": session.branch_metadata,
            "manifest": session.manifest, "scale": session.scale}


def recover(session: Session, state: dict[str, Any]) -> None:
    """Put a working state autosave kept back on the session as it was imported (its record at base_length)."""
    if len(session.record) != state["base_length"]:
        raise ValueError(f"the working state starts at {state['base_length']} messages, the session has {len(session.record)}")
    for place, item in enumerate(state["added"]):
        session.record.append(message_from_dict(item, "the library", f"working_state.added[{place}]"))
    session.set_view(state["view"])
    session.branch["metadata"] = copy.deepcopy(state["branch_metadata"])
    session.manifest = copy.deepcopy(state["manifest"])
    session.scale = state["scale"]


def latest_working_state(db: str | None, library_id: int, with_time: bool = False):
    """The newest working state autosave wrote for a library session, or None (also once it was saved or
    discarded: a cleared state is written then); `with_time` gives (state, when written) instead."""
    with Library(db) as library:
        states = [e for e in library.events(library_id) if e["kind"] == WORKING_STATE]
    if not states or states[-1]["data"].get("cleared"):
        return None
    return (states[-1]["data"], str(states[-1]["at"])) if with_time else states[-1]["data"]


def changes_anything(session: Session, state: dict[str, Any]) -> bool:
    """Whether putting a working state back would change the session as imported."""
    return bool(state["added"]) or list(state["view"]) != list(session.view) or state["manifest"] != session.manifest


class SaveController(QObject):
    """Save, Save As, the prompt on close and autosave, for the window's open session."""

    saved = Signal(str)  # the path written
    autosaved = Signal(int)  # the library's view version written

    def __init__(self, window: QMainWindow, editor: SessionEditor, db: str | None) -> None:
        super().__init__(window)
        self.window, self.editor, self.db = window, editor, db
        self.save_path: str | None = None  # a native file this window wrote; Save writes there again
        self.base_length = 0
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(AUTOSAVE_MS)
        self.timer.timeout.connect(self.autosave)
        editor.changed.connect(lambda changes: self.timer.start())
        window.installEventFilter(self)

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
        path = dialogs.save_path_dialog(self.window, self.save_path or default_save_path(doc.path))
        return self.write(path) if path else False

    def write(self, path: str) -> bool:
        doc = self.editor.document
        try:
            # the launch record and startup fields of the policy the session is measured under (Amendment 3)
            policy = doc.policy if doc.policy is not None else read_launch_policy(doc.session)
            write_session(to_save(doc.session, policy), path)
        except (OSError, ValueError) as exc:
            dialogs.error_dialog(self.window, "Cannot save session", f"{path}: {exc}")
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
        if not self.editor.is_modified:
            return True
        answer = dialogs.ask_unsaved(self.window, Path(self.editor.document.path).name)
        if answer == "save":
            return self.save()
        if answer == "discard":
            self.clear_working_state("discarded")
        return answer == "discard"

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt override)
        if watched is self.window and event.type() == QEvent.Type.Close and not self.may_close():
            event.ignore()
            return True
        return False

    # -- autosave --------------------------------------------------------------------------

    def autosave(self) -> int | None:
        """Write the working state into the library, so a crash loses nothing (the library's own thread rule:
        this connection opens and closes here)."""
        doc = self.editor.document
        if doc is None or doc.library_id is None:
            return None
        label = (self.editor.stack.undo_label if self.editor.can_undo else None) or "undo to the start"
        with Library(self.db) as library:
            version = library.add_view_version(doc.library_id, doc.session.view, f"manual: {label}")
            library.add_event(doc.library_id, WORKING_STATE, working_state(doc.session, self.base_length))
        self.autosaved.emit(version)
        return version

    def clear_working_state(self, why: str) -> None:
        """The changes were saved or discarded: a reopened session offers nothing to recover."""
        doc = self.editor.document
        self.timer.stop()
        if doc is None or doc.library_id is None:
            return
        with Library(self.db) as library:
            library.add_event(doc.library_id, WORKING_STATE, {"cleared": True, "why": why})

    # -- crash recovery --------------------------------------------------------------------

    def offer_recovery(self) -> bool:
        """A session opened with a working state autosave kept and nobody saved: ask to put it back."""
        doc = self.editor.document
        if doc is None or doc.library_id is None:
            return False
        found = latest_working_state(self.db, doc.library_id, with_time=True)
        if found is None:
            return False
        state, when = found
        if state.get("base_length") != self.base_length or not changes_anything(doc.session, state):
            return False
        if not dialogs.ask_recover(self.window, Path(doc.path).name, when):
            self.clear_working_state("recovery declined")
            return False
        recover(doc.session, state)
        refresh_document(doc)
        self.editor.mark_unsaved()
        self.window.statusBar().showMessage("Recovered the unsaved changes autosave kept", 8000)
        return True

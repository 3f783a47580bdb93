"""The GUI's hold on the open session's Workspace: runs its commands, says what to redraw and mirrors its undo stack."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from foldscope.app.qt import QObject, Signal
from foldscope.core.actions.commands import CommandStack
from foldscope.core.model.commands import Changes, Command
from foldscope.core.model.policy import Policy
from foldscope.core.readout.document import Document
from foldscope.core.readout.workspace import Workspace


class SessionEditor(QObject):
    """Changes the open session only through its core Workspace (core.readout.workspace), and mirrors its stack.

    `changed(Changes)` follows every action, policy edit, undo and redo, once the workspace has brought the
    document's facts up to date (autosave, the what-if and the actions follow it). `display_changed(Changes)`
    follows it and every other move of what the panels show: a request shown (`Changes(shown=True)`), a followed
    file grown (None: anything may have changed); each panel follows it itself (app.follows_changes).
    `stack_changed()` says the undo and redo labels or the unsaved state moved.
    """

    changed = Signal(object)
    display_changed = Signal(object)
    stack_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.workspace: Workspace | None = None  # the session the actions act on (None: no actions yet)
        self._viewing: Workspace | None = None  # a document shown before its actions come on (stepping only)
        self.busy = ""  # why a worker reads the session (a fold preview, a what-if): actions wait until it ends

    @property
    def document(self) -> Document | None:
        return self.workspace.document if self.workspace is not None else None

    @property
    def stack(self) -> CommandStack | None:
        return self.workspace.stack if self.workspace is not None else None

    def set_document(self, document: Document | None) -> None:
        """Act on `document` (its workspace kept when it is the one acted on or shown already)."""
        if document is None:
            self.workspace = None
        elif self.workspace is None or self.workspace.document is not document:
            self.workspace = self.workspace_for(document)
        self.stack_changed.emit()

    def workspace_for(self, document: Document) -> Workspace:
        """The workspace of a shown document: the one acted on, else one kept for stepping through it."""
        if self.workspace is not None and self.workspace.document is document:
            return self.workspace
        if self._viewing is None or self._viewing.document is not document:
            self._viewing = Workspace(document)
        return self._viewing

    def snapshot(self) -> Workspace | None:
        """The workspace (its document, stack and saved state), to come back to after a what-if."""
        return self.workspace

    def resume(self, snapshot: Workspace | None) -> None:
        self.workspace = snapshot
        self.stack_changed.emit()

    # -- showing ---------------------------------------------------------------------------

    def show_request(self, document: Document, slot: int | None) -> Changes:
        """Show the view of `document` as it stood at request `slot` (None or past the last: now)."""
        changes = self.workspace_for(document).show_request(slot)
        if changes.changed:
            self.display_changed.emit(changes)
        return changes

    def grown(self, document: Document, slot: int | None) -> None:
        """A followed file read further into `document`'s workspace: shown at request `slot` (None: now), every
        panel redrawn (the growth is not a change of the session autosave or the what-if act on)."""
        self.workspace_for(document).show_request(slot)
        self.display_changed.emit(None)

    # -- running ---------------------------------------------------------------------------

    def do(self, command: Command, label: str | None = None) -> Changes:
        """Run one command; `label` names it on the undo stack ("restore of #42")."""
        if self.workspace is None:
            return Changes(success=False, message="no session open")
        if self.busy:
            return Changes(success=False, message=self.busy)
        return self._run(lambda workspace: workspace.apply(command, label))

    def set_policy(self, policy: Policy) -> Changes:
        """Put another policy in force (a command: Ctrl+Z undoes it)."""
        if self.workspace is None:
            return Changes(success=False, message="no session open")
        return self._run(lambda workspace: workspace.set_policy(policy))

    def undo(self) -> Changes | None:
        if self.workspace is None or not self.workspace.stack.can_undo or self.busy:
            return None
        return self._run(lambda workspace: workspace.undo())

    def redo(self) -> Changes | None:
        if self.workspace is None or not self.workspace.stack.can_redo or self.busy:
            return None
        return self._run(lambda workspace: workspace.redo())

    def _run(self, step: Callable[[Workspace], Changes]) -> Changes:
        """One change of the acted-on workspace, then its signals. The workspace shows now after any change: an
        action made while an earlier request is shown says so (`shown`), and a policy edit alone (or its undo or
        redo) shows that request again, as before the edit."""
        workspace = self.workspace
        assert workspace is not None
        at = workspace.document.shown
        changes = step(workspace)
        if changes.success and changes.changed:
            if at is not None and workspace.document.shown is None:
                if changes.policy and not (changes.view or changes.added or changes.metadata or changes.folds):
                    workspace.show_request(at)
                else:
                    changes = replace(changes, shown=True)
            self.changed.emit(changes)
            self.display_changed.emit(changes)
            self.stack_changed.emit()
        return changes

    # -- the mirror ------------------------------------------------------------------------

    @property
    def can_undo(self) -> bool:
        return self.stack is not None and self.stack.can_undo

    @property
    def can_redo(self) -> bool:
        return self.stack is not None and self.stack.can_redo

    def undo_text(self) -> str:
        return f"&Undo {self.stack.undo_label}" if self.stack is not None and self.can_undo else "&Undo"

    def redo_text(self) -> str:
        return f"&Redo {self.stack.redo_label}" if self.stack is not None and self.can_redo else "&Redo"

    @property
    def depth(self) -> int:
        return self.stack.index if self.stack is not None else 0

    # -- unsaved changes -------------------------------------------------------------------

    @property
    def is_modified(self) -> bool:
        """The session differs from what was opened or last saved (Workspace.is_modified)."""
        return self.workspace is not None and self.workspace.is_modified

    @property
    def session_modified(self) -> bool:
        """The session (not the policy in force) differs from what was opened or last saved."""
        return self.workspace is not None and self.workspace.session_modified

    def kept_out_of_view(self) -> list[int]:
        """Record indices appended since the session was opened or saved that the active view does not show."""
        return self.workspace.kept_out_of_view() if self.workspace is not None else []

    def mark_unsaved(self) -> None:
        """The session holds changes no save reached and no undo reaches (a recovered working state)."""
        if self.workspace is not None:
            self.workspace.reset_clean()
        self.changed.emit(None)
        self.display_changed.emit(None)
        self.stack_changed.emit()

    def mark_saved(self) -> None:
        if self.workspace is not None:
            self.workspace.set_clean()
        self.stack_changed.emit()

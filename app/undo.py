"""The GUI's mirror of the core command stack: runs actions, keeps the document's facts current, says what to redraw."""

from __future__ import annotations

from foldscope.app.qt import QObject, Signal
from foldscope.core.actions.commands import CommandStack
from foldscope.core.model.commands import Changes, Command
from foldscope.core.readout.agent_limits import context_window
from foldscope.core.readout.document import Document
from foldscope.core.readout.message_sizes import record_sizes
from foldscope.core.request.tokens import count_text


def _pushed(command: Command, changes: Changes) -> bool:
    """Whether CommandStack.do put the command on its undo stack (the same test it makes)."""
    return command.undoable and changes.success and bool(changes.view or changes.added or changes.metadata or changes.folds)


def refresh_document(document: Document) -> None:
    """Bring the document's per-message facts and the estimate now up to date with its session."""
    session = document.session
    record = session.record
    grew = len(record) > len(document.tokens)  # an action appended messages (copies, notes)
    for index in range(len(document.chars), len(record)):
        document.chars.append(len(record[index].text))
    if grew and document.counter is not None:
        # Sized as the full record compiled as one request carries them, as at load: an appended copy or note
        # may also change how others render (a second result for a call), so every size is taken again.
        sizes = record_sizes(document.measure_for())
        document.tokens[:], document.record_count = sizes.tokens, sizes.total
    elif grew:
        document.tokens.extend(count_text(record[i].text) for i in range(len(document.tokens), len(record)))
    document.show_view(session.view)
    # The window under the policy in force (the policy editor may have set one): every screen's.
    window = context_window(session, document.policy)
    document.context_window, document.window_source = (window.tokens, window.said) if window else (None, "")
    if document.counter is not None:  # the next request as the Measure in force sizes it, everywhere
        measure = document.measure_for()
        messages = measure.messages(session.view)
        document.now_size = measure.estimate(messages)
        document.now_predicted = document.predict_view(measure.count(messages))


class SessionEditor(QObject):
    """Runs core commands on the open session through one CommandStack and mirrors its labels.

    `changed(Changes)` follows every action, undo and redo, once the document is current; panels
    redraw from it. `stack_changed()` says the undo and redo labels or the unsaved state moved.
    """

    changed = Signal(object)
    stack_changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.stack: CommandStack | None = None
        self._depth = 0  # commands done and not undone
        self._saved_depth: int | None = 0  # the depth last saved; None when no undo or redo reaches it
        self._saved_records = 0  # the full record's length as opened or last saved: undo never shortens it
        self.busy = ""  # why a worker reads the session (a fold preview, a what-if): actions wait until it ends

    def set_document(self, document: Document | None) -> None:
        self.document = document
        self.stack = CommandStack(document.session) if document is not None else None
        self._depth, self._saved_depth = 0, 0
        self._saved_records = len(document.session.record) if document is not None else 0
        self.stack_changed.emit()

    def snapshot(self) -> tuple:
        """The document, its stack and saved depth, to come back to after a what-if."""
        return self.document, self.stack, self._depth, self._saved_depth, self._saved_records

    def resume(self, snapshot: tuple) -> None:
        self.document, self.stack, self._depth, self._saved_depth, self._saved_records = snapshot
        self.stack_changed.emit()

    # -- running ---------------------------------------------------------------------------

    def do(self, command: Command, label: str | None = None) -> Changes:
        """Run one command; `label` names it on the undo stack ("restore of #42")."""
        if self.stack is None:
            return Changes(success=False, message="no session open")
        if self.busy:
            return Changes(success=False, message=self.busy)
        if label:
            command.label = label  # the stack mirrors the instance's label
        changes = self.stack.do(command)
        if _pushed(command, changes):
            if self._saved_depth is not None and self._saved_depth > self._depth:
                self._saved_depth = None  # the saved state was undone and is now out of reach
            self._depth += 1
            self._after(changes)
        elif changes.success and command.undoable is False and changes.metadata:
            self._after(changes, stack=False)  # read_result marks its original protected
        return changes

    def undo(self) -> Changes | None:
        if self.stack is None or not self.stack.can_undo or self.busy:
            return None
        changes = self.stack.undo()
        self._depth -= 1
        self._after(changes)
        return changes

    def redo(self) -> Changes | None:
        if self.stack is None or not self.stack.can_redo or self.busy:
            return None
        changes = self.stack.redo()
        self._depth += 1
        self._after(changes)
        return changes

    def _after(self, changes: Changes | None, stack: bool = True) -> None:
        if self.document is not None:
            refresh_document(self.document)
        self.changed.emit(changes)
        if stack:
            self.stack_changed.emit()

    # -- the mirror ------------------------------------------------------------------------

    @property
    def can_undo(self) -> bool:
        return self.stack is not None and self.stack.can_undo

    @property
    def can_redo(self) -> bool:
        return self.stack is not None and self.stack.can_redo

    def undo_text(self) -> str:
        stack = self.stack
        return f"&Undo {stack.undo_label}" if stack is not None and stack.can_undo else "&Undo"

    def redo_text(self) -> str:
        stack = self.stack
        return f"&Redo {stack.redo_label}" if stack is not None and stack.can_redo else "&Redo"

    @property
    def depth(self) -> int:
        return self._depth

    # -- unsaved changes -------------------------------------------------------------------

    @property
    def is_modified(self) -> bool:
        """The session differs from what was opened or last saved: other steps on the stack, or messages an
        undone action appended that the record keeps (undo takes them out of the view, never out of the record)."""
        return self.document is not None and (self._depth != self._saved_depth or bool(self.kept_out_of_view()))

    def kept_out_of_view(self) -> list[int]:
        """Record indices appended since the session was opened or saved that the active view does not show."""
        doc = self.document
        if doc is None:
            return []
        view = set(doc.session.view)
        return [i for i in range(self._saved_records, len(doc.session.record)) if doc.session.record[i].id not in view]

    def mark_unsaved(self) -> None:
        """The session holds changes no save reached and no undo reaches (a recovered working state)."""
        self._saved_depth = None
        self.changed.emit(None)
        self.stack_changed.emit()

    def mark_saved(self) -> None:
        self._saved_depth = self._depth
        self._saved_records = len(self.document.session.record) if self.document is not None else 0
        self.stack_changed.emit()

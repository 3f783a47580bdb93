"""The command protocol every action follows: do, undo and redo over a session, returning what changed."""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass
from typing import Any

from foldscope.core.model.session import Message, Session


@dataclass(frozen=True)
class Changes:
    """What an action changed, for the GUI to decide what to redraw."""

    view: bool = False  # the active view
    added: tuple[str, ...] = ()  # ids appended to the full record
    metadata: bool = False  # branch metadata (delivery, no-clip marks, notes' call lists)
    folds: int = 0  # context_folds records appended
    policy: bool = False  # the policy in force (and so its rules and every size under it)
    shown: bool = False  # which request's view is shown (core.readout.workspace.Workspace.show_request)
    success: bool = True
    message: str = ""

    @property
    def changed(self) -> bool:
        """Whether anything changed: what the command stack keeps a command for, and what moves a revision."""
        return bool(self.view or self.added or self.metadata or self.folds or self.policy or self.shown)


@dataclass
class _Snapshot:
    view: list[str]
    metadata: Any
    manifest: Any
    scale: float
    records: int

    @classmethod
    def take(cls, session: Session) -> _Snapshot:
        return cls(
            list(session.view), copy.deepcopy(session.branch_metadata), copy.deepcopy(session.manifest), session.scale, len(session.record)
        )

    def put_back(self, session: Session) -> None:
        session.set_view(self.view)
        session.branch["metadata"] = copy.deepcopy(self.metadata)
        session.manifest = copy.deepcopy(self.manifest)
        session.scale = self.scale


class Command:
    """An action on a session: `do` applies it and returns Changes; `undo` and `redo` step over it exactly."""

    label = "action"
    undoable = True  # read-only actions (peek, read_result pages) are not put on the undo stack

    def __init__(self) -> None:
        self.result: dict[str, Any] = {}
        self._before: _Snapshot | None = None
        self._after: _Snapshot | None = None

    def do(self, session: Session) -> Changes:
        self._before = _Snapshot.take(session)
        changes = self.apply(session)
        self._after = _Snapshot.take(session)
        return changes

    def undo(self, session: Session) -> Changes:
        assert self._before is not None, "undo before do"
        return self._step(session, self._after, self._before)

    def redo(self, session: Session) -> Changes:
        assert self._after is not None, "redo before do"
        return self._step(session, self._before, self._after)

    @staticmethod
    def _step(session: Session, now: _Snapshot | None, then: _Snapshot) -> Changes:
        was = _Snapshot.take(session)
        then.put_back(session)
        return Changes(
            view=was.view != then.view, metadata=was.metadata != then.metadata, folds=len(_folds(then.manifest)) - len(_folds(was.manifest))
        )

    def apply(self, session: Session) -> Changes:  # pragma: no cover - every action overrides it
        raise NotImplementedError

    def merge(self, later: Command) -> bool:
        """Take in `later`, done just after this one, so one undo steps over both (QUndoCommand.mergeWith);
        False (the default): each is a step of its own."""
        return False

    @property
    def obsolete(self) -> bool:
        """Whether this command (after merging) changes nothing, so the stack drops it (QUndoCommand.isObsolete)."""
        return False


def _folds(manifest: Any) -> list:
    folds = manifest.get("context_folds") if isinstance(manifest, dict) else None
    return folds if isinstance(folds, list) else []


def refuse(command: Command, message: str) -> Changes:
    command.result = {"success": False, "error": message}
    return Changes(success=False, message=message)


def new_uuid() -> str:
    return str(uuid.uuid4())


def message_at(session: Session, index: int) -> Message | None:
    return session.record[index] if isinstance(index, int) and 0 <= index < len(session.record) else None

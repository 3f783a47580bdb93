"""The window's one load at a time: its worker, what it has shown so far and what to put back if it stops, as signals."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from foldscope.app.loading import CountedDocument, TraceCounts, load_work
from foldscope.app.qt import QObject, QTimer, Signal
from foldscope.app.worker import Task
from foldscope.core.model.session import ReadError
from foldscope.core.readout.document import Document

# What the window does with a folder, said where one was given to open (`foldscope ~/.claude/projects`).
FOLDER_WAYS = "File > Open picks one of its sessions; Lab > Tune sweeps them all"


def error_line(path: str, exc: BaseException) -> str:
    """One line for the dialog: a ReadError's own line, else the file and what went wrong."""
    if isinstance(exc, ReadError):
        line = str(exc)
        return f"{line} ({FOLDER_WAYS})" if line.endswith("is a folder, not a session file") else line
    return f"{path}: {type(exc).__name__}: {exc}".splitlines()[0]


def inspect_samples(path: str) -> list[dict]:
    """The samples of an Inspect AI log or the sessions of an OpenCode database to choose among, its subagents' left
    with their parents (empty for any other file, or one that does not read: opening says why)."""
    from foldscope.core.formats import detect_format
    from foldscope.core.formats.discover import own_samples
    from foldscope.core.formats.registry import format_named

    try:
        spec = format_named(detect_format(path))
        return own_samples(spec.samples(Path(path))) if spec is not None and spec.samples is not None else []
    except ReadError:
        return []


@dataclass(frozen=True)
class ShownBefore:
    """What the window showed when a load first replaced it (None: no session), to show again if the load stops."""

    document: Document | None


class Loader(QObject):
    """Runs one session's load in the worker (a new one cancels the last) and says what each step shows.

    Signals from the load under way only: an older load's late results are dropped here, not by each receiver."""

    progressed = Signal(int, int, str)
    first_shown = Signal(object)  # the first step: the record, nothing counted (a Document)
    counts = Signal(object)  # the trace's counts so far (TraceCounts)
    document_counted = Signal(object, bool)  # the counted Document while the library stores it; whether the actions may act on it
    loaded = Signal(object, bool)  # the stored Document; whether it is the counted one the actions acted on meanwhile
    kept = Signal(object, str)  # stopped, but the counted Document acted on stays shown, outside the library; why
    put_back = Signal(object)  # stopped after a first step: the Document shown before the load (or None), to show again
    failed = Signal(str, str)  # the file and one line saying why it did not open
    ended = Signal()  # the load under way is over, however it ended

    def __init__(self, shown: Callable[[], Document | None], parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.shown = shown  # the Document the window shows: put back if a load that replaced it stops
        self.task: Task | None = None
        self.select: int | None = None  # the message to select once loaded
        self._before: ShownBefore | None = None  # what was shown before this load's first step (None: nothing replaced yet)
        self._storing: Document | None = None  # the counted Document the actions came on for (CountedDocument), while stored

    def start(self, path: str, db: str | None, policy, sample: str | None, select: int | None) -> Task:
        """Load `path` (cancelling a load under way), then select `select`."""
        self.cancel()
        self._storing, self.select = None, select
        task = Task(load_work(path, db, policy, sample), f"Opening {path}", self)
        task.progressed.connect(self.progressed)
        task.interim_reported.connect(lambda value, t=task: self._interim(t, value))
        task.was_cancelled.connect(lambda t=task: self._stopped(t, "was not stored in the library: the load was stopped"))
        task.succeeded.connect(lambda document, t=task: self._loaded(t, document))
        task.failed.connect(lambda exc, t=task, p=path: self._failed(t, p, exc))
        task.ended.connect(lambda t=task: self._ended(t))
        self.task = task.start()  # connected first: a queued signal only reaches receivers present at emit
        return task

    def cancel(self) -> None:
        if self.task is not None and not self.task.is_done:
            self.task.cancel()

    def _interim(self, task: Task, value: object) -> None:
        """The worker's early results: the first Document, the counted one, the trace's counts so far."""
        if task is not self.task:
            task.shown()  # nobody shows it: the worker need not wait
            return
        if isinstance(value, CountedDocument):
            self._keep_before()
            self.document_counted.emit(value.document, not value.actions_wait)
            self._storing = value.document if not value.actions_wait else None
            # Once what it asked to repaint has painted (posted events come before a timer's): the worker's import
            # may start (app.loading.SHOWN_WAIT_S).
            QTimer.singleShot(0, task.shown)
        elif isinstance(value, Document):
            self._keep_before()
            self._storing = None
            self.first_shown.emit(value)
            QTimer.singleShot(0, task.shown)  # painted: the worker's count may start (app.loading.FIRST_SHOWN_WAIT_S)
        elif isinstance(value, TraceCounts):
            self.counts.emit(value)

    def _keep_before(self) -> None:
        if self._before is None:
            self._before = ShownBefore(self.shown())

    def _stopped(self, task: Task, why: str) -> bool:
        """A load stopped (cancelled, failed): a counted Document the actions came on for stays shown, with whatever
        was done to it, outside the library (no autosave); True then. Else what was shown before comes back."""
        if task is not self.task:
            return False
        doc, self._storing = self._storing, None
        if doc is None:
            if self._before is not None:
                before, self._before = self._before, None
                self.put_back.emit(before.document)
            return False
        self._before = None
        self.kept.emit(doc, why)
        return True

    def _loaded(self, task: Task, document: Document) -> None:
        if task is not self.task:
            return
        self._before = None
        storing, self._storing = self._storing, None
        self.loaded.emit(document, document is storing)

    def _failed(self, task: Task, path: str, exc: BaseException) -> None:
        if task is not self.task:
            return
        line = error_line(path, exc)
        if not self._stopped(task, f"was not stored in the library: {line}"):
            self.failed.emit(path, line)

    def _ended(self, task: Task) -> None:
        if task is self.task:
            self.task = None
            self.ended.emit()

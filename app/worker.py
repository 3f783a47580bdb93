"""The one way to run work off the GUI thread: a task with progress, result, error and cancel signals."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from foldscope.app.qt import QObject, QThreadPool, Signal, qt_object_alive


class Cancelled(Exception):
    """Raised inside a task's function when the user cancelled it."""


class Progress:
    """What a task's function gets to report progress and to learn it was cancelled.

    The function calls `report(done, total, label)` now and then; `report` raises Cancelled once
    cancel was asked for, so long loops stop at their next report without extra checks.
    """

    def __init__(self, task: Task) -> None:
        self._task = task

    @property
    def cancelled(self) -> bool:
        return self._task._cancel.is_set()

    def report(self, done: int, total: int, label: str = "") -> None:
        if self.cancelled or not self._task.send("progressed", done, total, label):
            raise Cancelled()

    def interim(self, value: Any) -> None:
        """Hand the GUI part of the result before the whole is ready (the first step of a two-step load)."""
        if self.cancelled or not self._task.send("interim_reported", value):
            raise Cancelled()

    def wait_shown(self, seconds: float) -> None:
        """Wait until the GUI says it has shown the last interim result (Task.shown), at most `seconds`: work that
        can wait gives the GUI thread the interpreter to itself while it paints. Raises Cancelled once cancelled."""
        shown = self._task._shown
        shown.wait(seconds)
        shown.clear()
        if self.cancelled:
            raise Cancelled()


class Task(QObject):
    """A function run on the shared worker pool; it never touches widgets, it only emits.

    Signals arrive on the GUI thread (the Task lives there, so Qt queues them):
    `progressed(done, total, label)` and `interim_reported(value)` (part of the result, when the function
    hands one over early), then exactly one of `succeeded(result)`, `failed(exc)` or `was_cancelled()`,
    then `ended()`.
    """

    progressed = Signal(int, int, str)
    interim_reported = Signal(object)
    succeeded = Signal(object)
    failed = Signal(object)
    was_cancelled = Signal()
    ended = Signal()

    def __init__(self, fn: Callable[[Progress], Any], label: str = "", parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.fn = fn
        self.label = label
        self._cancel = threading.Event()
        self._done = threading.Event()
        self._shown = threading.Event()  # the GUI has shown an interim result (Progress.wait_shown)

    def cancel(self) -> None:
        self._cancel.set()
        self._shown.set()  # nothing waits for the GUI any more

    def shown(self) -> None:
        """The GUI has shown the interim result the function may be waiting on (Progress.wait_shown)."""
        self._shown.set()

    @property
    def is_done(self) -> bool:
        return self._done.is_set()

    def start(self) -> Task:
        # A plain callable: PySide wraps it in a runnable the pool owns and deletes.
        pool().start(self._run)
        return self

    def send(self, signal: str, *args: Any) -> bool:
        """Emit one of the task's signals from its function's thread; False when nobody is left to hear it.

        The Task's Qt side can be deleted while its function runs: its parent went (a window closed while its
        session was still importing into the library) or the app is quitting. Emitting then raises RuntimeError in
        the worker thread, which Qt prints as a traceback; a task nobody can hear is cancelled instead."""
        if not qt_object_alive(self):
            self._cancel.set()
            return False
        try:
            getattr(self, signal).emit(*args)
        except RuntimeError:
            if qt_object_alive(self):
                raise  # not the deleted source: a real error
            self._cancel.set()
            return False
        return True

    def _run(self) -> None:
        try:
            result = self.fn(Progress(self))
        except Cancelled:
            self.send("was_cancelled")
        except Exception as exc:  # the GUI shows it; the worker must never die silently
            self.send("failed", exc)
        else:
            if self._cancel.is_set():
                self.send("was_cancelled")
            else:
                self.send("succeeded", result)
        finally:
            self._done.set()
            self.send("ended")


_pool: QThreadPool | None = None


def pool() -> QThreadPool:
    """The app's own worker pool, so tests can check that no task is left running."""
    global _pool
    if _pool is None:
        _pool = QThreadPool()
        _pool.setMaxThreadCount(2)
    return _pool


def run_task(
    fn: Callable[[Progress], Any],
    label: str = "",
    parent: QObject | None = None,
    **slots: Callable[..., Any],
) -> Task:
    """Start fn(progress) on the worker pool with slots connected first, e.g. succeeded=show.

    Connect before starting: a signal emitted in the worker reaches only the receivers
    connected at that moment.
    """
    task = Task(fn, label, parent)
    for name, slot in slots.items():
        getattr(task, name).connect(slot)
    return task.start()

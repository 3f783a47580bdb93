"""What-if at a request: a branch of the session at request k that actions change, the later requests replayed from it."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from foldscope.app import dialogs
from foldscope.app.panels.busy import BusyBar
from foldscope.app.panels.timeline import Timeline
from foldscope.app.panels.timeline_state import BranchSeries
from foldscope.app.qt import QAction, QFrame, QHBoxLayout, QKeySequence, QLabel, QObject, QPushButton, QWidget, Signal
from foldscope.app.save import SaveController
from foldscope.app.undo import SessionEditor
from foldscope.app.worker import Progress, Task
from foldscope.core.readout.document import Document
from foldscope.core.readout.what_if_facts import BranchStep, branch_at, branch_changes, branch_copy, branch_estimates, replay_branch
from foldscope.core.readout.words import plural
from foldscope.core.readout.workspace import Workspace


@dataclass
class Branch:
    """A what-if in progress: the original (document, editor and save state) and the branch shown instead."""

    request: int
    original: Document
    document: Document
    editor_state: Workspace | None  # the original's workspace, acted on again when the what-if ends
    save_state: tuple
    steps: list[BranchStep]
    policy: dict | None = None  # the policy the last replay ran under, as its record


class WhatIf(QObject):
    """Starts a what-if at the timeline's request, replays after every change, shows the banner, goes back.

    The window hands in the editor and saver of the session shown, the timeline, the busy bar, which document
    is shown (`current`) and how to show another (`show(document, opened)`); it places `banner` above its panels
    and `start_action` in its Actions menu, and calls `document_loaded` when a session opens. Building the branch
    and every replay run on the worker, with progress and Cancel in the busy bar; actions wait meanwhile.
    """

    replayed = Signal(object)  # the BranchSeries drawn
    ended = Signal()

    def __init__(
        self,
        parent: QWidget,
        editor: SessionEditor,
        saver: SaveController,
        timeline: Timeline,
        busy: BusyBar,
        current: Callable[[], Document | None],
        show: Callable[[Document, bool], None],
    ) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.editor, self.saver, self.timeline, self.busy = editor, saver, timeline, busy
        self.current, self.show = current, show
        self.branch: Branch | None = None
        self.task: Task | None = None  # building the branch or replaying it
        self.banner = QFrame()
        self.banner.setObjectName("whatIfBanner")
        self.banner.setFrameShape(QFrame.Shape.StyledPanel)
        self.banner.setStyleSheet("#whatIfBanner { background: rgba(230, 126, 34, 0.18); border: 1px solid #e67e22; }")
        self.banner_text = QLabel()
        self.banner_text.setWordWrap(True)
        self.back_button = QPushButton("&Back to the original")
        self.back_button.setToolTip("Leave the what-if: the branch is discarded (Save As keeps it first)")
        self.back_button.clicked.connect(self.back)
        row = QHBoxLayout(self.banner)
        row.setContentsMargins(8, 4, 8, 4)
        row.addWidget(self.banner_text, 1)
        row.addWidget(self.back_button)
        self.banner.hide()
        self.start_action = QAction("&What-if from this request", parent, shortcut=QKeySequence("Ctrl+Shift+W"))
        self.start_action.setToolTip(
            "Branch the session at the request shown on the timeline: actions change the view "
            "there, and the later requests are replayed from it beside the original"
        )
        self.start_action.triggered.connect(lambda checked=False: self.start())
        self.editor.changed.connect(self._changed)

    @property
    def active(self) -> bool:
        return self.branch is not None

    def start(self, request: int | None = None) -> Task | None:
        """Branch at `request` (default: the timeline's) in the worker; refused at "now", in a what-if, while
        the worker reads the session, or with unsaved changes. `replayed` follows once the branch is shown."""
        window, doc = self.parent_widget, self.current()
        if doc is None or self.active or self.task is not None or self.editor.busy:
            return None
        k = self.timeline.current if request is None else request
        if not 0 <= k < len(doc.requests):
            dialogs.show_message(
                window,
                "What-if",
                "Step the timeline to an earlier request first: a what-if starts at a request of the trace and replays the ones after it.",
            )
            return None
        if self.editor.session_modified:
            dialogs.show_message(window, "What-if", "Save or undo the changes first: a what-if starts from the session as saved.")
            return None
        editor_state, save_state = self.editor.snapshot(), self.saver.snapshot()
        policy, measure = doc.policy, doc.measure_for(doc.policy)

        def work(progress: Progress):
            return branch_at(doc, k, policy, measure, progress.report)

        def started(result) -> None:
            branch_doc, steps = result
            branch_doc.library_id = None  # autosave keeps the original's working state, never a what-if's
            # The policy in force carries over: the editor showing it again for the branch replays nothing twice.
            self.branch = Branch(k, doc, branch_doc, editor_state, save_state, steps, policy.as_record() if policy is not None else None)
            self.show(branch_doc, False)
            self.timeline.step_to(k)
            self.banner.show()
            self._draw(measure.ceiling)

        return self._run(work, started, f"What-if from request {k}")

    def replay(self) -> Task | None:
        """Replay the original's requests k.. from the branch's view as it stands, in the worker; draw them
        beside the original when done (a replay still running is cancelled first)."""
        branch = self.branch
        if branch is None:
            return None
        if self.task is not None:
            self.task.cancel()
        original, doc = branch.original, branch.document
        policy = doc.policy
        branch.policy = policy.as_record() if policy is not None else None
        measure = original.measure_for(policy)
        # A copy taken here: the worker replays it while further actions change the branch (and cancel this replay).
        session, k = branch_copy(doc.session), branch.request

        def replayed(steps) -> None:
            if self.branch is branch:
                branch.steps = steps
                self._draw(measure.ceiling)

        return self._run(
            lambda progress: replay_branch(original, session, k, measure, progress.report),
            replayed,
            f"Replaying the what-if from request {k}",
            block=False,
        )

    def _run(self, work, done, label: str, block: bool = True) -> Task:
        """One task at a time on the worker, shown in the busy bar; while `block`, the session waits for it
        (actions refused: the worker reads the session itself, not a copy)."""
        task = Task(work, label, self)
        task.progressed.connect(lambda d, t, text, tk=task: self.busy.report(d, t, text) if tk is self.task else None)
        task.succeeded.connect(lambda result, tk=task: done(result) if tk is self.task else None)
        task.failed.connect(lambda exc, tk=task: self._failed(exc) if tk is self.task else None)
        task.ended.connect(lambda tk=task: self._ended(tk))
        self.task = task
        if block:
            self.editor.busy = "the what-if is being built; wait for it or cancel it"
        self.busy.begin(label, self.cancel)
        return task.start()

    def cancel(self) -> None:
        if self.task is not None:
            self.task.cancel()

    def _failed(self, exc: BaseException) -> None:
        self.banner_text.setText(f"<b>The what-if failed:</b> {html.escape(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}")
        self.banner.show()

    def _ended(self, task: Task) -> None:
        if task is self.task:
            self.task = None
            if self.editor.busy.startswith("the what-if"):
                self.editor.busy = ""
            self.busy.end()

    def _draw(self, ceiling: int | None) -> BranchSeries:
        branch = self.branch
        assert branch is not None
        original = branch.original
        estimates = branch_estimates(original, branch.steps)
        series = BranchSeries(
            branch.request,
            estimates,
            tuple(r.estimate for r in original.requests),
            original.now_size,
            tuple(s.folds for s in branch.steps),
            branch_changes(original, branch.steps, estimates),
        )
        self.timeline.set_branch(series)
        self._say(series, ceiling, sum(1 for s in branch.steps if s.refused))
        self.replayed.emit(series)
        return series

    def _say(self, series: BranchSeries, ceiling_tokens: int | None, refused: int) -> None:
        k, last = series.start, len(series.original) - 1
        change = series.changes[-1]
        folds = sum(series.folds)
        ceiling = f"ceiling {ceiling_tokens:,}" if ceiling_tokens is not None else "no ceiling: nothing folds"
        self.banner_text.setText(
            f"<b>What-if from request {k}</b>: actions change the view as it stood at request {k}; requests {k}–{last} "
            f"are replayed from it under the policy in force ({html.escape(ceiling)}), the orange line on the timeline. "
            f"Request {last}: <b>{series.estimates[-1]:,}</b> tokens against the original's {series.original[last]:,} "
            f"({change:+,}); {plural(folds, 'fold pass', 'fold passes')} kept"
            + (f"; {plural(refused, 'request')} refused" if refused else "")
            + "."
        )

    def policy_changed(self, policy) -> None:
        """Another policy in force: replay under it (the same policy shown again replays nothing)."""
        branch = self.branch
        if branch is not None and branch.policy != policy.as_record():
            self._changed(None)

    def _changed(self, changes) -> None:
        branch = self.branch
        if branch is not None and self.current() is branch.document:
            self.replay()

    def back(self) -> None:
        """Show the original again, as it was left: its view, undo stack and save state."""
        branch = self.branch
        if branch is None:
            return
        self.cancel()
        self.branch = None
        self.banner.hide()
        self.timeline.set_branch(None)
        self.show(branch.original, False)
        self.editor.resume(branch.editor_state)
        self.saver.resume(branch.save_state)
        self.timeline.step_to(branch.request)
        self.ended.emit()

    def document_loaded(self, document) -> None:
        """Another session opened during a what-if: the what-if ends with it."""
        branch = self.branch
        if branch is not None and document is not branch.document and document is not branch.original:
            self.cancel()
            self.branch = None
            self.banner.hide()
            self.timeline.set_branch(None)
            self.ended.emit()

"""What-if at a request: a branch of the session at request k that actions change, the later requests replayed from it."""

from __future__ import annotations

import html
from collections.abc import Callable
from dataclasses import dataclass

from foldscope.app import dialogs
from foldscope.app.panels.timeline import BranchSeries, Timeline
from foldscope.app.qt import QAction, QFrame, QHBoxLayout, QKeySequence, QLabel, QObject, QPushButton, QWidget, Signal
from foldscope.app.save import SaveController
from foldscope.app.undo import SessionEditor
from foldscope.core.fold.history import session_at_request
from foldscope.core.readout.document import Document, build_document
from foldscope.core.replay.what_if import BranchStep, replay_from
from foldscope.core.request.count import estimate


@dataclass
class Branch:
    """A what-if in progress: the original (document, editor and save state) and the branch shown instead."""

    request: int
    original: Document
    document: Document
    editor_state: tuple
    save_state: tuple
    steps: list[BranchStep]
    policy: dict | None = None  # the policy the last replay ran under, as its record


class WhatIf(QObject):
    """Starts a what-if at the timeline's request, replays after every change, shows the banner, goes back.

    The window hands in the editor and saver of the session shown, the timeline, which document is shown
    (`current`) and how to show another (`show(document, opened)`); it places `banner` above its panels and
    `start_action` in its Actions menu, and calls `document_loaded` when a session opens.
    """

    replayed = Signal(object)  # the BranchSeries drawn
    ended = Signal()

    def __init__(self, parent: QWidget, editor: SessionEditor, saver: SaveController, timeline: Timeline,
                 current: Callable[[], Document | None], show: Callable[[Document, bool], None]) -> None:
        super().__init__(parent)
        self.parent_widget = parent
        self.editor, self.saver, self.timeline = editor, saver, timeline
        self.current, self.show = current, show
        self.branch: Branch | None = None
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
        self.start_action.setToolTip("Branch the session at the request shown on the timeline: actions change the view "
                                     "there, and the later requests are replayed from it beside the original")
        self.start_action.triggered.connect(lambda checked=False: self.start())
        self.editor.changed.connect(self._changed)

    @property
    def active(self) -> bool:
        return self.branch is not None

    def start(self, request: int | None = None) -> Branch | None:
        """Branch at `request` (default: the timeline's); refused at "now", in a what-if, or with unsaved changes."""
        window, doc = self.parent_widget, self.current()
        if doc is None or self.active:
            return None
        k = self.timeline.current if request is None else request
        if not 0 <= k < len(doc.requests):
            dialogs.show_message(window, "What-if", "Step the timeline to an earlier request first: a what-if starts at a "
                                            "request of the trace and replays the ones after it.")
            return None
        if self.editor.is_modified:
            dialogs.show_message(window, "What-if", "Save or undo the changes first: a what-if starts from the session as saved.")
            return None
        editor_state, save_state = self.editor.snapshot(), self.saver.snapshot()
        session = session_at_request(doc.session, k)
        branch_doc = build_document(session, doc.path, policy=doc.policy)
        branch_doc.library_id = None  # autosave keeps the original's working state, never a what-if's
        # The policy in force carries over: the editor showing it again for the branch replays nothing twice.
        self.branch = Branch(k, doc, branch_doc, editor_state, save_state, [],
                             doc.policy.as_record() if doc.policy is not None else None)
        self.show(branch_doc, False)
        self.timeline.step_to(k)
        self.replay()
        self.banner.show()
        return self.branch

    def replay(self) -> BranchSeries | None:
        """Replay the original's requests k.. from the branch's view as it stands; draw them beside the original."""
        branch = self.branch
        if branch is None:
            return None
        original, doc = branch.original, branch.document
        policy = doc.policy
        branch.policy = policy.as_record() if policy is not None else None
        measure = original.measure_for(policy)
        branch.steps = replay_from(original.session, doc.session, branch.request, measure)
        estimates = tuple(estimate(s.counted, original.requests[s.request].scale) for s in branch.steps)
        series = BranchSeries(branch.request, estimates, tuple(r.estimate for r in original.requests),
                              original.now_size, tuple(s.folds for s in branch.steps))
        self.timeline.set_branch(series)
        self._say(series, measure.ceiling)
        self.replayed.emit(series)
        return series

    def _say(self, series: BranchSeries, ceiling_tokens: int | None) -> None:
        k, last = series.start, len(series.original) - 1
        change = series.estimates[-1] - series.original[last]
        folds = sum(series.folds)
        ceiling = f"ceiling {ceiling_tokens:,}" if ceiling_tokens is not None else "no ceiling: nothing folds"
        refused = sum(1 for s in self.branch.steps if s.refused)
        self.banner_text.setText(
            f"<b>What-if from request {k}</b>: actions change the view as it stood at request {k}; requests {k}–{last} "
            f"are replayed from it under the policy in force ({html.escape(ceiling)}), the orange line on the timeline. "
            f"Request {last}: <b>{series.estimates[-1]:,}</b> tokens against the original's {series.original[last]:,} "
            f"({change:+,}); {folds} fold passes landed" + (f"; {refused} requests refused" if refused else "") + ".")

    def policy_changed(self, policy) -> None:
        """Another policy in force: replay under it (the same policy shown again replays nothing)."""
        branch = self.branch
        if branch is not None and branch.policy != policy.as_record():
            self._changed(None)

    def _changed(self, changes) -> None:
        if self.active and self.current() is self.branch.document:
            self.replay()

    def back(self) -> None:
        """Show the original again, as it was left: its view, undo stack and save state."""
        branch = self.branch
        if branch is None:
            return
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
            self.branch = None
            self.banner.hide()
            self.timeline.set_branch(None)
            self.ended.emit()


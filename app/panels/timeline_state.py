"""The timeline's model: the document shown, the slot stepped to, the cache lane's rows, and where each slot is drawn."""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.app.panels.cache_lane import ROOMY_FROM, CacheLane, lane_height
from foldscope.app.panels.timeline_scale import Scale, timeline_scale
from foldscope.app.panels.timeline_zoom import Zoom
from foldscope.app.qt import (
    QRectF,
    QSize,
    Qt,
    QWidget,
)
from foldscope.app.worker import Task, run_task
from foldscope.core.readout.cache_lane import gap_rows, lane_rows, lane_rows_of
from foldscope.core.readout.document import Document
from foldscope.core.readout.trace_facts import rule_names

LEFT, RIGHT, TOP, BOTTOM = 64, 16, 22, 22
PLOT_MIN = 32  # the fewest pixels the plot keeps at the timeline's minimum height, its cache lane tight below it
# Up to this many requests the cache lane's causes are attributed at once, on the document's warm counter
# (about 0.3 s for 1,000 requests); a longer trace shows its gaps at once and its causes from a worker.
SYNC_REQUESTS = 1500

# The Go menu's keys (app/window.py builds it from these) and the hint the header shows for them: one set, said alike.
STEP_KEYS = {
    "previous": "Alt+Left",
    "next": "Alt+Right",
    "previous fold": "Alt+Shift+Left",
    "next fold": "Alt+Shift+Right",
    "now": "Alt+End",
}
KEY_HINT = "Alt+←/→ step, Alt+Shift+←/→ previous/next fold"
# What the window says with no session open: what to do, with the keys (the File menu's).
NO_SESSION_HINT = (
    "No session open: File > Open… (Ctrl+O) a session file, File > Open Agent Session… (Ctrl+Alt+O) "
    "one of the agent sessions on this machine, File > Open the Demo Session, "
    "or drop a file here"
)


@dataclass(frozen=True)
class BranchSeries:
    """A what-if drawn beside the original: the original's estimates (and now), and the branch's from `start` on."""

    start: int
    estimates: tuple[int, ...]  # the branch's requests start.. as replayed
    original: tuple[int, ...]  # every request of the original
    original_now: int
    folds: tuple[int, ...] = ()  # fold passes that landed before each branch request
    changes: tuple[int, ...] = ()  # each branch request's estimate less the original's (core.readout.what_if_facts)


class TimelineState(QWidget):
    """What the timeline shows and where: the document, the what-if beside it, the slot stepped to, the counts so far
    while loading, the cache lane's rows, the zoom; and the plot's geometry the paint and the mouse share."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.branch: BranchSeries | None = None  # a what-if from a request, drawn beside the original
        self.current = 0
        # While a load measures the trace: the requests counted so far, out of how many (app.loading.TraceCounts).
        self.counting: tuple[tuple[int, ...], int] = ((), 0)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAccessibleName("Timeline of requests")
        self.setMouseTracking(True)
        self.setMinimumHeight(100)
        self.lane = CacheLane()  # idle gaps and cache writes by cause, under the plot
        self._lane_task: Task | None = None
        self._lane_for: int | None = None  # the trace's revision the lane's rows were made for
        self.zoom = Zoom()  # app.panels.timeline_zoom: a long session's bars made wider, the shown request in view

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(800, ROOMY_FROM if self.lane.shown() else 160)

    def _shown(self) -> Document:
        """The shown document, for the geometry and paint helpers: they are reached only while one is shown (paint
        and the mouse handlers return early without one)."""
        assert self.document is not None, "the timeline laid out with no document shown"
        return self.document

    def set_document(self, document: Document | None) -> None:
        if document is None or self.document is None or document.path != self.document.path:
            self.zoom.reset()  # another session: all of it in view
        self.document = document
        self.counting = ((), len(document.session.trace) if document is not None else 0)
        self.current = self.slots() - 1
        self._fill_lane()
        self.update()

    def set_counting(self, counts: tuple[int, ...], requests: int) -> None:
        """The trace's counts so far, while the document is not counted yet: the bars fill in as they come."""
        self.counting = (tuple(counts), requests)
        self.update()

    def _fill_lane(self) -> None:
        """The lane's rows for the document's trace: at once for a trace of moderate length, else the gaps at once
        and the causes from a worker (the Cost panel's attribution either way)."""
        doc = self.document
        key = None if doc is None else doc.trace_revision  # the trace and the policy: not an action, not a step
        if key == self._lane_for:
            return
        if self._lane_task is not None:
            self._lane_task.cancel()
            self._lane_task = None
        self._lane_for = key
        if doc is None or not doc.is_counted or not doc.session.trace:  # the first step of a load: no lane yet
            self.lane.rows = []
        elif (report := doc.cache_report()) is not None:  # the Cost panel's cache report, made at load from the trace's count
            self.lane.rows = lane_rows_of(report)
        elif len(doc.session.trace) <= SYNC_REQUESTS:
            self.lane.rows = lane_rows(doc.session, doc.policy, doc.counter)
        else:
            self.lane.rows = gap_rows(doc.session)
            session, policy = doc.session, doc.policy
            self._lane_task = run_task(
                lambda progress: lane_rows(session, policy), "cache lane", self, succeeded=lambda rows, k=key: self._lane_ready(k, rows)
            )
        self.updateGeometry()

    def _lane_ready(self, key: tuple, rows: list) -> None:
        if key == self._lane_for:
            self._lane_task = None
            self.lane.rows = rows
            self.update()

    def _bottom(self) -> float:
        """The space under the plot: the request numbers, and the cache lane when there is one."""
        return BOTTOM + (lane_height(self.height()) + 2 if self.lane.shown() else 0)

    def set_branch(self, branch: BranchSeries | None) -> None:
        self.branch = branch
        self.update()

    def slots(self) -> int:
        if self.branch is not None:
            return len(self.branch.original) + 1
        return len(self.document.requests) + 1 if self.document is not None else 0

    def last_slot(self) -> int:
        """The last slot one can step to: now, or in a what-if the request it starts from (its view, editable)."""
        return self.branch.start if self.branch is not None else self.slots() - 1

    def fold_slots(self) -> list[int]:
        return [r.index for r in self.document.requests if r.folded_before] if self.document else []

    # -- geometry ------------------------------------------------------------------------

    def _scale(self) -> Scale:
        """The plot's top, and the rules far above the bars and dots that it leaves out (timeline_scale)."""
        doc = self._shown()
        values = [r.headline for r in doc.requests] + [r.reported_input or 0 for r in doc.requests]
        values.append(doc.now_predicted or doc.now_size)
        if self.branch is not None:
            values += list(self.branch.estimates) + list(self.branch.original) + [self.branch.original_now]
        rules = {} if doc.rules is None else {name: doc.rules.at(name) or 0 for name in rule_names(doc.rules)}
        return timeline_scale(max(values, default=1), rules, (self.fontMetrics().height() + 3) / self._plot().height())

    def _plot(self) -> QRectF:
        return QRectF(LEFT, TOP, max(self.width() - LEFT - RIGHT, 10), max(self.height() - TOP - self._bottom(), 10))

    def _slot_rect(self, slot: int, plot: QRectF) -> QRectF:
        span = self.zoom.span(plot, self.slots())
        width = span.width() / max(self.slots(), 1)
        return QRectF(span.left() + slot * width, plot.top(), width, plot.height())

    def _y(self, value: float, plot: QRectF, top: float) -> float:
        return plot.bottom() - plot.height() * min(value / top, 1.05)

    def slot_at(self, x: float) -> int | None:
        plot = self._plot()
        if self.document is None or not (plot.left() <= x <= plot.right()):
            return None
        span = self.zoom.span(plot, self.slots())
        return min(max(int((x - span.left()) / (span.width() / self.slots())), 0), self.slots() - 1)

    # -- drawing -------------------------------------------------------------------------

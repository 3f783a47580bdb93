"""The timeline of requests: each request's size and reported input against the ceiling; steps by key and mouse."""

from __future__ import annotations

from foldscope.app.panels.timeline_paint import PaintedTimeline
from foldscope.app.panels.timeline_zoom import ZOOM_KEYS, wheel
from foldscope.app.qt import (
    QKeyEvent,
    QMouseEvent,
    Qt,
    QToolTip,
    QWheelEvent,
    Signal,
)
from foldscope.core.model.commands import Changes
from foldscope.core.readout.cache_lane import LEGEND, lane_sentence
from foldscope.core.readout.trace_facts import unseen_head_note
from foldscope.core.readout.usage_precision import near as near_mark
from foldscope.core.readout.words import plural, scaled_words


class Timeline(PaintedTimeline):
    """One bar per request (its size) with a dot for the reported input, the rules across, folds marked.

    The last slot is "now": the active view as the file left it. `request_selected(k)` says which
    slot the user stepped to; k == len(requests) means now.
    """

    request_selected = Signal(int)

    def follow(self, changed) -> None:
        """Show the slot the workspace shows after each change (app.undo.SessionEditor.display_changed): the request
        stepped to, or now after an action; repainted when next seen (a widget's update waits for that itself)."""
        changed.connect(self._follow)

    def _follow(self, changes: Changes | None) -> None:
        doc = self.document
        if doc is not None:
            self.current = doc.shown if doc.shown is not None else self.last_slot()
            self.update()

    def step_to(self, slot: int) -> None:
        if self.document is None:
            return
        slot = max(0, min(slot, self.last_slot()))
        if slot != self.current:
            self.current = slot
            self.zoom.show(slot, self.slots())
            self.update()
            self.request_selected.emit(slot)

    def zoom_by(self, step: int) -> None:
        """Zoom in (1), out (-1) or back to the whole session (0), the shown request kept in view."""
        # Not while a load counts: its bars are drawn by pixel column, unzoomed (_draw_counting).
        if self.document is not None and self.document.is_counted and self.zoom.zoom(step, self.slots(), self.current):
            self.update()

    def step_fold(self, direction: int) -> None:
        folds = self.fold_slots()
        ahead = [k for k in folds if (k - self.current) * direction > 0]
        if ahead:
            self.step_to(min(ahead) if direction > 0 else max(ahead))

    # -- input ---------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        key = event.key()
        moves: dict[int, int] = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1}  # event.key() is an int
        if key in moves:
            self.step_to(self.current + moves[key])
        elif key == Qt.Key.Key_Home:
            self.step_to(0)
        elif key == Qt.Key.Key_End:
            self.step_to(self.slots() - 1)
        elif key == Qt.Key.Key_N:
            self.step_fold(1)
        elif key == Qt.Key.Key_P:
            self.step_fold(-1)
        elif key in ZOOM_KEYS:
            self.zoom_by(ZOOM_KEYS[key])
        else:
            super().keyPressEvent(event)

    def wheelEvent(self, event: QWheelEvent) -> None:  # noqa: N802 (Qt override)
        if not wheel(self, event):
            super().wheelEvent(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        slot = self.slot_at(event.position().x())
        if slot is not None:
            self.setFocus()
            self.step_to(slot)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        slot = self.slot_at(event.position().x())
        if slot is None or self.document is None:
            return
        QToolTip.showText(event.globalPosition().toPoint(), self.tip_for(slot), self)

    def tip_for(self, slot: int) -> str:
        """What hovering over a slot says: the request's size as every panel shows it, and how it was reached."""
        assert self.document is not None
        if not self.document.is_counted:
            counts, requests = self.counting
            return f"measuring the requests: {len(counts):,} of {requests:,} counted; sizes come when all are measured"
        branch = self.branch
        if branch is not None and slot >= branch.start and slot - branch.start < len(branch.estimates):
            i = slot - branch.start
            change = branch.changes[i]
            folds = f"; {branch.folds[i]} fold passes kept before it" if i < len(branch.folds) and branch.folds[i] else ""
            tip = (
                f"request {slot}: what-if estimate {branch.estimates[i]:,} tokens, the original's {branch.original[slot]:,}"
                f" ({change:+,}){folds}"
            )
        elif branch is not None and slot > branch.start:
            tip = f"now in the original: {branch.original_now:,} tokens (the what-if stops at the last request)"
        elif slot == len(self.document.requests):
            doc = self.document
            tip = (
                f"now: the active view, predicted {doc.now_predicted:,} tokens (estimate {doc.now_size:,})"
                if doc.now_predicted
                else f"now: the active view, estimate {doc.now_size:,} tokens"
            )
        else:
            r = self.document.requests[slot]
            near = near_mark(self.document.session)  # the agent's rounded figures, or foldscope's estimate
            reported = f"{near}{r.reported_input:,}" if r.reported_input else "not recorded"
            share = f"; the next request repeats {r.prefix_share:.0%} of it" if r.prefix_share is not None else ""
            tip = (
                f"request {slot}: {plural(len(r.view), 'message')}, predicted {r.predicted:,} tokens, reported input "
                f"{reported}"
                + (f" (difference {r.difference()})" if r.reported_input else "")
                + f"; estimate {r.estimate:,} ({scaled_words(r.own_count, r.unseen_head, r.scale)}){share}"
                + unseen_head_note(r)
            )
            row = self.lane.row_at(slot)
            if row is not None and self.lane.shown():
                tip += f"\nCache: {lane_sentence(row)}\n{LEGEND}"
        return tip

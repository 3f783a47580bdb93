"""The timeline's zoom: how many times wider than the plot its slots are laid out, and which of them are in view."""

from __future__ import annotations

import math

from foldscope.app.qt import QAction, QKeySequence, QRectF, Qt

# Each step doubles the bars' width; a zoom stops where fewer than MIN_SLOTS requests would be in view.
MAX_LEVEL = 6  # at most 64 times: 450 requests at 1366 pixels get bars of about 2 px unzoomed, 7 at 4 times
MIN_SLOTS = 8
ZOOM_KEYS: dict[int, int] = {Qt.Key.Key_Plus: 1, Qt.Key.Key_Equal: 1, Qt.Key.Key_Minus: -1, Qt.Key.Key_0: 0}  # 0: back to the whole session
# The View menu's keys, as the timeline's heading shows them (one set, shown alike; focused, + - 0 work too).
ZOOM_IN, ZOOM_OUT, ZOOM_WHOLE = "Ctrl++", "Ctrl+-", "Ctrl+0"
ZOOM_HINT = f"{ZOOM_IN}/{ZOOM_OUT}, {ZOOM_WHOLE} all"  # short: the heading shares its line with the legend


class Zoom:
    """The zoom level and the first slot in view (a float: a slot can be cut at the plot's left edge)."""

    def __init__(self) -> None:
        self.level = 0
        self.first = 0.0

    def reset(self) -> None:
        self.level, self.first = 0, 0.0

    @property
    def factor(self) -> int:
        return 2**self.level

    def key(self) -> tuple[int, float]:
        """What the bars' cached layer depends on."""
        return self.level, self.first

    def visible(self, slots: int) -> float:
        return max(slots, 1) / self.factor

    def span(self, plot: QRectF, slots: int) -> QRectF:
        """Where every slot is laid out: the plot `factor` times wider, shifted so that `first` starts at its left."""
        width = plot.width() * self.factor
        return QRectF(plot.left() - self.first * width / max(slots, 1), plot.top(), width, plot.height())

    def in_view(self, slots: int) -> range:
        """The slots at least partly in view."""
        return range(max(int(self.first), 0), min(math.ceil(self.first + self.visible(slots)), slots))

    def _clamp(self, slots: int) -> None:
        self.first = min(max(self.first, 0.0), max(slots - self.visible(slots), 0.0))

    def show(self, slot: int, slots: int) -> bool:
        """Scroll just enough for `slot` to be whole in view; says whether anything moved."""
        before = self.first
        if slot < self.first:
            self.first = float(slot)
        elif slot + 1 > self.first + self.visible(slots):
            self.first = slot + 1 - self.visible(slots)
        self._clamp(slots)
        return self.first != before

    def zoom(self, step: int, slots: int, keep: int) -> bool:
        """Zoom in (step 1), out (-1) or back to the whole session (0), slot `keep` where it was on the plot (the
        shown request stays in view); says whether anything changed."""
        level = 0 if step == 0 else self.level + step
        while level > 0 and slots / 2**level < MIN_SLOTS:
            level -= 1
        level = min(max(level, 0), MAX_LEVEL)
        if level == self.level:
            return False
        where = (keep + 0.5 - self.first) / self.visible(slots)  # its centre's place on the plot, 0 to 1
        self.level = level
        self.first = keep + 0.5 - min(max(where, 0.0), 1.0) * self.visible(slots)
        self._clamp(slots)
        self.show(keep, slots)
        return True

    def words(self) -> str:
        """What the heading adds while zoomed in."""
        return f"  ·  zoomed ×{self.factor}: {ZOOM_HINT}" if self.level else ""


def wheel(timeline, event) -> bool:
    """Ctrl+wheel zooms about the shown request; the wheel alone, zoomed in, scrolls a tenth of the view a notch.
    Says whether the event was taken."""
    notches = event.angleDelta().y() / 120 or event.angleDelta().x() / 120
    if not notches:
        return False
    zoom = timeline.zoom
    if event.modifiers() & Qt.KeyboardModifier.ControlModifier:
        timeline.zoom_by(1 if notches > 0 else -1)
    elif zoom.level:
        slots = timeline.slots()
        zoom.first -= notches * max(zoom.visible(slots) / 10, 1)
        zoom._clamp(slots)
        timeline.update()
    else:
        return False
    event.accept()
    return True


def add_zoom_menu(menu, parent, timeline) -> None:
    """View > Timeline zoom: in, out and the whole session, window-wide (the timeline's own +/− and 0 need its focus)."""
    sub = menu.addMenu("Timeline &zoom")
    tip = "The timeline's bars wider or narrower, the shown request kept in view (Ctrl+wheel over the timeline)"
    for text, key, step in (("Zoom &in", ZOOM_IN, 1), ("Zoom &out", ZOOM_OUT, -1), ("&Whole session", ZOOM_WHOLE, 0)):
        action = QAction(text, parent)
        action.setShortcut(QKeySequence(key))
        action.setToolTip(tip)
        action.setStatusTip(tip)
        action.triggered.connect(lambda checked=False, step=step: timeline.zoom_by(step))
        sub.addAction(action)

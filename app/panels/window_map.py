"""The window map: the shown active view as blocks proportional to tokens, the full record beneath, rules across."""

from __future__ import annotations

from foldscope.app.follows_changes import FollowsChanges, view_changed
from foldscope.app.highlight import plain_tip
from foldscope.app.panels.window_map_blocks import LEAD_WORDS
from foldscope.app.panels.window_map_paint import PaintedMap
from foldscope.app.qt import (
    QKeyEvent,
    QMouseEvent,
    Qt,
    QToolTip,
    Signal,
)
from foldscope.core.readout.document import kind_label
from foldscope.core.readout.head_split import sources_for
from foldscope.core.readout.marks_facts import Mark, cache_marks, mark_text  # noqa: F401 (Mark: re-exported for the panels)


class WindowMap(PaintedMap):
    """Two bars at one scale: the active view shown (top) and the full record (below, out rows faded).

    Clicking a block emits `message_clicked(index)`; with focus, ←/→ move through the view's blocks.
    """

    message_clicked = Signal(int)

    def follow(self, changed) -> None:
        """Redraw after each change of the view shown, the record or the policy (app.undo.SessionEditor.display_changed):
        at once while the map can be seen, else when it is shown."""
        self.follower = FollowsChanges(self, view_changed, lambda changes: self.show_marks())
        self.follower.follow(changed)

    def show_marks(self) -> None:
        """The cache marks of the view shown, as the compiler places them (core.readout.marks_facts), and a repaint."""
        if self.document is not None:
            self.set_marks(*cache_marks(self.document, self.document.view))

    # -- input ---------------------------------------------------------------------------

    def mousePressEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        index = self.block_at(event.position())
        if index is not None:
            self.setFocus()
            self.message_clicked.emit(index)

    def mouseMoveEvent(self, event: QMouseEvent) -> None:  # noqa: N802 (Qt override)
        index = self.block_at(event.position())
        mark = self.mark_at(event.position()) if self.document is not None else None
        if mark is not None:
            QToolTip.showText(event.globalPosition().toPoint(), f"cache mark: {mark_text(mark)}", self)
            return
        lead = (
            None
            if index is not None or self.document is None
            else next((name for name, rect in self.lead_rects() if rect.contains(event.position())), None)
        )
        if lead is not None:
            tokens = dict(self.lead_parts())[lead]
            tip = f"{LEAD_WORDS[lead]} · {round(tokens):,} tokens"
            if (
                lead == "unseen_head" and self.document is not None
            ):  # its parts where the machine or a --head file names them (the Composition tab's)
                split = sources_for(self.document.session).split(round(tokens))
                tip += "".join(f"\n  {p.name}: {p.tokens:,}" for p in split if len(split) > 1)
            QToolTip.showText(event.globalPosition().toPoint(), plain_tip(tip), self)
            return
        if index is None or self.document is None:
            QToolTip.hideText()
            return
        doc = self.document
        where = "in the active view" if doc.in_view(index) else f"out: {doc.out_reason.get(index, '')}"
        tip = f"#{index} {kind_label(doc, index)} · {doc.size_label(index)} · {where}"
        for mark in self.marks:
            if mark.index == index or (mark.index is None and index == self._last_system()):
                tip += f"\ncache mark at its end: {mark_text(mark)}"
        QToolTip.showText(event.globalPosition().toPoint(), plain_tip(tip), self)

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802 (Qt override)
        doc = self.document
        moves: dict[int, int] = {Qt.Key.Key_Left: -1, Qt.Key.Key_Right: 1}  # event.key() is an int
        if doc is None or event.key() not in moves or doc.view_size == 0:
            super().keyPressEvent(event)
            return
        position = doc.view_position.get(self.selected, -1) if self.selected is not None else -1
        position = max(0, min(position + moves[event.key()], doc.view_size - 1))
        self.message_clicked.emit(doc.view_index(position))

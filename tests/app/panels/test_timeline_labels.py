"""The timeline's fold and rule labels read: no fold line or bar runs through their letters (issue 17).

A Claude Code session with 34 compactions at 1366x768 drew each "compaction" label where the next fold's dashed
line, in the same colour, crossed it. The session here folds at every other request, so at this width every label
has an unlabelled fold's line passing through it (the test checks that premise)."""

from __future__ import annotations

import math

import pytest

from foldscope.app.panels.timeline import Timeline
from foldscope.app.qt import QApplication, QColor, QImage, QPainter, Qt
from foldscope.app.theme import apply_theme, panel_colour, rule_colour
from foldscope.core.model.session import Usage
from foldscope.core.readout.opening import build_document
from tests.core.fold_sessions import text_of
from tests.core.forensics.traces import Trace, rounds


def folding_session(requests: int = 40):
    """A lionagi-shaped session whose view is compacted to a note before every other request (each note the
    source's own compaction, as a reader records it: a `compaction` event naming the note)."""
    t = Trace()
    view = rounds(t, 2, chars=600)
    events = []
    for k in range(requests):
        view += [t.text("assistant", 200, 50 + k), *t.call("Read", {"file_path": f"/r/m{k}.py"}, text_of(1500, 90 + k))]
        if k and k % 2 == 0:
            note = t.add("note", {"assistant_response": f"Summary of the work up to request {k}."}, {"context_first_index": 2})
            events.append({"kind": "compaction", "note_id": note.id})
            view = [view[0], note, *view[-3:]]
        t.request(view, float(k), Usage(input=10, cache_read=900 * (k % 2 + 1)))
    session = t.session(view)
    session.events = events
    return session


@pytest.fixture(scope="module")
def folding_document():
    return build_document(folding_session(), "made-in-test.json")


def glyph_mask(timeline: Timeline, size, label: str, at) -> QImage:
    """The pixels the label's letters alone cover, drawn as the timeline draws them, one pixel wider each way."""
    image = QImage(size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setFont(timeline.font())
    painter.setPen(QColor("black"))
    for dx in (-1, 0, 1):
        for dy in (-1, 0, 1):
            painter.drawText(at.x() + dx, at.y() + dy, label)
    painter.end()
    return image


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_no_fold_line_or_bar_shows_inside_a_fold_or_rule_label(qtbot, folding_document, theme):
    app = QApplication.instance()
    apply_theme(app, theme)
    try:
        timeline = Timeline()
        qtbot.addWidget(timeline)
        timeline.resize(800, 170)
        timeline.set_document(folding_document)
        timeline.show()
        qtbot.waitExposed(timeline)
        image = timeline.grab().toImage()
        background = panel_colour()
        folds = [b[:3] for b in timeline.label_boxes if b[1] in ("fold", "compaction")]
        assert len(folds) >= 3 and any(label != "fold" for _, label, _ in folds)
        plot = timeline._plot()
        slot_width = plot.width() / timeline.slots()
        lines = [plot.left() + k * slot_width for k in timeline.fold_slots()]
        crossed = 0
        for box, label, at, _ in timeline.label_boxes:
            mask = glyph_mask(timeline, image.size(), label, at)
            left, right = math.ceil(box.left()) + 1, math.floor(box.right()) - 1
            top, bottom = math.ceil(box.top()) + 1, math.floor(box.bottom()) - 1
            assert right > left and bottom > top
            for x in range(left, right):
                for y in range(top, bottom):
                    if mask.pixelColor(x, y).alpha() == 0:  # not a letter: the panel's own colour, nothing else
                        assert image.pixelColor(x, y) == background, (label, x, y, image.pixelColor(x, y).name())
            crossed += any(left + 1 < x < right - 1 for x in lines)
        assert crossed >= 3  # the premise: unlabelled folds' lines run where the labels are
        # The lines are drawn where no label is: the colour of the folds is on screen below the labels.
        tier = rule_colour("tier")
        below = int(max(box.bottom() for box, _, _ in folds)) + 4
        assert any(image.pixelColor(int(x), below) == tier for x in lines)
    finally:
        apply_theme(app, "light")

"""Issue 45: the labs' windows fit the screen they open on (the Replay lab asked for 1500x1000 on any screen)."""

from __future__ import annotations

import pytest

from foldscope.app.lab.replay import ReplayView
from foldscope.app.lab.screen_fit import FRAME
from foldscope.app.lab.tune import TuneView


@pytest.mark.parametrize("view_class", [ReplayView, TuneView])
def test_a_lab_opens_no_larger_than_its_screens_free_part(qtbot, view_class):
    view = view_class()
    qtbot.addWidget(view)
    free = view.screen().availableGeometry()  # the offscreen platform's: 800x800, smaller than either asks
    assert free.height() < 1000
    assert view.width() <= free.width() - FRAME[0] and view.height() <= free.height() - FRAME[1]


def test_at_1366x768_after_a_replay_the_labs_totals_show_8_rows(qtbot, corpus_dev):
    from foldscope.core.formats import load_session

    view = ReplayView()
    qtbot.addWidget(view)
    view.resize(1366, 768 - FRAME[1])  # a laptop's screen less the window's frame
    view.show()
    qtbot.waitExposed(view)
    view.set_session(load_session(corpus_dev / "claude_code" / "session-196820da.jsonl"), None)
    with qtbot.waitSignal(view.replay_finished, timeout=120_000):
        view.run_button.click()
    table = view.table
    assert table.model().rowCount() >= 8 and len(view.heading.text()) > 400  # its long heading too
    heading = view.heading
    qtbot.waitUntil(lambda: heading.height() >= heading.heightForWidth(heading.width()) and table.rowHeight(0) > 0)  # laid out
    assert table.viewport().height() / table.rowHeight(0) >= 8
    assert view.size().toTuple() == (1366, 768 - FRAME[1])  # and no minimum pushed the window past the screen

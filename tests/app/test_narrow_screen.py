"""At 1366x768, the smallest screen the README promises, the window shows what it shows at 1600x1000, legibly."""

from __future__ import annotations

import pytest

from foldscope.app.panels.cost import WRITE_CAUSES
from foldscope.app.qt import QApplication, QSize
from foldscope.core.readout.cache_lane import BANDS


def at_1366x768(qtbot, window, policy: bool) -> None:
    """The window laid out as a first start on a 1366x768 screen lays it out, the Policy dock open or not."""
    window.sizing.lay_out(QSize(1366, 768))
    if policy:
        window.session_actions.policy_dock.show()
    qtbot.waitUntil(lambda: window.size().toTuple() == (1366, 768))
    QApplication.processEvents()  # the layout settles the dock in posted events
    assert window.size().toTuple() == (1366, 768)  # nothing pushed the window past the screen


@pytest.mark.parametrize("policy", [False, True], ids=["no dock", "policy dock"])
def test_at_1366x768_every_side_tab_title_is_shown_whole(qtbot, demo_window, policy):
    """A new user saw "Ins…" and "L…" with the Policy dock open: a tab whose title cannot be read is one nobody finds."""
    window = demo_window
    at_1366x768(qtbot, window, policy)
    bar = window.side_tabs.tabBar()
    metrics = bar.fontMetrics()
    for i in range(bar.count()):
        title = bar.tabText(i).replace("&", "")
        assert bar.tabRect(i).width() >= metrics.horizontalAdvance(title) + 8, title  # its text and a little margin
        assert bar.tabRect(i).right() <= bar.width(), title  # and inside the bar, not cut off at its end


@pytest.mark.parametrize("policy", [False, True], ids=["no dock", "policy dock"])
def test_at_1366x768_the_cache_lane_shows_its_legend_whole_or_says_where_the_rest_is(qtbot, window, corpus_dev, policy):
    """At 1366x768 the lane's coloured bars had no legend: a new user could not tell a rewrite from an expiry."""
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(corpus_dev / "claude_code" / "session-196820da.jsonl")
    qtbot.waitUntil(lambda: window.task is None)
    at_1366x768(qtbot, window, policy)
    timeline = window.timeline
    assert timeline.lane.shown()
    timeline.grab()  # paints it
    drawn = timeline.lane.drawn
    words = [w for w, _, _ in drawn.legend]
    assert words[:3] == ["idle under 5 min", "idle past 5 min", "idle past 1 h"]
    assert "rewrite write" in words and "expired write" in words  # the causes a user asks about first
    assert drawn.left_off == 0 or drawn.left_off + len(words) == len(BANDS) + len(
        WRITE_CAUSES
    )  # every item, or the line says more are a hover away
    assert timeline._plot().height() >= 40  # and the plot above it can still be read

"""At 1366x768, the smallest screen the README promises, the window shows what it shows at 1600x1000, legibly."""

from __future__ import annotations

import pytest

from foldscope.app.qt import QApplication, QSize


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

"""Tab bars whose titles are read whole: no eliding, no scroll arrows, the tab widget never narrower than its titles."""

from __future__ import annotations

from foldscope.app.qt import Qt, QTabWidget


def whole_tabs(tabs: QTabWidget) -> None:
    """Tabs whose titles are always read whole, none hidden behind scroll arrows: the tab widget is never narrower
    than its titles, so a splitter beside a dock takes the room from its neighbours. A new user at 1366 pixels with
    the Policy dock open read "Ins…" and "L…" and never found the Library: an elided side tab is one nobody finds."""
    bar = tabs.tabBar()
    bar.setUsesScrollButtons(False)
    bar.setElideMode(Qt.TextElideMode.ElideNone)  # QTabBar's least width is then every title whole
    bar.setExpanding(False)
    for i in range(tabs.count()):  # named on hover as the squeezable tabs are
        tabs.setTabToolTip(i, tabs.tabText(i).replace("&", ""))

"""Menu helpers for the main window: every panel and every step has a key, so the window works without a mouse."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.panels.lists import MessageList
from foldscope.app.qt import QAction, QKeySequence, QMenu, Qt, QTabWidget, QWidget


def add_action(
    menu: QMenu, parent: QWidget, text: str, key: str | QKeySequence.StandardKey | None, slot: Callable[[], object], tip: str = ""
) -> QAction:
    """An action in `menu` (its shortcut live while `parent` is) that calls `slot`."""
    action = QAction(text, parent)
    if key is not None:
        action.setShortcut(QKeySequence(key))
    if tip:
        action.setToolTip(tip)
        action.setStatusTip(tip)
    action.triggered.connect(lambda checked=False: slot())
    menu.addAction(action)
    return action


def focus_filter(lists: tuple[MessageList, MessageList], focused: QWidget | None) -> None:
    """The text filter of the list that has focus, else the active view's (the second)."""
    record_list, view_list = lists
    chosen = record_list if focused is not None and record_list.isAncestorOf(focused) else view_list
    chosen.text_filter.setFocus()
    chosen.text_filter.selectAll()


def squeezable_tabs(tabs: QTabWidget) -> None:
    """Tabs that shorten their titles (each whole in its tooltip) when the panel is narrow, never hiding one behind
    scroll arrows: with a dock open at 1366 pixels the last tabs were out of sight."""
    bar = tabs.tabBar()
    bar.setUsesScrollButtons(False)
    bar.setElideMode(Qt.TextElideMode.ElideRight)
    bar.setExpanding(False)
    for i in range(tabs.count()):
        tabs.setTabToolTip(i, tabs.tabText(i).replace("&", ""))

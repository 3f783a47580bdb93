"""The main window's menus: every panel and every step has a key, so the window works without a mouse."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from foldscope.app.qt import QAction, QKeySequence

if TYPE_CHECKING:
    from foldscope.app.window import MainWindow


def _add(menu, window: MainWindow, text: str, key: str | QKeySequence.StandardKey, slot: Callable[[], object]) -> QAction:
    action = QAction(text, window, shortcut=QKeySequence(key))
    action.triggered.connect(lambda checked=False: slot())
    menu.addAction(action)
    return action


def focus_filter(window: MainWindow) -> None:
    """The text filter of the list that has focus, else the active view's."""
    chosen = window.record_list if window.record_list.isAncestorOf(window.focusWidget()) else window.view_list
    chosen.text_filter.setFocus()
    chosen.text_filter.selectAll()


def show_side(window: MainWindow, widget, focus=None) -> None:
    window.side_tabs.setCurrentWidget(widget)
    (focus or widget).setFocus()


def build_menus(window: MainWindow) -> None:
    bar = window.menuBar()
    file_menu = bar.addMenu("&File")
    window.open_action = _add(file_menu, window, "&Open…", QKeySequence.StandardKey.Open, window.open_dialog)
    window.recent_menu = file_menu.addMenu("Open &Recent")
    window._rebuild_recent_menu()
    file_menu.addSeparator()
    _add(file_menu, window, "&Quit", QKeySequence.StandardKey.Quit, window.close)

    view_menu = bar.addMenu("&View")
    for text, key, widget in (
        ("Full &record", "Ctrl+1", window.record_list.table),
        ("Active &view", "Ctrl+2", window.view_list.table),
        ("&Inspector", "Ctrl+3", window.inspector.tabs),
        ("&Timeline", "Ctrl+4", window.timeline),
        ("Window &map", "Ctrl+5", window.window_map),
        ("&Folds", "Ctrl+6", window.fold_panel.table),
    ):
        _add(view_menu, window, text, key, widget.setFocus)
    view_menu.addSeparator()
    _add(view_menu, window, "Re&quest panel", "Ctrl+R", lambda: show_side(window, window.request_panel))
    _add(view_menu, window, "&Composition (what is eating the context)", "Ctrl+7",
         lambda: show_side(window, window.composition_panel, window.composition_panel.tabs))
    _add(view_menu, window, "&Library", "Ctrl+L",
         lambda: show_side(window, window.library_panel, window.library_panel.session_table))
    view_menu.addSeparator()
    _add(view_menu, window, "Filter the &list…", "Ctrl+F", lambda: focus_filter(window))
    _add(view_menu, window, "&Search all sessions…", "Ctrl+Shift+F",
         lambda: show_side(window, window.library_panel, window.library_panel.search_box))

    go_menu = bar.addMenu("&Go")
    timeline = window.timeline
    for text, key, slot in (
        ("&Previous request", "Alt+Left", lambda: timeline.step_to(timeline.current - 1)),
        ("&Next request", "Alt+Right", lambda: timeline.step_to(timeline.current + 1)),
        ("Previous &fold", "Alt+Shift+Left", lambda: timeline.step_fold(-1)),
        ("Next f&old", "Alt+Shift+Right", lambda: timeline.step_fold(1)),
        ("&Now (the active view)", "Alt+End", lambda: timeline.step_to(timeline.slots() - 1)),
    ):
        _add(go_menu, window, text, key, slot)

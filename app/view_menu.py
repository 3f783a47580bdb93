"""The View menu: a key for every panel and side tab, the list filter, search, the timeline's zoom, follow, theme, layout."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from foldscope.app.menus import add_action, focus_filter
from foldscope.app.panels.composition import CompositionPanel
from foldscope.app.panels.cost import CostPanel
from foldscope.app.panels.library import LibraryPanel
from foldscope.app.panels.lists import MessageList
from foldscope.app.panels.request import RequestPanel
from foldscope.app.panels.timeline import Timeline
from foldscope.app.panels.timeline_zoom import add_zoom_menu
from foldscope.app.qt import QAction, QMainWindow, QMenu

Focus = tuple[str, str, Callable[[], object]]  # an item's text, its key, and what it gives the keyboard to


def fill_view_menu(
    menu: QMenu,
    window: QMainWindow,
    focus: Sequence[Focus],
    show_side: Callable[..., None],
    sides: tuple[RequestPanel, CompositionPanel, LibraryPanel, CostPanel],
    lists: tuple[MessageList, MessageList],
    timeline: Timeline,
    follow: QAction,
) -> QMenu:
    """The View menu's items down to Follow; returns the Theme submenu, added last but one, for the theme switch."""
    for text, key, slot in focus:
        add_action(menu, window, text, key, slot)
    menu.addSeparator()
    request, composition, library, cost = sides
    add_action(menu, window, "Re&quest panel", "Ctrl+R", lambda: show_side(request))
    add_action(menu, window, "&Composition (what is eating the context)", "Ctrl+7", lambda: show_side(composition, composition.tabs))
    add_action(menu, window, "&Library", "Ctrl+L", lambda: show_side(library, library.session_table))
    add_action(menu, window, "C&ost (the bill by cause)", "Ctrl+8", lambda: show_side(cost, cost.tabs))
    menu.addSeparator()
    add_action(menu, window, "Filter the &list…", "Ctrl+F", lambda: focus_filter(lists, window.focusWidget()))
    add_action(menu, window, "&Search all sessions…", "Ctrl+Shift+F", lambda: show_side(library, library.search_box))
    add_zoom_menu(menu, window, timeline)
    menu.addSeparator()
    menu.addAction(follow)
    return menu.addMenu("T&heme")

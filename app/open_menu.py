"""File menu's ways to open a session: a file chosen, a recent one, an agent's session on this machine, the demo."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from foldscope.app import dialogs
from foldscope.app.menus import add_action
from foldscope.app.qt import QAction, QKeySequence, QMenu, QWidget
from foldscope.app.recent_files import RecentFiles
from foldscope.app.settings import WindowSettings
from foldscope.app.worker import run_task
from foldscope.core.formats.demo import demo_path
from foldscope.core.readout.document import Document


class OpenMenu:
    """The File menu's opening items; each chosen file goes to the window's `open_path(path)`.

    The window hands in its settings (the recent files), which document is shown (`current`: Open starts in its
    folder) and how to open a file; it calls `fill_menu` first in its File menu and `recent.add` when a session loads.
    """

    def __init__(
        self, parent: QWidget, settings: WindowSettings, current: Callable[[], Document | None], open_path: Callable[[str], object]
    ) -> None:
        self.parent_widget, self.settings, self.current, self.open_path = parent, settings, current, open_path
        self.open_action: QAction | None = None  # File > Open, once the menu is built
        self.recent: RecentFiles | None = None  # File > Open Recent, once the menu is built

    def fill_menu(self, menu: QMenu) -> RecentFiles:
        parent = self.parent_widget
        self.open_action = add_action(menu, parent, "&Open…", QKeySequence.StandardKey.Open, self.open_dialog)
        self.recent = RecentFiles(parent, self.settings, menu.addMenu("Open &Recent"), self.open_path)
        tip = "The Claude Code, Codex, pi, Gemini CLI and Qwen Code sessions on this machine, newest first"
        add_action(menu, parent, "Open &Agent Session…", "Ctrl+Alt+O", self.open_agent_session, tip)
        tip = "The session that ships with foldscope: a fold, a clipped copy and cache marks to look at"
        add_action(menu, parent, "Open the &Demo Session", None, lambda: self.open_path(str(demo_path())), tip)
        return self.recent

    def open_dialog(self) -> None:
        doc = self.current()
        path = dialogs.open_session_path(self.parent_widget, str(Path(doc.path).parent) if doc else "")
        if path:
            self.open_path(path)

    def open_agent_session(self) -> None:
        """Choose one of the agent sessions on this machine (core.formats.discover) and open it."""
        path = dialogs.ask_agent_session(self.parent_widget, run=run_task)  # it reads the sessions in the worker while open
        if path:
            self.open_path(path)

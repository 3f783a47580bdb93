"""File > Open Recent: the sessions opened last, from the settings, and clearing them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from foldscope.app.highlight import plain_tip
from foldscope.app.qt import QAction, QMenu, QObject, QWidget
from foldscope.app.settings import WindowSettings


class RecentFiles(QObject):
    """Keeps the Open Recent `menu` in step with the settings' list; a click opens the file with `open_path(path)`."""

    def __init__(self, parent: QWidget, settings: WindowSettings, menu: QMenu, open_path: Callable[[str], object]) -> None:
        super().__init__(parent)
        self.parent_widget, self.settings, self.menu, self.open_path = parent, settings, menu, open_path
        self.rebuild()

    def add(self, path: str) -> None:
        """A session opened: first in the list."""
        self.settings.add_recent_file(path)
        self.rebuild()

    def rebuild(self) -> None:
        self.menu.clear()
        files = self.settings.recent_files()
        for number, path in enumerate(files, start=1):
            action = QAction(f"&{number} {Path(path).name}", self.parent_widget)
            action.setToolTip(plain_tip(path))
            action.triggered.connect(lambda checked=False, p=path: self.open_path(p))
            self.menu.addAction(action)
        if files:
            self.menu.addSeparator()
        clear = QAction("&Clear Recent Files", self.parent_widget)
        clear.triggered.connect(self.clear)
        clear.setEnabled(bool(files))
        self.menu.addAction(clear)

    def clear(self) -> None:
        self.settings.clear_recent_files()
        self.rebuild()

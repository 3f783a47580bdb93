"""View > Theme: light, dark or the system's, applied to the application, remembered, and followed as it switches."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.qt import QAction, QActionGroup, QMenu, QObject, QWidget
from foldscope.app.settings import WindowSettings
from foldscope.app.theme import THEMES, apply_theme, follow_system_theme, gui_app


class ThemeSwitch(QObject):
    """Holds the theme chosen and its `menu` (one checkable item per theme); `repaint()` redraws what carries its
    own colours after the palette changed."""

    def __init__(self, parent: QWidget, settings: WindowSettings, menu: QMenu, repaint: Callable[[], None]) -> None:
        super().__init__(parent)
        self.settings, self.menu, self.repaint = settings, menu, repaint
        self.theme = "system"
        self.actions = QActionGroup(self)
        for name in THEMES:
            action = QAction(name.capitalize(), parent, checkable=True)
            action.setData(name)
            action.triggered.connect(lambda checked=False, n=name: self.set_theme(n))
            action.setChecked(name == self.theme)
            self.actions.addAction(action)
            menu.addAction(action)
        follow_system_theme(self._system_theme_changed)

    def set_theme(self, name: str, remember: bool = True) -> None:
        """Light, dark, or follow the system (and its switches while the window is open); `remember` keeps it."""
        self.theme = name
        app = gui_app()
        if app is not None:  # always, for a window: a QApplication is made before any
            apply_theme(app, name)
        for action in self.actions.actions():
            action.setChecked(action.data() == name)
        if remember:
            self.settings.set_theme(name)
        self.repaint()

    def _system_theme_changed(self, scheme=None) -> None:
        if self.theme == "system":
            self.set_theme("system", remember=False)

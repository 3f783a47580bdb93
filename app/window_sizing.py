"""The window's size, splitters and docks: the first size on a screen, kept between runs, View > Reset layout, the Folds dock's height."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.panels.cache_lane import LEAN_FROM
from foldscope.app.panels.window_map_blocks import LEGEND_FROM
from foldscope.app.qt import QApplication, QDockWidget, QMainWindow, QRect, QSize, QSplitter, Qt
from foldscope.app.settings import WindowSettings

FIRST_SIZE = (1600, 1000)  # the first window on a screen that has room for it
FRAME = (0, 40)  # what the window manager's frame and title bar take around the window, allowed for when sizing


class WindowSizing:
    """Sizes the window and its splitters on first start, keeps them (and the docks' places) in the settings.

    The window hands in itself, its settings, its splitters by settings key (main, lists, top), the folds dock
    (shown and raised on reset) and the docks a reset hides; the docks' places as made are the layout reset restores.
    """

    def __init__(
        self,
        window: QMainWindow,
        settings: WindowSettings,
        splitters: dict[str, QSplitter],
        folds_dock: QDockWidget,
        hidden_docks: tuple[QDockWidget, ...],
    ) -> None:
        self.window, self.settings, self.splitters = window, settings, splitters
        self.folds_dock, self.hidden_docks = folds_dock, hidden_docks
        self.default_layout = window.saveState()  # View > Reset layout puts the docks back here

    def restore(self) -> None:
        """The window, docks and splitters as the user left them, else at their first sizes for this screen."""
        window = self.window
        geometry = self.settings.state("window/geometry")
        if geometry is not None:
            window.restoreGeometry(geometry)
        else:
            window.resize(self.first_size())
            window.move(self.available_geometry().topLeft())
        state = self.settings.state("window/state")
        if state is not None:
            window.restoreState(state)  # docks where the user left them
        defaults = self.splitter_defaults()
        for key, splitter in self.splitters.items():
            state = self.settings.state(key)
            if state is not None:
                splitter.restoreState(state)
            else:
                splitter.setSizes(defaults[splitter])

    def save(self) -> None:
        """The window, docks and splitters kept for the next run."""
        self.settings.set_state("window/geometry", self.window.saveGeometry())
        self.settings.set_state("window/state", self.window.saveState())
        for key, splitter in self.splitters.items():
            self.settings.set_state(key, splitter.saveState())
        self.settings.sync()

    def reset(self) -> None:
        """The docks where foldscope first puts them, the splitters at their first sizes, the first window size."""
        self.window.restoreState(self.default_layout)
        for dock in self.hidden_docks:
            dock.hide()
        self.folds_dock.show()
        self.folds_dock.raise_()
        self.lay_out(self.first_size())

    def lay_out(self, size: QSize) -> None:
        """The window at `size` with the splitters at their first sizes for it."""
        self.window.resize(size)
        for splitter, sizes in self.splitter_defaults().items():
            splitter.setSizes(sizes)

    def folds_height(self, fitting: Callable[[int], int], rows: int) -> int:
        """The Folds dock's height for up to `rows` fold rows (`fitting(n)` its height for n), fewer where the window
        is short: the dock sits under the timeline and the map, and at 1366x768 five folds and a two-line note took
        their pixels from them (timeline 105, map 122), so the cache lane and the map both dropped their legends."""
        room = self._folds_room()
        while rows > 1 and fitting(rows) > room:
            rows -= 1  # the table scrolls to the rest; its heading says how many folds there are
        return fitting(rows)

    def _folds_room(self) -> float:
        """The most the Folds dock may take and leave the timeline its lane's legend (LEAN_FROM), the map its legend
        (LEGEND_FROM) and the lists and side tabs their least height; unbounded where the dock is not under them."""
        dock, window = self.folds_dock, self.window
        top, rest = self.splitters["splitter/top"], self.splitters["splitter/main"]  # rest: the lists and side tabs
        if not (window.isVisible() and dock.isVisible()) or dock.isFloating():
            return float("inf")  # not laid out yet, or not sharing the column with the timeline
        if window.dockWidgetArea(dock) != Qt.DockWidgetArea.BottomDockWidgetArea:
            return float("inf")
        margins = top.contentsMargins()
        # The timeline and the map keep what they have above those heights (the first layout gives the timeline 124):
        # the splitter takes what the dock wants from the lists first, then from all three at once, so a dock that
        # counted the timeline's spare pixels took two of the map's legend at 1366x768 too.
        timeline, window_map = top.sizes()[:2]
        least = (
            max(LEAN_FROM, timeline)
            + max(LEGEND_FROM, window_map)
            + rest.minimumSizeHint().height()
            + (top.count() - 1) * top.handleWidth()
            + margins.top()
            + margins.bottom()
        )
        return top.height() + dock.height() - least

    def available_geometry(self) -> QRect:
        """The part of the window's screen (the primary one before it is shown) that panels and docks may cover."""
        screen = self.window.screen() or QApplication.primaryScreen()
        return screen.availableGeometry() if screen is not None else QRect(0, 0, *FIRST_SIZE)

    def first_size(self) -> QSize:
        """The size foldscope first opens at: FIRST_SIZE, or the screen's free part less the frame when smaller."""
        free = self.available_geometry()
        return QSize(min(FIRST_SIZE[0], free.width() - FRAME[0]), min(FIRST_SIZE[1], free.height() - FRAME[1]))

    def splitter_defaults(self) -> dict[QSplitter, list[int]]:
        # On a short screen the timeline and the map keep what they need to be read (the map its legend) and the
        # lists and side tabs get the rest; on a tall one the timeline grows.
        width, height = self.window.width(), self.window.height()
        timeline = 170 if height >= 900 else 124
        rest = max(height - timeline - LEGEND_FROM - 200, 300)
        side = max(560, width * 2 // 5)
        main, lists, top = (self.splitters[key] for key in ("splitter/main", "splitter/lists", "splitter/top"))
        return {main: [width - side, side], lists: [500, 500], top: [timeline, LEGEND_FROM, rest]}

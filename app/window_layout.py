"""Where the window's panels sit: the timeline and map above the lists and side tabs, the bars above, the folds dock."""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.app.dock_title import DockTitle
from foldscope.app.panels.folds import FoldPanel
from foldscope.app.qt import QDockWidget, QMainWindow, QSplitter, Qt, QVBoxLayout, QWidget


@dataclass(frozen=True)
class PanelLayout:
    """What the window places into later: its splitters (by settings key), the bars' column, the folds dock."""

    splitters: dict[str, QSplitter]
    column: QVBoxLayout  # the bars (the library's, the what-if's, the reader's warnings) above the panels
    folds_dock: QDockWidget  # the fold preview and the pager open as tabs beside it


def _splitter(name: str, orientation: Qt.Orientation, *widgets: QWidget) -> QSplitter:
    splitter = QSplitter(orientation)
    splitter.setObjectName(name)
    for widget in widgets:
        splitter.addWidget(widget)
    splitter.setChildrenCollapsible(False)
    return splitter


def lay_out_panels(
    window: QMainWindow,
    lists: tuple[QWidget, QWidget],
    side_tabs: QWidget,
    timeline: QWidget,
    window_map: QWidget,
    bars: tuple[QWidget, ...],
    fold_panel: FoldPanel,
) -> PanelLayout:
    """The panels placed in `window`: the lists side by side, the side tabs beside them, the timeline and map above,
    the bars above all, and the fold panel in a dock at the bottom."""
    lists_splitter = _splitter("listsSplitter", Qt.Orientation.Horizontal, *lists)
    main = _splitter("mainSplitter", Qt.Orientation.Horizontal, lists_splitter, side_tabs)
    main.setStretchFactor(0, 3)
    main.setStretchFactor(1, 2)
    top = _splitter("topSplitter", Qt.Orientation.Vertical, timeline, window_map, main)
    top.setStretchFactor(2, 1)
    top.setContentsMargins(6, 4, 6, 0)
    central = QWidget()
    column = QVBoxLayout(central)
    column.setContentsMargins(0, 0, 0, 0)
    column.setSpacing(2)
    for bar in bars:
        column.addWidget(bar)
    column.addWidget(top, 1)
    window.setCentralWidget(central)
    folds_dock = QDockWidget("Folds", window)
    folds_dock.setObjectName("foldsDock")
    folds_dock.setWidget(fold_panel)
    # The panel's heading says "Folds" and what they are: it is the dock's title bar, not a second line under one.
    folds_dock.setTitleBarWidget(DockTitle(folds_dock, fold_panel.heading))
    window.addDockWidget(Qt.DockWidgetArea.BottomDockWidgetArea, folds_dock)
    return PanelLayout({"splitter/main": main, "splitter/lists": lists_splitter, "splitter/top": top}, column, folds_dock)

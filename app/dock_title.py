"""A dock's title bar that is a panel's own heading: one line saying the panel's name and what it holds, with the
float and close buttons a native title bar has, in place of a title bar and a heading under it saying the name twice."""

from __future__ import annotations

from foldscope.app.qt import QDockWidget, QHBoxLayout, QLabel, QSizePolicy, QStyle, QToolButton, QWidget


class DockTitle(QWidget):
    """`heading` and the dock's float and close buttons; a drag or a double click on the heading moves or docks the dock
    as on a native title bar (the label ignores the mouse, so the dock gets it). The tabs of docks tabbed together
    still read the dock's window title."""

    def __init__(self, dock: QDockWidget, heading: QLabel) -> None:
        super().__init__(dock)
        style = dock.style()
        margin = style.pixelMetric(QStyle.PixelMetric.PM_DockWidgetTitleMargin, None, dock)
        row = QHBoxLayout(self)
        row.setContentsMargins(margin + 2, margin, margin, margin)
        row.setSpacing(2)
        # The heading may be cut at the right rather than hold the dock (and the window) wider than the screen.
        heading.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        row.addWidget(heading, 1)
        self.float_button = self._button(style, QStyle.StandardPixmap.SP_TitleBarNormalButton, "Float or dock the panel")
        self.close_button = self._button(style, QStyle.StandardPixmap.SP_TitleBarCloseButton, "Close (View > Folds opens it again)")
        self.float_button.clicked.connect(lambda: dock.setFloating(not dock.isFloating()))
        self.close_button.clicked.connect(dock.close)
        row.addWidget(self.float_button)
        row.addWidget(self.close_button)

    def _button(self, style: QStyle, icon: QStyle.StandardPixmap, tip: str) -> QToolButton:
        button = QToolButton(self)
        button.setIcon(style.standardIcon(icon, None, self))
        button.setAutoRaise(True)
        button.setToolTip(tip)
        button.setAccessibleName(tip.split(" (")[0])
        return button

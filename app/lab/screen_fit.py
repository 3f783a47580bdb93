"""The labs' windows open at their wanted size or, on a smaller screen, at the screen's free part less a frame."""

from __future__ import annotations

from foldscope.app.qt import QApplication, QWidget

FRAME = (0, 40)  # the window manager's frame and title bar, as app.window allows for them


def resize_within_screen(widget: QWidget, width: int, height: int) -> None:
    """Resize `widget` to width x height, no larger than its screen's free part (a laptop's 1366x768 less its
    panel): the Replay lab asked for 1500x1000, its bottom and right out of reach."""
    screen = widget.screen() or QApplication.primaryScreen()
    if screen is not None:
        free = screen.availableGeometry()
        width, height = min(width, free.width() - FRAME[0]), min(height, free.height() - FRAME[1])
    widget.resize(width, height)

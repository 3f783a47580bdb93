"""The status bar's busy indicator: a progress bar and a Cancel button for the one long task running."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.qt import QHBoxLayout, QProgressBar, QToolButton, QWidget


class BusyBar(QWidget):
    """Shown while a task runs (an open, a fold preview, a what-if); `end` hides it, whatever ended the task."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.progress = QProgressBar()
        self.progress.setMaximumWidth(220)
        self.progress.setTextVisible(True)
        self.cancel_button = QToolButton()
        self.cancel_button.setText("Cancel")
        self.cancel_button.clicked.connect(self._cancel)
        self._on_cancel: Callable[[], None] | None = None
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.addWidget(self.progress)
        row.addWidget(self.cancel_button)
        self.hide()

    @property
    def busy(self) -> bool:
        return self._on_cancel is not None

    def begin(self, label: str, cancel: Callable[[], None]) -> None:
        """Show `label` with an indefinite bar; Cancel calls `cancel`."""
        self._on_cancel = cancel
        self.progress.setRange(0, 0)
        self.progress.setFormat(label)
        self.show()

    def report(self, done: int, total: int, label: str) -> None:
        self.progress.setRange(0, max(total, 0))
        self.progress.setValue(done)
        self.progress.setFormat(f"{label} %p%" if total else label)

    def end(self) -> None:
        self._on_cancel = None
        self.hide()

    def _cancel(self) -> None:
        if self._on_cancel is not None:
            self._on_cancel()

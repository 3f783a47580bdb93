"""The reader's warnings above the lists: a dismissible bar naming how many, expandable to the list itself."""

from __future__ import annotations

from foldscope.app.qt import QFrame, QHBoxLayout, QLabel, QPlainTextEdit, Qt, QToolButton, QVBoxLayout, QWidget
from foldscope.core.readout.usage_precision import NOTE_START


class WarningsBar(QFrame):
    """Shown when the opened session read with warnings ("line 143: truncated last line skipped")."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("warningsBar")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.label = QLabel()
        self.label.setTextFormat(Qt.TextFormat.PlainText)
        self.toggle = QToolButton()
        self.toggle.setText("Show")
        self.toggle.setCheckable(True)
        self.toggle.toggled.connect(self._expand)
        self.close_button = QToolButton()
        self.close_button.setText("Dismiss")
        self.close_button.clicked.connect(self.hide)
        self.details = QPlainTextEdit()  # plain text: warnings quote the file, which is data
        self.details.setReadOnly(True)
        self.details.setMaximumHeight(140)
        self.details.hide()
        row = QHBoxLayout()
        row.setContentsMargins(6, 2, 6, 2)
        row.addWidget(self.label, 1)
        row.addWidget(self.toggle)
        row.addWidget(self.close_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        layout.addLayout(row)
        layout.addWidget(self.details)
        self.warnings: list[str] = []
        self.hide()

    def set_warnings(self, warnings: list[str]) -> None:
        self.warnings = list(warnings)
        self.toggle.setChecked(False)
        if not self.warnings:
            self.hide()
            return
        n = len(self.warnings)
        approximate = next((w for w in self.warnings if w.startswith(NOTE_START)), None)
        self.label.setText(
            f"{approximate.split(';')[0]}; reading the file gave {n} warning{'s' if n != 1 else ''} (Show)"
            if approximate  # the one fact every figure on screen depends on, said without a click
            else f"Reading the file gave {n} warning{'s' if n != 1 else ''}: "
            "what the reader skipped or could not link, or what the file does not hold"
        )
        self.details.setPlainText("\n".join(self.warnings))
        self.show()

    def _expand(self, on: bool) -> None:
        self.details.setVisible(on)
        self.toggle.setText("Hide" if on else "Show")

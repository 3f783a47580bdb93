"""Clipping a tool result by hand: a slider for the characters kept, showing the projected body and its tokens."""

from __future__ import annotations

from foldscope.app.qt import (
    QDialog,
    QDialogButtonBox,
    QFontDatabase,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QSlider,
    QSpinBox,
    Qt,
    QVBoxLayout,
    QWidget,
)
from foldscope.core.fold.clip import CLIP_FLOOR, bodies_of, build_copy, original_of
from foldscope.core.model.session import Message
from foldscope.core.readout.document import Document
from foldscope.core.request.tokens import count_text

PREVIEW_CHARS = 20_000  # the projected body shown is cut here; its tokens are always counted whole


def projected(original: Message, index: int, keep: int) -> tuple[str, int]:
    """The copy a clip to `keep` characters would make: its output text and that text's tokens."""
    kept = {b.key: keep for b in bodies_of(original) if len(b.text) > keep}
    text = build_copy(original, index, kept, new_id=lambda: "preview").text if kept else original.text
    return text, count_text(text)


class ClipDialog(QDialog):
    """Choose how many characters of each body a clipped copy keeps (head three parts to the tail's one)."""

    def __init__(self, document: Document, index: int, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        record = document.session.record
        self.original = original_of(document.message(index), record)
        self.index = record.index_of(self.original.id)
        longest = max((len(b.text) for b in bodies_of(self.original)), default=0)
        self.longest = longest
        self.setWindowTitle(f"Clip result #{self.index}")
        original_tokens = count_text(self.original.text)
        intro = QLabel(f"Result <b>#{self.index}</b>: its longest body has {longest:,} characters; the whole result "
                       f"is {original_tokens:,} tokens. A clipped copy keeps a head and a tail of each longer body, "
                       f"with a marker naming the read_result call for the omitted middle.")
        intro.setWordWrap(True)
        top = max(longest - 1, 0)
        self.slider = QSlider(Qt.Orientation.Horizontal)
        self.slider.setRange(0, top)
        self.slider.setAccessibleName("Characters kept")
        self.spin = QSpinBox()
        self.spin.setRange(0, top)
        self.spin.setSuffix(" characters kept")
        self.slider.valueChanged.connect(self.spin.setValue)
        self.spin.valueChanged.connect(self.slider.setValue)
        self.spin.valueChanged.connect(self._show)
        self.tokens = QLabel()
        self.body = QPlainTextEdit()
        self.body.setReadOnly(True)
        self.body.setAccessibleName("Projected body")
        self.body.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.button(QDialogButtonBox.StandardButton.Ok).setText("&Clip")
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.slider, 1)
        row.addWidget(self.spin)
        layout = QVBoxLayout(self)
        layout.addWidget(intro)
        layout.addLayout(row)
        layout.addWidget(self.tokens)
        layout.addWidget(self.body, 1)
        layout.addWidget(self.buttons)
        self.resize(760, 560)
        self.spin.setValue(min(max(CLIP_FLOOR * 2, longest // 4), top))
        self._show(self.spin.value())

    def keep(self) -> int:
        return self.spin.value()

    def _show(self, keep: int) -> None:
        text, tokens = projected(self.original, self.index, keep)
        whole = count_text(self.original.text)
        self.tokens.setText(f"Projected body: {len(text):,} characters, <b>{tokens:,} tokens</b> "
                            f"(the original: {whole:,}; saves {whole - tokens:,})")
        self.body.setPlainText(text[:PREVIEW_CHARS] + ("\n…" if len(text) > PREVIEW_CHARS else ""))


def ask_clip_length(parent: QWidget, document: Document, index: int) -> int | None:
    """The characters to keep, or None when cancelled; tests replace this function instead of the dialog."""
    dialog = ClipDialog(document, index, parent)
    return dialog.keep() if dialog.exec() == QDialog.DialogCode.Accepted else None

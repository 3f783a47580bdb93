"""The read_result pager: an original tool result read page by page (offset, limit, next page, copy text)."""

from __future__ import annotations

import html
import re

from foldscope.app.qt import (
    QFontDatabase,
    QGuiApplication,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
    Signal,
)
from foldscope.core.actions.recovery import READ_LIMIT, ReadResult
from foldscope.core.model.session import Session
from foldscope.core.readout.document import Document

# The marker a clipped copy carries: "(offsets START to END of the original, full-record index N)".
MARKER = re.compile(r"offsets (\d+) to (\d+) of the original, full-record index (\d+)")


def omitted_ranges(document: Document, index: int) -> list[tuple[int, int]]:
    """The omitted ranges a clipped copy's markers name, in the original's recovery text."""
    message = document.message(index)
    if not message.is_clipped_copy:
        return []
    return [(int(a), int(b)) for a, b, _ in MARKER.findall(message.text)]


def read_page(session: Session, index: int, offset: int, limit: int, max_chars: int | None = None) -> dict:
    """One read_result page; read without touching the session (the pager only looks)."""
    looking = Session(record=session.record, view=[], branch={"metadata": {}})
    command = ReadResult(index, offset, limit, max_chars)
    command.do(looking)
    return command.result


class Pager(QWidget):
    """Pages through the original behind a message with read_result; a copy opens at its omitted middle.

    `page_read(result)` follows every page, with read_result's own fields (text, offset,
    next_offset, total, limit) or `success` False and `error`.
    """

    page_read = Signal(dict)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.index: int | None = None
        self.max_chars: int | None = None  # the result bound of the policy in force, when it sets one
        self.result: dict = {}
        self.title = QLabel("<i>Choose a tool result or a clipped copy, then Read result.</i>")
        self.title.setWordWrap(True)
        self.offset = QSpinBox()
        self.offset.setRange(0, 2_000_000_000)
        self.offset.setSingleStep(1000)
        self.offset.setAccessibleName("Offset")
        self.limit = QSpinBox()
        self.limit.setRange(1, READ_LIMIT)
        self.limit.setValue(4000)
        self.limit.setSingleStep(1000)
        self.limit.setAccessibleName("Limit")
        self.read_button = QPushButton("&Read")
        self.previous_button = QPushButton("&Previous page")
        self.next_button = QPushButton("&Next page")
        self.copy_button = QPushButton("&Copy text")
        self.read_button.clicked.connect(lambda: self.read(self.offset.value()))
        self.next_button.clicked.connect(self.next_page)
        self.previous_button.clicked.connect(self.previous_page)
        self.copy_button.clicked.connect(self.copy_text)
        self.status = QLabel()
        self.status.setWordWrap(True)
        self.text = QPlainTextEdit()
        self.text.setReadOnly(True)
        self.text.setAccessibleName("Page text")
        self.text.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        controls = QHBoxLayout()
        for label, widget in (("Offset", self.offset), ("Limit", self.limit)):
            controls.addWidget(QLabel(label))
            controls.addWidget(widget)
        for button in (self.read_button, self.previous_button, self.next_button, self.copy_button):
            controls.addWidget(button)
        controls.addStretch(1)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.title)
        layout.addLayout(controls)
        layout.addWidget(self.status)
        layout.addWidget(self.text, 1)
        self._enable()

    def set_document(self, document: Document | None) -> None:
        self.document, self.index, self.result = document, None, {}
        self.text.clear()
        self.status.clear()
        self._enable()

    def open_index(self, index: int) -> dict:
        """Page the original behind record index `index`; a clipped copy starts at its first omitted range."""
        if self.document is None:
            return {}
        self.index = index
        ranges = omitted_ranges(self.document, index)
        message = self.document.message(index)
        what = f"#{index} ({'clipped copy' if message.is_clipped_copy else message.kind})"
        if ranges:
            spans = ", ".join(f"{a:,}–{b:,}" for a, b in ranges)
            what += f": omitted middle at offsets {spans}"
        self.title.setText(f"<b>read_result</b> of {html.escape(what)}")
        return self.read(ranges[0][0] if ranges else 0)

    def read(self, offset: int) -> dict:
        if self.document is None or self.index is None:
            return {}
        limit = self.limit.value()
        self.result = read_page(self.document.session, self.index, offset, limit, self.max_chars)
        if self.result.get("success"):
            self.offset.setValue(self.result["offset"])
            self.text.setPlainText(self.result["text"])
            self.status.setText(self._status_line(self.result))
        else:
            self.text.clear()
            self.status.setText(f"<span style='color:#b03a2e'>{html.escape(str(self.result.get('error', 'read failed')))}</span>")
        self._enable()
        self.page_read.emit(dict(self.result))
        return self.result

    @staticmethod
    def _status_line(r: dict) -> str:
        end = r["offset"] + len(r["text"])
        next_part = f"next offset {r['next_offset']:,}" if r["next_offset"] is not None else "the end of the original"
        checks: dict[bool | None, str] = {True: " · SHA-256 verified", False: " · <b>SHA-256 does not match its copy</b>"}
        check = checks.get(r.get("verified"), "")
        return (
            f"Original #{r['index']}: characters {r['offset']:,} to {end:,} of {r['total']:,} "
            f"(limit applied {r['limit']:,}) · {next_part}{check}"
        )

    def next_page(self) -> dict:
        if self.result.get("next_offset") is None:
            return {}
        return self.read(self.result["next_offset"])

    def previous_page(self) -> dict:
        if not self.result.get("success") or self.result["offset"] == 0:
            return {}
        return self.read(max(0, self.result["offset"] - self.limit.value()))

    def copy_text(self) -> None:
        QGuiApplication.clipboard().setText(self.text.toPlainText())

    def _enable(self) -> None:
        ok = bool(self.result.get("success"))
        self.read_button.setEnabled(self.index is not None)
        self.next_button.setEnabled(ok and self.result.get("next_offset") is not None)
        self.previous_button.setEnabled(ok and self.result.get("offset", 0) > 0)
        self.copy_button.setEnabled(ok and bool(self.result.get("text")))

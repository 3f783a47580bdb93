"""The request panel: the compiled payload of the shown request, highlighted, with its size in tokens and bytes."""

from __future__ import annotations

import json

from core.count import estimate

from app.divergence import divergence
from app.document import Document
from app.highlight import block_html
from app.qt import QLabel, Qt, QTextBrowser, QVBoxLayout, QWidget
from app.theme import pygments_style
from pygments.lexers import JsonLexer


def compiled(document: Document, view: list[str] | tuple[str, ...]) -> tuple[dict, int, int]:
    """(payload, bytes, exact o200k tokens of its counted text) for a view, under the session's policy."""
    from core.compile import compile_request, payload_bytes
    from core.trace import session_tools

    record = document.session.record
    messages = [record.get(mid) for mid in view]
    options = {"record": record, "policy": document.policy, "tools": session_tools(document.session)}
    payload = compile_request(messages, **options)
    return payload, len(payload_bytes(payload)), document.counter.count(messages, **options)


def next_view(document: Document, slot: int) -> list[str] | tuple[str, ...]:
    """The view the request after `slot` is compiled from (after the last request: the active view now)."""
    return document.requests[slot + 1].view if slot + 1 < len(document.requests) else document.session.view


class RequestPanel(QWidget):
    """Shows what the model was (or would next be) sent; compiles only while visible."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.document: Document | None = None
        self.slot: int | None = None
        self.divergence = None  # divergence.Divergence of the shown request from the next
        self._shown: tuple[int, int | None] | None = None
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.payload = QTextBrowser()
        self.payload.setAccessibleName("Compiled payload")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header)
        layout.addWidget(self.payload, 1)
        self.header.setText("<i>No session open.</i>")

    def set_request(self, document: Document | None, slot: int | None) -> None:
        self.document, self.slot = document, slot
        if self.isVisible():
            self.refresh()

    def showEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().showEvent(event)
        self.refresh()

    def _divergence_line(self, doc: Document, slot: int, payload: dict) -> str:
        following = "the active view now" if slot + 1 >= len(doc.requests) else f"request {slot + 1}"
        try:
            found = divergence(payload, compiled(doc, next_view(doc, slot))[0])
        except Exception as exc:  # noqa: BLE001 - a view the compiler refuses is said, not raised
            return f"Cannot compare with {following}: {type(exc).__name__}: {exc}"
        self.divergence = found
        return (
            f"<b>Where the next request diverges</b> ({following}): at byte {found.at:,} of {found.size:,}"
            f" ({found.share:.1%} repeated), in {found.where}: {found.cause}"
        )

    def refresh(self, force: bool = False) -> None:
        doc, slot = self.document, self.slot
        key = (id(doc), slot)
        if doc is None or (key == self._shown and not force):
            return
        self._shown = key
        self.divergence = None
        is_now = slot is None or slot >= len(doc.requests)
        view = doc.session.view if is_now else doc.requests[slot].view
        try:
            payload, size, counted = compiled(doc, view)
        except Exception as exc:  # noqa: BLE001 - a view the compiler refuses is shown, not raised
            self.header.setText(f"<b>Cannot compile this view:</b> {type(exc).__name__}: {exc}")
            self.payload.clear()
            return
        what = "the next request, from the active view as it stands now" if is_now else f"request {slot}"
        scale = doc.scale if is_now else doc.requests[slot].scale
        tokens = estimate(counted, scale)
        lines = [
            f"<b>Compiled payload</b> of {what}: {len(view):,} messages · {size:,} bytes",
            f"Estimate <b>{tokens:,} tokens</b> = {counted:,} counted (o200k_base, exact) × scale {scale:.3f}",
        ]
        if not is_now and doc.requests[slot].reported_input:
            lines.append(f"Reported input for this request: {doc.requests[slot].reported_input:,} tokens")
        if not is_now:
            lines.append(self._divergence_line(doc, slot, payload))
        rules = doc.rules
        if rules is not None and rules.ceiling:
            lines.append(f"Ceiling {rules.ceiling:,} tokens: {tokens / rules.ceiling:.0%} of it ({rules.source})")
        self.header.setText("<br>".join(lines))
        text = json.dumps(payload, indent=2, ensure_ascii=False)
        self.payload.setHtml(block_html(text, JsonLexer(), pygments_style()))

"""The request panel: the compiled payload of the shown request, highlighted, with its size in tokens and bytes."""

from __future__ import annotations

import html
import json

from pygments.lexers import JsonLexer

from foldscope.app.highlight import block_html
from foldscope.app.panels.long_text import PAYLOAD_LIMIT, PAYLOAD_LINE, is_long, note, shown_part
from foldscope.app.panels.shown_request import ShownRequestPanel
from foldscope.app.qt import QLabel, QScrollArea, QSize, Qt, QTextBrowser, QVBoxLayout, QWidget
from foldscope.app.theme import pygments_style
from foldscope.core.model.caching import caching_of, unplaced_words
from foldscope.core.readout.divergence import Divergence, describe, parting_place
from foldscope.core.readout.document import Document
from foldscope.core.readout.free_window import free_words
from foldscope.core.readout.marks_facts import describe as describe_mark
from foldscope.core.readout.marks_facts import mark_positions
from foldscope.core.readout.request_facts import compiled, next_view
from foldscope.core.readout.usage_precision import near as near_mark
from foldscope.core.readout.words import plural


def mark_lines(text: str) -> list[int]:
    """The 1-based lines of an indented payload that carry a mark: each `cache_control` key and its value."""
    out: list[int] = []
    inside = False
    for number, line in enumerate(text.splitlines(), start=1):
        if '"cache_control": {' in line:
            inside = True
        if inside:
            out.append(number)
            if line.strip().startswith("}"):
                inside = False
    return out


class HeaderArea(QScrollArea):
    """A word-wrapped label that asks for the height its text needs and scrolls when it gets less."""

    def __init__(self, label: QLabel) -> None:
        super().__init__()
        self.label = label
        self.setWidget(label)
        self.setWidgetResizable(True)
        self.setFrameShape(QScrollArea.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def sizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        # Wrapped as if the scroll bar were there, so its coming and going never changes the height asked for.
        width = max(self.width() - self.verticalScrollBar().sizeHint().width(), 100)
        return QSize(width, self.label.heightForWidth(width) + 2 * self.frameWidth())

    def minimumSizeHint(self) -> QSize:  # noqa: N802 (Qt override)
        return QSize(100, 3 * self.label.fontMetrics().height())

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        if event.size().width() != event.oldSize().width():
            self.updateGeometry()  # a new width wraps the text to a new height


class RequestPanel(ShownRequestPanel):
    """Shows what the model was (or would next be) sent; compiles only while visible."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.divergence: Divergence | None = None  # of the shown request from the next
        self.marks: tuple = ()  # core.request.marks.MarkPosition of the shown request
        self.mark_lines: list[int] = []  # the payload lines carrying them, highlighted
        self.header = QLabel()
        self.header.setWordWrap(True)
        self.header.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        # At 1366x768 the paragraph is taller than the tab leaves it: it scrolls rather than lose its last lines.
        self.header_area = HeaderArea(self.header)
        self.payload = QTextBrowser()
        self.payload.setAccessibleName("Compiled payload")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.header_area)
        layout.addWidget(self.payload, 1)
        self.header.setText("<i>No session open.</i>")

    def _divergence_line(self, doc: Document, slot: int, view) -> str:
        following = "the active view now" if slot + 1 >= len(doc.requests) else f"request {slot + 1}"
        try:
            found, size, at = parting_place(doc, view, next_view(doc, slot))
        except Exception as exc:  # noqa: BLE001 - a view the compiler refuses is said, not raised
            return f"Cannot compare with {following}: {type(exc).__name__}: {exc}"
        self.divergence = found
        return f"<b>Where the next request diverges</b> ({following}): {html.escape(describe(found, size, at))}"

    def _marks_lines(self, doc: Document, view) -> list[str]:
        policy = doc.policy
        if policy is None or not policy.caching:
            why = "no policy in force" if policy is None else html.escape(unplaced_words(caching_of(policy, doc.session)), quote=False)
            return [f"<b>Cache marks:</b> none — {why} (turn caching on in the policy editor, Ctrl+Shift+L)"]
        self.marks = mark_positions(doc, view)
        items = "".join(f"<li>{html.escape(describe_mark(m))}</li>" for m in self.marks)
        return [
            f"<b>Cache marks</b> ({len(self.marks)}, shown as <code>cache_control</code> in the payload):<ul style='margin:0'>{items}</ul>"
        ]

    def _predicted_line(self, doc: Document, slot: int | None) -> str:
        """Predicted input, beside the reported input and the difference where the file reports it (slot None: now);
        both marked ~ where the agent's figures are approximate (Aider's), as the status bar and the CLI mark them."""
        near = near_mark(doc.session)
        if slot is None:
            size = doc.now_predicted
            line = f"Predicted input <b>{near}{size:,} tokens</b> (the next request)"
            free = doc.now_free
            if free is not None and doc.context_window is not None:
                line += f" · {free_words(doc.context_window, size)} ({html.escape(doc.window_source)})"
            return line
        r = doc.requests[slot]
        anchor = "its count (no earlier report in its stretch)" if r.predicted_from == "count" else f"request {r.predicted_from}"
        line = f"Predicted input <b>{near}{r.predicted:,} tokens</b>, anchored on {anchor}"
        if r.reported_input:
            line += f" · reported {near}{r.reported_input:,} · difference {r.difference()}"
        if r.flagged:
            line += " · <b>the report is flagged</b>: it disagrees wildly with its neighbours"
        return line

    def refresh(self, force: bool = False) -> None:
        doc, slot = self.document, self.slot
        key = (doc.facts_revision if doc is not None else None, slot)
        if doc is None or (key == self._shown and not force):
            return
        self._shown = key
        self.divergence, self.marks = None, ()
        recorded = slot if slot is not None and slot < len(doc.requests) else None  # None: the next request, now
        view = doc.session.view if recorded is None else doc.requests[recorded].view
        try:
            payload, size, counted, head, scale = compiled(doc, recorded)
        except Exception as exc:  # noqa: BLE001 - a view the compiler refuses is shown, not raised
            self.header.setText(f"<b>Cannot compile this view:</b> {type(exc).__name__}: {html.escape(str(exc))}")
            self.payload.clear()
            return
        what = "the next request, from the active view as it stands now" if recorded is None else f"request {recorded}"
        tokens = doc.request_size(slot)
        counted_text = f"{counted:,} counted (o200k_base, exact)"
        if head:
            counted_text = f"({counted_text} + an unseen head of {head:,})"
        lines = [f"<b>Compiled payload</b> of {what}: {plural(len(view), 'message')} · {plural(size, 'byte')}"]
        lines.append(self._predicted_line(doc, recorded))
        lines.append(f"Estimate {tokens:,} tokens = {counted_text} × scale {scale:.3f} (the ADR's, for the ceiling and the fold)")
        if head:
            lines.append(
                f"The estimate includes an unseen head of {head:,} tokens: the system prompt and "
                f"tools this {html.escape(doc.session.format)} file does not hold, estimated from the reported "
                "input of its stretch (between compactions)"
            )
        if recorded is not None:
            lines.append(self._divergence_line(doc, recorded, view))
        lines += self._marks_lines(doc, view)
        rules = doc.rules
        if rules is not None and rules.ceiling:
            lines.append(f"Ceiling {rules.ceiling:,} tokens: {tokens / rules.ceiling:.0%} of it ({rules.source})")
        text = json.dumps(payload, indent=2, ensure_ascii=False)
        # laid out whole, a huge message's line would hold the GUI up (app.panels.long_text); a long payload is the rule
        if is_long(text, PAYLOAD_LIMIT, PAYLOAD_LINE):
            shown = shown_part(text)
            self.mark_lines = []
            lines.append(
                html.escape(note(shown, len(text), "Each message's whole text: the inspector's Copy whole text or Save whole text…"))
            )
            self.payload.setPlainText(shown.text)
        else:
            self.mark_lines = mark_lines(text)
            self.payload.setHtml(block_html(text, JsonLexer(), pygments_style(), self.mark_lines))
        self.header.setText("<br>".join(lines))
        self.header_area.updateGeometry()

"""The status bar's line: the estimate against the ceiling first (and by how much it is over), then the next
request's predicted input and free space, the unseen head, and the session's format and counts."""

from __future__ import annotations

from operator import attrgetter

from foldscope.app.qt import QLabel, QSizePolicy, Qt, QWidget
from foldscope.core.formats.registry import format_title
from foldscope.core.model.caching import caching_of
from foldscope.core.readout.document import Document
from foldscope.core.readout.free_window import free_window, free_words, over_window
from foldscope.core.readout.unseen_heads import unseen_head_words
from foldscope.core.readout.usage_precision import near as near_mark
from foldscope.core.readout.words import plural

SEPARATOR = "  ·  "


def status_parts(doc: Document) -> list[str]:
    """The line's parts in order of need: a narrow window drops them from the end, never one cut in two."""
    session = doc.session
    if not doc.is_counted:  # the first step of a load: no size is known yet, and the line says so first
        reading = doc.reading_note()
        parts = [
            f"showing {reading}; then counting tokens: sizes are in characters until then"
            if reading
            else "counting tokens and measuring the requests: sizes are in characters until then"
        ]
        if session.trace:
            parts.append(plural(len(session.trace), "request"))
        return parts + [
            f"Format: {format_title(session.format)}",  # the agent's name, not the reader's (copilot_cli)
            f"full record {plural(doc.record_size, 'message')}",
            f"active view {plural(len(session.view), 'message')}",
        ]
    # The request the timeline shows: a recorded one (stepped back) or the next (now), named first.
    shown = doc.shown if doc.shown is not None and doc.shown < len(doc.requests) else None
    fact = doc.requests[shown] if shown is not None else None
    est = doc.request_size(shown)
    predicted = fact.predicted if fact is not None else doc.now_predicted
    head = fact.unseen_head if fact is not None else doc.unseen_head
    rules = doc.rules
    which = f"request {shown:,} of {len(doc.requests):,}" if shown is not None else "next request"
    parts = []
    if rules is not None and rules.ceiling:
        over = rules.past_ceiling(est) or 0
        tail = f", over by {over:,}" if over > 0 else ", at the ceiling" if over == 0 else ""
        parts.append(f"{which}: estimate {est:,} of the {rules.ceiling:,}-token ceiling ({est / rules.ceiling:.0%}{tail})")
    else:
        parts.append(f"{which}: estimate {est:,} tokens (no ceiling)")
    if predicted:
        near = near_mark(session)  # the agent's rounded figures (Aider's), foldscope's estimate (Copilot CLI's)
        reported = f", reported {near}{fact.reported_input:,}" if fact is not None and fact.reported_input else ""
        parts.append(f"predicted {near}{predicted:,} tokens{reported}")  # made from the reports: as near as they are
        free = free_window(doc.context_window, predicted)
        if free is not None and doc.context_window is not None:
            why = "the predicted input less the window" if over_window(doc.context_window, predicted) else "less the predicted input"
            parts.append(f"{free_words(doc.context_window, predicted)} ({why})")
    if head:
        parts.append(f"includes an unseen head of {head:,} tokens")
    if session.trace:
        parts.append(plural(len(session.trace), "request"))
    parts += [
        f"Format: {format_title(session.format)}",
        f"full record {plural(doc.record_size, 'message')}",
        f"active view {plural(len(session.view), 'message')}",
    ]
    return parts


def status_text(doc: Document) -> str:
    return SEPARATOR.join(status_parts(doc))


def status_tooltip(doc: Document) -> str:
    """The whole line, a part a line (a narrow bar shows only the first), then the details behind it: messages
    by kind and where the ceiling came from."""
    kinds = doc.kind_counts()
    by_kind = ", ".join(f"{n:,} {k}" for k, n in sorted(kinds.items(), key=lambda kv: -kv[1]))
    if not doc.is_counted:
        return "\n".join(
            [
                *status_parts(doc),
                "",
                f"Full record by kind: {by_kind}",
                "The tokens are being counted; the window map is sized by characters until then",
            ]
        )
    lines = [*status_parts(doc), "", f"Full record by kind: {by_kind}", f"Scale {doc.scale:.3f}"]
    if doc.now_predicted:
        lines.append(
            "Predicted: the best forecast of what the provider will report for the next request, from the "
            "newest report of its stretch plus what changed since; the estimate is the ADR's (count × scale), "
            "which the ceiling and the fold decide on"
        )
    if doc.rules is not None:
        lines.append(f"Ceiling: {doc.rules.source}")
    if doc.context_window:
        lines.append(f"Context window: {doc.context_window:,} tokens, {doc.window_source}")
    heads = unseen_head_words(list(map(attrgetter("unseen_head"), doc.requests)), doc.session.format)
    if doc.unseen_head:
        lines.append(f"Unseen head of the next request: {doc.unseen_head:,} tokens (its stretch's)")
    if heads:
        lines.append(f"Unseen head of the recorded requests: {heads}")
    policy = doc.policy
    if policy is not None:
        lines.append(f"Policy in force: {policy.source}; {caching_of(policy, doc.session).words}")
    return "\n".join(lines)


class StatusLine(QLabel):
    """The status bar's line: as many of its parts as fit the width, from the first, each whole; a part too
    long alone is cut between words with "…". The tooltip says everything."""

    def __init__(self, text: str = "", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.parts: list[str] = [text] if text else []
        self.setTextFormat(Qt.TextFormat.PlainText)
        # Ignored: the line takes the width the bar gives it and never widens the window.
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self._fit()

    def set_parts(self, parts: list[str]) -> None:
        self.parts = [p for p in parts if p]
        self._fit()

    def setText(self, text: str) -> None:  # noqa: N802 (Qt override: a plain message is a line of one part)
        self.set_parts([text])

    def full_text(self) -> str:
        return SEPARATOR.join(self.parts)

    def shown_parts(self) -> int:
        """How many of the parts the line shows whole."""
        shown = self.text()
        return max((n for n in range(len(self.parts) + 1) if SEPARATOR.join(self.parts[:n]) == shown), default=0)

    def _fit(self) -> None:
        room = self.contentsRect().width()
        metrics = self.fontMetrics()
        n = len(self.parts)
        while n > 1 and metrics.horizontalAdvance(SEPARATOR.join(self.parts[:n])) > room:
            n -= 1
        text = SEPARATOR.join(self.parts[:n])
        if n == 1 and metrics.horizontalAdvance(text) > room:
            words = text.split(" ")
            while len(words) > 1 and metrics.horizontalAdvance(" ".join(words) + " …") > room:
                words.pop()
            text = " ".join(words) + " …"
        super().setText(text)

    def resizeEvent(self, event) -> None:  # noqa: N802 (Qt override)
        super().resizeEvent(event)
        self._fit()

"""The lists' headings and the status line: how many messages and tokens the full record and the active view hold, at
which request, and the shown request against its limits; redrawn as the workspace changes."""

from __future__ import annotations

from collections.abc import Callable

from foldscope.app.follows_changes import view_changed
from foldscope.app.highlight import plain_tip
from foldscope.app.panels.lists import MessageList
from foldscope.app.panels.status import StatusLine, status_parts, status_tooltip
from foldscope.app.panels.timeline_state import NO_SESSION_HINT
from foldscope.app.qt import QObject
from foldscope.core.readout.document import Document
from foldscope.core.readout.words import plural


def record_heading(doc: Document) -> str:
    """The full record's heading: its messages, tokens (characters before they are counted) and what is out of view."""
    if not doc.is_counted:  # the first step of a load: characters only, and saying so
        out = doc.record_size - doc.view_size
        reading = doc.reading_note()
        return f"{plural(doc.record_size, 'message')} · {plural(sum(doc.chars), 'character')} · {out:,} out of the active view" + (
            f" · {reading}" if reading else ""
        )
    # Stepped back to a request, the record's later messages did not exist yet: they are counted apart.
    later = doc.not_yet_recorded()
    out = doc.record_size - doc.view_size - later
    return f"{plural(doc.record_size, 'message')} · {plural(doc.record_tokens(), 'token')} · {out:,} out of the active view" + (
        f" · {later:,} not yet recorded at request {doc.shown}" if later else ""
    )


def view_heading(doc: Document, current: int, what_if_at: int | None) -> str:
    """The active view's heading at timeline slot `current` (a what-if's branch at request `what_if_at`, if any)."""
    if not doc.is_counted:
        return f"now · {plural(doc.view_size, 'message')} · " + ("reading the file…" if doc.reading_note() else "counting tokens…")
    at = "now" if current >= len(doc.requests) else f"at request {current}"
    if at == "now" and what_if_at is not None:  # a what-if is active
        at = f"what-if at request {what_if_at}"
    return f"{at} · {plural(doc.view_size, 'message')} · estimate {plural(doc.shown_size, 'token')}"


class Headings(QObject):
    """The full record's and the active view's headings and the status line, for the document shown (`shown`) at the
    timeline's slot (`slot`), a what-if's request when one is active (`what_if_at`); `live()` puts the follow's line
    back over the status line. They follow the workspace's changes (app.undo.SessionEditor.display_changed) themselves."""

    def __init__(
        self,
        parent: QObject,
        lists: tuple[MessageList, MessageList],
        status_line: StatusLine,
        shown: Callable[[], Document | None],
        slot: Callable[[], int],
        what_if_at: Callable[[], int | None],
        live: Callable[[], None],
    ) -> None:
        super().__init__(parent)
        self.record_list, self.view_list = lists
        self.status_line = status_line
        self.shown, self.slot, self.what_if_at, self.live = shown, slot, what_if_at, live

    def follow(self, changed) -> None:
        """Redraw after a change of the view shown, the record or the policy (connected after the timeline's: its slot)."""
        changed.connect(lambda changes: self.refresh() if view_changed(changes) else None)

    def refresh(self) -> None:
        doc = self.shown()
        if doc is None:
            self.status_line.setText(NO_SESSION_HINT)
            return
        self.record_list.set_heading(record_heading(doc))
        self.view_list.set_heading(view_heading(doc, self.slot(), self.what_if_at()))
        self.status_line.set_parts(status_parts(doc))
        self.status_line.setToolTip(plain_tip(status_tooltip(doc)))
        if doc.is_counted:
            self.live()

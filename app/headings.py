"""The lists' headings: how many messages and tokens the full record and the active view hold, and at which request."""

from __future__ import annotations

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

"""A note's members (the messages it replaced) read with the core's peek: SHA-256 verified, the view unchanged."""

from __future__ import annotations

import html
from dataclasses import dataclass

from foldscope.core.actions.commands import Peek
from foldscope.core.readout.document import Document, is_note, kind_label, note_first_index
from foldscope.core.readout.words import plural

SHOWN_MEMBERS = 200  # past this many the list says how many more there are
PREVIEW_CHARS = 600


@dataclass(frozen=True)
class Members:
    """What a note stands for: its members' record indexes and whether their SHA-256 verified."""

    indexes: tuple[int, ...]
    verified: bool | None  # None: the note records no digest to check against
    recorded: bool  # the note itself lists what it replaced (else it is read from the trace or the record)
    source: str = "as the note lists them"


def note_members(document: Document, index: int) -> Members | None:
    """The members of the note at `index` by peek; a note that lists none falls back to what the
    record says it covers (the messages out of the view folded into it), unverified."""
    message = document.message(index)
    if not is_note(message):
        return None
    peek = Peek(index)
    changes = peek.do(document.session)
    if changes.success:
        found = tuple(m["index"] for m in peek.result["messages"])
        return Members(found, peek.result["verified"], True)
    # What left the view when the note entered it, as the fold panel's row for it says; else the record's reasons.
    row = next((r for r in document.folds if r.note == index and r.affected), None)
    if row is not None:
        return Members(row.affected, None, False, "read from the trace: the messages that left the active view when the note entered it")
    reason = f"folded into note #{index}"
    covered = tuple(i for i, why in sorted(document.out_reason.items()) if why == reason)
    first = note_first_index(message)
    return Members(covered, None, False, f"read from the record: the messages out of the view from index {first} up to the note")


def members_html(document: Document, index: int, members: Members) -> str:
    """The members as a read-only list, each a link to select it, with the verification said first."""
    count = len(members.indexes)
    if members.verified is True:
        check = "<b style='color:#1e8449'>SHA-256 verified</b>: they are the bytes the note replaced"
    elif members.verified is False:
        check = "<b style='color:#c0392b'>SHA-256 does not verify</b>: the record no longer holds what the note replaced"
    else:
        check = "Not verified: the note records no SHA-256 of what it replaced"
    source = members.source
    parts = [
        f"<p><b>Peek</b>: {plural(count, 'message')} this note replaced, {html.escape(source)}. {check}. "
        "Read-only: the active view does not change.</p>"
    ]
    for member in members.indexes[:SHOWN_MEMBERS]:
        message = document.message(member)
        text = message.text
        body = html.escape(text[:PREVIEW_CHARS]) + ("…" if len(text) > PREVIEW_CHARS else "")
        parts.append(
            f"<p style='margin:8px 0 2px 0'><a href='msg:{member}'><b>#{member}</b> {html.escape(kind_label(document, member))}</a>"
            f" · {document.size_label(member)}</p><pre style='white-space: pre-wrap; margin:0'>{body}</pre>"
        )
    if count > SHOWN_MEMBERS:
        parts.append(f"<p>… and {count - SHOWN_MEMBERS:,} more.</p>")
    return "".join(parts)

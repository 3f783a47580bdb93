"""Reading originals back without changing the view: read_result pages, peek at what a note replaced."""

from __future__ import annotations

from foldscope.core.fold.clip import READ_LIMIT, original_of, recovery_text, span_digest
from foldscope.core.fold.delivery import protect_from_clip
from foldscope.core.model.commands import Changes, Command, message_at, refuse
from foldscope.core.model.session import Message, Session


class ReadResult(Command):
    """Characters offset to offset+limit of an original's recovery text; never changes the view."""

    label = "read result"
    undoable = False

    def __init__(self, index: int, offset: int = 0, limit: int = READ_LIMIT, max_chars: int | None = None) -> None:
        super().__init__()
        self.index, self.offset, self.limit, self.max_chars = index, offset, limit, max_chars

    def apply(self, session: Session) -> Changes:
        message = message_at(session, self.index)
        if message is None:
            return refuse(self, f"no message at index {self.index} (the full record has {len(session.record)})")
        original = original_of(message, session.record)
        text = recovery_text(original)
        if not isinstance(self.offset, int) or not 0 <= self.offset <= len(text):
            return refuse(self, f"offset {self.offset} is outside 0 to {len(text)}")
        if not isinstance(self.limit, int) or self.limit < 1:
            return refuse(self, f"limit must be a positive integer, not {self.limit!r}")
        applied = min(self.limit, READ_LIMIT, self.max_chars or READ_LIMIT)
        end = min(self.offset + applied, len(text))
        recorded = {
            m.metadata.get("context_clip_sha256") for m in session.record if m.is_clipped_copy and m.clipped_from == original.id
        } - {None}
        digest = original.sha256()
        self.result = {
            "success": True,
            "index": session.record.index_of(original.id),
            "text": text[self.offset : end],
            "offset": self.offset,
            "next_offset": end if end < len(text) else None,
            "total": len(text),
            "limit": applied,
            "sha256": digest,
            "verified": (digest in recorded) if recorded else None,
        }
        if original.kind == "action_response":
            protect_from_clip(session, [original.id])
        return Changes(metadata=True)


class Peek(Command):
    """The messages a note replaced, SHA-256 verified; the view does not change."""

    label = "peek"
    undoable = False

    def __init__(self, note_index: int) -> None:
        super().__init__()
        self.note_index = note_index

    def apply(self, session: Session) -> Changes:
        found = replaced(session, self.note_index)
        if isinstance(found, str):
            return refuse(self, found)
        note, messages, verified = found
        self.result = {
            "success": True,
            "note": self.note_index,
            "verified": verified,
            "messages": [{"index": session.record.index_of(m.id), "id": m.id, "kind": m.kind, "text": m.text} for m in messages],
        }
        return Changes()


def replaced(session: Session, note_index: int) -> tuple[Message, list[Message], bool | None] | str:
    note = message_at(session, note_index)
    if note is None or note.kind != "note":
        return f"no note at index {note_index}"
    indices = note.metadata.get("context_replaced")
    if not isinstance(indices, list) or not all(isinstance(i, int) and 0 <= i < len(session.record) for i in indices):
        return f"the note at index {note_index} does not record what it replaced"
    messages = [session.record[i] for i in indices]
    recorded = note.metadata.get("context_replaced_sha256")
    verified = (span_digest(messages) == recorded) if isinstance(recorded, str) else None
    return note, messages, verified

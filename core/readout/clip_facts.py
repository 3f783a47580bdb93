"""The clip dialog's figures: a result's tokens as the lists show them, and its clipped copy's as the lists will show
them once the copy is made (its part of the full record compiled as one request, core.readout.message_sizes)."""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.fold.clip import CLIP_FLOOR, bodies_of, build_copy, original_of
from foldscope.core.readout.document import Document
from foldscope.core.request.tokens import count_text

PREVIEW_ID = "foldscope-clip-preview"  # the projected copy's id: never a record's (a real copy gets a new one)


@dataclass(frozen=True)
class ClipProjection:
    """The copy a clip to `keep` characters would make: its text, its tokens, and the original's tokens."""

    index: int  # the original's record index
    text: str
    tokens: int
    original_tokens: int

    @property
    def saves(self) -> int:
        return self.original_tokens - self.tokens


@dataclass(frozen=True)
class ClipChoice:
    """What clipping a result (or the original of the copy there) starts from: the original's record index, its
    longest body's characters, and the length a body keeps at first."""

    index: int
    longest: int
    start: int


def clip_choice(document: Document, index: int) -> ClipChoice:
    """The clip dialog's starting point for the result at `index`: a quarter of its longest body, at least twice the
    floor a clip keeps, and never the whole body."""
    record = document.session.record
    original = original_of(document.message(index), record)
    longest = max((len(b.text) for b in bodies_of(original)), default=0)
    return ClipChoice(record.index_of(original.id), longest, min(max(CLIP_FLOOR * 2, longest // 4), max(longest - 1, 0)))


def original_tokens(document: Document, index: int) -> int:
    """A result's tokens as the lists, the inspector and the window map show them (its characters' count before the
    counts land)."""
    return document.tokens[index] if document.is_counted and index < len(document.tokens) else count_text(document.message(index).text)


def clip_projection(document: Document, index: int, keep: int) -> ClipProjection:
    """What clipping the result at `index` (or the original of the copy there) to `keep` characters a body would make,
    sized as the record's sizes will size the copy (message_sizes.record_sizes, after the clip)."""
    record = document.session.record
    original = original_of(document.message(index), record)
    at = record.index_of(original.id)
    whole = original_tokens(document, at)
    kept = {b.key: keep for b in bodies_of(original) if len(b.text) > keep}
    if not kept:
        return ClipProjection(at, original.text, whole, whole)
    copy = build_copy(original, at, kept, new_id=lambda: PREVIEW_ID)
    if not document.is_counted:
        return ClipProjection(at, copy.text, count_text(copy.text), whole)
    # As record_sizes sizes it once made: the full record, the copy appended, compiled as one request with no head.
    parts = document.measure_for().parts([*record, copy], head=0, first_round=None)
    tokens = sum(n for m, n in parts.messages if m is copy)
    return ClipProjection(at, copy.text, tokens, whole)

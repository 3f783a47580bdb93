"""Where a record's few messages of note lie (its systems, copies and notes) and its kinds, read once per record."""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass, field

from foldscope.core.model.session import FullRecord
from foldscope.core.readout.fold_facts import note_first_index


@dataclass(frozen=True)
class RecordIndex:
    """Where a record's few messages of note lie, in record order: its system messages, its clipped copies as
    (index, original id) and its notes as (first replaced index, index); and how many messages it holds of each
    kind. `upto`: how many messages it has read."""

    upto: int = 0
    systems: tuple[int, ...] = ()
    copies: tuple[tuple[int, str], ...] = ()
    notes: tuple[tuple[int, int], ...] = ()
    kinds: Mapping[str, int] = field(default_factory=dict)  # messages by kind, in the order each kind first came
    any_notes: tuple[int, ...] = ()  # every note (fold_facts.is_note): a "note" message, or one with a first index


# Per record (held weakly). The record only grows and a message never changes, so each step reads only what was
# added, and asks which of these few its view holds rather than every view message what it is.
_INDEXES: weakref.WeakKeyDictionary[FullRecord, RecordIndex] = weakref.WeakKeyDictionary()


def record_index(record: FullRecord) -> RecordIndex:
    """The record's RecordIndex, read on from where it was last read: one pass over what was added (the window's first
    step of a 50,000-message load reads the whole record here, on its GUI thread, before the counted document)."""
    kept = _INDEXES.get(record, RecordIndex())
    if kept.upto < len(record):
        # A new index, not the kept one grown: the GUI's worker and its window may ask about one record at once.
        systems, copies, notes, kinds = list(kept.systems), list(kept.copies), list(kept.notes), dict(kept.kinds)
        any_notes = list(kept.any_notes)
        for i in range(kept.upto, len(record)):
            m = record[i]
            kind = m.kind
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == "system":
                systems.append(i)
            original = m.clipped_from
            if original:
                copies.append((i, original))
            first = note_first_index(m)
            if first is not None:
                notes.append((first, i))
            if first is not None or kind == "note":
                any_notes.append(i)
        kept = RecordIndex(len(record), tuple(systems), tuple(copies), tuple(notes), kinds, tuple(any_notes))
        _INDEXES[record] = kept
    return kept

"""The fold panel's rows: context_folds records and decision events, tied to a request and to what they took."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.model.session import Message, Session
from foldscope.core.model.views import first_shown, left_between


def note_first_index(message: Message) -> int | None:
    """A note's first replaced index, from the provenance the fold writes on it (never from its text)."""
    value = message.metadata.get("context_first_index")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def is_note(message: Message) -> bool:
    return message.kind == "note" or note_first_index(message) is not None


@dataclass(frozen=True)
class FoldRow:
    """One context_folds record or event as the fold panel shows it.

    `slot` is the timeline slot whose view first shows the result (len(requests) means now);
    `affected` the record indexes it folded or clipped; `note` the note it put in the view.
    """

    number: int
    kind: str  # "fold", "clip", "compaction", "decision" or the event's own kind
    slot: int | None
    stage: str  # the fold stage, or a decision's action
    reason: str
    messages: int | None  # messages folded or replaced
    before: int | None  # estimate before
    after: int | None  # estimate after (a decision: its size)
    outcome: str
    note: int | None = None
    affected: tuple[int, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Views:
    """The view at every timeline slot (the requests', then now) and where each id first shows."""

    def __init__(self, session: Session, views: Sequence[Sequence[str]], times: Sequence[float | None]) -> None:
        self.session = session
        # The views as given, never copied: a trace's views share their start (core.model.views.SharedView), and a
        # copy of each would hold every request's whole view: gigabytes on a long session of short messages.
        self.views = list(views)
        self.times = list(times)
        self._first = first_shown(self.views)  # costs what each view adds, not its length

    def first_slot(self, ids: Sequence[str]) -> int | None:
        slots = [self._first[mid] for mid in ids if mid in self._first]
        return min(slots) if slots else None

    def slot_at_time(self, at: Any) -> int | None:
        """The first request sent at or after a moment (the fold ran just before it)."""
        if not isinstance(at, (int, float)) or isinstance(at, bool):
            return None
        known = [(t, slot) for slot, t in enumerate(self.times) if isinstance(t, (int, float))]
        if not known:
            return None
        position = bisect_left([t for t, _ in known], at)
        return known[position][1] if position < len(known) else len(self.views) - 1

    def left_at(self, slot: int | None) -> tuple[int, ...]:
        """Record indexes the step to `slot` took (core.model.views.left_between: `compactions` counts the same)."""
        if slot is None or slot <= 0 or slot >= len(self.views):
            return ()
        return left_between(self.session.record, self.views[slot - 1], self.views[slot])

    def new_note_at(self, slot: int | None) -> int | None:
        if slot is None or slot >= len(self.views):
            return None
        before = set(self.views[slot - 1]) if slot > 0 else set()
        record = self.session.record
        for mid in self.views[slot]:
            if mid not in before and mid in record and record.get(mid).kind == "note":
                return record.index_of(mid)
        return None


def _fold_row(number: int, entry: Mapping[str, Any], views: _Views) -> FoldRow:
    record = views.session.record
    note = _int(entry.get("note_index"))
    note = note if note is not None and 0 <= note < len(record) else None
    clipped = [c for c in entry.get("clipped") or [] if isinstance(c, Mapping) and _int(c.get("index")) is not None]
    affected: tuple[int, ...] = ()
    slot = None
    if note is not None:
        slot = views.first_slot([record[note].id])
        replaced = record[note].metadata.get("context_replaced")
        if isinstance(replaced, list) and all(_int(i) is not None for i in replaced):
            affected = tuple(replaced)
    if clipped:
        originals = {record[c["index"]].id for c in clipped if 0 <= c["index"] < len(record)}
        copies = [m.id for m in record if m.clipped_from in originals]
        slot = views.first_slot(copies)
        affected = tuple(sorted({c["index"] for c in clipped}))
    if slot is None:
        slot = views.slot_at_time(entry.get("at"))
    if not affected:
        affected = views.left_at(slot)
    if note is None and not clipped:
        note = views.new_note_at(slot)
    stage = str(entry.get("stage", ""))
    return FoldRow(
        number,
        "clip" if stage == "clip" else "fold",
        slot,
        stage,
        str(entry.get("reason", "")),
        _int(entry.get("messages_folded")) if stage != "clip" else len(affected),
        _int(entry.get("estimate_before")),
        _int(entry.get("estimate_after")),
        str(entry.get("outcome", "")),
        note,
        affected,
        entry,
    )


def _event_row(number: int, event: Mapping[str, Any], views: _Views) -> FoldRow:
    record = views.session.record
    kind = str(event.get("kind") or event.get("type") or "event")
    last = len(views.views) - 1
    at = _int(event.get("at_request"))
    request = _int(event.get("request"))
    slot = min(at, last) if at is not None else (min(request, last) if request is not None else None)
    if kind == "compaction":
        note_id = event.get("note_id")
        note, first = None, None
        if isinstance(note_id, str) and note_id in record:
            note, first = record.index_of(note_id), views.first_slot([note_id])
        slot = first if first is not None else slot
        # Landed when a recorded request carried its note; in the view now only, the next request will; in none,
        # the session left it on another branch (core.forensics.compactions says the same of it).
        outcome = (
            "landed"
            if first is not None and first < last
            else ("pending: the next request carries it" if first is not None else "abandoned: no request carried it")
        )
        # The messages it took are the ones that left the view (what the inspector lists and `compactions` counts as
        # dropped); the reader's own count also holds lines written after the last request that no request carried.
        left = views.left_at(slot)
        return FoldRow(
            number,
            "compaction",
            slot,
            "source compaction",
            str(event.get("trigger", "")),
            len(left) if left else _int(event.get("replaced")),
            _int(event.get("pre_tokens", event.get("tokens_before"))),
            None,
            outcome,
            note,
            left,
            event,
        )
    if kind == "branch":  # a rewind: the user went back and the agent went on from an earlier message
        abandoned = event.get("abandoned")
        line, parent = _int(event.get("line")), _int(event.get("parent_line"))
        went = f"line {line} went back to line {parent}" if line is not None and parent is not None else ""
        return FoldRow(
            number,
            kind,
            slot,
            str(event.get("action", "")),
            went or str(event.get("source", "")),
            len(abandoned) if isinstance(abandoned, list) else None,
            None,
            None,
            "",
            None,
            (),
            event,
        )
    if kind == "context_decision":
        kind = "decision"
    return FoldRow(
        number,
        kind,
        slot,
        str(event.get("action", "")),
        str(event.get("source", "")),
        None,
        None,
        _int(event.get("size")),
        "",
        None,
        (),
        event,
    )


def fold_rows(session: Session, views: Sequence[Sequence[str]], times: Sequence[float | None]) -> tuple[FoldRow, ...]:
    """Every context_folds record, then every event, in the file's order.

    `views` holds the view at each timeline slot (every request's, then now) and `times` when
    each request was sent; a record that names its note or copies steps to the first request
    whose view holds them, one that does not to the first request sent after it.
    """
    facts = _Views(session, views, times)
    folds = (session.manifest or {}).get("context_folds") or []
    rows = [_fold_row(n, entry, facts) for n, entry in enumerate(e for e in folds if isinstance(e, Mapping))]
    decisions = (session.manifest or {}).get("decisions")
    events = [e for e in list(decisions if isinstance(decisions, list) else []) + session.events if isinstance(e, Mapping)]
    rows += [_event_row(len(rows) + n, event, facts) for n, event in enumerate(events)]
    return tuple(rows)

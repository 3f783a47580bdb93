"""Past request views of a native session, rebuilt from its notes, clipped copies and fold records.

A Branch file holds the full record and only the final active view. Request k was compiled from
the view as it stood before the k-th response, so that view is rebuilt by replaying the record in
time order (created_at, else record order): a message joins the view when it is created; a note
takes the place of the messages it replaced, at the first one's position; a clipped copy takes its
original's place. Which messages a note replaced is read, best first, from its `context_replaced`
indices (foldscope's notes), else inferred: the messages in view from its `context_first_index` on
(from the start when it has none) that are out of the final view, of the kinds its fold's stage
folds (tool calls and results for tool_io), the first `messages_folded` of them when the run
manifest's context_folds record (matched to notes in time order) says how many. Every inference the
file cannot settle is said in the session's warnings.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.views import SharedView, TrackedView, ViewSharer

TOOL_KINDS = ("action_request", "action_response")


def request_views(record: FullRecord, final_view: Sequence[str], manifest: Mapping[str, Any] | None,
                  warnings: list[str], events: Sequence[Mapping[str, Any]] = ()) -> dict[str, SharedView]:
    """The view each assistant response's request was compiled from, by the response's id.

    A `branch` event (a rewind in the source, as the Claude Code reader writes it) sets the view to
    its `kept` ids when the replay reaches its `next` message: the abandoned branch left the view then.
    """
    rewinds = {e["next"]: [m for m in e.get("kept", ()) if isinstance(m, str) and m in record]
               for e in events if e.get("kind") == "branch" and isinstance(e.get("next"), str)
               and isinstance(e.get("kept"), list)}
    messages = list(record)
    final = set(final_view)
    order = _time_order(messages)
    notes = [messages[i] for i in order if messages[i].kind == "note"]
    folds = _fold_for_note(notes, manifest, warnings)
    replay = _Replay(record, final, warnings)
    views: dict[str, SharedView] = {}
    sharer = ViewSharer()  # one list for the views between two folds, not a copy per request (core.model.views)
    for i in order:
        message = messages[i]
        if message.id in rewinds:
            replay.view = TrackedView(rewinds[message.id])
        if message.kind == "assistant":
            views[message.id] = sharer.view(replay.view)
            replay.view.append(message.id)
        elif message.kind == "note":
            replay.note(message, folds.get(message.id))
        elif message.is_clipped_copy:
            replay.copy(message)
        else:
            replay.view.append(message.id)
    unexplained = final.symmetric_difference(replay.view)
    if unexplained:
        warnings.append(
            f"rebuilding past request views: {len(unexplained)} message(s) differ between the replayed view and the "
            "file's active view (left or came back with no note or copy saying when); past requests count them as "
            "they were before that change")
    return views


def _time_order(messages: list[Message]) -> list[int]:
    # lionagi appends a note to the record when it is made, but stands it early in the view; created_at is
    # the order things happened. Without a time on every message the record's order is all there is.
    if all(isinstance(m.created_at, (int, float)) for m in messages):
        return sorted(range(len(messages)), key=lambda i: (messages[i].created_at, i))
    return list(range(len(messages)))


def _fold_for_note(notes: list[Message], manifest: Mapping[str, Any] | None,
                   warnings: list[str]) -> dict[str, Mapping[str, Any]]:
    """Each note's context_folds record, paired in time order when there is one record per note."""
    folds = manifest.get("context_folds") if isinstance(manifest, Mapping) else None
    folds = [f for f in folds if isinstance(f, Mapping)] if isinstance(folds, list) else []
    if not folds or not notes:
        return {}
    if len(folds) != len(notes):
        warnings.append(f"the manifest has {len(folds)} context_folds records for {len(notes)} notes; notes are "
                        "not matched to records, so how many messages each replaced is inferred")
        return {}
    timed = all(isinstance(f.get("at"), (int, float)) for f in folds)
    ordered = sorted(folds, key=lambda f: f["at"]) if timed else folds
    return {note.id: fold for note, fold in zip(notes, ordered)}


class _Replay:
    """The view as it stood while the record is replayed in time order."""

    def __init__(self, record: FullRecord, final: set[str], warnings: list[str]) -> None:
        self.record, self.final, self.warnings = record, final, warnings
        self.view: list[str] = TrackedView()  # tells the request views what changed (core.model.views)

    def note(self, note: Message, fold: Mapping[str, Any] | None) -> None:
        if fold is not None and fold.get("outcome") == "rolled_back":
            return  # the fold was undone before the request: its note stays in the record, never in the view
        replaced = self._replaced(note, fold)
        if not replaced:
            self.view.append(note.id)
            return
        gone = set(replaced)
        place = next(i for i, mid in enumerate(self.view) if mid in gone)  # the first replaced, in one pass
        kept = [mid for mid in self.view[:place] if mid not in gone]
        self.view = TrackedView(kept + [note.id] + [mid for mid in self.view[place:] if mid not in gone])

    def copy(self, copy: Message) -> None:
        original = copy.clipped_from
        stand_in = next((p for p, mid in enumerate(self.view)
                         if mid == original or self.record.get(mid).clipped_from == original), None)
        if stand_in is None:
            self.view.append(copy.id)
        else:
            self.view[stand_in] = copy.id

    def _replaced(self, note: Message, fold: Mapping[str, Any] | None) -> list[str]:
        where = f"note {note.id!r} (index {self.record.index_of(note.id)})"
        exact = note.metadata.get("context_replaced")
        if isinstance(exact, list) and all(isinstance(i, int) and 0 <= i < len(self.record) for i in exact):
            ids = [self.record[i].id for i in exact]
            in_view = set(self.view)  # one pass over the view, not one per replaced id
            present = [mid for mid in ids if mid in in_view]
            if len(present) != len(ids):
                self.warnings.append(f"{where} replaced {len(ids) - len(present)} message(s) that were not in the "
                                     "view when it was made")
            return present
        first = _first_index(note)
        stage = fold.get("stage") if fold else None
        candidates = [mid for mid in self.view if self._may_have_replaced(mid, first, stage)]
        count = fold.get("messages_folded") if fold else None
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            if len(candidates) < count:
                self.warnings.append(f"{where}: its fold record says {count} messages were folded, but only "
                                     f"{len(candidates)} in the view then are out of the final view")
            return candidates[:count]
        start = f"index {first}" if first is not None else "the start (it records no first index)"
        self.warnings.append(f"{where} does not record which messages it replaced: taken as the {len(candidates)} "
                             f"message(s) in view from {start} that are out of the final view")
        return candidates

    def _may_have_replaced(self, mid: str, first: int | None, stage: Any) -> bool:
        if mid in self.final:
            return False
        message = self.record.get(mid)
        if message.kind == "system" or (first is not None and self.record.index_of(mid) < first):
            return False
        return stage != "tool_io" or message.kind in TOOL_KINDS


def _first_index(note: Message) -> int | None:
    value = note.metadata.get("context_first_index")
    extra = note.metadata.get("extra")
    if value is None and isinstance(extra, Mapping):
        value = extra.get("context_first_index")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


"""Past request views of a native session, rebuilt from its notes, clipped copies and fold records.

A Branch file holds the full record and only the final active view. Request k was compiled from
the view as it stood before the k-th response, so that view is rebuilt by replaying the record in
time order (created_at, else record order): a message joins the view when it is created; a note
takes the place of the messages it replaced, at the first one's position; a clipped copy takes its
original's place. Which messages a note replaced is read, best first, from its `context_replaced`
indices (foldscope's notes), else inferred: the messages in view from its `context_first_index` on
(from the start when it has none) that are out of the final view, of the kinds its fold's stage
folds (tool calls and results for tool_io), the first `messages_folded` of them when the run
manifest's context_folds record (by its `note_index`, else matched to notes in time order) says how
many. Where the file states a view (a `view` event, which foldscope writes where the replay would not
give the view a request was sent, or to say the active view was edited after the record's last
message), the replay takes it. An AssistantResponse marked `not_a_request` answered no request and is
in the record only. Every inference the file cannot settle, and that a request's view depends on, is
said in the session's warnings.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.model.views import SharedView, TrackedView, ViewSharer

TOOL_KINDS = ("action_request", "action_response")
VIEW_EVENT = "view"  # a view the file states: {"kind": "view", "next": id or null, "view": [ids]}
NOT_A_REQUEST = "not_a_request"  # metadata of an AssistantResponse that answered no request (a placeholder)
NOTELESS_STAGES = ("clip",)  # fold stages whose context_folds records make clipped copies, not a note


def is_request(message: Message) -> bool:
    """Whether an assistant message answered a request (a `not_a_request` one is in the record only)."""
    return message.kind == "assistant" and message.metadata.get(NOT_A_REQUEST) is not True


def request_views(
    record: FullRecord,
    final_view: Sequence[str],
    manifest: Mapping[str, Any] | None,
    warnings: list[str],
    events: Sequence[Mapping[str, Any]] = (),
) -> dict[str, SharedView]:
    """The view each assistant response's request was compiled from, by the response's id.

    A `branch` event (a rewind in the source, as the Claude Code reader writes it) sets the view to
    its `kept` ids when the replay reaches its `next` message: the abandoned branch left the view then.
    A `view` event sets it the same way; one whose `next` is null says the active view was edited after
    the record's last message, so the replay's end need not match it.
    """
    return _rebuild(record, final_view, manifest, warnings, events, None)[0]


def view_statements(
    record: FullRecord,
    final_view: Sequence[str],
    manifest: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    sent: Mapping[str, Sequence[str]],
    known: Collection[str] = (),
) -> list[dict[str, Any]]:
    """The `view` events a file needs so that request_views rebuilds `sent` (each request's view, by its
    response's id) and reads the active view back with no warning but those `known` (the session's own): one
    where the replay would part from a request's view or infer it with a new warning, and one at the end when
    the active view was changed after the record's last message."""
    return _rebuild(record, final_view, manifest, [], events, (sent, set(known)))[1]


def _rebuild(
    record: FullRecord,
    final_view: Sequence[str],
    manifest: Mapping[str, Any] | None,
    warnings: list[str],
    events: Sequence[Mapping[str, Any]],
    settle: tuple[Mapping[str, Sequence[str]], set[str]] | None,
) -> tuple[dict[str, SharedView], list[dict[str, Any]]]:
    sent, known = settle if settle is not None else (None, set())
    rewinds = {
        e["next"]: [m for m in e.get("kept", ()) if isinstance(m, str) and m in record]
        for e in events
        if e.get("kind") == "branch" and isinstance(e.get("next"), str) and isinstance(e.get("kept"), list)
    }
    stated = {
        e["next"]: [m for m in e["view"] if isinstance(m, str) and m in record]
        for e in events
        if e.get("kind") == VIEW_EVENT and isinstance(e.get("next"), str) and isinstance(e.get("view"), list)
    }
    edited_at_end = any(e.get("kind") == VIEW_EVENT and e.get("next") is None for e in events)
    messages = list(record)
    final = set(final_view)
    order = _time_order(messages)
    notes = [messages[i] for i in order if messages[i].kind == "note"]
    folds = _fold_for_note(notes, manifest, warnings, record)
    replay = _Replay(record, final, warnings)
    views: dict[str, SharedView] = {}
    statements: list[dict[str, Any]] = []
    sharer = ViewSharer()  # one list for the views between two folds, not a copy per request (core.model.views)
    last: tuple[SharedView, Sequence[str]] | None = None  # the previous request's view, rebuilt and sent (equal)
    for i in order:
        message = messages[i]
        if message.id in rewinds:
            replay.view = TrackedView(rewinds[message.id])
        if message.id in stated:
            replay.view = TrackedView(stated[message.id])
            replay.pending.clear()  # the file states the view: what the replay inferred before it is not used
        if message.kind == "assistant":
            if not is_request(message):
                continue  # a placeholder no request sent: in the record, never in a view
            view = sharer.view(replay.view)
            truth = sent.get(message.id) if sent is not None else None
            if truth is not None and (not _same(view, truth, last) or replay.new_warnings(known)):
                statements.append({"kind": VIEW_EVENT, "next": message.id, "view": list(truth)})
                replay.view = TrackedView(truth)
                replay.pending.clear()
                view = sharer.view(replay.view)
            last = (view, truth) if truth is not None else None
            replay.flush()
            views[message.id] = view
            replay.view.append(message.id)
        elif message.kind == "note":
            replay.note(message, folds.get(message.id))
        elif message.is_clipped_copy:
            replay.copy(message)
        else:
            replay.view.append(message.id)
    unexplained = final.symmetric_difference(replay.view)
    if sent is not None and (unexplained or replay.new_warnings(known)):
        statements.append({"kind": VIEW_EVENT, "next": None})
    if edited_at_end:
        replay.pending.clear()  # the active view was set after the last request: no request used the replay's end
    replay.flush()
    if unexplained and not edited_at_end:
        warnings.append(
            f"rebuilding past request views: {len(unexplained)} message(s) differ between the replayed view and the "
            "file's active view (left or came back with no note or copy saying when); past requests count them as "
            "they were before that change"
        )
    return views, statements


def _same(view: SharedView, truth: Sequence[str], last: tuple[SharedView, Sequence[str]] | None) -> bool:
    """Whether a rebuilt view is the view sent; when both only extend the previous request's (equal) views, only
    what each added is compared (a trace of k requests over n messages costs about n, not k times n)."""
    if len(view) != len(truth):
        return False
    if last is not None:
        before, sent_before = last
        n = len(before)
        extends = (
            view.shared_start(before) == n
            and len(sent_before) == n
            and (truth.shared_start(sent_before) == n if isinstance(truth, SharedView) else False)
        )
        if extends:
            return view[n:] == tuple(truth[n:])
    return tuple(view) == tuple(truth)


def _time_order(messages: list[Message]) -> list[int]:
    # lionagi appends a note to the record when it is made, but stands it early in the view; created_at is
    # the order things happened. Without a time on every message the record's order is all there is.
    if all(isinstance(m.created_at, (int, float)) for m in messages):
        return sorted(range(len(messages)), key=lambda i: (messages[i].created_at, i))
    return list(range(len(messages)))


def _fold_for_note(
    notes: list[Message], manifest: Mapping[str, Any] | None, warnings: list[str], record: FullRecord
) -> dict[str, Mapping[str, Any]]:
    """Each note's context_folds record: by the record's `note_index` (foldscope's fold writes it), else paired in
    time order when the records left are one per note left. A clip's record makes copies, no note; a source's
    compaction and a hand compaction make a note with no record."""
    folds = manifest.get("context_folds") if isinstance(manifest, Mapping) else None
    folds = [f for f in folds if isinstance(f, Mapping)] if isinstance(folds, list) else []
    matched: dict[str, Mapping[str, Any]] = {}
    rest: list[Mapping[str, Any]] = []
    for fold in folds:
        at = fold.get("note_index")
        if isinstance(at, int) and not isinstance(at, bool) and 0 <= at < len(record) and record[at].kind == "note":
            matched[record[at].id] = fold
        elif fold.get("stage") not in NOTELESS_STAGES:
            rest.append(fold)
    left = [n for n in notes if n.id not in matched and not _has_no_record(n)]
    if not rest or not left:
        return matched
    if len(rest) != len(left):
        warnings.append(
            f"the manifest has {len(rest)} context_folds records for {len(left)} notes; notes are "
            "not matched to records, so how many messages each replaced is inferred"
        )
        return matched
    timed = all(isinstance(f.get("at"), (int, float)) for f in rest)
    ordered = sorted(rest, key=lambda f: f["at"]) if timed else rest
    return {**matched, **{note.id: fold for note, fold in zip(left, ordered)}}


def _has_no_record(note: Message) -> bool:
    """A note no context_folds record stands for: a source's own compaction, or a hand compaction."""
    return note.metadata.get("compaction") is True or note.metadata.get("context_fold_stage") == "compact"


class _Replay:
    """The view as it stood while the record is replayed in time order."""

    def __init__(self, record: FullRecord, final: set[str], warnings: list[str]) -> None:
        self.record, self.final, self.warnings = record, final, warnings
        self.view: list[str] = TrackedView()  # tells the request views what changed (core.model.views)
        # What was inferred since the last request: said only if a request's view depends on it (flush), not when
        # the file states the view before the next request.
        self.pending: list[str] = []

    def new_warnings(self, known: set[str]) -> bool:
        return any(w not in known for w in self.pending)

    def flush(self) -> None:
        self.warnings.extend(self.pending)
        self.pending.clear()

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
        stand_in = next((p for p, mid in enumerate(self.view) if mid == original or self.record.get(mid).clipped_from == original), None)
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
                self.pending.append(f"{where} replaced {len(ids) - len(present)} message(s) that were not in the view when it was made")
            return present
        first = _first_index(note)
        stage = fold.get("stage") if fold else None
        candidates = [mid for mid in self.view if self._may_have_replaced(mid, first, stage)]
        count = fold.get("messages_folded") if fold else None
        if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
            if len(candidates) < count:
                self.pending.append(
                    f"{where}: its fold record says {count} messages were folded, but only "
                    f"{len(candidates)} in the view then are out of the final view"
                )
            return candidates[:count]
        start = f"index {first}" if first is not None else "the start (it records no first index)"
        self.pending.append(
            f"{where} does not record which messages it replaced: taken as the {len(candidates)} "
            f"message(s) in view from {start} that are out of the final view"
        )
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

"""Delivery: which messages a completed request carried, kept in branch metadata, and cloning that maps it.

A message is delivered once a completed request carried it (ADR-0130 Amendment 2, point 1).
The delivered ids live in `branch_metadata["delivered"]`, a list the native writer keeps. A
session without that record counts as delivered every message before its newest assistant
response that is not a note. Results the model has not read never fold.
"""

from __future__ import annotations

import copy
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import FullRecord, Message, Request, Session
from foldscope.core.model.views import SharedView

DELIVERED_KEY = "delivered"
# Originals restored or read by read_result: not clipped again before the next completed request.
NO_CLIP_KEY = "context_no_clip"
# The calls each fold note lists, by note id: an `all` fold carries them into its own note.
NOTE_CALLS_KEY = "context_note_calls"


class _Live:
    """The delivered ids kept live for one session: the stored list this copy was made from, how much of it the
    set holds, and the ids of the last view marked. The stored list only grows (a message once delivered stays
    delivered; a new list, from a snapshot or a clone, is read afresh), so each call costs what was added."""

    __slots__ = ("stored", "read", "ids", "marked", "owned")

    def __init__(self, stored: list) -> None:
        self.stored, self.read = stored, 0
        self.ids: set[str] = set()
        self.marked: Sequence[str] = ()  # a view's ids (a tuple or a SharedView), each delivered and in the record
        self.owned = False  # the list is one mark_delivered made: it may grow in place

    def catch_up(self) -> set[str]:
        if len(self.stored) > self.read:
            self.ids.update(mid for mid in self.stored[self.read :] if isinstance(mid, str))
            self.read = len(self.stored)
        return self.ids


LIVE_KEY = "delivered"  # the live copy's place in Session.extras' private cache (never written to a file)


def _live(session: Session) -> _Live | None:
    """The session's live delivered ids, when its stored record is a list (read afresh when the list was replaced)."""
    stored = session.branch_metadata.get(DELIVERED_KEY)
    if not isinstance(stored, list):
        return None
    live = session.caches.get(LIVE_KEY)
    if not isinstance(live, _Live) or live.stored is not stored or len(stored) < live.read:
        live = session.caches[LIVE_KEY] = _Live(stored)
    live.catch_up()
    return live


def delivered_ids(session: Session) -> set[str]:
    """The ids a completed request carried; without a record, what predates the newest assistant response.
    The set is the session's live one: read it, never change it (mark_delivered does)."""
    live = _live(session)
    if live is not None:
        return live.ids
    return default_delivered(session.record)


def default_delivered(record: FullRecord) -> set[str]:
    """Every message before the newest assistant response that is not a note."""
    newest = next((i for i in range(len(record) - 1, -1, -1) if record[i].kind == "assistant"), -1)
    return {record[i].id for i in range(newest) if record[i].kind != "note"}


def is_delivered(message: Message, delivered: set[str], record: FullRecord) -> bool:
    """A copy counts as delivered when it or its original was: the model read the original whole."""
    if message.id in delivered:
        return True
    source = message.clipped_from
    return isinstance(source, str) and source in delivered and source in record


def mark_delivered(session: Session, ids: Iterable[str]) -> list[str]:
    """Record a completed request: its view's ids become delivered; returns the ids newly marked.

    The first mark turns the default rule into an explicit record, so nothing delivered before
    is forgotten. A completed request also ends the no-clip protection of restored or read originals.
    """
    live = _live(session)
    if live is None or not live.owned:
        known = delivered_ids(session)
        stored = session.branch_metadata.get(DELIVERED_KEY)
        stored = list(stored) if isinstance(stored, list) else [m.id for m in session.record if m.id in known]
        session.branch_metadata[DELIVERED_KEY] = stored  # the session's own list from here on: it grows in place
        live = _live(session)
        assert live is not None
        live.owned = True
    ids = ids if isinstance(ids, (tuple, SharedView)) else tuple(ids)  # kept as the last view marked: never changes
    # A completed request's view mostly repeats the last one marked: only the ids after their shared start are new.
    # Two views of one list (the fold's replay, request after request) know it without reading an id.
    marked = live.marked
    start = marked.shared_start(ids) if type(marked) is SharedView else None
    if start is None:
        start = common_start(marked, ids) if marked else 0
    known, stored, record = live.ids, live.stored, session.record
    added = []
    missing = None  # the first id the record lacks: a later mark must look at it again
    for k, mid in enumerate(ids[start:], start):  # one slice (a SharedView's is a tuple), not a Python index an id
        if mid not in known:
            if mid not in record:
                missing = k if missing is None else missing
                continue
            known.add(mid)
            stored.append(mid)
            added.append(mid)
    live.read = len(stored)
    live.marked = ids if missing is None else ids[:missing]
    session.branch_metadata.pop(NO_CLIP_KEY, None)
    return added


def no_clip_ids(session: Session) -> set[str]:
    stored = session.branch_metadata.get(NO_CLIP_KEY)
    return {m for m in stored if isinstance(m, str)} if isinstance(stored, list) else set()


def protect_from_clip(session: Session, original_ids: Iterable[str]) -> None:
    """A restored original, or one just read, is not clipped again before the next completed request."""
    stored = list(no_clip_ids(session))
    for mid in original_ids:
        if mid not in stored:
            stored.append(mid)
    if stored:
        session.branch_metadata[NO_CLIP_KEY] = sorted(stored)


def note_calls(session: Session) -> dict[str, list[dict[str, Any]]]:
    stored = session.branch_metadata.get(NOTE_CALLS_KEY)
    return stored if isinstance(stored, dict) else {}


def set_note_calls(session: Session, note_id: str, calls: list[dict[str, Any]] | None) -> None:
    """Record (or with None drop) the calls a fold note lists."""
    stored = dict(note_calls(session))
    if calls is None:
        stored.pop(note_id, None)
    else:
        stored[note_id] = calls
    if stored:
        session.branch_metadata[NOTE_CALLS_KEY] = stored
    else:
        session.branch_metadata.pop(NOTE_CALLS_KEY, None)


def clone_session(session: Session, new_id: Callable[[], str] | None = None) -> tuple[Session, dict[str, str]]:
    """A copy of the session with new message ids; view, delivery, copies' `clipped_from`, calls and the
    protected first round's decision mapped.

    Returns the clone and the map from each old id to its new one. The source is not changed.
    """
    make = new_id or (lambda: str(uuid.uuid4()))
    ids = {m.id: make() for m in session.record}
    record = FullRecord(_cloned(m, ids) for m in session.record)
    branch = copy.deepcopy(session.branch)
    clone = Session(
        record=record,
        view=[ids[mid] for mid in session.view],
        format=session.format,
        source="",
        branch=branch,
        manifest=copy.deepcopy(session.manifest),
        events=copy.deepcopy(session.events),
        trace=[_mapped_request(r, ids) for r in session.trace],
        warnings=list(session.warnings),
        model=session.model,
        scale=session.scale,
        unseen_head=session.unseen_head,
        extras={k: v for k, v in session.extras.items() if k not in ("lionagi_pile",)},
    )
    meta = clone.branch_metadata
    current = meta.get("current_progression")
    if isinstance(current, dict):
        current["order"] = list(clone.view)
    for key in (DELIVERED_KEY, NO_CLIP_KEY):
        if isinstance(meta.get(key), list):
            meta[key] = [ids[m] for m in meta[key] if m in ids]
    if isinstance(meta.get(NOTE_CALLS_KEY), dict):
        meta[NOTE_CALLS_KEY] = {ids[k]: v for k, v in meta[NOTE_CALLS_KEY].items() if k in ids}
    if isinstance(branch.get("id"), str):
        branch["id"] = make()
    from foldscope.core.request.first_round import remap_decision

    remap_decision(clone, ids)  # the protected round's members renamed; a clone missing one starts pending
    return clone, ids


def _cloned(message: Message, ids: Mapping[str, str]) -> Message:
    content = dict(message.content)
    for key in ("action_request_id", "action_response_id"):
        if isinstance(content.get(key), str) and content[key] in ids:
            content[key] = ids[content[key]]
    metadata = dict(message.metadata)
    metadata["clone_from"] = message.id
    source = metadata.get("clipped_from")
    if message.kind == "action_response" and isinstance(source, str) and source in ids:
        metadata["clipped_from"] = ids[source]
    return Message(ids[message.id], message.kind, message.created_at, content, metadata, message.provenance, None)


def _mapped_request(request: Request, ids: Mapping[str, str]) -> Request:
    response = ids.get(request.response_id) if request.response_id else None
    return Request(request.index, tuple(ids[m] for m in request.view if m in ids), response, request.usage, request.at, request.model)

"""Actions on a session as command objects: each does and undoes, and says what changed; a CommandStack holds them.

read_result, restore, evict, evict_action_results, compact, clip, peek, expand and the fold
itself. No action removes or changes a message of the full record: copies and notes are
appended, and undo puts back the view, branch metadata and manifest exactly as they were
(messages an action appended stay in the record, outside the view).
"""

from __future__ import annotations

import time
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from foldscope.core.actions.recovery import Peek, ReadResult, replaced
from foldscope.core.fold import stages as st
from foldscope.core.fold.clip import bodies_of, build_copy, original_of, span_digest
from foldscope.core.fold.delivery import note_calls, protect_from_clip, set_note_calls
from foldscope.core.fold.summarise import BriefSummariser, Summariser, projected_span
from foldscope.core.model.commands import Changes, Command, message_at, new_uuid, refuse
from foldscope.core.model.session import Message, Session

if TYPE_CHECKING:
    from foldscope.core.fold.fold import FoldRun

__all__ = [
    "Changes",
    "Command",
    "CommandStack",
    "ReadResult",
    "Peek",
    "Restore",
    "Evict",
    "EvictActionResults",
    "Compact",
    "Clip",
    "Expand",
    "ApplyFold",
    "insert_chronologically",
]


class Restore(Command):
    """Bring messages back by chronology key; a clipped original replaces its copy, if the ceiling admits it.

    `fits(view_ids) -> bool` is the fold's admission check; without one (no fold installed) every
    restore is admitted. A copy is never restored on its own; a call brings its result back with it, and a
    result its call (ADR-0130 D4: the view never holds a result without its call); a result whose call the
    record does not hold is refused.
    """

    label = "restore"

    def __init__(self, indices: Iterable[int], fits: Callable[[Sequence[str]], bool] | None = None) -> None:
        super().__init__()
        self.indices = sorted(set(indices))
        self.fits = fits

    def apply(self, session: Session) -> Changes:
        record = session.record
        bad = [i for i in self.indices if message_at(session, i) is None]
        if bad:
            return refuse(self, f"no message at index {bad[0]} (the full record has {len(record)})")
        view = session.view_messages()
        in_view = {m.id for m in view}
        copy_at = {m.clipped_from: p for p, m in enumerate(view) if m.is_clipped_copy}
        wanted = [record[i] for i in self.indices]
        for m in list(wanted):  # a call comes back with its result, so every call keeps its result
            result = m.content.get("action_response_id") if m.kind == "action_request" else None
            if isinstance(result, str) and result in record and result not in in_view and result not in copy_at:
                wanted.append(record.get(result))
        for m in list(wanted):
            if m.kind != "action_response" or m.is_clipped_copy or m.id in in_view:
                continue
            call = call_of(m, record)
            if call is None:
                index = record.index_of(m.id)
                return refuse(
                    self,
                    f"restore refused: the tool result at index {index} answers no call the record "
                    "holds, and a request may not carry a result without its call (ADR-0130 D4)",
                )
            if call.id not in in_view and call not in wanted:
                wanted.append(call)
        swaps: dict[int, Message] = {}
        inserts: list[Message] = []
        for m in wanted:
            if m.id in in_view or m.is_clipped_copy or m in inserts or m in swaps.values():
                continue
            if m.id in copy_at:
                swaps[copy_at[m.id]] = m
            else:
                inserts.append(m)
        new_view = [swaps.get(p, m) for p, m in enumerate(view)]
        new_view = insert_chronologically(new_view, inserts, session)
        ids = [m.id for m in new_view]
        if swaps and self.fits is not None and not self.fits(ids):
            first = min(swaps.values(), key=lambda m: record.index_of(m.id))
            index = record.index_of(first.id)
            return refuse(
                self,
                (
                    f"restore refused: the view would no longer fit under the ceiling with the original at index "
                    f"{index} whole; read the omitted part with read_result(index={index}, offset=..., limit=...) instead"
                ),
            )
        restored = list(swaps.values()) + inserts
        if not restored:
            self.result = {"success": True, "restored": 0}
            return Changes(message="nothing to restore")
        session.set_view(ids)
        protect_from_clip(session, [m.id for m in restored if m.kind == "action_response"])
        self.result = {"success": True, "restored": len(restored), "indices": sorted(record.index_of(m.id) for m in restored)}
        return Changes(view=True, metadata=True)


def call_of(result: Message, record) -> Message | None:
    """The tool call a result answers, in the full record (by either side's link), or None."""
    linked = result.content.get("action_request_id")
    if isinstance(linked, str) and linked in record and record.get(linked).kind == "action_request":
        return record.get(linked)
    return next((m for m in record if m.kind == "action_request" and m.content.get("action_response_id") == result.id), None)


def insert_chronologically(view: list[Message], inserts: Sequence[Message], session: Session) -> list[Message]:
    """Each insert goes before the first view message whose chronology key is greater than its own."""
    if not inserts:
        return view
    record = session.record
    running, peaks = -1, []
    for m in view:
        running = max(running, st.chronology_key(m, record))
        peaks.append(running)
    slots: dict[int, list[Message]] = {}
    for m in sorted(inserts, key=lambda m: st.chronology_key(m, record)):
        slots.setdefault(bisect_right(peaks, st.chronology_key(m, record)), []).append(m)
    out: list[Message] = []
    for position, m in enumerate(view):
        out.extend(slots.get(position, ()))
        out.append(m)
    out.extend(slots.get(len(view), ()))
    return out


class Evict(Command):
    """Take messages out of the view by index (a copy of a named original too); a call and its result go together."""

    label = "evict"

    def __init__(self, indices: Iterable[int]) -> None:
        super().__init__()
        self.indices = sorted(set(indices))

    def apply(self, session: Session) -> Changes:
        record = session.record
        bad = [i for i in self.indices if message_at(session, i) is None]
        if bad:
            return refuse(self, f"no message at index {bad[0]} (the full record has {len(record)})")
        named = {record[i].id for i in self.indices}
        view = session.view_messages()
        chosen = [m.id for m in view[1:] if m.id in named or m.clipped_from in named]
        return _take_out(self, session, view, chosen)


class EvictActionResults(Command):
    """Take every tool result but the newest `keep_last` out of the view, with the calls they answer."""

    label = "evict tool results"

    def __init__(self, keep_last: int = 5) -> None:
        super().__init__()
        self.keep_last = max(0, keep_last)

    def apply(self, session: Session) -> Changes:
        view = session.view_messages()
        results = [m.id for m in view[1:] if m.kind == "action_response"]
        chosen = results[: len(results) - self.keep_last] if self.keep_last else results
        return _take_out(self, session, view, chosen)


def _take_out(command: Command, session: Session, view: list[Message], chosen: list[str]) -> Changes:
    facts = st.view_facts(view, session.record, set())
    # a result takes its call out with it, and a call its result (ADR-0130 D4: neither is sent without the other)
    taken = (
        set(chosen)
        | {facts.call_of[m] for m in chosen if m in facts.call_of}
        | {facts.result_of[m] for m in chosen if m in facts.result_of}
    )
    taken -= {view[0].id} if view else set()
    if not taken:
        command.result = {"success": True, "removed": 0}
        return Changes(message="nothing to evict")
    session.set_view(m.id for m in view if m.id not in taken)
    command.result = {"success": True, "removed": len(taken), "active": len(session.view)}
    return Changes(view=True)


class Compact(Command):
    """A note over the view's span from index `first` to index `last` (the head and the task stay)."""

    label = "compact"

    def __init__(
        self,
        first: int,
        last: int,
        summary: str | None = None,
        summariser: Summariser | None = None,
        ceiling: int | None = None,
        new_id: Callable[[], str] | None = None,
        clock: Callable[[], float | None] = time.time,
        policy: Any = None,
    ) -> None:
        super().__init__()
        self.first, self.last, self.summary, self.policy = first, last, summary, policy
        self.summariser = summariser or BriefSummariser()
        self.ceiling, self.new_id, self.clock = ceiling, new_id, clock
        self._note: Message | None = None

    def apply(self, session: Session) -> Changes:
        record = session.record
        view = session.view_messages()
        positions = {m.id: p for p, m in enumerate(view)}
        ends = [message_at(session, i) for i in (self.first, self.last)]
        if any(m is None or m.id not in positions for m in ends):
            return refuse(self, f"indices {self.first} and {self.last} must both name messages in the active view")
        lo, hi = sorted(positions[m.id] for m in ends)  # type: ignore[union-attr]
        facts = st.view_facts(view, record, {m.id for m in view})
        chosen = st.keep_pairs([m.id for m in view[lo : hi + 1] if m.id not in (facts.head, facts.task)], facts)
        if not chosen:
            return refuse(self, "nothing to compact in that span (the head and the task instruction stay)")
        taken = set(chosen)
        folded = [m for m in view if m.id in taken]
        calls = st.carried_calls(folded, record, note_calls(session))
        source = projected_span(folded, record, self.policy)  # under a bound, never a whole hidden body
        summary = self.summariser.summarise(source, calls) if self.summary is None else None
        text = summary.text if summary else self.summary
        body = st.note_text(len(folded), self.ceiling, calls, text, summary.lists_calls if summary else False)
        note = st.make_note(body, folded, record, "compact", self.new_id or new_uuid, self.clock(), span_digest(folded))
        record.append(note)
        session.set_view(m.id for m in st.replace_with_note(view, chosen, note))
        set_note_calls(session, note.id, calls)
        self.result = {"success": True, "compacted": len(folded), "note_index": record.index_of(note.id)}
        return Changes(view=True, added=(note.id,), metadata=True)


class Clip(Command):
    """Clip the original at `index` by hand: each body longer than `keep` keeps `keep` characters (head 3 : tail 1).

    A result out of the active view (neither it nor a copy of it there) is refused: its copy would join the view
    and make the request larger. With `into_view` the copy joins it, with its call when that is out too.
    """

    label = "clip"

    def __init__(
        self,
        index: int,
        keep: int,
        new_id: Callable[[], str] | None = None,
        clock: Callable[[], float | None] = time.time,
        into_view: bool = False,
    ) -> None:
        super().__init__()
        self.index, self.keep, self.new_id, self.clock = index, keep, new_id, clock
        self.into_view = into_view

    def apply(self, session: Session) -> Changes:
        record = session.record
        message = message_at(session, self.index)
        if message is None or message.kind != "action_response":
            return refuse(self, f"no tool result at index {self.index}")
        if not isinstance(self.keep, int) or isinstance(self.keep, bool) or self.keep < 0:
            return refuse(self, f"keep must be a whole number of characters, not {self.keep!r}")
        original = original_of(message, record)
        index = record.index_of(original.id)
        kept = {b.key: self.keep for b in bodies_of(original) if len(b.text) > self.keep}
        if not kept:
            return refuse(self, f"the result at index {index} has no body longer than {self.keep} characters")
        view = session.view_messages()
        at = next((p for p, m in enumerate(view) if m.id == original.id or m.clipped_from == original.id), None)
        call = call_of(original, record) if at is None else None
        if at is None and not self.into_view:
            return refuse(
                self,
                f"the result at index {index} is not in the active view: its clipped copy would join "
                "it and make the request larger; restore it, or clip it into the view",
            )
        if at is None and call is None:
            return refuse(
                self,
                f"the result at index {index} answers no call the record holds, and a request may "
                "not carry a result without its call (ADR-0130 D4)",
            )
        clipped = build_copy(original, index, kept, new_id=self.new_id or None, created_at=self.clock())
        record.append(clipped)
        if at is not None:
            view[at] = clipped
        else:
            in_view = {m.id for m in view}
            view = insert_chronologically(view, [clipped] + ([call] if call and call.id not in in_view else []), session)
        session.set_view(m.id for m in view)
        self.result = {"success": True, "index": index, "copy_index": record.index_of(clipped.id), "kept": self.keep}
        return Changes(view=True, added=(clipped.id,))


def stands_in_view(session: Session, index: int) -> bool:
    """Whether the message at `index`, or a clipped copy of its original, is in the active view."""
    message = message_at(session, index)
    if message is None:
        return False
    original = original_of(message, session.record)
    return any(m.id == original.id or m.clipped_from == original.id for m in session.view_messages())


class Expand(Command):
    """Put a note's replaced messages back in its place (verified first); the note leaves the view."""

    label = "expand"

    def __init__(self, note_index: int) -> None:
        super().__init__()
        self.note_index = note_index

    def apply(self, session: Session) -> Changes:
        found = replaced(session, self.note_index)
        if isinstance(found, str):
            return refuse(self, found)
        note, messages, verified = found
        if verified is False:
            return refuse(self, f"the messages the note at index {self.note_index} replaced do not match its SHA-256")
        record = session.record
        view = [m for m in session.view_messages() if m.id != note.id]
        present = {m.id for m in view}
        # one form per original, as restore keeps it: a result whose original (or a copy of it) stands in the
        # view already stays out, and each message goes back to its chronological place, not the note's
        standing = {original_of(m, record).id for m in view if m.kind == "action_response"}
        back = []
        for m in messages:
            if m.id in present:
                continue
            if m.kind == "action_response":
                original = original_of(m, record).id
                if original in standing:
                    continue
                standing.add(original)
            back.append(m)
        for m in list(back):  # a call comes back with its result, wherever a later fold put it, as restore does
            result = m.content.get("action_response_id") if m.kind == "action_request" else None
            if isinstance(result, str) and result in record and result not in standing and result not in present:
                standing.add(result)
                back.append(record.get(result))
        view = insert_chronologically(view, back, session)
        session.set_view(m.id for m in view)
        self.result = {"success": True, "restored": len(back), "verified": verified}
        return Changes(view=True)


class ApplyFold(Command):
    """Run the fold once (`fold.run`) as an undoable action."""

    label = "fold"

    def __init__(self, fold: Any, reason: str = "manual") -> None:
        super().__init__()
        self.fold, self.reason = fold, reason
        self.run: FoldRun | None = None

    def apply(self, session: Session) -> Changes:
        length = len(session.record)
        run: FoldRun = self.fold.run(self.reason)
        self.run = run
        added = tuple(session.record[i].id for i in range(length, len(session.record)))
        self.result = {
            "success": True,
            "records": run.records,
            "estimate_before": run.estimate_before,
            "estimate_after": run.estimate_after,
            "target_reached": run.target_reached,
        }
        return Changes(view=run.landed, added=added, metadata=run.landed, folds=len(run.records))


class CommandStack:
    """The session's undo history: do, undo and redo, with labels for the GUI to mirror, and its clean state
    (as QUndoStack keeps it): the place in the history last saved, or none when no undo or redo reaches it."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._done: list[Command] = []
        self._undone: list[Command] = []
        self._clean: int | None = 0  # how many commands were done at the clean state; None: out of reach

    def do(self, command: Command) -> Changes:
        """Do `command`; keep it when it changed something and can be undone (merged into the one before when
        that one takes it in, unless the history is clean there: the saved state stays one undo away)."""
        changes = command.do(self.session)
        if command.undoable and changes.success and changes.changed:
            self._undone.clear()
            if self._clean is not None and self._clean > len(self._done):
                self._clean = None  # the saved state was undone, and now nothing redoes it
            top = self._done[-1] if self._done else None
            if top is not None and self._clean != len(self._done) and top.merge(command):
                if top.obsolete:
                    self._done.pop()
            else:
                self._done.append(command)
        return changes

    def undo(self) -> Changes | None:
        if not self._done:
            return None
        command = self._done.pop()
        self._undone.append(command)
        return command.undo(self.session)

    def redo(self) -> Changes | None:
        if not self._undone:
            return None
        command = self._undone.pop()
        self._done.append(command)
        return command.redo(self.session)

    @property
    def index(self) -> int:
        """How many commands are done (and not undone)."""
        return len(self._done)

    @property
    def is_clean(self) -> bool:
        """Whether the history stands where it was last marked clean (saved, or opened)."""
        return self._clean == len(self._done)

    def since_clean(self) -> list[Command] | None:
        """The commands between the clean state and now (done since, or undone past it); None when no undo or redo
        reaches the clean state."""
        if self._clean is None:
            return None
        if self._clean <= len(self._done):
            return self._done[self._clean :]
        return self._undone[len(self._undone) - (self._clean - len(self._done)) :]

    def set_clean(self) -> None:
        """The history as it stands now is the saved state."""
        self._clean = len(self._done)

    def reset_clean(self) -> None:
        """No place in the history is the saved state (the session holds changes no undo reaches)."""
        self._clean = None

    @property
    def can_undo(self) -> bool:
        return bool(self._done)

    @property
    def can_redo(self) -> bool:
        return bool(self._undone)

    @property
    def undo_label(self) -> str | None:
        return self._done[-1].label if self._done else None

    @property
    def redo_label(self) -> str | None:
        return self._undone[-1].label if self._undone else None

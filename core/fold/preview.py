"""Previewing a fold: run it on a copy of the session, say what each pass would do, and adopt it as one undoable action.

The copy shares the session's (immutable) messages and has its own record, view, branch metadata
and manifest, so the preview changes nothing. Adopting appends the messages the fold made to the
real record in the same order, so every index the preview shows (notes, copies) is the index they
get; undo puts the view, metadata, manifest and scale back exactly, as every action's undo does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.fold.fold import Count, Fold, FoldRun
from foldscope.core.fold.summarise import Summariser
from foldscope.core.model.commands import Changes, Command, refuse
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.request.measure import Measure


@dataclass(frozen=True)
class PassPreview:
    """One pass of the previewed fold: its record, and what it took out of and put into the view."""

    record: dict[str, Any]
    removed: tuple[str, ...]  # ids the pass took out of the view (folded, or replaced by a copy)
    added: tuple[str, ...]  # ids the pass put in (its note, its copies)

    @property
    def landed(self) -> bool:
        return self.record.get("outcome") == "landed"


@dataclass
class FoldPreview:
    """What the fold would do to the session as it stood: passes, estimates, the view after, the new messages."""

    measure: Measure  # the policy and ceiling it was previewed under
    run: FoldRun
    base_view: tuple[str, ...]
    base_length: int  # the full record's length the preview started from
    base_scale: float
    view_after: tuple[str, ...]
    new_messages: list[Message]  # appended by the fold, in order (notes, copies; rolled-back notes too)
    metadata_after: dict[str, Any]
    manifest_after: dict[str, Any] | None
    scale_after: float
    passes: list[PassPreview] = field(default_factory=list)

    @property
    def changes_anything(self) -> bool:
        return self.view_after != self.base_view

    def message(self, message_id: str, session: Session) -> Message:
        """A message the preview names, from the session's record or the fold's new messages."""
        if message_id in session.record:
            return session.record.get(message_id)
        return next(m for m in self.new_messages if m.id == message_id)

    def index_of(self, message_id: str, session: Session) -> int:
        """The full-record index the message has now, or will have once the preview is applied."""
        if message_id in session.record:
            return session.record.index_of(message_id)
        return self.base_length + next(i for i, m in enumerate(self.new_messages) if m.id == message_id)


def working_copy(session: Session, scale: float | None = None) -> Session:
    """A copy the fold may change freely: same messages, its own record, view, metadata and manifest."""
    return Session(
        record=FullRecord(session.record),
        view=list(session.view),
        format=session.format,
        source=session.source,
        branch=copy.deepcopy(session.branch),
        manifest=copy.deepcopy(session.manifest),
        trace=session.trace,
        model=session.model,
        scale=session.scale if scale is None else scale,
        unseen_head=session.unseen_head,
        extras=dict(session.extras),
    )


def preview_fold(
    session: Session,
    measure: Measure,
    count_for: Callable[[Session], Count] | None = None,
    *,
    scale: float | None = None,
    summariser: Summariser | None = None,
    reason: str = "manual",
    **options: Any,
) -> FoldPreview:
    """Run one fold (`Fold.run`) on a working copy; `count_for(copy)` gives the count over the copy's record.

    Without `count_for` the fold counts as the next request compiles under the measure's policy (its counter
    shared): the bound, the marks and the first round's frozen bound."""
    work = working_copy(session, scale)
    base_view, base_length, base_scale = tuple(work.view), len(work.record), work.scale
    count = count_for(work) if count_for is not None else None
    fold = Fold(work, measure, count=count, summariser=summariser, **options)
    run = fold.run(reason)
    preview = FoldPreview(
        measure,
        run,
        base_view,
        base_length,
        base_scale,
        tuple(work.view),
        [work.record[i] for i in range(base_length, len(work.record))],
        copy.deepcopy(work.branch_metadata),
        copy.deepcopy(work.manifest),
        work.scale,
    )
    before = base_view
    for record, after in zip(run.records, run.views):
        if record.get("outcome") == "landed":
            was, now = set(before), set(after)
            preview.passes.append(PassPreview(record, tuple(m for m in before if m not in now), tuple(m for m in after if m not in was)))
            before = after
        else:
            note = record.get("note_index")
            made = (work.record[note].id,) if isinstance(note, int) and note < len(work.record) else ()
            preview.passes.append(PassPreview(record, (), made))
    return preview


class ApplyPreview(Command):
    """Adopt a previewed fold as it was shown: its messages, view, metadata, records and scale."""

    label = "fold"

    def __init__(self, preview: FoldPreview) -> None:
        super().__init__()
        self.preview = preview

    def apply(self, session: Session) -> Changes:
        p = self.preview
        if tuple(session.view) != p.base_view or len(session.record) < p.base_length:
            return refuse(self, "the session changed since the preview; preview the fold again")
        if len(session.record) == p.base_length:  # a redo after undo finds them already appended
            for message in p.new_messages:
                session.record.append(message)
        elif any(m.id not in session.record for m in p.new_messages):
            return refuse(self, "the full record grew since the preview; preview the fold again")
        session.set_view(p.view_after)
        session.branch["metadata"] = copy.deepcopy(p.metadata_after)
        session.manifest = copy.deepcopy(p.manifest_after)
        if p.scale_after > p.base_scale:
            session.scale = max(session.scale, p.scale_after)  # only the summariser's raise, never the preview's own
        run = p.run
        self.result = {
            "success": True,
            "records": run.records,
            "estimate_before": run.estimate_before,
            "estimate_after": run.estimate_after,
            "target_reached": run.target_reached,
        }
        return Changes(view=p.changes_anything, added=tuple(m.id for m in p.new_messages), metadata=True, folds=len(run.records))

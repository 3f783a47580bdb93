"""The live bookkeeping (the delivered ids, the view's messages) equals a from-scratch recomputation after any
sequence of actions: requests marked, views grown, cut and replaced, the stored list swapped (a snapshot
restored), the record grown."""

from __future__ import annotations

from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from foldscope.core.fold.delivery import DELIVERED_KEY, NO_CLIP_KEY, default_delivered, delivered_ids, mark_delivered
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.model.views import SharedView


def reference_delivered(session: Session) -> set[str]:
    """delivered_ids as it was before the live copy: the stored list read whole on every call."""
    stored = session.branch_metadata.get(DELIVERED_KEY)
    if isinstance(stored, list):
        return {mid for mid in stored if isinstance(mid, str)}
    return default_delivered(session.record)


def reference_mark(session: Session, ids) -> list[str]:
    """mark_delivered as it was: a copy of the stored list and a pass over every id, on every request."""
    known = reference_delivered(session)
    stored = session.branch_metadata.get(DELIVERED_KEY)
    stored = list(stored) if isinstance(stored, list) else [m.id for m in session.record if m.id in known]
    added = []
    for mid in ids:
        if mid not in known and mid in session.record:
            known.add(mid)
            stored.append(mid)
            added.append(mid)
    session.branch_metadata[DELIVERED_KEY] = stored
    session.branch_metadata.pop(NO_CLIP_KEY, None)
    return added


KINDS = ("instruction", "assistant", "note")


class LiveDelivery(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.n = 0
        self.ours = Session(FullRecord(), [])
        self.theirs = Session(FullRecord(), [])
        self.shared: list[str] = []  # the fold replay's list of the view's ids: only appended to, a new one after a fold
        self.grow(3)

    def _message(self, kind: str) -> Message:
        self.n += 1
        key = "instruction" if kind == "instruction" else "assistant_response"
        return Message(f"m{self.n}", kind, None, {key: f"text {self.n}"})

    @rule(n=st.integers(1, 5), kind=st.sampled_from(KINDS), into_view=st.booleans())
    def grow(self, n: int, kind: str = "instruction", into_view: bool = True) -> None:
        for _ in range(n):
            m = self._message(kind)
            for s in (self.ours, self.theirs):
                s.record.append(m)
                if into_view:
                    s.view.append(m.id)  # in place, as the replay's arrivals do

    @rule(at=st.integers(0, 40))
    def cut(self, at: int) -> None:
        for s in (self.ours, self.theirs):
            s.set_view(s.view[: at % (len(s.view) + 1)])

    @rule(at=st.integers(0, 40))
    def drop_one(self, at: int) -> None:
        if self.ours.view:
            i = at % len(self.ours.view)
            for s in (self.ours, self.theirs):
                del s.view[i]  # in place, the list object kept

    @rule(extra=st.sampled_from([(), ("next",), ("not-in-record", "next")]))
    def mark(self, extra: tuple[str, ...]) -> None:
        # ids the record lacks yet ("next" is the id the next message will take): looked at again once it has them
        ids = list(self.ours.view) + [f"m{self.n + 1}" if x == "next" else x for x in extra]
        assert mark_delivered(self.ours, ids) == reference_mark(self.theirs, ids)

    @rule(shorter=st.integers(0, 3))
    def mark_a_view_of_one_growing_list(self, shorter: int) -> None:
        # The fold replay marks views of one list (SharedView): the next view adds to it, a fold starts another list.
        view = self.ours.view
        if len(view) >= len(self.shared) and view[: len(self.shared)] == self.shared:
            self.shared.extend(view[len(self.shared) :])
        else:
            self.shared = list(view)
        ids = SharedView(self.shared, max(0, len(self.shared) - shorter))
        assert mark_delivered(self.ours, ids) == reference_mark(self.theirs, list(ids))

    @rule(keep=st.integers(0, 40))
    def restore_snapshot(self, keep: int) -> None:
        stored = self.theirs.branch_metadata.get(DELIVERED_KEY)
        if isinstance(stored, list):
            for s in (self.ours, self.theirs):
                s.branch_metadata[DELIVERED_KEY] = list(stored[: keep % (len(stored) + 1)])

    @rule()
    def forget_the_record(self) -> None:
        for s in (self.ours, self.theirs):
            s.branch_metadata.pop(DELIVERED_KEY, None)

    @invariant()
    def the_same_delivered_ids_and_stored_list(self) -> None:
        assert delivered_ids(self.ours) == reference_delivered(self.theirs)
        assert self.ours.branch_metadata.get(DELIVERED_KEY) == self.theirs.branch_metadata.get(DELIVERED_KEY)

    @invariant()
    def the_view_messages_are_the_records_messages_for_the_view(self) -> None:
        got = self.ours.view_messages()
        assert len(got) == len(self.ours.view) and all(a is self.ours.record.get(b) for a, b in zip(got, self.ours.view))
        got.append(got[0] if got else None)  # a caller changing its list leaves the next answer alone
        assert len(self.ours.view_messages()) == len(self.ours.view)


TestLiveDelivery = LiveDelivery.TestCase
TestLiveDelivery.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)

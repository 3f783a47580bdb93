"""Where each id first shows on the timeline, as the fold panel steps to it."""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.model.views import SharedView, ViewSharer
from foldscope.core.readout.fold_facts import _Views
from tests.core.fold_sessions import Build

IDS = [f"m{i}" for i in range(12)]


def first_slots_by_scanning(views) -> dict[str, int]:
    """Every id of every view, in order: the slot of the first view holding it."""
    first: dict[str, int] = {}
    for slot, view in enumerate(views):
        for mid in view:
            first.setdefault(mid, slot)
    return first


# Each view grows the one before, or is another view altogether (a fold, a compaction, a rewind).
steps = st.lists(
    st.one_of(
        st.tuples(st.just("adds"), st.lists(st.sampled_from(IDS), max_size=3)),
        st.tuples(st.just("other"), st.lists(st.sampled_from(IDS), max_size=8)),
    ),
    max_size=12,
)


@given(steps=steps)
@settings(max_examples=300, deadline=None)
def test_the_first_slot_of_every_id_is_the_first_view_holding_it(steps):
    """The first slots are found from what each view adds to the one before; every id's is the first view holding it."""
    views: list[tuple[str, ...]] = []
    for how, ids in steps:
        views.append((views[-1] if views and how == "adds" else ()) + tuple(ids))
    b = Build()
    for _ in IDS:
        b.task()
    facts = _Views(b.session(), views, [None] * len(views))
    expected = first_slots_by_scanning(views)
    for mid in IDS:
        assert facts.first_slot([mid]) == expected.get(mid)
    assert facts.first_slot(IDS) == (min(expected.values()) if expected else None)


class CountedView(SharedView):
    """A request's view as the trace hands it out (core.model.views.SharedView) that counts the ids read from it."""

    __slots__ = ("reads",)

    def __init__(self, view: SharedView, reads: list[int]) -> None:
        super().__init__(view._ids, len(view))
        self.reads = reads

    def __iter__(self):
        self.reads[0] += len(self)
        return super().__iter__()

    def __getitem__(self, index):
        got = super().__getitem__(index)
        self.reads[0] += len(got) if isinstance(index, slice) else 1
        return got


def test_the_views_are_read_for_what_each_adds_and_never_copied():
    """A trace of growing views (each request's view the one before plus two ids, as a long session without
    folds): finding the first slots reads each id about once, not every view whole, and keeps the views given."""
    sharer, reads, ids, views = ViewSharer(), [0], [], []
    for n in range(400):
        ids += [f"q{n}", f"a{n}"]
        views.append(CountedView(sharer.view(ids), reads))
    b = Build()
    facts = _Views(b.session(), views, [None] * len(views))
    assert facts.first_slot(["a0"]) == 0 and facts.first_slot(["q399", "a399"]) == 399
    assert reads[0] <= 2 * len(ids)  # copying each view (the old rule) reads 160,400 ids; these add 800
    assert all(kept is given for kept, given in zip(facts.views, views))


# Issue 41, finding 5: the Folds table said a compaction took 123 messages where the inspector and `compactions` said
# 120 (the table read the reader's count, the inspector what left the view, `compactions` what left the requests).
@pytest.mark.parametrize("write", ["write_claude_code", "write_claude_code_continued"])
def test_the_folds_table_the_inspector_and_compactions_count_one_number_of_messages_a_compaction_took(tmp_path, write):
    from foldscope.core.cli.main import main
    from foldscope.core.formats import load_session
    from foldscope.core.readout.note_members import note_members
    from foldscope.core.readout.opening import build_document
    from tests.core.forensics import traces

    path = getattr(traces, write)(tmp_path)
    document = build_document(load_session(str(path)), str(path))
    (row,) = [r for r in document.folds if r.kind == "compaction"]
    members = note_members(document, row.note)
    assert members is not None and row.messages == len(members.indexes) == len(row.affected) > 0
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["compactions", str(path), "--json"]) == 0
    (compaction,) = json.loads(out.getvalue())["compactions"]
    assert compaction["dropped"]["messages"] == row.messages

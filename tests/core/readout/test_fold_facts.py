"""Where each id first shows on the timeline, as the fold panel steps to it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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
steps = st.lists(st.one_of(st.tuples(st.just("adds"), st.lists(st.sampled_from(IDS), max_size=3)),
                           st.tuples(st.just("other"), st.lists(st.sampled_from(IDS), max_size=8))), max_size=12)


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

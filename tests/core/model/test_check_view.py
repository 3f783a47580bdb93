"""Session.check_view: a view names messages of the full record, each once; checked holding a pointer an id (each
id's place, sorted), not a set of the ids (issue 17's import memory: the set was the peak of a reader's last step)."""

from __future__ import annotations

import tracemalloc

import pytest
from hypothesis import given
from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message, Session


def _record(n: int) -> FullRecord:
    return FullRecord(Message(f"m{i}", "instruction", None, {"instruction": "x"}) for i in range(n))


@given(st.lists(st.integers(0, 12), max_size=14), st.lists(st.sampled_from(["zz", "m99", 3]), max_size=2))
def test_a_view_is_good_when_every_id_is_a_message_of_the_record_and_none_is_twice(picks, strangers):
    record = _record(8)
    view = [f"m{i}" for i in picks] + strangers
    good = all(v in record for v in view) and len(set(view)) == len(view)
    if good:
        Session(record=record, view=view)
    else:
        with pytest.raises(ValueError, match="not in the full record|twice"):
            Session(record=record, view=view)


def test_checking_a_view_holds_a_pointer_an_id_not_a_set_of_them():
    record = _record(50_000)
    view = [m.id for m in record]
    tracemalloc.start()
    try:
        Session(record=record, view=view)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 12 * len(view), f"{peak / len(view):.0f} bytes an id"

"""Property tests over random sessions and random sequences of actions and folds.

The full record never loses or changes a message, the view is a subset of the record, every call
in a compiled request has its result, and undo returns the exact previous state (redo the next).
"""

from __future__ import annotations

import copy

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.actions.commands import ApplyFold, Clip, CommandStack, Compact, Evict, EvictActionResults, Expand, ReadResult, Restore
from foldscope.core.fold.fold import Fold
from foldscope.core.request.count import Counter
from tests.core.fold_sessions import Build, calls_have_results, fold_measure, payload, record_hashes, text_of

OUTPUTS = st.one_of(
    st.integers(10, 6_000).map(lambda n: text_of(n, n)),
    st.builds(
        lambda n, k: {"success": True, "content": text_of(n, n), "items": list(range(k)), "error": None},
        st.integers(10, 4_000),
        st.integers(0, 600),
    ),
)


@st.composite
def sessions(draw):
    b = Build()
    b.system(), b.task()
    for k in range(draw(st.integers(1, 5))):
        b.answer(f"round {k}")
        b.round(draw(st.lists(OUTPUTS, min_size=1, max_size=3)))
        if draw(st.integers(0, 4)) == 0:
            b.task(f"follow-up {k}")
    cut = draw(st.integers(2, len(b.messages)))
    return b.session(delivered=[m.id for m in b.messages[:cut]])


def state(session):
    return list(session.view), copy.deepcopy(session.branch_metadata), copy.deepcopy(session.manifest)


def action(data, session):
    n = len(session.record)
    index = st.integers(0, n - 1)
    notes = [i for i, m in enumerate(session.record) if m.kind == "note"]
    choices = ["clip", "restore", "evict", "evict_results", "compact", "read", "fold"] + (["expand"] if notes else [])
    kind = data.draw(st.sampled_from(choices))
    if kind == "clip":
        return Clip(data.draw(index), data.draw(st.integers(0, 3_000)))
    if kind == "restore":
        return Restore(data.draw(st.lists(index, max_size=4)))
    if kind == "evict":
        return Evict(data.draw(st.lists(index, max_size=3)))
    if kind == "evict_results":
        return EvictActionResults(data.draw(st.integers(0, 3)))
    if kind == "compact":
        return Compact(data.draw(index), data.draw(index))
    if kind == "read":
        return ReadResult(data.draw(index), data.draw(st.integers(0, 100)), data.draw(st.integers(1, 20_000)))
    if kind == "expand":
        return Expand(data.draw(st.sampled_from(notes)))
    counter = Counter()
    count = lambda ms: counter.count(list(ms), record=session.record)  # noqa: E731
    ceiling = max(1, int(count(session.view_messages()) * data.draw(st.floats(0.3, 1.5))))
    return ApplyFold(Fold(session, fold_measure(session, ceiling), count=count))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.data())
def test_random_actions_keep_the_record_whole_the_view_in_it_calls_answered_and_undo_exact(session, data):
    stack = CommandStack(session)
    for _ in range(data.draw(st.integers(1, 6))):
        hashes = record_hashes(session)
        before = state(session)
        command = action(data, session)
        changes = stack.do(command)
        assert record_hashes(session)[: len(hashes)] == hashes  # nothing lost or changed, only appended
        assert set(session.view) <= set(session.record.ids()) and len(set(session.view)) == len(session.view)
        assert calls_have_results(payload(session))
        if not changes.success:
            assert state(session) == before
            continue
        after = state(session)
        if stack.can_undo and stack._done[-1] is command:
            stack.undo()
            assert state(session) == before
            stack.redo()
            assert state(session) == after
        assert record_hashes(session)[: len(hashes)] == hashes


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), st.floats(0.2, 1.2), st.sampled_from([(0.8, 0.6), (0.9, 0.5), (0.5, 0.1)]))
def test_a_fold_lands_only_lowering_passes_and_keeps_head_task_and_undelivered(session, share, pair):
    counter = Counter()
    count = lambda ms: counter.count(list(ms), record=session.record)  # noqa: E731
    ceiling = max(1, int(count(session.view_messages()) * share))
    hashes = record_hashes(session)
    head, task = session.view[0], next(m.id for m in session.view_messages() if m.kind == "instruction")
    delivered = set(session.branch_metadata["delivered"])
    undelivered = [m for m in session.view_messages() if m.id not in delivered]
    run = Fold(session, fold_measure(session, ceiling, *pair), count=count).run()
    assert record_hashes(session)[: len(hashes)] == hashes
    assert all(r["estimate_after"] < r["estimate_before"] for r in run.records if r["outcome"] == "landed")
    assert run.estimate_after <= run.estimate_before
    assert head in session.view and task in session.view
    shown = {m.clipped_from or m.id for m in session.view_messages()}
    assert all(m.id in shown for m in undelivered)
    assert calls_have_results(payload(session))

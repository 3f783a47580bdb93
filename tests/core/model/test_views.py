"""A request's view shared with the views around it (core.model.views) reads exactly as the tuple copy the readers
made before: over random sequences of views (grow, cut, insert, replace, start over) every SharedView equals, hashes,
slices, iterates, indexes and compares as tuple(view) did at the moment it was made, whatever came after."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import FullRecord, Message, Request
from foldscope.core.model.views import SharedView, TrackedView, ViewSharer, added, first_shown, left_between

# One change to the active view between two requests, as the readers make them: messages appended, the view cut
# back (a rewind), a note put in the place of some (a compaction, a fold), one id replaced (a clipped copy), or none.
step = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 5)),
    st.tuples(st.just("cut"), st.integers(0, 30)),
    st.tuples(st.just("insert"), st.integers(0, 30)),
    st.tuples(st.just("replace"), st.integers(0, 30)),
    st.tuples(st.just("fresh"), st.integers(0, 6)),
)


def changed(view: list[str], op: str, n: int, made) -> list[str]:
    """The active view after one step (changed in place, or a fresh list), new ids numbered from `made`."""
    if op == "append":
        view.extend(f"m{next(made)}" for _ in range(n))
    elif op == "cut":
        del view[min(n, len(view)) :]
    elif op == "insert":
        view.insert(min(n, len(view)), f"note{next(made)}")
    elif op == "replace" and view:
        view[n % len(view)] = f"copy{next(made)}"
    elif op == "fresh":
        view = [f"m{next(made)}" for _ in range(n)]
    return view


def shared_and_copied(steps: list[tuple[str, int]]) -> tuple[list[SharedView], list[tuple[str, ...]]]:
    """Each request's view as the sharer hands it out, and as the tuple copy made at the same moment."""
    made = iter(range(10**6))
    view: list[str] = []
    sharer = ViewSharer()
    shared, copied = [], []
    for op, n in steps:
        view = changed(view, op, n, made)
        shared.append(sharer.view(view))
        copied.append(tuple(view))
    return shared, copied


@settings(max_examples=300, deadline=None)
@given(st.lists(step, max_size=40))
def test_every_shared_view_reads_as_the_tuple_copy_made_with_it(steps):
    shared, copied = shared_and_copied(steps)
    for view, copy in zip(shared, copied):
        assert view == copy and copy == view and not (view != copy)
        assert hash(view) == hash(copy)
        assert len(view) == len(copy) and list(view) == list(copy) and view.as_tuple() == copy
        assert list(reversed(view)) == list(reversed(copy))
        assert view != list(copy)  # like a tuple, never equal to a list
        for i in range(-len(copy), len(copy)):
            assert view[i] == copy[i]
        for start in (None, 0, 1, len(copy) // 2, -2, len(copy) + 3):
            for stop in (None, 0, 2, len(copy) - 1, -1, len(copy) + 3):
                assert view[start:stop] == copy[start:stop] and type(view[start:stop]) is tuple
        assert view[::2] == copy[::2] and view[::-1] == copy[::-1]
        for mid in set(copy) | {"absent"}:
            assert (mid in view) == (mid in copy)
            assert view.count(mid) == copy.count(mid)
            if mid in copy:
                assert view.index(mid) == copy.index(mid)
        assert view + ("x",) == copy + ("x",) and ("x",) + view == ("x",) + copy
        assert pickle.loads(pickle.dumps(view)) == copy
    for a, ca in zip(shared, copied):  # two shared views are equal exactly when their tuples are
        for b, cb in zip(shared, copied):
            assert (a == b) == (ca == cb) and (a == cb) == (ca == cb) and (cb == a) == (ca == cb)
            assert (a != cb) == (ca != cb)
            same = next((i for i, (x, y) in enumerate(zip(ca, cb)) if x != y), min(len(ca), len(cb)))
            assert common_start(a, b, equal=True) == same == common_start(a, cb, equal=True)  # the shortcut too


@settings(max_examples=200, deadline=None)
@given(st.lists(step, max_size=40))
def test_what_a_view_adds_to_the_one_before_is_what_the_tuple_copies_said(steps):
    """added(view, before): the ids after `before` where the view repeats it whole (the tuple copies' `view[:n] ==
    before`, which the passes over a trace read before), else None; for shared views, copies and the two mixed."""
    shared, copied = shared_and_copied(steps)
    for k in range(1, len(shared)):
        ca, cb = copied[k - 1], copied[k]
        rule = cb[len(ca) :] if cb[: len(ca)] == ca else None
        for a, b in ((shared[k - 1], shared[k]), (ca, cb), (ca, shared[k]), (shared[k - 1], cb)):
            got = added(b, a)
            assert (None if got is None else tuple(got)) == rule


@settings(max_examples=200, deadline=None)
@given(st.lists(step, max_size=40), st.lists(st.booleans(), max_size=40))
def test_the_first_view_each_id_shows_in_is_the_first_whose_ids_hold_it(steps, copies):
    """first_shown(views): each id's first view, as a scan of every view's ids gives it, for shared views read by their
    lengths alone, tuple copies and the two mixed (`copies`: which views are tuples)."""
    shared, copied = shared_and_copied(steps)
    views = [c if copy else s for s, c, copy in zip(shared, copied, copies + [False] * len(shared))]
    rule: dict[str, int] = {}
    for k, view in enumerate(copied):
        for mid in view:
            rule.setdefault(mid, k)
    assert first_shown(views) == rule


@settings(max_examples=200, deadline=None)
@given(st.lists(step, max_size=40))
def test_a_view_starts_a_new_list_only_when_it_parts_from_the_shared_one(steps):
    made = iter(range(10**6))
    view: list[str] = []
    sharer = ViewSharer()
    for op, n in steps:
        view = changed(view, op, n, made)
        shared_list, held = sharer._ids, list(sharer._ids)
        got = sharer.view(view)
        extends_or_starts = view[: len(held)] == held or held[: len(view)] == view
        assert (got._ids is shared_list) == extends_or_starts  # one list while the views only grow or step back
        assert got._ids[: len(held)] == held or got._ids is not shared_list  # what was handed out never changes


def test_a_request_with_a_shared_view_equals_one_with_the_tuple():
    sharer = ViewSharer()
    view = sharer.view(["a", "b"])
    assert Request(0, view, "r") == Request(0, ("a", "b"), "r")
    assert hash(Request(0, view, "r")) == hash(Request(0, ("a", "b"), "r"))


def test_a_shared_view_cannot_reach_past_its_list():
    with pytest.raises(ValueError):
        SharedView(["a"], 2)
    with pytest.raises(IndexError):
        SharedView(["a", "b"], 1)[1]


@settings(max_examples=200, deadline=None)
@given(st.lists(step, max_size=30))
def test_the_start_two_views_share_is_what_comparing_their_tuples_gives(steps):
    # common_start reads two views of one list as sharing the shorter one whole, without comparing an id.
    import operator
    from itertools import compress, count

    from foldscope.core.model.running_sum import common_start

    def rule(a, b, differ):
        return next(compress(count(), map(differ, a, b)), min(len(a), len(b)))

    shared, copied = shared_and_copied(steps)
    for a, ca in zip(shared, copied):
        for b, cb in zip(shared, copied):
            assert common_start(a, b) == rule(ca, cb, operator.is_not)
            assert common_start(a, b, equal=True) == common_start(a, cb, equal=True) == rule(ca, cb, operator.ne)


# Every way a reader can change its active view in place, each with its arguments drawn at random.
edit = st.one_of(
    st.tuples(st.just("append"), st.integers(0, 4), st.integers()),
    st.tuples(st.just("extend"), st.integers(0, 4), st.integers()),
    st.tuples(st.just("iadd"), st.integers(0, 4), st.integers()),
    st.tuples(st.sampled_from(["insert", "setitem", "delitem", "pop", "remove"]), st.integers(-40, 40), st.integers()),
    st.tuples(st.sampled_from(["setslice", "delslice"]), st.integers(-40, 40), st.integers(-40, 40)),
    st.tuples(st.sampled_from(["setstep", "delstep"]), st.integers(-40, 40), st.sampled_from([-2, -1, 2, 3])),
    st.tuples(st.sampled_from(["clear", "sort", "reverse", "imul", "assign", "share"]), st.integers(0, 3), st.integers()),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(edit, max_size=60))
def test_a_tracked_view_shares_as_the_tuple_copy_whatever_changed_it(edits):
    made = iter(range(10**6))
    view = TrackedView()
    sharer = ViewSharer()
    handed: list[tuple[SharedView, tuple[str, ...]]] = []

    def new(n: int = 1) -> list[str]:
        return [f"m{next(made)}" for _ in range(n)]

    for op, a, b in edits:
        size = len(view)
        if op == "append":
            for mid in new(a):
                view.append(mid)
        elif op == "extend":
            view.extend(new(a))
        elif op == "iadd":
            view += new(a)
        elif op == "insert":
            view.insert(a, new()[0])
        elif op == "setitem" and -size <= a < size:
            view[a] = new()[0]
        elif op == "delitem" and -size <= a < size:
            del view[a]
        elif op == "pop" and -size <= a < size:
            view.pop(a)
        elif op == "remove" and size:
            view.remove(view[a % size])
        elif op == "setslice":
            view[a:b] = new(abs(a - b) % 3)
        elif op == "delslice":
            del view[a:b]
        elif op == "setstep":
            view[a::b] = new(len(view[a::b]))
        elif op == "delstep":
            del view[a::b]
        elif op == "clear":
            view.clear()
        elif op == "sort":
            view.sort(key=lambda mid: hash(mid) % 7)
        elif op == "reverse":
            view.reverse()
        elif op == "imul":
            view *= a % 2
        elif op == "assign":  # a reader replaces its view with a new list (a rewind, a compaction)
            view = TrackedView(view[: a + 1] + new())
        handed.append((sharer.view(view), tuple(view)))
    for shared, copy in handed:  # each view as it was when handed out, whatever changed after
        assert shared == copy and shared.as_tuple() == copy and hash(shared) == hash(copy)


def test_sharing_a_tracked_view_compares_only_what_changed(monkeypatch):
    from foldscope.core.model import views

    compared = []
    real = views.common_start
    monkeypatch.setattr(views, "common_start", lambda a, b, **kw: compared.append(len(a)) or real(a, b, **kw))
    view, sharer = TrackedView([f"m{i}" for i in range(10_000)]), ViewSharer()
    sharer.view(view)
    compared.clear()
    for i in range(100):
        view.append(f"n{i}")
        sharer.view(view)  # appended only: nothing compared
    view[9_990] = "copy"  # a clipped copy near the end: only the last ten and what came after are compared
    assert sharer.view(view) == tuple(view)
    assert compared == [110]


def test_a_step_takes_what_its_view_before_held_and_what_was_written_up_to_the_newest_plain_message_it_holds():
    """left_between: what `before` held and `now` does not, and the plain messages written after the newest one `before`
    holds and before the newest plain one `now` holds (a compaction's command and the lines it wrote), `now`'s notes
    and an id the record lacks aside; the same with every id found in the record or not (Record.places' fallback)."""
    kinds = ["instruction", "assistant", "instruction", "assistant", "note", "instruction", "assistant", "instruction"]
    record = FullRecord(Message(f"m{i}", kind, float(i), {}, {}) for i, kind in enumerate(kinds))
    now = ("m4", "m5", "m7")  # the note, a prompt it kept, and the newest prompt: m6, written before it, taken too
    assert left_between(record, ("m0", "m1"), now) == (0, 1, 2, 3, 6)
    assert left_between(record, ("m0", "gone", "m1"), (*now, "gone too")) == (0, 1, 2, 3, 6)
    assert left_between(record, ("m0", "m1"), ("m4",)) == (0, 1)  # no plain message held: none taken as written since

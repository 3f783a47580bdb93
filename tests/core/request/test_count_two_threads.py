"""A cold count's new bodies, when there are enough of them, are counted on two threads: the same counts, in order,
and no thread left behind, whether the count ends or raises."""

from __future__ import annotations

import collections
import contextlib
import random
import threading
from unittest import mock

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request import count_texts, tokens
from foldscope.core.request.compile import compile_request, counted_text
from foldscope.core.request.count import Counter
from foldscope.core.request.counting import backend
from foldscope.core.request.tokens import count_text
from tests.core.session_strategies import records, views

fast_only = pytest.mark.skipif(tokens.BACKEND != tokens.FAST, reason=f"counted by tiktoken here: {tokens.WHY_SLOW}")

WORDS = 'the fold keeps every call with its result while the view shrinks ünï ✓ 42 "quoted" tab\there'.split(" ")


def big_view(chars: int, seed: int = 5) -> list[Message]:
    """Answers and prompts of random words holding at least `chars` characters in all."""
    rng = random.Random(seed)
    view, n = [], 0
    while n < chars:
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(50, 400)))
        kind, field = ("assistant", "assistant_response") if len(view) % 2 else ("instruction", "instruction")
        view.append(Message(f"m{len(view)}", kind, len(view), {field: text}))
        n += len(text)
    return view


def whole_count(view: list[Message]) -> int:
    return count_text(counted_text(compile_request(view, record=FullRecord(view))))


def counting_threads(monkeypatch, fail_on: str | None = None) -> collections.Counter[int]:
    """The batches quicktok is given on each thread, by thread (and a batch on `fail_on`'s thread raising). Where
    two threads count, each one's first batch waits for the other's (two seconds at most), so that both count whatever
    the scheduler does: either could take every run before the other wakes."""
    tokens.encoding()  # built: before it, a process's first characters are counted by core.request.small_count
    seen: collections.Counter[int] = collections.Counter()
    real = tokens.FastEncoding.count_batch
    main = threading.get_ident()
    both = threading.Barrier(2, timeout=2)
    already = threading.active_count()  # threads an earlier test left (a courier, a pool) are not the worker

    def count_batch(self, texts):
        me = threading.get_ident()
        if me not in seen and threading.active_count() > already:
            with contextlib.suppress(threading.BrokenBarrierError):
                both.wait()
        seen[me] += 1
        if fail_on == "worker" and me != main or fail_on == "main" and me == main:
            raise RuntimeError("counting failed")
        return real(self, texts)

    monkeypatch.setattr(tokens.FastEncoding, "count_batch", count_batch)
    return seen


@fast_only
def test_a_large_cold_count_counts_on_two_threads_the_whole_texts_count_and_leaves_no_thread(monkeypatch):
    before = set(threading.enumerate())  # an earlier test may have left a thread running
    view = big_view(count_texts.SPLIT_CHARS + 50_000)
    expected = whole_count(view)
    seen = counting_threads(monkeypatch)
    counter = Counter()
    counter.split_cpu = []
    with mock.patch.object(count_texts, "THREADS", 2):  # as on the 2-core machine, wherever the tests run
        assert counter.count(view, record=FullRecord(view)) == expected
    assert len(seen) == 2 and len(counter.split_cpu) == 1  # this thread and the worker both counted
    assert set(threading.enumerate()) == before  # no thread left by the count


@fast_only
def test_a_cold_count_below_the_split_size_counts_on_this_thread_alone(monkeypatch):
    view = big_view(count_texts.SPLIT_CHARS // 2)
    expected = whole_count(view)
    seen = counting_threads(monkeypatch)
    with mock.patch.object(count_texts, "THREADS", 2):
        assert Counter().count(view, record=FullRecord(view)) == expected
    assert set(seen) == {threading.get_ident()}


@fast_only
def test_with_a_child_counting_ahead_one_core_or_in_a_forked_child_the_count_stays_on_this_thread(monkeypatch):
    texts = [m.text for m in big_view(count_texts.SPLIT_CHARS + 50_000)]
    expected = [count_text(t) for t in texts]
    seen = counting_threads(monkeypatch)
    counter = Counter()
    counter.ahead = object()  # the other core is the child's
    with mock.patch.object(count_texts, "THREADS", 2):
        assert counter._count_all(texts) == expected
    with mock.patch.object(count_texts, "THREADS", 1):
        assert Counter()._count_all(texts) == expected
    with mock.patch.object(count_texts, "THREADS", 2), mock.patch.object(backend, "_forked", True):  # a strategy's child
        assert Counter()._count_all(texts) == expected
    assert set(seen) == {threading.get_ident()}


@fast_only
@pytest.mark.parametrize("fail_on", ["worker", "main"])
def test_a_count_raising_on_either_thread_raises_and_leaves_no_thread(monkeypatch, fail_on):
    before = set(threading.enumerate())  # an earlier test may have left a thread running
    view = big_view(count_texts.SPLIT_CHARS + 50_000)
    seen = counting_threads(monkeypatch, fail_on)
    with mock.patch.object(count_texts, "THREADS", 2), pytest.raises(RuntimeError, match="counting failed"):
        Counter().count(view, record=FullRecord(view))
    assert set(threading.enumerate()) == before  # no thread left by the count
    if fail_on == "main":  # the worker stopped at this thread's error: it counted the run it had taken, not the rest
        (worker,) = set(seen) - {threading.get_ident()}
        assert seen[worker] <= 2


@fast_only
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_views_and_edits_counted_on_two_threads_count_as_the_whole_text(data):
    before = set(threading.enumerate())  # an earlier test may have left a thread running
    # Every batch of two texts or more split, so the runs' bounds fall everywhere a short view's bodies allow.
    record = data.draw(records())
    counter = Counter()
    counter.split_cpu = []
    with mock.patch.object(count_texts, "SPLIT_CHARS", 1), mock.patch.object(count_texts, "THREADS", 2):
        for _ in range(3):
            view = data.draw(views(record))
            assert counter.count(view, record=record) == count_text(counted_text(compile_request(view, record=record)))
    assert set(threading.enumerate()) == before  # no thread left by the count


@fast_only
@given(st.lists(st.text(max_size=300), min_size=1, max_size=60))
def test_two_threads_give_each_texts_count_in_order(texts):
    fast = tokens._local()
    assert count_texts.on_two_threads(fast.count_batch, texts, list(map(len, texts))) == fast.count_batch(texts)


@fast_only
def test_a_count_that_cannot_start_its_worker_counts_on_this_thread(monkeypatch):
    view = big_view(count_texts.SPLIT_CHARS + 50_000)
    expected = whole_count(view)
    seen = counting_threads(monkeypatch)

    def refuse(self):
        raise RuntimeError("can't start new thread")

    monkeypatch.setattr(threading.Thread, "start", refuse)
    with mock.patch.object(count_texts, "THREADS", 2):
        assert Counter().count(view, record=FullRecord(view)) == expected
    assert set(seen) == {threading.get_ident()}


@fast_only
def test_long_texts_count_on_this_thread_and_the_rest_on_two(monkeypatch):
    before = set(threading.enumerate())  # an earlier test may have left a thread running
    # A text long enough to hold a long piece is counted on the counting thread (its windows report to its progress);
    # the short ones around it still go to two threads, each count in its place.
    rng = random.Random(3)
    texts = [m.text for m in big_view(count_texts.SPLIT_CHARS + 50_000)]
    for at in (0, 7, len(texts)):
        texts.insert(at, "".join(rng.choices("abcdefghij", k=70_000)) + f" end {at}")  # one piece of 70,000 letters
    expected = [len(tokens.reference_encoding().encode_ordinary(t)) for t in texts]
    seen = counting_threads(monkeypatch)
    long_on: set[int] = set()
    real_count = tokens.FastEncoding.count

    def count(self, text):
        long_on.add(threading.get_ident())
        return real_count(self, text)

    monkeypatch.setattr(tokens.FastEncoding, "count", count)
    with mock.patch.object(count_texts, "THREADS", 2):
        assert Counter()._count_all(texts) == expected
    assert len(seen) == 2 and long_on == {threading.get_ident()}
    assert set(threading.enumerate()) == before  # no thread left by the count

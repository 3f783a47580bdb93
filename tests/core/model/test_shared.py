"""Shared sequences (core.model.shared_start) against plain lists: growing, replacing and reading never change another."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from foldscope.core.model.running_sum import common_start
from foldscope.core.model.shared_start import Headed, Shared, grown, small_chunks


class Item:
    """An item compared by identity, as the counter's messages and blocks are."""

    def __init__(self, n: int) -> None:
        self.n = n


def _scan(a, b) -> int:
    k = 0
    while k < min(len(a), len(b)) and a[k] is b[k]:
        k += 1
    return k


class SharedMachine(RuleBasedStateMachine):
    """A pool of Shareds grown and replaced from each other, each beside the list it should equal."""

    def __init__(self) -> None:
        super().__init__()
        self.chunks = small_chunks(2)  # chunks of 4: every rule crosses chunk boundaries
        self.chunks.__enter__()
        self.made = 0
        start = self._items(6)
        self.pool: list[tuple[Shared, list]] = [(Shared(start), list(start))]

    def teardown(self) -> None:
        self.chunks.__exit__(None, None, None)

    def _items(self, n: int) -> list[Item]:
        self.made += n
        return [Item(self.made - i) for i in range(n)]

    @rule(which=st.integers(0, 10**6), keep=st.integers(0, 10**6), new=st.integers(0, 11))
    def grow(self, which, keep, new):
        shared, model = self.pool[which % len(self.pool)]
        keep %= len(model) + 1
        items = self._items(new)
        self.pool.append((shared.grown(keep, items), model[:keep] + items))

    @precondition(lambda self: any(model for _, model in self.pool))
    @rule(which=st.integers(0, 10**6), at=st.integers(0, 10**6))
    def replace_one(self, which, at):
        choices = [entry for entry in self.pool if entry[1]]
        shared, model = choices[which % len(choices)]
        at %= len(model)
        item = self._items(1)[0]
        self.pool.append((shared.replaced(at, item), model[:at] + [item] + model[at + 1 :]))

    @rule(which=st.integers(0, 10**6), start=st.integers(-3, 40), stop=st.integers(-3, 40))
    def read(self, which, start, stop):
        shared, model = self.pool[which % len(self.pool)]
        assert shared[start:stop] == model[start:stop]
        assert list(shared.since(max(start, 0))) == model[max(start, 0) :]
        for i in (start, stop):
            if -len(model) <= i < len(model):
                assert shared[i] is model[i]
            else:  # past either end: refused as a list refuses it
                with pytest.raises(IndexError):
                    shared[i]
        if len(model) > 1:
            assert shared[True] is model[True]  # an int-like index reads as its int, as a list's does

    @rule(a=st.integers(0, 10**6), b=st.integers(0, 10**6))
    def compare(self, a, b):
        (sa, ma), (sb, mb) = self.pool[a % len(self.pool)], self.pool[b % len(self.pool)]
        assert common_start(sa, sb) == _scan(ma, mb)
        assert common_start(sa, mb) == _scan(ma, mb)

    @invariant()
    def every_shared_still_equals_its_list(self):
        for shared, model in self.pool:
            assert len(shared) == len(model) and all(x is y for x, y in zip(shared, model, strict=True))


TestSharedMachine = SharedMachine.TestCase
TestSharedMachine.settings = settings(max_examples=150, stateful_step_count=30, deadline=None)


@given(st.lists(st.integers(), max_size=40), st.integers(0, 40), st.lists(st.integers(), max_size=12))
def test_grown_from_a_list_equals_the_list_cut_and_extended(items, keep, new):
    with small_chunks(2):
        keep = min(keep, len(items))
        assert list(grown(items, keep, new)) == items[:keep] + new
        assert list(grown(None, 0, new)) == new


@given(st.lists(st.integers(), max_size=30), st.integers(-35, 35), st.integers(-35, 35))
def test_headed_reads_as_the_head_then_the_rest(rest, start, stop):
    with small_chunks(2):
        seq = Headed("head", Shared(rest))
        whole = ["head", *rest]
        assert list(seq) == whole and len(seq) == len(whole) and seq == tuple(whole)
        assert seq[start:stop] == whole[start:stop]
        if -len(whole) <= start < len(whole):
            assert seq[start] == whole[start]


@given(st.lists(st.integers(0, 50), max_size=40), st.integers(-2, 52))
def test_bisect_left_finds_where_bisect_does(items, x):
    import bisect

    items.sort()
    with small_chunks(2):
        assert Shared(items).bisect_left(x) == bisect.bisect_left(items, x)


def test_growing_shares_the_whole_chunks_before_the_cut():
    """The point of it: a layout kept from the one before holds the same chunk objects, not copies."""
    with small_chunks(2):
        a = Shared(range(20))
        b = a.grown(18, [100, 101])
        assert all(x is y for x, y in zip(a.chunks[:4], b.chunks[:4], strict=True))
        assert common_start(a, b) == 18

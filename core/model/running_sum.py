"""A sum over a request's view that costs what changed: the views of a trace share their start, so the sum of the
shared part is read from the view before and only the rest is added."""

from __future__ import annotations

import operator
from array import array
from bisect import bisect_left
from collections.abc import Callable, Sequence
from itertools import accumulate, chain, compress, count, islice
from typing import Generic, TypeVar

from foldscope.core.model import shared_start as _shared
from foldscope.core.model.shared_start import Shared

T = TypeVar("T")


def common_start(a: Sequence[T], b: Sequence[T], *, equal: bool = False) -> int:
    """How many leading items two sequences share: the same objects, for items that compare by identity
    (Message: eq=False), or with `equal` equal items (memo keys). Compared a chunk at a time in C (tuple
    equality tries identity first), halving the chunk where they part, so a shared start of n items costs
    about n pointer compares, not n Python steps."""
    differ = operator.ne if equal else operator.is_not
    if type(a) is Shared and type(b) is Shared:  # a layout's lists and the views a trace grows: asked first, no look-ups
        n = min(a._n, b._n)
        return n if a is b else _between_shared(a, b, n, differ)
    n = min(len(a), len(b))
    if a is b:
        return n
    for x, y in ((a, b), (b, a)):  # a sequence that knows its shared start without reading (core.model.views)
        known = getattr(x, "shared_start", None)
        if known is not None and (k := known(y)) is not None:
            return k
    lo = 0
    if isinstance(a, Shared) and isinstance(b, Shared):
        return _between_shared(a, b, n, differ)
    if isinstance(a, Shared) or isinstance(b, Shared):
        return _against_shared(a, b, n, differ) if isinstance(a, Shared) else _against_shared(b, a, n, differ)  # type: ignore[arg-type]
    elif n and type(a) is type(b) and len(a) == len(b) == n and a == b:
        return n  # the same sequence: one compare, no copy
    # Galloping from the start: chunks double while they match and halve where they part, so the cost is
    # about the shared start's length, however long the sequences run past it.
    step = 64
    while lo < n:
        hi = min(n, lo + step)
        sa, sb = a[lo:hi], b[lo:hi]
        if type(sa) is not type(sb):  # a list never equals a tuple: compare as tuples
            sa, sb = tuple(sa), tuple(sb)
        if sa == sb:
            lo = hi
            step *= 2
            continue
        if hi - lo <= 16:
            return next(compress(count(lo), map(differ, sa, sb)), hi)
        step = (hi - lo) // 2
    return n


def _between_shared(a: Shared, b: Shared, n: int, differ: Callable) -> int:
    """common_start of two Shareds: whole chunks that are the same objects hold the same items, so they are skipped a
    chunk at a time; from there the two chunks at each place are compared as tuples, in C, until they part."""
    ca, cb = a._chunks, b._chunks
    if ca is cb:  # grown one from the other within a chunk (a trace's next view): every whole chunk shared
        c = len(ca)
    else:
        c = min(len(ca), len(cb))
        if ca[:c] != cb[:c]:  # tuples of tuples compared in C, each item by identity first
            c = common_start(ca, cb)
    lo = c << _shared.SHIFT
    while lo < n:
        x = ca[c] if c < len(ca) else a._last
        y = cb[c] if c < len(cb) else b._last
        m = min(len(x), len(y), n - lo)
        if m < len(x):
            x = x[:m]
        if m < len(y):
            y = y[:m]
        if x != y:
            return next(compress(count(lo), map(differ, x, y)), lo + m)
        lo += m
        c += 1
    return n


def _against_shared(a: Shared, b: Sequence, n: int, differ: Callable) -> int:
    """common_start of a Shared and another sequence: a's chunks against b's slices, compared in C."""
    lo = 0
    for chunk in chain(a.chunks, (a.last,)):
        hi = min(n, lo + len(chunk))
        if hi <= lo:
            break
        sa = chunk if hi - lo == len(chunk) else chunk[: hi - lo]
        sb = b[lo:hi]
        if type(sb) is not tuple:
            sb = tuple(sb)
        if sa != sb:
            return next(compress(count(lo), map(differ, sa, sb)), hi)
        lo = hi
    return lo


class RunningSum(Generic[T]):
    """The sum of `value(item)` over a view, kept for the last view asked about.

    The last view's items and the running sums are kept as lists changed in place: a view that shares its
    first k items with the one before (the same objects) costs its other items, not k. `value` must depend
    only on the item (items are immutable; each is valued once per time it joins the kept view)."""

    def __init__(self, value: Callable[[T], int], mark: Callable[[T], bool] | None = None) -> None:
        self._value = value
        self._mark = mark  # items whose positions are kept too (since_last_mark)
        self._items: Sequence[T] = []  # the last view: a list kept in place, or the Shared view itself
        # Machine integers, not a list of int objects: a view of a million messages keeps a million sums.
        self._cum = array("q", [0])  # _cum[i] = the sum over the first i items
        self._marks = array("q")  # positions of the marked items of the last view, in order

    def total(self, view: Sequence[T]) -> int:
        k = common_start(self._items, view)
        n = len(view)  # asked once: a Shared's len is a Python call
        if k < len(self._cum) - 1:
            del self._cum[k + 1 :]
            del self._marks[bisect_left(self._marks, k) :]
        shared = type(view) is Shared
        if k < n:
            # The new items' running sums and marks made in C (accumulate, map, compress): on a trace of a million
            # tiny prompts a Python step an item cost about a second over the two sums a prediction keeps.
            new = view.since(k) if shared else _shared.since(view, k)  # type: ignore[attr-defined]
            items = list(new) if self._mark is not None else new
            self._cum.extend(islice(accumulate(map(self._value, items), initial=self._cum[-1]), 1, None))
            if self._mark is not None:
                self._marks.extend(compress(count(k), map(self._mark, items)))
        if shared or isinstance(view, Shared):
            self._items = view  # never changed, so kept as it is: the next view shares its chunks
        else:
            items = self._items if isinstance(self._items, list) else list(self._items[:k])
            del items[k:]
            items.extend(view[k:])
            self._items = items
        return self._cum[n]

    def clone(self, value: Callable[[T], int] | None = None) -> RunningSum[T]:
        """A copy that goes on from this one's last view without changing it (`value`: another value function, the
        same results, e.g. one bound to a copied memo)."""
        out: RunningSum[T] = RunningSum(value or self._value, self._mark)
        out._items = self._items if isinstance(self._items, Shared) else list(self._items)
        out._cum, out._marks = array("q", self._cum), array("q", self._marks)
        return out

    def since_last_mark(self, view: Sequence[T]) -> int:
        """The sum over the items after the view's last marked item (all of them when none is marked)."""
        total = self.total(view)
        return total - self._cum[self._marks[-1] + 1] if self._marks else total

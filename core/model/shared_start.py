"""A sequence that shares its start with the sequence it was grown from, so that a request's layout, which keeps
most of the one before and re-lays the end, costs what changed and not the view's length."""

# The counter lays each request out from the request before (core.request.count_step): its first k blocks, keys,
# parts and running counts are the earlier ones, then a few new ones. Copying the first k as a list costs k per
# request, which over a session's requests is quadratic in its length. A Shared keeps its items in whole chunks
# of CHUNK items (tuples, never changed) and a last, partial chunk: growing the first k items by new ones shares
# every whole chunk before k and copies only the chunk k falls in and the new items. Chunks are tuples, so a
# Shared can never see another one's change; there is nothing to invalidate.

from __future__ import annotations

import operator
from bisect import bisect_left
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import chain, islice
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
_new = object.__new__

# 64 items: a request's view, and so each of its layout's lists, is a few hundred items on a session its compactions
# bound, which 256 kept in the last partial chunk, so each list a request grew copied (and later freed) the whole list;
# 64 copies at most 63 (the calibrating measure and three strategies' measures 0.966 of their instructions against 256,
# 0.975 at 128, 0.977 at 32; docs/performance.md, measure20).
SHIFT = 6  # read at each call, so tests can make chunks small (tests/core/model/test_shared.py small_chunks)
CHUNK = 1 << SHIFT  # items per whole chunk: growing copies at most this many old items and len/CHUNK pointers
MASK = CHUNK - 1


@contextmanager
def small_chunks(shift: int = 2) -> Iterator[None]:
    """Chunks of 2**shift items while inside (for tests: every chunk boundary is crossed by small views)."""
    global SHIFT, CHUNK, MASK
    saved = SHIFT, CHUNK, MASK
    SHIFT, CHUNK, MASK = shift, 1 << shift, (1 << shift) - 1
    try:
        yield
    finally:
        SHIFT, CHUNK, MASK = saved


class Shared(Sequence[T], Generic[T]):
    """An immutable sequence kept as shared whole chunks and a last partial chunk."""

    __slots__ = ("_chunks", "_last", "_n")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._chunks: tuple[tuple[T, ...], ...] = ()
        self._last: tuple[T, ...] = ()
        self._n = 0
        self._take(tuple(items))

    def _take(self, items: Sequence[T]) -> None:
        """Append `items` to this (new, not yet shared) Shared's last chunk."""
        rest = self._last + (items if type(items) is tuple else tuple(items))
        if len(rest) >= CHUNK:
            full = len(rest) & ~MASK
            self._chunks += tuple(rest[i : i + CHUNK] for i in range(0, full, CHUNK))
            rest = rest[full:]
        self._last = rest
        self._n += len(items)

    def grown(self, keep: int, new: Iterable[T] = ()) -> Shared[T]:
        """The first `keep` items followed by `new`, sharing the whole chunks before `keep`."""
        n = self._n
        if not 0 <= keep <= n:
            raise IndexError(f"keep {keep} outside 0..{n}")
        if keep == n and not new:
            return self  # the same items (a Shared never changes): a layout's list that a request left as it was
        out: Shared[T] = _new(Shared)
        chunks = self._chunks
        c = keep >> SHIFT
        if c < len(chunks):
            out._chunks = chunks[:c]
            last = chunks[c][: keep & MASK]
        else:  # within the last chunk, the commonest case (a request that adds to the one before): nothing sliced
            out._chunks = chunks
            last = self._last if keep == n else self._last[: keep & MASK]
        added = new if type(new) is tuple else tuple(new)
        if added:  # _take's work inline: one a request for each of a layout's lists
            last += added
            if len(last) >= CHUNK:
                full = len(last) & ~MASK
                out._chunks += tuple(last[i : i + CHUNK] for i in range(0, full, CHUNK))
                last = last[full:]
        out._last = last
        out._n = keep + len(added)
        return out

    def replaced(self, i: int, item: T) -> Shared[T]:
        """The same items with item i replaced: copies i's chunk alone."""
        if not 0 <= i < self._n:
            raise IndexError(i)
        out: Shared[T] = Shared.__new__(Shared)
        c, r = i >> SHIFT, i & MASK
        if c < len(self._chunks):
            chunk = self._chunks[c]
            out._chunks = self._chunks[:c] + (chunk[:r] + (item,) + chunk[r + 1 :],) + self._chunks[c + 1 :]
            out._last = self._last
        else:
            out._chunks = self._chunks
            out._last = self._last[:r] + (item,) + self._last[r + 1 :]
        out._n = self._n
        return out

    def since(self, start: int) -> Iterator[T]:
        """The items from index `start` on, without copying the ones before."""
        if start <= 0:
            return iter(self)
        chunks = self._chunks
        c, whole = start >> SHIFT, len(chunks)
        if c >= whole:  # within the last chunk, the commonest case (a request's new blocks): one slice
            return iter(self._last[start - (whole << SHIFT) :])
        return chain(chunks[c][start & MASK :], chain.from_iterable(chunks[c + 1 :]), self._last)

    def bisect_left(self, x: Any) -> int:
        """bisect.bisect_left over the items (which are sorted): the chunk by its first item, then within it."""
        chunks: Any = self._chunks
        last: Any = self._last
        lo, hi = 0, len(chunks)
        while lo < hi:  # the first chunk whose first item is >= x
            mid = (lo + hi) // 2
            if chunks[mid][0] < x:
                lo = mid + 1
            else:
                hi = mid
        if lo == 0:
            return bisect_left(chunks[0] if chunks else last, x)
        # x lies after chunk lo-1's first item: within that chunk, or in the last partial chunk
        inside = bisect_left(chunks[lo - 1], x)
        if inside < len(chunks[lo - 1]) or lo < len(chunks):
            return ((lo - 1) << SHIFT) + inside
        return (lo << SHIFT) + bisect_left(last, x)

    @property
    def last(self) -> tuple[T, ...]:
        """The last, partial chunk (fewer than CHUNK items)."""
        return self._last

    @property
    def chunks(self) -> tuple[tuple[T, ...], ...]:
        """The whole chunks: two Shareds whose leading chunks are the same objects share those items."""
        return self._chunks

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[T]:
        return chain(chain.from_iterable(self._chunks), self._last)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if type(i) is int:  # the commonest by far (a layout's key or end, a cache entry's chain): asked first
            n = self._n
            if i < 0:
                i += n
            if not 0 <= i < n:
                raise IndexError("Shared index out of range")
            chunks = self._chunks
            c = i >> SHIFT
            return chunks[c][i & MASK] if c < len(chunks) else self._last[i & MASK]
        if isinstance(i, slice):
            start, stop, step = i.indices(self._n)
            if step != 1:
                return list(self)[i]
            return list(islice(self.since(start), max(0, stop - start)))
        return self[operator.index(i)]  # an int-like index (a bool, a numpy integer)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Shared):
            return self._n == other._n and list(self) == list(other)
        if isinstance(other, (list, tuple)):
            return self._n == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # equal to a list, so unhashable as a list is

    def __repr__(self) -> str:
        return f"Shared({list(self)!r})"


def grown(items: Sequence[T] | None, keep: int, new: Iterable[T]) -> Shared[T]:
    """`items`' first `keep` followed by `new`: shared when `items` is a Shared, copied once otherwise."""
    if isinstance(items, Shared):
        return items.grown(keep, new)
    out: Shared[T] = Shared(items[:keep] if items is not None else ())
    out._take(tuple(new))
    return out


class Headed(Sequence[T], Generic[T]):
    """One item followed by a sequence's items, without copying them (a measurement's head, then its blocks' parts)."""

    __slots__ = ("head", "rest")

    def __init__(self, head: T, rest: Sequence[T]) -> None:
        self.head = head
        self.rest = rest

    def __len__(self) -> int:
        return 1 + len(self.rest)

    def since(self, start: int) -> Iterator[T]:
        """The items from index `start` on, without copying the ones before."""
        if start <= 0:
            return iter(self)
        rest = self.rest
        return rest.since(start - 1) if isinstance(rest, Shared) else iter(rest[start - 1 :])

    def __iter__(self) -> Iterator[T]:
        return chain((self.head,), self.rest)

    @overload
    def __getitem__(self, i: int) -> T: ...

    @overload
    def __getitem__(self, i: slice) -> list[T]: ...

    def __getitem__(self, i: int | slice) -> T | list[T]:
        if isinstance(i, slice):
            start, stop, step = i.indices(len(self))
            if step != 1 or start == 0:
                return list(self)[i]
            return list(self.rest[start - 1 : max(stop, start) - 1])
        if i < 0:
            i += len(self)
        if i == 0:
            return self.head
        if not 0 < i <= len(self.rest):
            raise IndexError("Headed index out of range")
        return self.rest[i - 1]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, (Headed, Shared, list, tuple)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Headed({list(self)!r})"


def since(items: Sequence[T], start: int) -> Iterator[T]:
    """A sequence's items from index `start` on: without copying the ones before for a Shared or Headed."""
    if isinstance(items, (Shared, Headed)):
        return items.since(start)
    return iter(items[start:])

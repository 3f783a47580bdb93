"""Request views that share one growing list: a request's view is the first n ids of it, so a trace of k requests
over n messages holds about n ids, not k times n: copied per request, the views of a long session of tiny lines
grow as the square of its length (docs/performance.md)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, SupportsIndex, overload

from foldscope.core.model.running_sum import common_start


class SharedView(Sequence[str]):
    """The first `length` ids of a list that is only ever appended to: a request's view.

    It reads as the tuple of those ids would: equal to that tuple (and to another SharedView of the same
    ids), never to a list, with the tuple's hash; a slice is a tuple. The list it reads must never change
    below `length` (ViewSharer only appends to the lists it hands out)."""

    __slots__ = ("_ids", "_length", "_hash")

    def __init__(self, ids: list[str], length: int) -> None:
        if not 0 <= length <= len(ids):
            raise ValueError(f"a view of {length} ids over a list of {len(ids)}")
        self._ids, self._length = ids, length
        self._hash: int | None = None

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: SupportsIndex) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[str, ...]: ...
    def __getitem__(self, index: SupportsIndex | slice) -> str | tuple[str, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step == 1:  # the usual slice, read from the list without copying the rest
                return tuple(self._ids[start:stop])
            return tuple(self._ids[: self._length][index])
        i = index.__index__()
        if i < 0:
            i += self._length
        if not 0 <= i < self._length:
            raise IndexError("view index out of range")
        return self._ids[i]

    def __iter__(self) -> Iterator[str]:
        return islice(self._ids, self._length)

    def __reversed__(self) -> Iterator[str]:
        return reversed(self._ids[: self._length])

    def __contains__(self, value: object) -> bool:
        try:
            self._ids.index(value, 0, self._length)  # type: ignore[arg-type]
        except ValueError:
            return False
        return True

    def index(self, value: Any, start: int = 0, stop: int | None = None) -> int:
        begin, end, _ = slice(start, stop).indices(self._length)
        try:
            return self._ids.index(value, begin, end)
        except ValueError:
            raise ValueError(f"{value!r} is not in the view") from None

    def count(self, value: Any) -> int:
        return self.as_tuple().count(value)

    def as_tuple(self) -> tuple[str, ...]:
        return tuple(self._ids[: self._length])

    def shared_start(self, other: object) -> int | None:
        """How many leading ids it shares with `other` when known without reading them: another view of the
        same list shares the shorter one's length (the list is only appended to); None otherwise."""
        if isinstance(other, SharedView) and other._ids is self._ids:
            return min(self._length, other._length)
        return None

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SharedView):
            if other._ids is self._ids:
                return other._length == self._length
            return other._length == self._length and self._ids[: self._length] == other._ids[: other._length]
        if isinstance(other, tuple):
            return len(other) == self._length and self.as_tuple() == other
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.as_tuple())
        return self._hash

    def __add__(self, other: object) -> tuple[str, ...]:
        if isinstance(other, (tuple, SharedView)):
            return self.as_tuple() + tuple(other)
        return NotImplemented

    def __radd__(self, other: object) -> tuple[str, ...]:
        if isinstance(other, tuple):
            return other + self.as_tuple()
        return NotImplemented

    def __repr__(self) -> str:
        return repr(self.as_tuple())

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled with its list, which pickle writes once however many views of one trace share it.
        return (SharedView, (self._ids, self._length))


class TrackedView(list[str]):
    """A reader's active view: a list that remembers the first place changed other than by appending, since
    ViewSharer last shared it (`changed_from`), so sharing the next request's view costs what changed."""

    __slots__ = ("changed_from",)

    def __init__(self, ids: Iterable[str] = ()) -> None:
        super().__init__(ids)
        self.changed_from = 0

    def _changed(self, index: int) -> None:
        self.changed_from = max(0, min(self.changed_from, index))

    def _place(self, index: SupportsIndex | slice) -> int:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            return min(start, stop) if step != 1 else start
        i = index.__index__()
        return i + len(self) if i < 0 else i

    def __setitem__(self, index: Any, value: Any) -> None:
        self._changed(self._place(index))
        super().__setitem__(index, value)

    def __delitem__(self, index: SupportsIndex | slice) -> None:
        self._changed(self._place(index))
        super().__delitem__(index)

    def insert(self, index: SupportsIndex, value: str) -> None:
        self._changed(min(self._place(index), len(self)))
        super().insert(index, value)

    def pop(self, index: SupportsIndex = -1) -> str:
        self._changed(self._place(index))
        return super().pop(index)

    def remove(self, value: str) -> None:
        if value in self:
            self._changed(self.index(value))
        super().remove(value)

    def clear(self) -> None:
        self._changed(0)
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        self._changed(0)
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        self._changed(0)
        super().reverse()

    def __imul__(self, n: SupportsIndex) -> TrackedView:
        if n.__index__() < 1:
            self._changed(0)
        super().__imul__(n)
        return self


class ViewSharer:
    """Hands out each request's view as a SharedView over the list the view before it used, when the new view
    extends that one or is its start; a view that parts from it (a compaction, a fold, a rewind) starts a new
    list, which the views after it share. Given the same TrackedView as last time, only its ids from the first
    place changed are compared; any other sequence costs about its shared start in pointer compares."""

    def __init__(self, ints: list[int] | None = None) -> None:
        self._ids: list[str] = []
        self._tracked: TrackedView | None = None
        self._length = 0  # the length of the view last handed out
        # A list whose item v is the int v (core.model.session.FullRecord): each view's length is taken from it.
        self._ints = ints

    def view(self, ids: Sequence[str]) -> SharedView:
        base, n = self._ids, len(ids)
        known = min(ids.changed_from, self._length) if ids is self._tracked else 0
        k = known + (common_start(base[known:], ids[known:], equal=True) if known < min(n, len(base)) else 0)
        if k == len(base):
            base.extend(ids[k:])
        elif k < n:
            base = self._ids = list(ids)
        if isinstance(ids, TrackedView):
            ids.changed_from = n
            self._tracked = ids
        else:
            self._tracked = None
        ints = self._ints
        if ints is not None and n < len(ints):
            n = ints[n]
        self._length = n
        return SharedView(base, n)


def left_between(record: Any, before: Sequence[str], now: Sequence[str]) -> tuple[int, ...]:
    """Record indexes the step from view `before` to view `now` took out: in `before`, or written after the newest
    message `before` holds and before the newest plain message `now` holds (a reply, the lines a compaction's command
    wrote), and not in `now`. Notes and clipped copies are the step's own additions, never taken. What a compaction or
    fold took, as the Folds table, the inspector and `compactions` all count it."""
    held = set(now)

    def plain(i: int) -> bool:  # notes and copies are appended at the record's end by a fold
        return record[i].kind != "note" and not record[i].is_clipped_copy

    def places(ids: Sequence[str] | set[str]) -> list[int]:
        # Each id's index, in C when the record holds them all (nearly always); an id it lacks is left out. At 50,000
        # messages 151 compactions each took a view of some 300 ids, two Python calls an id: 0.03 s of the window's.
        found = record.places(ids)
        return found if found is not None else [record.index_of(mid) for mid in ids if mid in record]

    was = places(before)
    upper = next((i for i in sorted(places(held), reverse=True) if plain(i)), -1)
    arrived = range(max(was, default=-1) + 1, upper)
    left = set(places([mid for mid in before if mid not in held]))
    left.update(i for i in arrived if plain(i) and record[i].id not in held)
    return tuple(sorted(left))


def added(view: Sequence[str], before: Sequence[str]) -> Sequence[str] | None:
    """The ids `view` adds after `before` when it repeats `before` whole, else None. Read without copying what they
    share: two views of one growing list (SharedView) are compared by their lengths, where a slice of each
    compared was most of what the passes over a 50k session's requests (compactions, the report's folds) cost."""
    n = len(before)
    if len(view) < n or common_start(view, before, equal=True) != n:
        return None
    return view[n:]


def first_shown(views: Sequence[Sequence[str]]) -> dict[str, int]:
    """Each id's first view: the index in `views` of the first that holds it. A view that repeats the one before
    whole and adds to it (nearly every request's) is read only for what it adds: the start's ids were all seen
    before. Two views of one growing list (SharedView) are told apart by their lengths alone and what one adds is
    sliced from the list, where common_start and a view's slice cost 1.5 us a view in Python calls (a 50,000-message
    session's 11,385 views: 0.03 s of the Folds table's rows, on the window's path to its counted document)."""
    first: dict[str, int] = {}
    put = first.setdefault
    before: Sequence[str] = ()
    for slot, view in enumerate(views):
        n = len(before)
        if type(view) is SharedView and type(before) is SharedView and view._ids is before._ids and view._length >= n:
            new: Sequence[str] = view._ids[n : view._length]
        else:
            new = view[n:] if len(view) >= n and common_start(view, before, equal=True) == n else view
        for mid in new:
            put(mid, slot)
        before = view
    return first

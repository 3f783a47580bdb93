"""Request views that share one growing list: a request's view is the first n ids of it, so a trace of k requests
over n messages holds about n ids, not k times n (issue 17: one million tiny lines held 500 billion bytes' worth
of view copies in theory, 4 GB in practice)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import islice
from typing import Any, SupportsIndex, overload

from foldscope.core.model.running import common_start


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

    def same_list(self, other: object) -> bool:
        """Whether `other` is a view of the same list: then the shorter is the start of the longer, so
        core.model.running.common_start knows how much they share without comparing an id."""
        return isinstance(other, SharedView) and other._ids is self._ids

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


class ViewSharer:
    """Hands out each request's view as a SharedView over the list the view before it used, when the new view
    extends that one or is its start; a view that parts from it (a compaction, a fold, a rewind) starts a new
    list, which the views after it share. Each call costs about the view's shared start in pointer compares."""

    def __init__(self) -> None:
        self._ids: list[str] = []

    def view(self, ids: Sequence[str]) -> SharedView:
        base, n = self._ids, len(ids)
        k = common_start(base, ids, equal=True)
        if k == len(base):
            base.extend(ids[k:])
        elif k < n:
            base = self._ids = list(ids)
        return SharedView(base, n)

"""What a snapshot pickles as arrays of ints, where each item took an entry in the pickler's memo: ids, int tuples."""

from __future__ import annotations

import array
import operator
from itertools import chain
from typing import Any

from foldscope.core.model.session import FullRecord

_ID = operator.attrgetter("id")


class Places:
    """A list of ids pickled as their places in the record (one array of ints, -1 for None): pickled as themselves,
    each id took an entry in the pickler's memo until the dump's end (48,112 in the views' lists and 11,384 response
    ids at 50,000 messages, with the extras' pairs the memo's table 2 MiB while it pickles). Read back as the record's
    own id strings, in a new list."""

    __slots__ = ("record", "places")

    def __init__(self, record: FullRecord, places: list[int]) -> None:
        self.record, self.places = record, array.array("i" if len(record) < 2**31 else "q", places)

    def __reduce__(self) -> tuple[Any, ...]:
        return ids_at, (self.record, self.places)


def places_of(ids: list[Any], record: FullRecord) -> Any:
    """The ids as their places in the record (Places, None as -1), or the list itself where one is not a message of
    the record."""
    named = [i for i in ids if i is not None] if None in ids else ids
    places = record.places(named)
    if places is None:
        return ids
    if named is not ids:
        found = iter(places)
        places = [-1 if i is None else next(found) for i in ids]
    return Places(record, places)


def ids_at(record: FullRecord, places: array.array) -> list[str | None]:
    """The ids Places pickled: the record's messages' ids at those places (None at -1)."""
    if places and min(places) < 0:
        return [None if p < 0 else record[p].id for p in places]
    return list(map(_ID, map(record.__getitem__, places)))


def rows(width: int, flat: array.array) -> list[tuple[int, ...]]:
    """A list of int tuples, each `width` long, from their ints in one array (int_rows)."""
    return list(zip(*[iter(flat)] * width))


class _IntRows:
    """A list of int tuples of one width (a reader's (line, byte offset) pairs, extras["unsent"]: 18,194 at 50,000
    messages) pickled as rows of one array, where each tuple took an entry in the pickler's memo (the pickler asks no
    reducer of a list: the session's extras are given it so, extras_of)."""

    __slots__ = ("width", "flat")

    def __init__(self, width: int, flat: array.array) -> None:
        self.width, self.flat = width, flat

    def __reduce__(self) -> tuple[Any, ...]:
        return rows, (self.width, self.flat)


def int_rows(value: Any) -> Any:
    """The value as _IntRows where it is a list of int tuples of one width, else itself."""
    if type(value) is not list or not value or type(value[0]) is not tuple or not value[0] or type(value[0][0]) is not int:
        return value
    width = len(value[0])
    if not all(type(row) is tuple and len(row) == width for row in value) or set(map(type, chain.from_iterable(value))) != {int}:
        return value
    try:
        return _IntRows(width, array.array("q", chain.from_iterable(value)))
    except OverflowError:
        return value


def extras_of(extras: dict[str, Any]) -> dict[str, Any]:
    """A session's extras to pickle: each list of int tuples among their values, or their dicts' values, as _IntRows."""
    return {k: {kk: int_rows(vv) for kk, vv in v.items()} if type(v) is dict else int_rows(v) for k, v in extras.items()}

"""A record's first messages as it held them, read from the record itself: what the library stores of a window's."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from itertools import islice
from typing import Any

from foldscope.core.model.session import FullRecord, Message


class RecordPrefix(FullRecord):
    """A record's first `length` messages as it held them, read from the record's own list and index, never copied
    (a record only grows, so what it held stays as it was): what the library stores while the window appends to the
    record (a 50,000-message record's copy was 3.1 MiB of the window's peak). Read-only; every look-up of FullRecord's
    answers as a record of those messages alone would (a message appended since is not in it)."""

    def __init__(self, record: FullRecord, length: int | None = None) -> None:
        self._messages, self._index = record._messages, record._index
        self._length = len(record) if length is None else length

    def append(self, message: Message) -> int:
        raise TypeError("a record's prefix is read-only")

    def let_go_of_ints(self) -> None:
        """Nothing to let go of: a prefix takes no indexes."""

    def __reduce__(self) -> tuple[Any, ...]:
        return FullRecord, (list(self),)  # as the record of its messages, never the whole list it reads

    def _at(self, message_id: str) -> int:
        index = self._index[message_id]
        if index >= self._length:
            raise KeyError(message_id)
        return index

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[Message]:
        return islice(self._messages, self._length)

    def __getitem__(self, index: int) -> Message:
        if isinstance(index, slice):
            return self._messages[: self._length][index]
        i = index.__index__()
        if not -self._length <= i < self._length:
            raise IndexError("record index out of range")
        return self._messages[i if i >= 0 else i + self._length]

    def __contains__(self, message_id: object) -> bool:
        index = self._index.get(message_id)  # type: ignore[call-overload]
        return index is not None and index < self._length

    def get(self, message_id: str) -> Message:
        return self._messages[self._at(message_id)]

    def places(self, message_ids: Iterable[str]) -> list[int] | None:
        try:
            return list(map(self._at, message_ids))
        except KeyError:
            return None

    def all_of(self, message_ids: Iterable[str]) -> list[Message]:
        return list(map(self._messages.__getitem__, map(self._at, message_ids)))

    def found(self, message_ids: Sequence[str]) -> list[Message]:
        return [self._messages[i] for i in map(self._index.get, message_ids) if i is not None and i < self._length]

    def _run(self, message_ids: Sequence[str]) -> list[Message] | None:
        return None  # all_of looks each id up

    def holds(self, message_ids: set[str]) -> bool:
        return all(i is not None and i < self._length for i in map(self._index.get, message_ids))

    def index_of(self, message_id: str) -> int:
        return self._at(message_id)

    def indexes_of(self, message_ids: Iterable[str]) -> list[int]:
        return list(map(self._at, message_ids))

    def ids(self) -> list[str]:
        return [m.id for m in self]

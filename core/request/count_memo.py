"""A counter's block bodies' tokens as a library keeps them, read from copies of the counter's own memo dicts."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, Mapping
from typing import Any

from foldscope.core.request.compile import full_key, short_key


def is_block_pair(key: Any) -> bool:
    """Whether a key is a block's (block_key, policy key) pair: the counter keeps those by policy key, any other
    key (seeded, of no block's shape) as it came."""
    return type(key) is tuple and len(key) == 2 and type(key[0]) is tuple and bool(key[0]) and type(key[1]) is tuple


class BodiesMemo(Mapping[Any, int]):
    """Each block body's tokens by (block_key, policy key), then the keys of no block's shape: Counter.memo()'s bodies.

    Read from copies of the counter's dicts as they stood (a C copy each, the keys shared), each pair made as it is
    read: the library's pickling takes them a batch at a time, where a dict of them made when counted (a key tuple an
    entry, 3.4 MiB at 50,000 messages) stayed alive through the window's counted paint until it was pickled."""

    __slots__ = ("_memos", "_other")

    def __init__(self, memos: dict[tuple, dict[Any, int]], other: dict[Any, int]) -> None:
        self._memos = memos  # policy key -> memo key (core.request.compile.memo_key) -> tokens
        self._other = other

    def pairs(self) -> Iterator[tuple[Any, int]]:
        """(key, tokens), in the order a dict of them made at once held them."""
        for pk, memo in self._memos.items():
            for key, n in memo.items():
                yield (full_key(key), pk), n
        yield from self._other.items()

    def __getitem__(self, key: Any) -> int:
        if is_block_pair(key):
            memo = self._memos.get(key[1])
            short = short_key(key[0])
            if memo is not None and short in memo:
                return memo[short]
            raise KeyError(key)
        return self._other[key]

    def __iter__(self) -> Iterator[Any]:
        return (key for key, _ in self.pairs())

    def __len__(self) -> int:
        return sum(len(memo) for memo in self._memos.values()) + len(self._other)

    def items(self) -> ItemsView[Any, int]:
        return _Pairs(self)


class _Pairs(ItemsView[Any, int]):
    """BodiesMemo's items, read in one pass (not a look-up a key)."""

    _mapping: BodiesMemo

    def __iter__(self) -> Iterator[tuple[Any, int]]:
        return self._mapping.pairs()

"""The counts of the last long pieces merged (core.request.long_pieces), remembered to count a piece again in one window."""

from __future__ import annotations

import threading
from collections import OrderedDict
from itertools import accumulate

# The counts of the last long pieces merged, by their bytes' digest: one huge message is counted as the
# message (the panels' sizes) and again inside its request's JSON, where a run of letters or CJK is the
# same piece but for the one character before it (`"` in the JSON). So a piece is remembered without that
# character, with the ends of its first tokens, and a piece that has one is stitched to it at a token
# both hold (the rule of core.request.long_pieces' docstring): the second count costs a hash (about 1 ms a MB) and one window.
REMEMBERED: OrderedDict[bytes, tuple[int, list[int]]] = OrderedDict()
REMEMBER = 32
_remembered_lock = threading.Lock()


def recalled(key: bytes) -> tuple[int, list[int]] | None:
    """A remembered piece's (count, ends of its first tokens), made the newest; None when it is not remembered."""
    with _remembered_lock:
        entry = REMEMBERED.get(key)
        if entry is not None:
            REMEMBERED.move_to_end(key)
    return entry


def remember(key: bytes, entry: tuple[int, list[int]]) -> None:
    """Remember a piece's (count, ends of its first tokens), the oldest let go past REMEMBER."""
    with _remembered_lock:
        REMEMBERED[key] = entry
        while len(REMEMBERED) > REMEMBER:
            REMEMBERED.popitem(last=False)


def stitched(remembered: tuple[int, list[int]], lead: int, window: list[int], lengths: list[int]) -> int | None:
    """The count of a piece `lead` bytes longer at its start than the one remembered as (count, ends of its first
    tokens), whose own first tokens are `window` (`lengths`: each id's length in bytes): the window's tokens up to the
    first token both hold, then the remembered piece's after it; None where they hold none."""
    count, head = remembered
    starts = [lead] + [e + lead for e in head[:-1]]
    known = {(a, e + lead): i for i, (a, e) in enumerate(zip(starts, head))}
    w_ends = list(accumulate(map(lengths.__getitem__, window), initial=0))
    for j in range(len(window)):
        i = known.get((w_ends[j], w_ends[j + 1]))
        if i is not None:
            return (j + 1) + (count - (i + 1))
    return None

"""One huge text held as its parts in order, cut anywhere (a counting child reads it from its pipe a megabyte at a
time), and its count by quicktok's windows read from the parts, never the whole text joined (count)."""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate
from typing import Any, cast

from foldscope.core.request import long_pieces, unicode_gap

_LOWER = b"abcdefghijklmnopqrstuvwxyz"
_RUN_START = long_pieces.RUN_CHARS  # a run's characters (long_pieces.RUN: one piece, however many)


class Parts:
    """A text as its parts, in order: its length, and a slice or a character of it (only the parts it spans joined)."""

    def __init__(self, chunks: list[str]) -> None:
        self.chunks = chunks
        self.starts = list(accumulate(map(len, chunks), initial=0))

    def __len__(self) -> int:
        return self.starts[-1]

    def __getitem__(self, key: int | slice) -> str:
        if isinstance(key, int):
            at = key + len(self) if key < 0 else key
            if not 0 <= at < len(self):
                raise IndexError("Parts index out of range")
            i = bisect_right(self.starts, at) - 1
            return self.chunks[i][at - self.starts[i]]
        start, stop, step = key.indices(len(self))
        if step != 1:
            raise ValueError("Parts slices only with a step of 1")
        if start >= stop:
            return ""
        i, j = bisect_right(self.starts, start) - 1, bisect_right(self.starts, stop - 1) - 1
        if i == j:
            return self.chunks[i][start - self.starts[i] : stop - self.starts[i]]
        inner = self.chunks[i + 1 : j]
        return "".join([self.chunks[i][start - self.starts[i] :], *inner, self.chunks[j][: stop - self.starts[j]]])

    def join(self) -> str:
        """The whole text (a copy of it beside the parts)."""
        return "".join(self.chunks)

    def __eq__(self, other: object) -> bool:
        return self.join() == (other.join() if isinstance(other, Parts) else other)

    __hash__ = None  # type: ignore[assignment]


def _one_run(chunk: str) -> bool:
    """Whether the chunk is all of a run's characters (long_pieces.RUN); an ASCII chunk's bytes a megabyte at a time (a
    chunk may be a whole pasted message: its bytes made at once were a copy of it)."""
    if chunk.isascii():
        return not any(chunk[at : at + _STEP].encode().translate(None, _LOWER) for at in range(0, len(chunk), _STEP))
    return long_pieces.all_run(chunk)


_STEP = 1 << 20


def count(enc: Any, parts: Parts) -> int | None:
    """The count of the text `parts` holds by quicktok's encoding `enc` (long_pieces.count_fast's), or None where it
    cannot be had without the whole text (the caller joins it then). Where a run (of ASCII lowercase letters and CJK
    ideographs, long_pieces.RUN) spans every part but the first's start and the last's end, it is one piece whatever its
    letters, so the pattern splits a stand-in (the text with the run's middle left out: the letters on each side of
    the run, and LONG_PIECE of the run's at each end) as it splits the text, but for that piece's length; the piece is
    then merged in windows read from the parts (long_pieces._remembered_text), the text on each side counted from the
    stand-in."""
    chunks = parts.chunks
    if len(chunks) < 3 or not all(map(_one_run, chunks[1:-1])):
        return None
    first, last = chunks[0], chunks[-1]
    before = len(first) - _RUN_START.match(first[::-1]).end()  # type: ignore[union-attr]  # the run starts here
    after = _RUN_START.match(last).end()  # type: ignore[union-attr]  # and ends here in the last part
    n, keep = len(parts), long_pieces.LONG_PIECE
    run_end = n - (len(last) - after)
    if run_end - before < 2 * keep + 2:
        return None
    stand_in = first[:before] + parts[before : before + keep] + parts[run_end - keep : run_end] + last[after:]
    pattern = long_pieces._compiled_for(enc)
    if not stand_in.isascii() and unicode_gap.in_gap(stand_in):  # count_fast counts such a text whole
        return None
    middle, shift = before + keep, n - len(stand_in)
    span = next((s for s in long_pieces._long_spans(stand_in, pattern) if s[0] < middle < s[1]), None)
    if span is None:
        return None
    start, end = span
    text = cast(str, parts)  # sliced and indexed as a str is (all _remembered_text and merge_text do with it)
    # text[before:run_end] is all of the run's characters (its chunks checked above): its parts are not searched again
    merged = long_pieces._remembered_text(enc, text, start, end + shift, long_pieces.this_threads_progress(), (before, run_end))
    if merged is None:
        return None
    return long_pieces.count_before(enc.count, stand_in, 0, start) + merged + enc.count(stand_in[end:])

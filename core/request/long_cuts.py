"""One very long piece counted by quicktok in parts cut between two characters whose bytes no token of o200k_base holds
side by side: the parts' counts add up to the piece's, with no ids made and no windows stitched (long_pieces.merge_text's
way, for a piece where no such cut is found)."""

from __future__ import annotations

import re
from typing import Any

from foldscope.core.request import window_threads

# BPE merges two adjacent tokens only into a token of the vocabulary, so where a text's last byte before a place and its
# first byte after it stand side by side in no token, no merge ever joins the two sides: BPE of the piece is BPE of
# the bytes before the place followed by BPE of the bytes after it, and its count their counts added (each part
# still one piece of the pattern's: checked, as long_pieces._window_ids checks a window). Such pairs among a run's
# characters (long_pieces.RUN), found in the vocabulary (tests/core/request/test_long_cuts.py finds them in no token):
# ASCII lowercase letters qg, qj, qk, qz, wq, xg and yq (random letters hold one about every 100 characters), and
# between two CJK ideographs a last byte 0x9c before a first byte 0xe9, 0xab before 0xe8, 0xb5 before 0xe6, and 0xbc
# before 0xe7 or 0xe9 (about every 80 random ideographs). A text with none (a run of one letter) is windowed.
LOWER_PAIRS = ("qg", "qj", "qk", "qz", "wq", "xg", "yq")
CJK_PAIRS = ((0x9C, 0xE9), (0xAB, 0xE8), (0xB5, 0xE6), (0xBC, 0xE7), (0xBC, 0xE9))
# Characters of a part of one long piece at least (quicktok's state for one call about half a megabyte, as a window's);
# a text of many pieces is cut into parts of long_pieces.TEXT_PART between two pieces.
PIECE_PART = 1 << 16
SEARCH = 1 << 12  # characters sought for a cut after a part's least length before the piece is windowed instead
HEAD = 1 << 13  # bytes of the first tokens a remembered piece's head covers (long_pieces.merge_text's 4 * WINDOW)
_cut: Any = None  # the pairs' pattern, compiled at the first long piece (re's classes of 320 ideographs each)


def _pattern() -> Any:
    global _cut
    if _cut is None:
        alternatives = list(LOWER_PAIRS)
        for last, first in CJK_PAIRS:  # an ideograph whose UTF-8 ends in byte `last`, then one whose UTF-8 starts with `first`
            before = "".join(chr(c) for c in range(0x4E00, 0xA000) if 0x80 | c & 0x3F == last)
            block = (first & 0x0F) << 12  # the code points of three bytes whose first is `first`
            alternatives.append(f"[{before}][{chr(max(block, 0x4E00))}-{chr(block | 0xFFF)}]")
        _cut = re.compile("|".join(alternatives))
    return _cut


def cuts(text: Any, start: int, end: int) -> list[int] | None:
    """start, each place to cut text[start:end] (a str or long_parts.Parts) at, about PIECE_PART characters apart, and end;
    None where a stretch of SEARCH characters past a part's least length holds no pair to cut between, or where the
    piece is too short for one cut (then it is windowed, which bounds quicktok's state at a window's)."""
    out, at, search = [start], start, _pattern().search
    while end - at > 2 * PIECE_PART:
        stretch = text[at + PIECE_PART : at + PIECE_PART + SEARCH]
        found = search(stretch)
        if found is None:
            return None
        at += PIECE_PART + found.start() + 1
        out.append(at)
    return None if len(out) == 1 else [*out, end]


def count(
    enc: Any,
    text: Any,
    start: int,
    end: int,
    one_piece: Any,
    lengths: Any,
    progress: Any,
    head: list[int] | None,
    run: tuple[int, int] | None = None,
    size: int | None = None,
) -> int | None:
    """The count of the piece text[start:end] by quicktok's encoding `enc`, its parts (cuts) counted on window_threads'
    threads; None where no cuts are found or a part is not one piece (`one_piece(chars)` False). `head`, as
    merge_text's: the byte ends of the first tokens (up to HEAD bytes), from the first part's ids (`lengths`: each id's
    length in bytes, a list or a mapping). `progress` gets (bytes counted, bytes in all) between parts. `run`: a span of
    text its caller found all of a run's characters (long_pieces.RUN, long_parts.count): a part inside it is one piece
    (_one_piece's answer for it), not searched again. `size`: the piece's UTF-8 length where its caller has it (the
    remembered piece's hash made it), else measured for `progress`."""
    places = cuts(text, start, end)
    if places is None:
        return None

    def counted(span: tuple[int, int]) -> tuple[int, int, list[int] | None] | None:
        chars = text[span[0] : span[1]]
        if not (run is not None and run[0] <= span[0] and span[1] <= run[1]) and not one_piece(chars):
            return None
        try:
            data = chars if chars.isascii() else chars.encode()  # once, for its size and for quicktok (count_whole)
        except UnicodeEncodeError:  # a lone surrogate, which tiktoken counts as U+FFFD: windowed as before
            return None
        if head is not None and span[0] == start:
            ids = enc.encode_ordinary(chars)
            return len(ids), len(data), ids
        return enc.count_whole(data), len(data), None

    total, done = 0, 0
    if size is None:
        size = 0 if progress is None else utf8_length(text, start, end)
    if progress is not None:
        progress(0, size)
    with window_threads.ahead(counted, list(zip(places, places[1:]))) as results:
        for result in results:
            if result is None:
                return None
            n, bytes_here, ids = result
            total, done = total + n, done + bytes_here
            if ids is not None and head is not None:
                at = 0
                for token in ids:
                    at += lengths[token]
                    if at > HEAD:
                        break
                    head.append(at)
            if progress is not None:
                progress(done, size)
    return total


def utf8_length(text: Any, start: int, end: int) -> int:
    """len(text[start:end].encode()), a megabyte of characters at a time (no copy of the whole)."""
    size = 0
    for at in range(start, end, 1 << 20):
        chunk = text[at : min(at + (1 << 20), end)]
        size += len(chunk) if chunk.isascii() else len(chunk.encode())
    return size

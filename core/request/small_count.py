"""Exact o200k_base counts without building an encoder: tiktoken's merge in Python over a table.

Building quicktok's encoder costs about half a second of CPU and tiktoken's a quarter (core.request.tokens), more than
`foldscope count` of a word needs in all, and more than counting a small session's text here. So a process's first
texts are counted here: split by the pattern (the regex module, as core.request.long_pieces splits), then each piece
not seen before merged as tiktoken merges it (the adjacent pair whose joined bytes have the lowest rank, leftmost
first), looking ranks up in a hash table of the tokens (by their bytes' CRC-32), memory-mapped from the cache
folder and checked against its SHA-256 (built from the vendored vocabulary once, after its own hash check; both
hashes again whenever a file's stamp differs from the one written after their last check). Most
pieces of a session repeat (words, indentation, punctuation), so each piece's count and each looked-up rank is kept.
A process counts BUDGET_CHARS here, or what a command about to count a small input allows (allow); a text holding a
code point of core.request.unicode_gap (the regex module may know it where tiktoken does not), a piece longer than
PIECE_BYTES, or one past the budget, is left to the encoder (None).
"""

from __future__ import annotations

import mmap
import os
import struct
import sys
import threading
from array import array
from pathlib import Path
from typing import Any
from zlib import crc32

from foldscope.core.request import unicode_gap, vocabulary

SMALL_CHARS = 1 << 18  # a text longer than this is the encoder's
BUDGET_CHARS = 1 << 16  # characters a process counts here unless a command allows more (allow)
PIECE_BYTES = 1024  # a longer piece is the encoder's: its merge here costs the square of its length
# The table's SHA-256 as built from the vendored vocabulary (tests/core/request/test_small_count.py builds it again).
TABLE_SHA256 = "936e0c4c4995bf005ff9c320df22b4378b7c5ab4173465bb752b13672cdf2f1d"

_lock = threading.Lock()
_table: _Table | None = None
_spent = 0
_pattern: Any = None  # the pattern and the gap, compiled with the table (regex is imported only then)
_gap: Any = None
_ascii_split: Any = None  # findall of ASCII_PATTERN by the re module: an ASCII text's pieces (see ASCII_PATTERN)
_pieces: dict[str, int] = {}  # each piece counted so far -> its tokens
_ranks: dict[bytes, int | None] = {}  # each byte string looked up while merging -> its rank (None: not a token)


class _Table:
    """The tokens sorted by their bytes: a count n, n + 1 offsets into the bytes, n ranks (u32 little-endian), the
    bytes, then SLOTS u32 slots: each token's index at the slot its bytes' CRC-32 names or the first free one after."""

    def __init__(self, data) -> None:
        (n,) = struct.unpack_from("<I", data, 0)
        self.n = n
        self.starts = memoryview(data)[4 : 8 + 4 * n].cast("I")
        self.ranks = memoryview(data)[8 + 4 * n : 8 + 8 * n].cast("I")
        self.slots = memoryview(data)[len(data) - 4 * SLOTS :].cast("I")
        self.blob = data
        self.base = 8 + 8 * n

    def rank(self, token: bytes) -> int | None:
        slots, starts, blob, base = self.slots, self.starts, self.blob, self.base
        at = crc32(token) & (SLOTS - 1)
        while True:
            i = slots[at]
            if i == _FREE:
                return None
            if blob[base + starts[i] : base + starts[i + 1]] == token:
                return self.ranks[i]
            at = (at + 1) & (SLOTS - 1)


SLOTS = 1 << 19  # more than twice the tokens: a lookup reads one or two slots
_FREE = 0xFFFFFFFF


def table_bytes(ranks: dict[bytes, int]) -> bytes:
    """The table of `ranks` (see _Table)."""
    tokens = sorted(ranks)
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    slots = array("I", [_FREE]) * SLOTS
    for i, token in enumerate(tokens):
        at = crc32(token) & (SLOTS - 1)
        while slots[at] != _FREE:
            at = (at + 1) & (SLOTS - 1)
        slots[at] = i
    head = struct.pack(f"<I{len(starts)}I{len(tokens)}I", len(tokens), *starts, *(ranks[t] for t in tokens))
    return b"".join([head, *tokens, slots.tobytes()])


def allow(chars: int) -> None:
    """Let this process count up to `chars` characters here in all (never fewer than it may already)."""
    global BUDGET_CHARS
    BUDGET_CHARS = max(BUDGET_CHARS, chars)


def open_for(chars: int = 0) -> bool:
    """Whether `chars` more characters are within this process's budget."""
    return _spent + chars <= BUDGET_CHARS and sys.byteorder == "little"


def spent() -> int:
    """Characters this process has counted here."""
    return _spent


def count(text: str) -> int | None:
    """text's o200k_base count, or None when it is not for this path (too long, past the budget, a gap code point,
    a piece longer than PIECE_BYTES)."""
    global _spent
    if len(text) > SMALL_CHARS or not open_for(len(text)):
        return None
    if _load() is None:
        return None
    _spent += len(text)
    parts = (_ascii_split if text.isascii() else _pattern.findall)(text)
    counts: list[Any] = list(map(_pieces.get, parts))  # most pieces were counted before: looked up in one pass
    if None in counts:
        for i, n in enumerate(counts):
            if n is None:
                piece = parts[i]
                n = _pieces.get(piece)  # the same piece earlier in this text
                if n is None:
                    # Each piece new to this process is searched for the gap (every gap code point is past ASCII):
                    # the pattern leaves no character out of a piece, and a kept piece was searched when first met.
                    if not piece.isascii() and _gap.search(piece) is not None:
                        return None
                    data = piece.encode()
                    if len(data) > PIECE_BYTES:
                        return None
                    n = _pieces[piece] = 1 if _rank(data) is not None else _merged(data, _rank)
                counts[i] = n
    return sum(counts)


def _rank(token: bytes) -> int | None:
    rank = _ranks.get(token, -1)
    if rank == -1:
        assert _table is not None
        rank = _ranks[token] = _table.rank(token)
    return rank


# The pattern's pieces of an ASCII text, as the regex module splits it by o200k_base's pattern (core.request.tokens),
# written for the re module, which splits such a text in 0.36 of the regex module's time (half of a Claude Code file's
# text is in ASCII blocks: 18 to 6.5 ms of extracted-dd381a75's). Each class is the pattern's own restricted to ASCII:
# letters \p{L} are A-Z and a-z (upper \p{Lu} A-Z, lower \p{Ll} a-z; no ASCII character is Lt, Lm, Lo or M), numbers
# \p{N} are 0-9, and white space \s is tab to carriage return and the space (written out: the re module's \s also takes
# U+001C to U+001F, which the regex module's and tiktoken's do not). (?i:'s|...) is each suffix in either case.
# tests/core/request/test_small_count.py holds the two splits equal on every ASCII text of up to two characters, every
# three of the characters where the branches meet, and random ones.
_WS = r"\t\n\x0b\x0c\r "
_SUFFIX = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
ASCII_PATTERN = (
    rf"[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+{_SUFFIX}"
    rf"|[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*{_SUFFIX}"
    r"|[0-9]{1,3}"
    rf"| ?[^{_WS}A-Za-z0-9]+[\r\n/]*"
    rf"|[{_WS}]*[\r\n]+"
    rf"|[{_WS}]+(?![^{_WS}])"
    rf"|[{_WS}]+"
)

_NO_RANK = 1 << 32  # above every rank: a pair that is no token


def _merged(data: bytes, rank) -> int:
    """How many tokens tiktoken's merge leaves of data: tiktoken's byte_pair_merge, each pair's rank kept beside its
    part and only the two pairs a merge changes looked up again."""
    starts = list(range(len(data) + 1))  # the parts' starts, then the end
    ranks = [_NO_RANK if (r := rank(data[i : i + 2])) is None else r for i in range(len(data) - 1)]
    ranks.append(_NO_RANK)  # ranks[i]: the rank of parts i and i + 1 joined
    while True:
        best = min(ranks)
        if best == _NO_RANK:
            break
        i = ranks.index(best)  # the leftmost of the lowest
        del starts[i + 1]
        del ranks[i + 1]
        r = rank(data[starts[i] : starts[i + 2]]) if i + 2 < len(starts) else None
        ranks[i] = _NO_RANK if r is None else r
        if i > 0:
            r = rank(data[starts[i - 1] : starts[i + 1]])
            ranks[i - 1] = _NO_RANK if r is None else r
    return len(starts) - 1


def _load() -> _Table | None:
    global _table, _pattern, _gap, _ascii_split
    if _table is not None:
        return _table
    with _lock:
        if _table is None:
            try:
                import regex  # type: ignore[import-untyped]

                data = _mapped()
            except OSError:
                return None
            import re

            _pattern = regex.compile(vocabulary.O200K_PAT_STR)
            _ascii_split = re.compile(ASCII_PATTERN).findall
            # The gap's code points, and lone surrogates (tiktoken replaces them before it splits): the encoder's.
            _gap = regex.compile("[\\ud800-\\udfff" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in unicode_gap.GAP) + "]")
            _table = _Table(data)
    return _table


def _mapped() -> mmap.mmap | bytes:
    """The table from the cache folder, built there first when missing or not the one expected.

    Both files' SHA-256 (the vendored vocabulary's, the table's: 10 ms, a sixth of `foldscope count` of a word) are
    checked when their stamp (core.request.small_count._stamp) differs from the one written after their last check."""
    vendored, path = vocabulary.vocabulary_path(), cache_file()
    try:
        with open(path, "rb") as f:
            data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            opened = os.fstat(f.fileno())  # the file mapped, whatever the path names by the time it is asked
    except (OSError, ValueError):
        data = None
    if data is not None and _read_stamp(path) == _stamp(vendored, opened):
        return data
    import hashlib

    vocabulary.checked(vendored, vocabulary.O200K_SHA256)
    if data is not None:
        if hashlib.sha256(data).hexdigest() == TABLE_SHA256:
            _write_stamp(path, _stamp(vendored, opened))
            return data
        data.close()
    blob = table_bytes(vocabulary.load_ranks(vendored))
    if hashlib.sha256(blob).hexdigest() != TABLE_SHA256:
        raise OSError("the sorted table of the vocabulary does not match its expected hash")
    try:
        from foldscope.core.model.folders import make_private_folder

        make_private_folder(path.parent)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        temporary.write_bytes(blob)
        os.replace(temporary, path)  # stamped by the next process to map it, once it has hashed what it maps
    except OSError:
        pass  # a read-only cache: this process's copy
    return blob


def _stamp(vendored: Path, table: os.stat_result) -> str | None:
    """The stamp (core.model.file_stamp) of the vendored vocabulary and the table as mapped, None when the vocabulary
    cannot be asked: written after both hashes were checked, it stands for those checks until a file changes."""
    from foldscope.core.model import file_stamp

    try:
        return file_stamp.of([os.stat(vendored), table])
    except OSError:
        return None


def _stamp_file(table: Path) -> Path:
    return table.with_name(table.name + ".checked")


def _read_stamp(table: Path) -> str | None:
    from foldscope.core.model import file_stamp

    return file_stamp.read(_stamp_file(table))


def _write_stamp(table: Path, stamp: str | None) -> None:
    from foldscope.core.model import file_stamp

    if stamp is not None:
        file_stamp.write(_stamp_file(table), stamp)


def reset() -> None:
    """Forget the table, what was counted and the budget spent (tests)."""
    global _table, _spent
    _table, _spent = None, 0
    _pieces.clear()
    _ranks.clear()


def cache_file() -> Path:
    # Named by the table's own expected hash (the vocabulary's and the layout's): two versions of foldscope sharing a
    # cache folder each keep their own table rather than building it again over the other's on every start.
    return vocabulary.cache_folder() / f"small-{TABLE_SHA256[:16]}.bin"

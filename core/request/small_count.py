"""Exact o200k_base counts of a few short texts without building an encoder: tiktoken's merge in Python over a table.

Building quicktok's encoder costs about half a second of CPU and tiktoken's a quarter (core.request.tokens), more than
`foldscope count` of a word needs in all. So the first short texts of a process are counted here: split by the
pattern (the regex module, as core.request.long_pieces splits), then each piece merged as tiktoken merges it (the
adjacent pair whose joined bytes have the lowest rank, leftmost first), looking ranks up by binary search in a table
of the tokens sorted by their bytes, memory-mapped from the cache folder and checked against its SHA-256 (built from
the vendored vocabulary once, after its own hash check). A text holding a code point of core.request.unicode_gap (the
regex module may know it where tiktoken does not), or past the budget, is left to the encoder (None).
"""

from __future__ import annotations

import hashlib
import mmap
import os
import struct
import sys
import threading
from pathlib import Path
from typing import Any

from foldscope.core.request import unicode_gap

SMALL_CHARS = 4096  # a text longer than this is the encoder's
BUDGET_CHARS = 1 << 16  # characters a process counts here before the encoder is worth its build
# The table's SHA-256 as built from the vendored vocabulary (tests/core/request/test_small_count.py builds it again).
TABLE_SHA256 = "1c2396bc31d20478786d7a705845b74e33480f5708ab362b7458846c47556aa6"

_lock = threading.Lock()
_table: _Table | None = None
_spent = 0
_pattern: Any = None  # the pattern and the gap, compiled with the table (regex is imported only then)
_gap: Any = None


class _Table:
    """The tokens sorted by their bytes: a count n, n + 1 offsets into the bytes, n ranks (u32 little-endian), bytes."""

    def __init__(self, data) -> None:
        (n,) = struct.unpack_from("<I", data, 0)
        self.n = n
        self.starts = memoryview(data)[4 : 8 + 4 * n].cast("I")
        self.ranks = memoryview(data)[8 + 4 * n : 8 + 8 * n].cast("I")
        self.blob = data
        self.base = 8 + 8 * n

    def rank(self, token: bytes) -> int | None:
        starts, blob, base = self.starts, self.blob, self.base
        lo, hi = 0, self.n
        while lo < hi:
            mid = (lo + hi) >> 1
            if blob[base + starts[mid] : base + starts[mid + 1]] < token:
                lo = mid + 1
            else:
                hi = mid
        if lo < self.n and blob[base + starts[lo] : base + starts[lo + 1]] == token:
            return self.ranks[lo]
        return None


def table_bytes(ranks: dict[bytes, int]) -> bytes:
    """The sorted table of `ranks` (see _Table)."""
    tokens = sorted(ranks)
    starts = [0]
    for token in tokens:
        starts.append(starts[-1] + len(token))
    return b"".join([struct.pack(f"<I{len(starts)}I{len(tokens)}I", len(tokens), *starts, *(ranks[t] for t in tokens)), *tokens])


def count(text: str) -> int | None:
    """text's o200k_base count, or None when it is not for this path (too long, past the budget, a gap code point)."""
    global _spent
    if len(text) > SMALL_CHARS or _spent + len(text) > BUDGET_CHARS or sys.byteorder != "little":
        return None
    table = _load()
    if table is None or _gap.search(text) is not None:
        return None
    _spent += len(text)
    total = 0
    rank = table.rank
    for piece in _pattern.findall(text):
        data = piece.encode()
        if rank(data) is not None:
            total += 1
        else:
            total += _merged(data, rank)
    return total


def _merged(data: bytes, rank) -> int:
    """How many tokens tiktoken's merge leaves of data (tiktoken's byte_pair_merge, on part boundaries)."""
    bounds = list(range(len(data) + 1))
    while len(bounds) > 2:
        best, at = None, -1
        for i in range(len(bounds) - 2):
            r = rank(data[bounds[i] : bounds[i + 2]])
            if r is not None and (best is None or r < best):
                best, at = r, i
        if best is None:
            break
        del bounds[at + 1]
    return len(bounds) - 1


# core.request.tokens, which hands itself in when imported: it imports this module, so this one never imports it back.
_source: Any = None


def use_vocabulary(source: Any) -> None:
    """Where the vendored vocabulary, its hash check, the cache folder and the pattern come from (core.request.tokens)."""
    global _source
    _source = source


def _vocabulary() -> Any:
    if _source is None:
        raise OSError("core.request.tokens has not handed in the vocabulary")
    return _source


def _load() -> _Table | None:
    global _table, _pattern, _gap
    if _table is not None:
        return _table
    with _lock:
        if _table is None:
            try:
                import regex  # type: ignore[import-untyped]

                tokens = _vocabulary()
                data = _mapped(tokens)
            except OSError:
                return None
            _pattern = regex.compile(tokens.O200K_PAT_STR)
            # The gap's code points, and lone surrogates (tiktoken replaces them before it splits): the encoder's.
            _gap = regex.compile("[\\ud800-\\udfff" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in unicode_gap.GAP) + "]")
            _table = _Table(data)
    return _table


def _mapped(tokens) -> mmap.mmap | bytes:
    """The table from the cache folder, built there first when missing or not the one expected."""
    sha256 = tokens._checked(tokens.vocabulary_path(), tokens.O200K_SHA256)  # the vendored file, every time
    path = tokens.cache_folder() / f"small-{sha256[:16]}.bin"
    for _ in range(2):
        try:
            with open(path, "rb") as f:
                data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
            if hashlib.sha256(data).hexdigest() == TABLE_SHA256:
                return data
            data.close()
        except (OSError, ValueError):
            pass
        blob = table_bytes(tokens.load_ranks(tokens.vocabulary_path()))
        if hashlib.sha256(blob).hexdigest() != TABLE_SHA256:
            raise OSError("the sorted table of the vocabulary does not match its expected hash")
        try:
            from foldscope.core.model.folders import make_private_folder

            make_private_folder(path.parent)
            temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
            temporary.write_bytes(blob)
            os.replace(temporary, path)
        except OSError:
            return blob  # a read-only cache: this process's copy
    return blob


def reset() -> None:
    """Forget the table and the budget (tests)."""
    global _table, _spent
    _table, _spent = None, 0


def cache_file() -> Path:
    tokens = _vocabulary()
    return tokens.cache_folder() / f"small-{tokens.O200K_SHA256[:16]}.bin"

"""The code points quicktok's Unicode table classes that tiktoken's pattern does not: its table is Unicode 17's.

quicktok splits a text into o200k's pre-tokens by its own table of the pattern's classes (letters upper and lower,
numbers, whitespace), made from Unicode 17; tiktoken's regular expression knows Unicode 16, where these code points
(new in 17: marks, letters, digits, CJK) are unassigned and belong to no class. So quicktok counts with its table
less these code points (classes_without_gap), and then every code point counts as tiktoken counts it: each one was
counted both ways in three contexts (letters, digits, whitespace, marks and punctuation about it) by
tools/quicktok_classes.py, which found these 4,699 and, with them taken out, none.
"""

from __future__ import annotations

import re
import struct
from typing import Any

# quicktok 0.4's table (quicktok/data/uniclass_o200k.bin) and ours made from it: another table is not used.
QUICKTOK_CLASSES_SHA256 = "8dd93d0b36e25eecc2ac43f4bc99f56fbd360fb01bb144778152fa75a6518d6d"
CLASSES_SHA256 = "5cf88e38ce6fc980d86538eee3b2776cc73ec47d7a6dd574b557e315d4387949"
CLASS_COUNT = 5  # L, N, whitespace, upper letters and marks, lower letters and marks

GAP = (  # inclusive ranges
    (0x88F, 0x88F),
    (0xC5C, 0xC5C),
    (0xCDC, 0xCDC),
    (0x1ACF, 0x1ADD),
    (0x1AE0, 0x1AEB),
    (0xA7CE, 0xA7CF),
    (0xA7D2, 0xA7D2),
    (0xA7D4, 0xA7D4),
    (0xA7F1, 0xA7F1),
    (0x10940, 0x10959),
    (0x10EC5, 0x10EC7),
    (0x10EFA, 0x10EFB),
    (0x11B60, 0x11B67),
    (0x11DB0, 0x11DDB),
    (0x11DE0, 0x11DE9),
    (0x16EA0, 0x16EB8),
    (0x16EBB, 0x16ED3),
    (0x16FF2, 0x16FF6),
    (0x187F8, 0x187FF),
    (0x18D09, 0x18D1E),
    (0x18D80, 0x18DF2),
    (0x1E6C0, 0x1E6DE),
    (0x1E6E0, 0x1E6F5),
    (0x1E6FE, 0x1E6FF),
    (0x2B73A, 0x2B73F),
    (0x2CEA2, 0x2CEAD),
    (0x323B0, 0x33479),
)


def classes_without_gap(table: bytes, gap: tuple[tuple[int, int], ...] = GAP) -> bytes:
    """quicktok's class table (per class a u32 count of ranges, then u32 first and last of each) less the gap."""
    out = bytearray()
    at = 0
    for _ in range(CLASS_COUNT):
        (n,) = struct.unpack_from("<I", table, at)
        ranges = [struct.unpack_from("<II", table, at + 4 + 8 * i) for i in range(n)]
        at += 4 + 8 * n
        kept = list(_subtract(ranges, gap))
        out += struct.pack("<I", len(kept))
        for lo, hi in kept:
            out += struct.pack("<II", lo, hi)
    if at != len(table):
        raise ValueError("not a quicktok class table (bytes left over)")
    return bytes(out)


def _subtract(ranges: list[tuple[int, int]], gap: tuple[tuple[int, int], ...]):
    """The parts of sorted inclusive ranges outside every range of gap, in order."""
    for lo, hi in ranges:
        for glo, ghi in gap:
            if ghi < lo or glo > hi:
                continue
            if glo > lo:
                yield lo, glo - 1
            lo = ghi + 1
            if lo > hi:
                break
        if lo <= hi:
            yield lo, hi


def sha256_hex(data: bytes) -> str:
    """data's SHA-256 in hex, by CPython's own SHA-256 where it has one: importing hashlib loads OpenSSL, 3 ms of every
    start-up (`foldscope count` of a word), and the tables checked at start are small."""
    try:
        from _sha2 import sha256  # type: ignore[import-not-found,unused-ignore]  # Python 3.12 on
    except ImportError:
        try:
            from _sha256 import sha256  # type: ignore[import-not-found,no-redef,unused-ignore]  # Python 3.11
        except ImportError:
            from hashlib import sha256  # type: ignore[assignment,unused-ignore]
    return sha256(data).hexdigest()


def known_table(table: bytes) -> bool:
    """Whether quicktok's class table is the one known (the one our_classes makes ours from)."""
    return sha256_hex(table) == QUICKTOK_CLASSES_SHA256


def our_classes(table: bytes) -> bytes | None:
    """The class table quicktok counts with here, made from its own, or None when its own is not the one known."""
    if not known_table(table):
        return None
    ours = classes_without_gap(table)
    return ours if sha256_hex(ours) == CLASSES_SHA256 else None


_gap_classes: tuple[Any, Any] | None = None  # (the blocks holding the gap's code points, the gap's own): in_gap


def in_gap(text: str) -> bool:
    """Whether the text holds a lone surrogate or a code point of GAP. The 27 ranges cost
    re about 50 ns a character (2.5 s on 50 MB of CJK); a class of the few blocks holding them (of 256 code points, and
    every astral one) costs a fifth of that, so it is searched first, and the gap only from where it finds one: there is
    none before, so the answer is the same."""
    global _gap_classes
    if _gap_classes is None:
        ranges = [(0xD800, 0xDFFF), *GAP]
        blocks: list[tuple[int, int]] = []
        for lo, hi in sorted((0x10000, 0x10FFFF) if lo > 0xFFFF else (lo & ~0xFF, hi | 0xFF) for lo, hi in ranges):
            if blocks and lo <= blocks[-1][1] + 1:
                blocks[-1] = (blocks[-1][0], max(hi, blocks[-1][1]))
            else:
                blocks.append((lo, hi))
        near, gap = (re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in r) + "]") for r in (blocks, ranges))
        _gap_classes = (near, gap)
    near, gap = _gap_classes
    found = near.search(text)
    return found is not None and gap.search(text, found.start()) is not None

"""Canonical JSON text (sorted keys, no spaces): json.dumps's exact text, made by msgspec where that is the same.

Every hash, comparison and compiled request reads this form, so its text may never change. msgspec's encoder
writes the same text as `json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)` for
dicts with str keys, lists, tuples, str, bool, None and ints, eight times as fast on a Branch's large outputs (its
50k messages' 115M characters: 1.0 s -> 0.12 s). It differs on floats (1e-07 against 1e-7; NaN as null), encodes
types json refuses (bytes, sets, dates), and refuses lone surrogates: a value holding any of these, or one too
deep to walk, goes json's way, which writes or refuses it exactly as before
(tests/core/model/test_canonical.py holds the two equal on random values).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Sequence
from typing import Any


def _msgspec():
    """msgspec, imported without typing_extensions where nothing has imported that yet: msgspec reads type hints with
    it when it is there and with typing's own otherwise (both in try blocks), and foldscope gives msgspec no types to
    read, only dicts, lists and scalars. typing_extensions is 4,400 lines, about 8 ms of every command's start for
    nothing; it is importable again as soon as msgspec is in (tests/core/model/test_canonical.py)."""
    if "typing_extensions" in sys.modules or "msgspec" in sys.modules:
        import msgspec

        return msgspec
    sys.modules["typing_extensions"] = None  # type: ignore[assignment]  # an import of it fails: msgspec's fallback
    try:
        import msgspec
    finally:
        if sys.modules.get("typing_extensions", 0) is None:
            del sys.modules["typing_extensions"]
    return msgspec


msgspec = _msgspec()

_encode = msgspec.json.Encoder(order="sorted").encode
_LEAVES = (str, bool, type(None))
_INT_RANGE = (-(1 << 63), 1 << 64)  # larger ints go json's way (its limit on digits is its own)


def canonical_json(value: Any, *, allow_nan: bool = True) -> str:
    """JSON text with sorted keys and no spaces: the form hashed, compared and compiled everywhere
    (the compiler refuses NaN and infinities: `allow_nan=False`)."""
    try:
        if _plain(value):
            return _encode(value).decode()
    except (RecursionError, UnicodeEncodeError):  # too deep for the walk (json says so), or a lone surrogate
        pass
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=allow_nan)


def canonical_bytes(value: Any) -> bytes | None:
    """canonical_json(value)'s UTF-8 as msgspec writes it, where that is the same text; None where canonical_json goes
    json's way (a float, a value too deep to walk, a lone surrogate, anything msgspec writes otherwise)."""
    try:
        if _plain(value):
            return _encode(value)
    except (RecursionError, UnicodeEncodeError):
        pass
    return None


_encode_in_order = msgspec.json.Encoder().encode  # keys in their own order, as json.dumps without sort_keys


def dumps_length(value: Any) -> int:
    """len(json.dumps(value, ensure_ascii=False, default=str)), the size a note gives a folded result's output: for a
    plain value (as canonical_json's) msgspec's compact text and the spaces json.dumps puts after each ',' and ':'
    (a Branch's large outputs: json.dumps was 0.5 s of a 50k adr fold's 12.9 s under pyinstrument); else json's."""
    try:
        if _plain(value):
            return len(_encode_in_order(value).decode()) + _spaces(value)
    except (RecursionError, UnicodeEncodeError):
        pass
    return len(json.dumps(value, ensure_ascii=False, default=str))


def _spaces(value: Any) -> int:
    """The spaces json.dumps's default separators (", " and ": ") add to a plain value's compact text."""
    kind = type(value)
    if kind is dict:
        return 2 * len(value) - 1 + sum(map(_spaces, value.values())) if value else 0
    if kind is list or kind is tuple:
        return len(value) - 1 + sum(map(_spaces, value)) if value else 0
    return 0


def _plain(value: Any) -> bool:
    """Whether the value holds only what msgspec writes as json.dumps does: dicts with str keys, lists, tuples,
    str, bool, None and ints of up to 64 bits (no float, no subclass of any of them)."""
    kind = type(value)
    if kind in _LEAVES:
        return True
    if kind is int:
        return _INT_RANGE[0] <= value < _INT_RANGE[1]
    if kind is dict:
        return all(type(key) is str for key in value) and all(map(_plain, value.values()))
    if kind is list or kind is tuple:
        return all(map(_plain, value))
    return False


# A text this long among a message's values is hashed a slice at a time where it stands (huge_sha256): encoded whole,
# msgspec's buffer of one huge message grew to 1.5 times it (the inspector's id line, Message.sha256).
HUGE_STRING = 1 << 20
SLICE = 1 << 20


def huge_sha256(value: Any, huge: Sequence[str]) -> str | None:
    """The SHA-256 of canonical_json(value)'s UTF-8, each text of `huge` (held in value's dicts and lists) hashed a slice
    at a time where it stands, never encoded whole: the value is written with a placeholder for each, and each text's
    JSON by msgspec a slice at a time (JSON escapes one character at a time, so the slices' JSON is the whole's). None
    where canonical_json would go json's way (a float, a lone surrogate): the caller hashes the value whole."""
    token = f"huge-{os.urandom(16).hex()}-"
    place = {id(text): n for n, text in enumerate(huge)}

    def swap(v: Any) -> Any:
        if type(v) is str:
            return f"{token}{place[id(v)]}" if id(v) in place else v
        if type(v) is dict:
            return {k: swap(x) for k, x in v.items()}
        if type(v) in (list, tuple):
            return [swap(x) for x in v]
        return v

    data = canonical_bytes(swap(value))
    if data is None:
        return None
    marks = [f'"{token}{n}"'.encode() for n in range(len(huge))]
    found = sorted((at, n) for n, mark in enumerate(marks) for at in _places(data, mark))
    digest, done = hashlib.sha256(), 0
    with memoryview(data) as view:
        for at, n in found:
            digest.update(view[done:at])
            text = huge[n]
            digest.update(b'"')
            try:
                for start in range(0, len(text), SLICE):
                    with memoryview(_encode(text[start : start + SLICE])) as part:
                        digest.update(part[1:-1])
            except UnicodeEncodeError:  # a lone surrogate: json's way
                return None
            digest.update(b'"')
            done = at + len(marks[n])
        digest.update(view[done:])
    return digest.hexdigest()


def _places(data: bytes, mark: bytes) -> list[int]:
    """Where `mark` starts in data, each time."""
    places, at = [], data.find(mark)
    while at >= 0:
        places.append(at)
        at = data.find(mark, at + len(mark))
    return places

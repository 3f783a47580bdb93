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

import json
import sys
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

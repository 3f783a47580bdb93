"""A first line too long for the sniff window, read to sniff: its skeleton, the same JSON with its long strings cut short.

A JSON lines file that opens on a huge pasted prompt (tens of megabytes on one line) must still be claimed by its
reader, and every sniff parses the lines it is shown: shown the whole line, each reader in turn would build the whole
prompt as a string, and the read would hold the line's bytes, their join and that string at once (about three times
the prompt, before the read proper starts). A sniff looks at keys and short values (`type`, `sessionId`, a message's
`role`), never at a long text's content, so it is shown the skeleton: every string of LONG bytes or more is replaced by
an empty one, arrays keep their first ITEMS items; the keys, their order and every short value stay as they were.
"""

from __future__ import annotations

import codecs
import json
from pathlib import Path
from typing import Any

import msgspec

from foldscope.core.formats import fast_json

LONG = 4096  # a string whose JSON takes this many bytes or more is emptied in the skeleton
ITEMS = 64  # an array's items kept (a sniff reads a list's first few: raw payload's messages)
LINE_MAX = 256 << 20  # the most of a first line read to sniff it (past it the file is refused as unreadable)
_CHUNK = 1 << 20

_OBJECT = msgspec.json.Decoder(dict[str, msgspec.Raw])
_ARRAY = msgspec.json.Decoder(list[msgspec.Raw])


class TooDeep(ValueError):
    """The line nests deeper than foldscope reads (fast_json.MAX_NESTING)."""


def line_end(path: Path) -> int:
    """Where the file's first line ends (the offset of its newline, or the file's size), read a megabyte at a time
    and none of it kept; at most LINE_MAX. OSError as open and read raise it."""
    at = 0
    with open(path, "rb") as handle:
        while at < LINE_MAX:
            chunk = handle.read(_CHUNK)
            if not chunk:
                return at
            found = chunk.find(b"\n")
            if found >= 0:
                return at + found
            at += len(chunk)
    return LINE_MAX


def skeleton(raw: Any, long: int = LONG, items: int = ITEMS, depth: int = 0) -> Any:
    """The JSON value `raw` (bytes or a msgspec.Raw) with every string of `long` bytes or more emptied and every such
    array cut to its first `items` items; a value whose JSON is shorter than `long` is decoded as it is."""
    if depth > fast_json.MAX_NESTING:
        raise TooDeep
    if len(raw) < long:
        return msgspec.json.decode(raw)
    first = memoryview(raw)[:1].tobytes()
    if first == b"{":
        return {key: skeleton(value, long, items, depth + 1) for key, value in _OBJECT.decode(raw).items()}
    if first == b"[":
        return [skeleton(value, long, items, depth + 1) for value in _ARRAY.decode(raw)[:items]]
    if first == b'"':
        return ""
    return msgspec.json.decode(raw)  # a long number


def sniff_head(path: Path, after: int) -> bytes | None:
    """The head a sniff is shown for a file whose first line is longer than the sniff window: the line's skeleton as
    one line of JSON, then `after` bytes of what follows it; None when the line is no JSON value msgspec reads (the
    caller's refusal then names the problem from the line itself)."""
    end = line_end(path)
    with open(path, "rb") as handle:
        line = handle.read(end).strip()
        handle.read(1)  # the newline
        rest = handle.read(after)
    if not _utf8(line):  # a long string is emptied unread: its bytes are checked here, as the whole line's sniff did
        return None
    try:
        value = skeleton(line)
    except (msgspec.DecodeError, msgspec.ValidationError, TooDeep, RecursionError):
        return None
    del line
    return json.dumps(value, ensure_ascii=False).encode() + b"\n" + rest


def _utf8(data: bytes) -> bool:
    """Whether the bytes are UTF-8, decoded a megabyte at a time and none of it kept (ASCII at once)."""
    if data.isascii():
        return True
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        with memoryview(data) as view:
            for at in range(0, len(view), _CHUNK):
                decoder.decode(view[at : at + _CHUNK])
        decoder.decode(b"", final=True)
    except UnicodeDecodeError:
        return False
    return True

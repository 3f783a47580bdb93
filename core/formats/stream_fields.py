"""The values a line's fields hold, read leniently: times, counts, strings and the text of a content value."""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any


def parse_time(value: Any) -> float | None:
    """An ISO-8601 string or epoch number (seconds or milliseconds) as epoch seconds, else None.

    The same text as the last call's gives the same float object: lines written in one millisecond (a question and
    its answer, a response's split lines, its tool results) share one time, where each kept a float of its own,
    24 bytes a message (docs/performance.md, import memory)."""
    if type(value) is not str:
        return _parse_time(value)
    last = _last_time
    if value == last[0]:
        return last[1]
    got = None
    if len(value) == 24 and value[23] == "Z" and value[19] == ".":
        second = _last_second
        if value[:19] == second[0]:
            millis = value[20:23]
            if millis.isascii() and millis.isdigit() and second[1] is not None:
                got = (second[1] + int(millis) * 1000) / 1_000_000
    if got is None:
        got = _parse_time(value)
    _remember_time(value, got)
    return got


def _remember_time(text: str, value: float | None) -> None:
    global _last_time
    _last_time = (text, value)  # one tuple, replaced whole: a reader on another thread sees a text with its own value


_last_time: tuple[str | None, float | None] = (None, None)


def _parse_time(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if len(value) == 24 and value[23] == "Z" and value[19] == ".":
            # The whole second of a time as Claude Code writes it (2026-01-01T00:00:00.001Z), in microseconds:
            # the next times in the same second add their milliseconds to it, where fromisoformat costs a
            # microsecond or two a line. timestamp() is (its microseconds since the epoch) / 10**6 divided as
            # integers, and so is the sum, so both round alike (tests/core/formats/test_stream_time.py).
            _last_second[:] = [value[:19], _whole_micros(parsed)]
        return parsed.timestamp()
    return None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_last_second: list[Any] = [None, None]  # [the first 19 characters of a time, its whole second's microseconds or None]


def _whole_micros(parsed: datetime) -> int | None:
    """Microseconds from the epoch to the start of `parsed`'s second; None when it is naive or not UTC."""
    if parsed.utcoffset() != timedelta(0):
        return None
    delta = parsed.replace(microsecond=0) - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def str_field(mapping: Mapping[str, Any], key: str, default: str = "") -> str:
    """mapping[key] when it is a string, else `default`."""
    value = mapping.get(key)
    return value if isinstance(value, str) else default


def text_of(content: Any) -> str:
    """The text of a content value: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") in ("image", "input_image", "image_url"):
                    parts.append("[image]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)

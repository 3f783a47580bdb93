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
    if len(value) == 24 and value[23] == "Z":
        # read once: another thread may replace them between the question and the answer
        minute, day = _last_minute, _last_day
        if value[:17] == minute[0]:  # most lines are seconds apart: in the minute read last, two fields to read
            got = _in_minute(value, minute[1])
        elif value[:11] == day[0]:
            got = _in_day(value, day[1])
    if got is None:
        got = _parse_time(value)
    _remember_time(value, got)
    return got


def _remember_time(text: str, value: float | None) -> None:
    global _last_time
    _last_time = (text, value)  # one tuple, replaced whole: a reader on another thread sees a text with its own value


_last_time: tuple[str | None, float | None] = (None, None)


def _parse_time(value: Any) -> float | None:
    global _last_day
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
            # The day of a time as Claude Code writes it (2026-01-01T00:00:00.001Z), in microseconds: the next
            # times of the same day add their clock to it (_in_day), where fromisoformat, replace and timestamp cost
            # several microseconds a line (a session's lines are seconds apart, rarely in one second).
            # timestamp() is (its microseconds since the epoch) / 10**6 divided as integers, and so is the sum, so
            # both round alike (tests/core/formats/test_claude_code_fast.py).
            _last_day = (value[:11], _day_micros(parsed))  # replaced whole, as _last_time is
        return parsed.timestamp()
    return None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_last_day: tuple[Any, Any] = (None, None)  # (the first 11 characters of a time (its date and T), its day's microseconds or None)


def _day_micros(parsed: datetime) -> int | None:
    """Microseconds from the epoch to the start of `parsed`'s day; None when it is naive or not UTC."""
    if parsed.utcoffset() != timedelta(0):
        return None
    return (parsed.date() - _EPOCH.date()).days * 86_400_000_000


# A clock's digits as their values, each within its range: a text of other characters (a digit that is not ASCII, a
# sign, a space) or out of range is no key, so one lookup both checks a field and reads it (_in_day).
_HOURS = {f"{n:02d}": n * 3_600_000_000 for n in range(24)}
_MINUTES = {f"{n:02d}": n * 60_000_000 for n in range(60)}
_SECONDS = {f"{n:02d}": n * 1_000_000 for n in range(60)}
_MILLIS = {f"{n:03d}": n * 1000 for n in range(1000)}


def _in_day(value: str, day: int | None) -> float | None:
    """`value` (24 characters, ending in Z) as epoch seconds from its day's microseconds: None where it is not
    HH:MM:SS.mmm of ASCII digits within their ranges, which fromisoformat then reads (or refuses) as ever. Its minute
    is kept for the next times (_in_minute)."""
    global _last_minute
    if day is None or value[13] != ":" or value[16] != ":" or value[19] != ".":
        return None
    h, m, s, ms = _HOURS.get(value[11:13]), _MINUTES.get(value[14:16]), _SECONDS.get(value[17:19]), _MILLIS.get(value[20:23])
    if h is None or m is None or s is None or ms is None:
        return None
    _last_minute = (value[:17], day + h + m)  # replaced whole, as _last_day is
    return (day + h + m + s + ms) / 1_000_000


def _in_minute(value: str, minute: int) -> float | None:
    """`value` (24 characters, ending in Z, its first 17 the minute's `minute` microseconds were read from) as epoch
    seconds: _in_day's sum, its day, hour and minute added once for the minute; None where _in_day gives None."""
    s, ms = _SECONDS.get(value[17:19]), _MILLIS.get(value[20:23])
    if s is None or ms is None or value[19] != ".":
        return None
    return (minute + s + ms) / 1_000_000


# (the first 17 characters of a time, to its minute's colon; that minute's microseconds since the epoch), as _in_day read it
_last_minute: tuple[Any, Any] = (None, None)


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

"""Words for counts and times as a person reads them: "1 message", "2 messages", a timestamp as a date."""

from __future__ import annotations

from datetime import UTC, datetime


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """`n` and the noun, singular for exactly one: counted(1, "message") == "1 message"; thousands separated."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def when(value: object) -> object:
    """A message's `created_at` as a person reads it: epoch seconds become a UTC date and time; other values stay."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return value
    try:
        moment = datetime.fromtimestamp(value, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return value
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")

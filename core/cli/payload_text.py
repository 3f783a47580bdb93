"""A compiled request's payload as text to read: each block under its place, text as written, and each cache mark
on the line after the block it ends (`foldscope requests FILE --payload K`)."""

from __future__ import annotations

import json
from typing import Any

# Why each mark is where it is, in plain words (core.request.marks chooses them in this order of need).
ANCHOR_WORDS = {
    "stable": "the end of the system prompt and tools, kept an hour",
    "tail": "the request's last block, so the next request reads all of this from the cache",
    "first_round": "the end of the protected first round",
    "note": "the latest note, so a fold's summary is read from the cache",
    "lookback": "a block the provider's lookback would otherwise miss",
}
PAD = "  "


def mark_paths(payload: dict[str, Any], marks: list[dict[str, Any]]) -> dict[tuple, dict[str, Any]]:
    """Each mark by the path of the block it ends: ("messages", item, "content", block) or (where, last)."""
    out: dict[tuple, dict[str, Any]] = {}
    for mark in marks:
        if mark["block"] is None:
            items = payload.get(mark["where"])
            if isinstance(items, list) and items:
                out[(mark["where"], len(items) - 1)] = mark
        else:
            out[(mark["where"], mark["item"], "content", mark["block"])] = mark
    return out


def mark_line(mark: dict[str, Any], depth: int) -> str:
    why = ANCHOR_WORDS.get(mark["anchor"], mark["anchor"])
    at = "" if mark.get("index") is None else f", ending message #{mark['index']}"
    return f"{PAD * depth}◀ cache mark, {mark['lifetime']}: {why}{at}"


def payload_text(request: int, payload: dict[str, Any], marks: list[dict[str, Any]]) -> list[str]:
    """The payload as indented text: keys as headings, strings as their lines, short values inline."""
    where = mark_paths(payload, marks)
    lines = [
        f"request {request:,}: the compiled payload ({len(marks)} cache mark{'' if len(marks) == 1 else 's'}; --json gives it as JSON)"
    ]
    _value(payload, (), 0, lines, where, head=None)
    return lines


def _value(value: Any, path: tuple, depth: int, lines: list[str], where: dict[tuple, dict[str, Any]], head: str | None) -> None:
    pad = PAD * depth
    if isinstance(value, dict):
        if head is not None:
            lines.append(f"{pad}{head}{_summary(value)}")
            depth += 1
        for key, item in value.items():
            if key == "cache_control" and path in where:
                continue  # said by the mark's own line, after the block
            _value(item, (*path, key), depth, lines, where, head=f"{key}:")
    elif isinstance(value, list):
        lines.append(
            f"{pad}{head or ''} {len(value):,} item{'' if len(value) == 1 else 's'}".rstrip()
            if value
            else f"{pad}{head or ''} (none)".rstrip()
        )
        for i, item in enumerate(value):
            _value(item, (*path, i), depth + 1, lines, where, head=f"[{i}]")
    elif isinstance(value, str) and ("\n" in value or len(value) > 80):
        lines.append(f"{pad}{head or ''}".rstrip())
        lines += [f"{pad}{PAD}{line}" for line in value.splitlines()] or [f"{pad}{PAD}"]
    else:
        lines.append(f"{pad}{head + ' ' if head else ''}{json.dumps(value, ensure_ascii=False)}")
    if path in where:
        lines.append(mark_line(where[path], max(depth, 1)))


def _summary(block: dict[str, Any]) -> str:
    """A block's heading: its type and role, the tool's name, so a block reads at a glance."""
    said = [str(block[k]) for k in ("role", "type", "name") if isinstance(block.get(k), str)]
    return f" ({', '.join(said)})" if said else ""

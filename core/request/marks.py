"""Where cache marks go (ADR-0127 D5, ADR-0130 Amendment 4): the one place that decides them, for compile and replay.

While prompt caching is on, a request carries at most four marks, one-hour before five-minute:
  - one hour at the end of the stable segment (the last system block, else the last tool);
  - five minutes on the moving tail (the request's last block);
  - five minutes at the end of an included protected first round;
  - five minutes at the end of the newest note;
  - (replay only) five minutes where the previous request ended, when the turn ran past the lookback.
When there are more anchors than marks, they are kept in that order of need. Two anchors on one
block are one mark. The compiled payload carries a mark as `cache_control` the way the Anthropic
Messages API takes it: `{"type": "ephemeral", "ttl": "1h"}` or `{"type": "ephemeral"}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, cast

MAX_MARKS = 4
ONE_HOUR, FIVE_MINUTES = "1h", "5m"
ORDER = ("stable", "tail", "first_round", "note", "lookback")  # order of need


@dataclass(frozen=True)
class MarkAt:
    """A mark on the request's flat block sequence: the block's position, its lifetime and why it is there."""

    block: int
    lifetime: str
    anchor: str


def choose_marks(
    blocks: int, *, stable: int | None = None, first_round: int | None = None, note: int | None = None, lookback: int | None = None
) -> tuple[MarkAt, ...]:
    """The marks for a request of `blocks` blocks (the stable segment's last block counted among them).

    `stable` is the position of the stable segment's last block, if any; the tail is always the
    last block. Returns at most four marks in block order; only the stable one lives an hour.
    """
    marks = tuple(MarkAt(*place) for place in mark_places(blocks, stable, first_round, note, lookback))
    # One-hour marks must precede five-minute ones; the stable segment leads every request.
    assert all(m.lifetime == FIVE_MINUTES for m in marks if stable is None or m.block > stable)
    return marks


def mark_places(
    blocks: int, stable: int | None, first_round: int | None, note: int | None, lookback: int | None
) -> list[tuple[int, str, str]]:
    """choose_marks' marks as (block, lifetime, anchor), in block order: what the replay's cache model reads a request,
    without a MarkAt made for each."""
    if blocks <= 0:
        return []
    chosen: dict[int, tuple[int, str, str]] = {}
    for anchor, block in zip(ORDER, (stable, blocks - 1, first_round, note, lookback)):
        if block is None or block in chosen or not 0 <= block < blocks:
            continue
        if len(chosen) == MAX_MARKS:
            break
        chosen[block] = (block, ONE_HOUR if anchor == "stable" else FIVE_MINUTES, anchor)
    return [chosen[b] for b in sorted(chosen)] if len(chosen) > 1 else list(chosen.values())


def cache_control(lifetime: str) -> dict[str, str]:
    """The Anthropic Messages API's form of a mark."""
    return {"ttl": "1h", "type": "ephemeral"} if lifetime == ONE_HOUR else {"type": "ephemeral"}


def mark_text(lifetime: str) -> str:
    """What a mark adds to a marked block's counted text: its key and value, from the key's first letter to the next
    key's (`cache_control` sorts first in a block, so both ends are cuts of core.request.count: its tokens add)."""
    return 'cache_control":' + json.dumps(cache_control(lifetime), separators=(",", ":"), sort_keys=True) + ',"'


@dataclass(frozen=True)
class MarkPosition:
    """Where a compiled payload carries a mark: `tools`, `system` or `messages`, the item, the block."""

    where: str
    item: int  # the tool's or system block's position, or the message's position in `messages`
    block: int | None  # the content block inside a message; None for tools and system blocks
    lifetime: str
    anchor: str
    index: int | None = None  # the full-record index of the view message the marked block ends with

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def payload_marks(payload: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Every mark a compiled payload carries, read back from its `cache_control` keys, in prefix order."""
    found: list[dict[str, Any]] = []

    def lifetime(block: Mapping[str, Any]) -> str | None:
        mark = block.get("cache_control") if isinstance(block, Mapping) else None
        if not isinstance(mark, Mapping):
            return None
        return ONE_HOUR if mark.get("ttl") == "1h" else FIVE_MINUTES

    for where in ("tools", "system"):
        for i, item in enumerate(payload.get(where) or ()):
            if (life := lifetime(item)) is not None:
                found.append({"where": where, "item": i, "block": None, "lifetime": life})
    for i, message in enumerate(payload.get("messages") or ()):
        content = message.get("content") if isinstance(message, Mapping) else None
        for b, block in enumerate(content if isinstance(content, list) else ()):
            if (life := lifetime(block)) is not None:
                found.append({"where": "messages", "item": i, "block": b, "lifetime": life})
    return found


def strip_marks(value: Any) -> Any:
    """A payload part without its `cache_control` keys (to compare requests whose moving tail differs)."""
    if isinstance(value, Mapping):
        return {k: strip_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_marks(v) for v in value]
    return value


SEARCH = object()  # replay_marks' tail_at when the caller does not know where the last tail is: search back for it


def replay_marks(
    keys: Sequence[Any],
    kinds: Mapping[str, str],
    previous_tail: Any,
    protected: frozenset[str],
    lookback: int,
    *,
    notes: Sequence[int] | None = None,
    members: Sequence[int] | None = None,
    tail_at: int | None | object = SEARCH,
) -> tuple[MarkAt, ...]:
    """The marks for replay's block keys (the head keyed by a tuple, each message by its id).

    `notes` and `members`, when given, are the positions of the blocks holding a note and a protected
    message, and `tail_at` where `previous_tail` is (None: not there); a caller that keeps them from request to
    request need not scan every block."""
    if not keys:
        return ()
    last = len(keys) - 1
    at = None
    if previous_tail is not None:
        if tail_at is SEARCH:
            at = next((i for i in range(last, -1, -1) if keys[i] == previous_tail), None)
        else:
            at = cast("int | None", tail_at)
    if notes is None:
        note = next((i for i in range(last, -1, -1) if kinds.get(keys[i]) == "note"), None)
    else:
        note = notes[-1] if notes else None
    if members is None:
        first_round = max((i for i, k in enumerate(keys) if k in protected), default=None)
    else:
        first_round = members[-1] if members else None
    return tuple(MarkAt(*place) for place in replay_places(len(keys), isinstance(keys[0], tuple), at, note, first_round, lookback))


def replay_places(
    blocks: int, head_keyed: bool, tail_at: int | None, note: int | None, first_round: int | None, lookback: int
) -> list[tuple[int, str, str]]:
    """replay_marks' marks as mark_places gives them, for a caller that keeps where the last tail, the newest note and
    the last protected member are (core.replay.layouts.Layouts.marks): `head_keyed`, whether the first block's key
    is a tuple (the head's, or the hidden head's); `tail_at`, where the previous request's tail is (None: not there)."""
    if tail_at is not None and blocks - 1 - tail_at <= lookback:
        tail_at = None
    return mark_places(blocks, 0 if head_keyed else None, first_round, note, tail_at)

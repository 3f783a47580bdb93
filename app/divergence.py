"""Where the next request stops repeating this one: the byte (core.trace's common prefix) and the payload part there."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from core.compile import TOP_ORDER, canonical, payload_bytes
from core.trace import common_prefix_len


@dataclass(frozen=True)
class Divergence:
    at: int  # the first byte the next request does not repeat
    size: int  # this request's bytes
    where: str  # the payload part holding that byte, as a person reads it
    cause: str

    @property
    def share(self) -> float:
        return self.at / self.size if self.size else 0.0


def _without_marks(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _without_marks(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [_without_marks(v) for v in value]
    return value


def _describe(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    kinds = [b.get("type", "?") for b in content if isinstance(b, Mapping)] if isinstance(content, list) else ["text"]
    return f"{message.get('role', '?')} ({', '.join(dict.fromkeys(kinds))})"


def divergence(this: Mapping[str, Any], following: Mapping[str, Any]) -> Divergence:
    """Compare two compiled payloads in prefix order: tools, system, then message by message."""
    a, b = payload_bytes(this), payload_bytes(following)
    at = common_prefix_len(a, b)
    for part in TOP_ORDER:
        if part == "messages":
            break
        if canonical(this.get(part)) != canonical(following.get(part)):
            return Divergence(at, len(a), part, f"the {part} differ")
    mine, theirs = list(this.get("messages") or []), list(following.get("messages") or [])
    for i, message in enumerate(mine):
        if i >= len(theirs):
            return Divergence(at, len(a), f"messages[{i}]", "the next request holds fewer messages: the view shrank")
        if canonical(message) == canonical(theirs[i]):
            continue
        where = f"messages[{i}], {_describe(message)}"
        if canonical(_without_marks(message)) == canonical(_without_marks(theirs[i])):
            return Divergence(at, len(a), where, "only a cache mark moved (the moving tail); the content is repeated")
        if i == len(mine) - 1 and len(theirs) > len(mine):
            return Divergence(at, len(a), where, "the last turn grew: the next request appends to it")
        return Divergence(at, len(a), where, "this message was rewritten or taken out (a fold, clip or compaction)")
    return Divergence(at, len(a), "the end", "the next request repeats every message and appends after them")

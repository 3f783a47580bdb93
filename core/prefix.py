"""Prefix share with its cause: how much of a request the next repeats from its start, and where and why they part."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from core.compile import IncludedRound, Plan, make_plan, payload_bytes, payload_from_plan
from core.marks import strip_marks
from core.model import FullRecord, Message

# Why the later request departs from the earlier one's bytes.
CAUSES = ("none", "append", "fold", "restore", "policy", "stable", "rewrite")


@dataclass(frozen=True)
class Compiled:
    """One compiled request with what its divergence needs: the plan, the payload, its bytes (marks set aside) and view."""

    view: tuple[str, ...]
    plan: Plan
    payload: dict[str, Any]
    data: bytes
    policy_key: tuple


def compile_for_prefix(messages: Sequence[Message], *, record: FullRecord | None, policy: Any = None,
                       tools: list | None = None, first_round: IncludedRound | None = None) -> Compiled:
    plan = make_plan(messages, record=record, policy=policy, tools=tools, first_round=first_round)
    payload = payload_from_plan(plan, record=record, policy=policy, tools=tools, first_round=first_round)
    key = (None, None) if policy is None else (policy.tool_result_max_chars, policy.caching)
    # Marks are set aside: they ask the provider to cache, they are not content it caches, and the moving
    # tail's mark would otherwise count every request as rewritten at the previous one's last block.
    data = payload_bytes(strip_marks(payload) if plan.caching else payload)
    return Compiled(tuple(m.id for m in messages), plan, payload, data, key)


@dataclass(frozen=True)
class Divergence:
    """Where request B first differs from the earlier request A, read on their payloads with marks set aside.

    `share` is the fraction of A's bytes B repeats from its start; `message` the position in B's
    `messages` of the first message that differs (None when the stable segment differs or nothing
    does); `index` the full-record index of the first view message in the block that differs;
    `cause` one of CAUSES.
    """

    share: float
    message: int | None
    index: int | None
    cause: str

    def as_dict(self) -> dict[str, Any]:
        return {"message": self.message, "index": self.index, "cause": self.cause}


def common_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the common prefix of two byte strings, comparing in halving blocks (C-speed compares)."""
    n = min(len(a), len(b))
    lo, step = 0, 1 << 16
    while lo < n:
        hi = min(n, lo + step)
        if a[lo:hi] == b[lo:hi]:
            lo = hi
            continue
        if hi - lo <= 64:
            while lo < hi and a[lo] == b[lo]:
                lo += 1
            return lo
        step = max(64, (hi - lo) // 2)
    return n


def divergence(a: Compiled, b: Compiled, record: FullRecord) -> Divergence:
    share = round(common_prefix_len(a.data, b.data) / len(a.data), 4) if a.data else 0.0
    if a.data == b.data:
        return Divergence(share, None, None, "none")
    if a.policy_key != b.policy_key:
        cause = "policy"
    elif any(strip_marks(a.payload.get(k)) != strip_marks(b.payload.get(k)) for k in ("tools", "system")):
        return Divergence(share, None, None, "stable")
    else:
        cause = _cause(a.view, b.view, record)
    am, bm = strip_marks(a.payload["messages"]), strip_marks(b.payload["messages"])
    i = next((k for k in range(min(len(am), len(bm))) if am[k] != bm[k]), min(len(am), len(bm)))
    if i < len(bm):
        index = _first_index(b, bm, am, i, record)
    else:
        index = _first_index(a, am, bm, i, record) if i < len(am) else None
    return Divergence(share, i, index, cause)


def _cause(before: Sequence[str], after: Sequence[str], record: FullRecord) -> str:
    if tuple(after[: len(before)]) == tuple(before):
        return "append"
    was = set(before)
    added = [record.get(m) for m in after if m not in was and m in record]
    if any(m.kind == "note" or m.is_clipped_copy for m in added):
        return "fold"
    newest = max((record.index_of(m) for m in before if m in record), default=-1)
    if any(record.index_of(m.id) < newest for m in added):
        return "restore"
    return "rewrite"


def _first_index(source: Compiled, mine: list, other: list, i: int, record: FullRecord) -> int | None:
    """The record index of the first view message in `source`'s first block of message i that `other` lacks."""
    blocks = source.plan.turns[i][1]
    theirs = other[i]["content"] if i < len(other) else []
    b = next((k for k, block in enumerate(mine[i]["content"]) if k >= len(theirs) or theirs[k] != block), len(blocks) - 1)
    first = blocks[b].messages[0]
    return record.index_of(first.id) if first.id in record else None

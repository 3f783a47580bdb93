"""The counter's step for a clipped copy: a view that differs from a measured one by one result replaced with a copy of
the same original (the clip's candidates) counts that result's block, every other block kept as it was laid out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import FullRecord, Message
from foldscope.core.request.compile import IncludedRound
from foldscope.core.request.count_step import Laid
from foldscope.core.request.plan import TOOL_RESULT, BlockSpec


def places(laid: Laid) -> dict:
    """Each result's seq position and the flat position of its block, by identity (None: the object is there twice)."""
    if laid.where is None:
        seq_at: dict[int, Any] = {}
        for si, m in enumerate(laid.seq):
            if m.kind == "action_response":
                seq_at[id(m)] = None if id(m) in seq_at else si
        where: dict[int, Any] = {}
        for fi, spec in enumerate(laid.flat):
            m = spec.message
            if m.kind == "action_response":
                k = id(m)
                pos = seq_at.get(k)
                where[k] = None if k in where or pos is None else (pos, fi)
        laid.where = where
    return laid.where


def one_replaced(
    base: Laid, messages: Sequence[Message], inputs: tuple, record: FullRecord | None, first_round: IncludedRound | None
) -> tuple[int, int, int, BlockSpec] | None:
    """Where a view differs from a measured one by one result replaced with a copy of the same original, when
    that leaves every block but the result's own, every pairing, role, glue and mark as they were:
    (view position, seq position, flat position, the block with the copy); else None.

    The whole plan pairs a result through its original's `action_request_id` (the same original for both), and
    a result the base paired directly (not irregular) pairs the same way; no other message names either
    one's id or the original's, so nothing else resolves differently; the anchors (notes, the first round's
    end and members) do not include either, so the marks stay where they were.
    """
    if base.irregular or len(base.messages) != len(messages) or base.inputs != inputs:
        return None
    old_view = base.messages
    i = common_start(old_view, messages)
    if i == len(messages):
        return None
    old, new = old_view[i], messages[i]
    if old.kind != "action_response" or new.kind != "action_response" or record is None:
        return None  # asked before the rest is compared: an edit of an answer is no copy's
    if common_start(old_view[i + 1 :], messages[i + 1 :]) != len(messages) - i - 1:
        return None
    src = old.clipped_from or old.id
    if new.clipped_from != src or new.id == src or new.id == old.id or src not in record:
        return None
    if old.clipped_from is None:
        if record.get(src) is not old:
            return None
    elif old.id == src:
        return None
    if first_round is not None and (old.id in first_round.members or new.id in first_round.members or first_round.end in (old.id, new.id)):
        return None
    ids = {src, old.id, new.id}
    for m in old_view[:i]:
        if m.id in ids or m.clipped_from in ids:
            return None
    for m in old_view[i + 1 :]:
        if m.id in ids or m.clipped_from in ids:
            return None
    at = places(base).get(id(old))
    if at is None:
        return None
    si, fi = at
    spec = base.flat[fi]
    if spec.tag == TOOL_RESULT:
        if spec.message is not old:
            return None
        return i, si, fi, BlockSpec(new, spec.tag, spec.call_id, spec.mark)
    return None

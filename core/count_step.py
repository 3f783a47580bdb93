"""The counter's incremental plan: a view that extends a measured one re-plans only from its last assistant run on."""

# Appending messages to a view can change only its last assistant run and what follows: every run
# before it is final (a user run's results pair with the run before it, an assistant run's calls with
# the run after it). So `lay_out` keeps the earlier blocks, their memo keys, parts and running counts
# from the state it extends, re-plans the rest with core.plan.plan_runs, and places the cache marks
# over the whole from the anchors it carries. Where that would not be exact (a new system message, a
# pairing through a look-up that reads earlier runs, a mark moving inside the kept blocks, a copy whose
# original is neither in the re-planned part nor in the record) it plans the view whole.
# tests/core/test_count.py proves the parts equal the whole plan's over random growing views.

from __future__ import annotations

import operator
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from core.compile import IncludedRound, Plan, canonical, system_blocks, tool_list
from core.model import FullRecord, Message
from core.plan import BlockSpec, anchors, flat_marks, plan_runs


@dataclass
class Laid:
    """One measured view as the counter keeps it, to extend: its blocks, their keys, parts and running counts."""

    serial: int
    inputs: tuple  # what rendering depends on besides the view, compared by identity or value
    messages: list[Message]
    seq: list[Message]  # the non-system messages, in order
    system: tuple[Message, ...]
    cut: int  # position in seq where the last assistant run starts (0 when there is none)
    cut_block: int  # flat position of that run's first block
    flat: list[BlockSpec]
    roles: list[str]
    keys: list  # each block's memo key
    parts: list  # each block's Part (head excluded)
    cum: list[int]  # tokens of blocks 0..i with their glue
    notes: list[int]
    ends: list[int]
    members: list[int]
    marked: dict[int, tuple[str, str]]
    head: tuple  # (memo key, head text, head glue)
    stable: str | None
    kept: int  # leading blocks taken unchanged from the state this one extends
    since: int  # that state's serial (-1: planned whole)
    top: list = field(default_factory=list)  # the three largest kept parts as (-tokens, index, part)


def type_glue(spec: BlockSpec) -> str:
    """The end of a block's counted text that its body leaves out: its type."""
    block_type = "tool_use" if spec.tag == "tool_use" else "tool_result" if spec.tag == "tool_result" else "text"
    return f'type":"{block_type}"}}'


def glue_of(spec: BlockSpec, role: str, next_role: str | None) -> str:
    """The counted punctuation after a block: its type, and what closes or continues its turn."""
    glue = type_glue(spec)
    if next_role == role:
        return glue + ',{"'
    if next_role is not None:
        return glue + f'],"role":"{role}"}},{{"content":[{{"'
    return glue + f'],"role":"{role}"}}]}}'


def extends(base: Laid, messages: Sequence[Message], inputs: tuple) -> bool:
    n = len(base.messages)
    return (len(messages) >= n and base.inputs == inputs
            and all(map(operator.is_, base.messages, messages)))


def lay_out(messages: Sequence[Message], base: Laid | None, inputs: tuple, serial: int, *,
            record: FullRecord | None, policy: Any, tools: list | None, first_round: IncludedRound | None,
            marks: bool, key_of: Callable[[Any, BlockSpec], tuple]) -> Laid:
    """The view's blocks and keys, extending `base` (a Laid whose messages begin this view) when exact.

    Parts and counts are left for the counter to fill from index `kept` on (`parts`/`cum` hold the kept ones).
    """
    caching = policy is not None and policy.caching
    fr = first_round if caching else None
    with_marks = caching and marks
    if base is not None:
        new = messages[len(base.messages):]
        if any(m.kind == "system" for m in new):
            base = None
    if base is not None:
        system = base.system
        seq = base.seq + [m for m in new if m.kind != "system"]
        cut, k = base.cut, base.cut_block
    else:
        system = tuple(m for m in messages if m.kind == "system")
        seq = [m for m in messages if m.kind != "system"]
        cut, k = 0, 0
    tail = seq[cut:]
    by_id = {m.id: m for m in (tail if base is not None else messages)}
    if base is not None:
        for m in tail:
            src = m.clipped_from
            if src is not None and src not in by_id and not (record is not None and src in record):
                return _whole(messages, inputs, serial, record, policy, tools, first_round, marks, key_of)
    planned, by_answer = plan_runs(tail, by_id, record, caching)
    if by_answer and base is not None and cut > 0:
        return _whole(messages, inputs, serial, record, policy, tools, first_round, marks, key_of)

    tail_flat: list[BlockSpec] = []
    tail_roles: list[str] = []
    new_cut, new_cut_block, pos = cut, k, cut
    for role, blocks, size in planned:
        if role == "assistant":
            new_cut, new_cut_block = pos, k + len(tail_flat)
        tail_flat.extend(blocks)
        tail_roles.extend([role] * len(blocks))
        pos += size

    stable = None
    marked: dict[int, tuple[str, str]] = {}
    notes = ends = members = []
    if with_marks:
        t_notes, t_ends, t_members = anchors(tail_flat, fr, k)
        if base is not None:
            notes = [p for p in base.notes if p < k] + t_notes
            ends = [p for p in base.ends if p < k] + t_ends
            members = [p for p in base.members if p < k] + t_members
        else:
            notes, ends, members = t_notes, t_ends, t_members
        stable_exists = any(m.text for m in system) or bool(tools)
        stable, marked = flat_marks(k + len(tail_flat), stable_exists, notes, ends, members)
        if base is not None and {p: v for p, v in base.marked.items() if p < k} != {p: v for p, v in marked.items() if p < k}:
            return _whole(messages, inputs, serial, record, policy, tools, first_round, marks, key_of)
        tail_flat = [replace(s, mark=marked[i][0]) if i in marked else s for i, s in enumerate(tail_flat, k)]

    if base is not None:
        flat = base.flat[:k] + tail_flat
        roles = base.roles[:k] + tail_roles
    else:
        flat, roles = tail_flat, tail_roles
    head_plan = Plan(system, (), caching, stable)
    head = "{"
    listed = tool_list(head_plan, tools)
    if listed:
        head += '"tools":' + canonical(listed) + ","
    sys_blocks = system_blocks(head_plan)
    if sys_blocks:
        head += '"system":' + canonical(sys_blocks) + ","
    head += '"'
    head_t = (("head", head), head, 'messages":[' + ('{"content":[{"' if flat else "]}"))
    # The block before the re-planned ones keeps its key but may change its glue: it is counted again.
    kept = max(k - 1, 0) if base is not None else 0
    keys = base.keys[:kept] if base is not None else []
    keys.extend(key_of(record, s) for s in flat[kept:])
    return Laid(serial, inputs, list(messages), seq, system, new_cut, new_cut_block, flat, roles, keys,
                base.parts[:kept] if base is not None else [], base.cum[:kept] if base is not None else [],
                notes, ends, members, marked, head_t, stable, kept, base.serial if base is not None else -1)


def _whole(messages, inputs, serial, record, policy, tools, first_round, marks, key_of) -> Laid:
    return lay_out(messages, None, inputs, serial, record=record, policy=policy, tools=tools,
                   first_round=first_round, marks=marks, key_of=key_of)

"""Planning a request: which content block each view message becomes, calls paired with results, the marks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from foldscope.core.model.session import Fields, FullRecord, Message, canonical_json, sole_text
from foldscope.core.request.bodies import original_of
from foldscope.core.request.marks import MarkPosition, choose_marks

if TYPE_CHECKING:
    import msgspec
else:
    from foldscope.core.model.canonical import msgspec  # imported its way (core.model.canonical._msgspec)

# Which side of the conversation each kind speaks for. System messages go to `system` blocks.
ROLE = {
    "instruction": "user",
    "action_response": "user",
    "assistant": "assistant",
    "note": "assistant",
    "action_request": "assistant",
}

# How a view message becomes a content block (the `tag` of a BlockSpec). Caching adds marks to these blocks and
# never changes them: the request the agent sent, with `cache_control` where ADR-0127 places it.
TEXT, TOOL_USE, TOOL_RESULT, ORPHAN_RESULT = "text", "tool_use", "tool_result", "orphan_result"

# Instruction parts after the instruction itself, in the order they render.
INSTRUCTION_PARTS = (("guidance", "Guidance"), ("context", "Context"), ("prompt_context", "Context"))


class CompileError(Exception):
    """The view cannot be compiled: a value has no JSON form. Names the message."""


# A msgspec Struct, frozen (hashed and compared by its fields, as a frozen dataclass) and untracked by the collector
# (it holds a message and strings, never itself): made in C, a fifth of a frozen dataclass's slots set one by one
# (0.07 us against 0.33, one a block of every layout; docs/performance.md, counter13).
class BlockSpec(msgspec.Struct, frozen=True, gc=False):
    """One content block and the view message it comes from; `call_id` is the tool_use id for calls and results;
    `mark` is the block's cache mark lifetime, if any (caching adds it and changes nothing else)."""

    message: Message
    tag: str
    call_id: str | None = None
    mark: str | None = None

    def marked(self, mark: str | None) -> BlockSpec:
        """The same block with `mark` as its cache mark."""
        return BlockSpec(self.message, self.tag, self.call_id, mark)


def new_spec(message: Message, tag: str, call_id: str | None) -> BlockSpec:
    """BlockSpec(message, tag, call_id), unmarked."""
    return BlockSpec(message, tag, call_id)


def text_block(message: Message) -> BlockSpec:
    """BlockSpec(message, TEXT): the commonest block, a million of them on a file of tiny prompts."""
    return BlockSpec(message, TEXT)


@dataclass(frozen=True)
class IncludedRound:
    """A protected first round the decision included (Amendment 4): its members, the message that ends it,
    and the result bound frozen at the decision, which its results compile with."""

    members: frozenset[str]
    end: str
    bound: int | None


@dataclass(frozen=True)
class Plan:
    """What a view compiles to before rendering: system messages, the turns as (role, blocks), and the marks."""

    system: tuple[Message, ...]
    turns: tuple[tuple[str, tuple[BlockSpec, ...]], ...]
    caching: bool = False
    stable_mark: str | None = None  # the lifetime on the stable segment's last block (system, else tools)
    marks: tuple[MarkPosition, ...] = ()


def call_id_of(request: Message) -> str:
    """The tool_use id of an action_request: the source's own call id when a reader kept one, else its id."""
    cid = request.metadata.get("call_id")
    return cid if isinstance(cid, str) and cid else request.id


def plan_request(
    messages: Sequence[Message],
    record: FullRecord | None = None,
    *,
    caching: bool = False,
    first_round: IncludedRound | None = None,
    tools: bool = False,
    marks: bool = True,
) -> Plan:
    """Decide every block of the request, pairing calls with results (docs/compile.md, "Pairing").

    With `caching` the marks are placed on those same blocks (`tools` says whether the request carries tools,
    the end of the stable segment without system).
    """
    system = tuple(m for m in messages if m.kind == "system")
    seq = [m for m in messages if m.kind != "system"]
    planned, _ = plan_runs(seq, {m.id: m for m in messages}, record)
    turns: list[tuple[str, list[BlockSpec]]] = []
    for role, blocks, _ in planned:
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, list(blocks)))
    plan = Plan(system, tuple((role, tuple(blocks)) for role, blocks in turns), caching)
    return _with_marks(plan, record, first_round, tools) if caching and marks else plan


def plan_runs(
    seq: Sequence[Message], by_id: Mapping[str, Message], record: FullRecord | None
) -> tuple[list[tuple[str, list[BlockSpec], int]], bool]:
    """Each run of one role as (role, unmarked blocks, messages in the run), in order, for the non-system messages `seq`; and
    whether the pairing was irregular: a result paired through the look-up of calls by the result they name
    (`action_response_id`), or naming a call that comes after it (core.request.count_step re-plans whole then)."""
    runs, paired, result_call, irregular = _paired_runs(seq, by_id, record)
    flat, _, _, ends = _laid_flat(runs, paired, result_call, by_id, 0, 0)
    return [(role, flat[start:end], len(run)) for (role, run), start, end in zip(runs, [0, *ends], ends)], irregular


def plan_flat(
    seq: Sequence[Message], by_id: Mapping[str, Message], record: FullRecord | None, cut: int = 0, k: int = 0
) -> tuple[list[BlockSpec], list[str], list[tuple[int, int]], bool]:
    """plan_runs' blocks of `seq` laid flat in one pass, as the counter keeps them (core.request.count_step.Laid): the
    blocks, each block's role, the places re-planning may start (see _laid_flat; `seq` being a view's non-system messages
    from position `cut` on, its first block at flat position `k`), and whether the pairing was irregular."""
    runs, paired, result_call, irregular = _paired_runs(seq, by_id, record)
    flat, roles, starts, _ = _laid_flat(runs, paired, result_call, by_id, cut, k)
    return flat, roles, starts, irregular


def _paired_runs(
    seq: Sequence[Message], by_id: Mapping[str, Message], record: FullRecord | None
) -> tuple[list[tuple[str, list[Message]]], dict[str, str], dict[str, str], bool]:
    """The runs of one role of `seq`, as (role, messages); each paired call's tool_use id by its message id and by its
    result's; whether the pairing was irregular (plan_runs)."""
    runs: list[tuple[str, list[Message]]] = []
    role = None
    run: list[Message] = []
    calls: list[tuple[Message, int]] = []  # each call and its run (most runs hold none: their messages need no second look)
    results: list[tuple[Message, int]] = []  # each result and its run
    role_of = ROLE
    ri = -1  # the run's index in runs, counted rather than asked of len(runs) for each call and result
    for m in seq:
        kind = m.kind
        r = role_of[kind]
        if r != role:
            role, run = r, [m]
            runs.append((r, run))
            ri += 1
        else:
            run.append(m)
        if kind == "action_request":
            calls.append((m, ri))
        elif kind == "action_response":
            results.append((m, ri))

    call_run: dict[str, int] = {}
    answers: dict[str, str] = {}  # a result's id -> the call that names it (action_response_id)
    for m, ri in calls:
        call_run.setdefault(m.id, ri)
        rid = m.content.get("action_response_id")
        if isinstance(rid, str):
            answers.setdefault(rid, m.id)

    # A result pairs only with a call in the assistant run right before its own run, and only once: the call's
    # tool_use id, by the result's message id, for the result's block (the call's own block takes the same id).
    result_call: dict[str, str] = {}
    paired: dict[str, str] = {}  # call message id -> the tool_use id its block and its result's carry
    by_answer = False
    for m, ri in results:
        source = original_of(m, record, by_id) if "clipped_from" in m.metadata else m
        cid = source.content.get("action_request_id")
        if not isinstance(cid, str) or cid not in call_run:
            cid = answers.get(source.id, answers.get(m.id))
            by_answer = by_answer or cid is not None
        elif call_run[cid] > ri:
            by_answer = True  # names a call after it: a shorter view could pair it otherwise
        if cid is not None and call_run.get(cid) == ri - 1 and cid not in paired:
            paired[cid] = result_call[m.id] = call_id_of(by_id[cid])

    return runs, paired, result_call, by_answer


def _laid_flat(
    runs: list[tuple[str, list[Message]]],
    paired: Mapping[str, str],
    result_call: Mapping[str, str],
    by_id: Mapping[str, Message],
    cut: int,
    k: int,
) -> tuple[list[BlockSpec], list[str], list[tuple[int, int]], list[int]]:
    """The runs' blocks in one list (`paired`: a paired call's tool_use id by its message id, `result_call`: the same by
    its result's message id; a user run's results lead its texts), each block's role, the places re-planning may start,
    and where each run's blocks end.

    The places, as (seq position, flat position) with the runs' first message at seq position `cut` and first block at
    flat position `k`: each assistant run's start, and each message with text before the run's first call (the blocks
    before it are its texts, one each, and no later call can join them: core.request.count_step.lay_out)."""
    flat: list[BlockSpec] = []
    roles: list[str] = []
    starts: list[tuple[int, int]] = []
    ends: list[int] = []
    pos = cut
    for role, run in runs:
        first = len(flat)
        if role == "assistant":
            starts.append((pos, k + first))
            opening = True  # before the run's first call
            for j, m in enumerate(run):
                if m.kind == "action_request":
                    opening = False
                    cid = paired.get(m.id)
                    if cid is None:
                        continue
                    if by_id.get(m.id) is not m:  # another message of its id is the one its result's block names
                        cid = call_id_of(m)
                    flat.append(BlockSpec(m, TOOL_USE, cid))
                    continue
                text = sole_text(m)  # has_text's answer for the commonest message, without its look-ups
                if not (text if text is not None else has_text(m)):
                    continue
                if opening and j:
                    starts.append((pos + j, k + len(flat)))
                flat.append(BlockSpec(m, TEXT))
        else:
            later: list[BlockSpec] = []
            for m in run:
                if m.kind == "action_response":
                    cid = result_call.get(m.id)
                    if cid is not None:
                        flat.append(BlockSpec(m, TOOL_RESULT, cid))  # tool_result blocks lead their user message
                    else:
                        later.append(BlockSpec(m, ORPHAN_RESULT))
                    continue
                text = sole_text(m)
                if not (text if text is not None else has_text(m)):
                    continue
                later.append(BlockSpec(m, TEXT))
            if later:
                flat.extend(later)
        roles += [role] * (len(flat) - first)
        ends.append(len(flat))
        pos += len(run)
    return flat, roles, starts, ends


def unanswered_calls(messages: Sequence[Message], record: FullRecord | None = None) -> list[Message]:
    """The tool calls a request from this view would leave out although their result exists, in the view (standing
    where it cannot answer the call) or in the record (outside the view), in view order. D4: a request never
    carries a call without its result, so such a request is refused, the call named (core.fold.fold). A call
    whose result nothing holds (a session that ended during the call) is what the file recorded: it is left out."""
    seq = [m for m in messages if m.kind != "system"]
    calls = [m for m in seq if m.kind == "action_request"]
    if not calls:
        return []
    planned, _ = plan_runs(seq, {m.id: m for m in messages}, record)
    kept = {spec.message.id for _, blocks, _ in planned for spec in blocks if spec.tag == TOOL_USE}
    in_view = {m.id for m in seq}
    named = {m.content.get("action_request_id") for m in seq if m.kind == "action_response"}
    out = []
    for m in calls:
        if m.id in kept:
            continue
        result = m.content.get("action_response_id")
        known = isinstance(result, str) and (result in in_view or (record is not None and result in record))
        if known or m.id in named:
            out.append(m)
    return out


def anchors(flat: Sequence[BlockSpec], first_round: IncludedRound | None, start: int = 0) -> tuple[list[int], list[int], list[int]]:
    """Flat positions (from `start`) of the blocks holding a note, the first round's end, and any round member."""
    notes: list[int] = []
    ends: list[int] = []
    members: list[int] = []
    for i, spec in enumerate(flat, start):
        m = spec.message
        if m.kind == "note":
            notes.append(i)
        if first_round is not None:
            if m.id == first_round.end:
                ends.append(i)
            if m.id in first_round.members:
                members.append(i)
    return notes, ends, members


def flat_marks(
    blocks: int, stable_exists: bool, notes: Sequence[int], ends: Sequence[int], members: Sequence[int]
) -> tuple[str | None, dict[int, tuple[str, str]]]:
    """The stable mark's lifetime, and each marked block's flat position -> (lifetime, anchor), as core.request.marks decides."""
    offset = 1 if stable_exists else 0
    round_end = ends[-1] if ends else members[-1] if members else None
    chosen = choose_marks(
        blocks + offset,
        stable=0 if stable_exists else None,
        first_round=None if round_end is None else round_end + offset,
        note=notes[-1] + offset if notes else None,
    )
    stable, marked = None, {}
    for mark in chosen:
        if mark.anchor == "stable":
            stable = mark.lifetime
        else:
            marked[mark.block - offset] = (mark.lifetime, mark.anchor)
    return stable, marked


def _with_marks(plan: Plan, record: FullRecord | None, first_round: IncludedRound | None, tools: bool) -> Plan:
    """The plan with its cache marks placed (core.request.marks decides them)."""
    has_system = any(m.text for m in plan.system)
    flat = [(t, b) for t, (_, blocks) in enumerate(plan.turns) for b in range(len(blocks))]
    stable_mark, marked = flat_marks(len(flat), has_system or tools, *anchors([plan.turns[t][1][b] for t, b in flat], first_round))
    turns = [list(blocks) for _, blocks in plan.turns]
    positions: list[MarkPosition] = []
    if stable_mark is not None:
        positions.append(MarkPosition("system" if has_system else "tools", -1, None, stable_mark, "stable"))
    for i in sorted(marked):
        lifetime, anchor = marked[i]
        t, b = flat[i]
        spec = turns[t][b] = turns[t][b].marked(lifetime)
        last = spec.message
        index = record.index_of(last.id) if record is not None and last.id in record else None
        positions.append(MarkPosition("messages", t, b, lifetime, anchor, index))
    new_turns = tuple((role, tuple(turns[t])) for t, (role, _) in enumerate(plan.turns))
    return Plan(plan.system, new_turns, plan.caching, stable_mark, tuple(positions))


def has_text(message: Message) -> bool:
    """Whether a message renders a block of its own (an instruction by its parts, others by their text)."""
    if message.kind == "instruction":
        return bool(instruction_text(message))  # a typed prompt's text is its instruction alone (_sole_instruction)
    return bool(message.text)


def _sole_instruction(message: Message) -> str | None:
    """A typed prompt's text: the instruction when it is a string and the content's only key, else None."""
    c = message.content
    value = c.sole("instruction") if isinstance(c, Fields) else None
    return value if type(value) is str else None


_has_text = has_text  # the earlier name


def value_text(value: Any, message: Message) -> str:
    """A value as request text: strings as they are, anything else as sorted-key JSON, the same every time."""
    if isinstance(value, str):
        return value
    try:
        # json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)'s text, by
        # msgspec where that writes the same, a large share of rendering ahead on a Branch's outputs (docs/performance.md).
        return canonical_json(value, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CompileError(f"message {message.id} ({message.kind}) has a value with no JSON form: {exc}") from None


def instruction_text(message: Message) -> str:
    sole = _sole_instruction(message)  # a typed prompt, the commonest message: its text alone, no parts to add
    return sole if sole is not None else instruction_parts_text(message)


def instruction_parts_text(message: Message) -> str:
    """An instruction's text with its guidance and context parts, each once (instruction_text's general case)."""
    c = message.content
    parts = [value_text(c.get("instruction", ""), message)]
    shown: list[Any] = []
    for key, label in INSTRUCTION_PARTS:
        value = c.get(key)
        if value in (None, "", [], {}) or any(value == s for s in shown):
            continue
        shown.append(value)
        parts.append(f"{label}:\n{value_text(value, message)}")
    return "\n\n".join(p for p in parts if p)

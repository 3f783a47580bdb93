"""The request compiler: an active view to the Anthropic Messages payload it would send, in deterministic bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from core.model import FullRecord, Message

if TYPE_CHECKING:
    from core.policy import Policy

# Which side of the conversation each kind speaks for. System messages go to `system` blocks.
ROLE = {
    "instruction": "user",
    "action_response": "user",
    "assistant": "assistant",
    "note": "assistant",
    "action_request": "assistant",
}

# How a view message becomes a content block (the `tag` of a BlockSpec).
TEXT, TOOL_USE, TOOL_RESULT, ORPHAN_RESULT = "text", "tool_use", "tool_result", "orphan_result"

# Instruction parts after the instruction itself, in the order they render.
INSTRUCTION_PARTS = (("guidance", "Guidance"), ("context", "Context"), ("prompt_context", "Context"))


class CompileError(Exception):
    """The view cannot be compiled: a value has no JSON form. Names the message."""


@dataclass(frozen=True)
class BlockSpec:
    """One content block and the view message it comes from; `call_id` is the tool_use id for calls and results."""

    message: Message
    tag: str
    call_id: str | None = None


@dataclass(frozen=True)
class Plan:
    """What a view compiles to before rendering: system messages and the turns as (role, blocks)."""

    system: tuple[Message, ...]
    turns: tuple[tuple[str, tuple[BlockSpec, ...]], ...]


def call_id_of(request: Message) -> str:
    """The tool_use id of an action_request: the source's own call id when a reader kept one, else its id."""
    cid = request.metadata.get("call_id")
    return cid if isinstance(cid, str) and cid else request.id


def original_of(message: Message, by_id: Mapping[str, Message], record: FullRecord | None) -> Message:
    """The original a clipped copy stands for (found in the view or the record), else the message itself."""
    source = message.clipped_from
    if source is None:
        return message
    if source in by_id:
        return by_id[source]
    if record is not None and source in record:
        return record.get(source)
    return message


def plan_request(messages: Sequence[Message], record: FullRecord | None = None) -> Plan:
    """Decide every block of the request, pairing calls with results (docs/compile.md, "Pairing")."""
    system = tuple(m for m in messages if m.kind == "system")
    seq = [m for m in messages if m.kind != "system"]
    by_id = {m.id: m for m in messages}

    runs: list[tuple[str, list[Message]]] = []
    for m in seq:
        role = ROLE[m.kind]
        if runs and runs[-1][0] == role:
            runs[-1][1].append(m)
        else:
            runs.append((role, [m]))

    call_run: dict[str, int] = {}
    answers: dict[str, str] = {}  # a result's id -> the call that names it (action_response_id)
    for ri, (role, run) in enumerate(runs):
        if role == "assistant":
            for m in run:
                if m.kind == "action_request":
                    call_run.setdefault(m.id, ri)
                    rid = m.content.get("action_response_id")
                    if isinstance(rid, str):
                        answers.setdefault(rid, m.id)

    paired: dict[str, str] = {}  # call message id -> the result message id answering it
    result_call: dict[str, str] = {}
    for ri, (role, run) in enumerate(runs):
        if role != "user":
            continue
        for m in run:
            if m.kind != "action_response":
                continue
            source = original_of(m, by_id, record)
            cid = source.content.get("action_request_id")
            if not isinstance(cid, str) or cid not in call_run:
                cid = answers.get(source.id, answers.get(m.id))
            # A result pairs only with a call in the assistant run right before its own run, and only once.
            if cid is not None and call_run.get(cid) == ri - 1 and cid not in paired:
                paired[cid] = m.id
                result_call[m.id] = cid

    turns: list[tuple[str, list[BlockSpec]]] = []
    for role, run in runs:
        blocks: list[BlockSpec] = []
        if role == "assistant":
            for m in run:
                if m.kind == "action_request":
                    if m.id in paired:
                        blocks.append(BlockSpec(m, TOOL_USE, call_id_of(m)))
                elif _has_text(m):
                    blocks.append(BlockSpec(m, TEXT))
        else:
            later: list[BlockSpec] = []
            for m in run:
                if m.id in result_call:
                    blocks.append(BlockSpec(m, TOOL_RESULT, call_id_of(by_id[result_call[m.id]])))
                elif m.kind == "action_response":
                    later.append(BlockSpec(m, ORPHAN_RESULT))
                elif _has_text(m):
                    later.append(BlockSpec(m, TEXT))
            blocks.extend(later)  # tool_result blocks lead their user message
        if not blocks:
            continue
        if turns and turns[-1][0] == role:
            turns[-1][1].extend(blocks)
        else:
            turns.append((role, blocks))
    return Plan(system, tuple((role, tuple(blocks)) for role, blocks in turns))


def _has_text(message: Message) -> bool:
    if message.kind == "instruction":
        return bool(instruction_text(message))
    return bool(message.text)


def value_text(value: Any, message: Message) -> str:
    """A value as request text: strings as they are, anything else as sorted-key JSON, the same every time."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise CompileError(f"message {message.id} ({message.kind}) has a value with no JSON form: {exc}") from None


def instruction_text(message: Message) -> str:
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


def result_text(message: Message, record: FullRecord | None, policy: Policy | None) -> str:
    """A tool result's body as the request carries it. The result bound (issue 5) projects it here."""
    return value_text(message.content.get("output", ""), message)


def render_block(spec: BlockSpec, record: FullRecord | None = None, policy: Policy | None = None) -> dict[str, Any]:
    """The content block for one view message. Keys sort so that `type` is always the last key."""
    m = spec.message
    if spec.tag == TOOL_USE:
        args = m.content.get("arguments", {})
        data = dict(args) if isinstance(args, Mapping) else {"arguments": args}
        return {"id": spec.call_id, "input": data, "name": str(m.content.get("function", "")), "type": "tool_use"}
    if spec.tag == TOOL_RESULT:
        block: dict[str, Any] = {"content": result_text(m, record, policy), "tool_use_id": spec.call_id, "type": "tool_result"}
        if m.metadata.get("is_error") is True:
            block["is_error"] = True
        return block
    if spec.tag == ORPHAN_RESULT:
        call = f"{m.content.get('function', '')}({value_text(m.content.get('arguments', {}), m)})"
        text = f"Tool result of {call}, whose call is not in this request:\n{result_text(m, record, policy)}"
        return {"text": text, "type": "text"}
    text = instruction_text(m) if m.kind == "instruction" else m.text
    return {"text": text, "type": "text"}


def system_blocks(plan: Plan) -> list[dict[str, Any]]:
    return [{"text": m.text, "type": "text"} for m in plan.system if m.text]


def compile_request(
    messages: Sequence[Message],
    *,
    record: FullRecord | None = None,
    policy: Policy | None = None,
    tools: list | None = None,
) -> dict[str, Any]:
    """The Anthropic Messages payload for a view: `tools`, `system` and `messages`, in that order."""
    plan = plan_request(messages, record)
    return payload_from_plan(plan, record=record, policy=policy, tools=tools)


def payload_from_plan(plan: Plan, *, record=None, policy=None, tools=None) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    if tools:
        payload["tools"] = list(tools)
    system = system_blocks(plan)
    if system:
        payload["system"] = system
    payload["messages"] = [
        {"content": [render_block(b, record, policy) for b in blocks], "role": role} for role, blocks in plan.turns
    ]
    return payload


# The top-level keys come in the provider's prefix order; everything inside sorts its keys.
TOP_ORDER = ("tools", "system", "messages")


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def payload_text(payload: Mapping[str, Any]) -> str:
    """The payload as JSON text: top-level keys in prefix order (then the rest sorted), no spaces."""
    keys = [k for k in TOP_ORDER if k in payload] + sorted(k for k in payload if k not in TOP_ORDER)
    return "{" + ",".join(f"{canonical(k)}:{canonical(payload[k])}" for k in keys) + "}"


def payload_bytes(payload: Mapping[str, Any]) -> bytes:
    """Deterministic bytes of a payload: the same view and policy give the same bytes on every run."""
    return payload_text(payload).encode("utf-8")


def counted_text(payload: Mapping[str, Any]) -> str:
    """The text the estimate counts (Amendment 1's D3): the payload's system, messages and tools as JSON."""
    return payload_text({k: payload[k] for k in TOP_ORDER if k in payload})

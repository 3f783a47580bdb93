"""The request compiler: an active view to the Anthropic Messages payload it would send, in deterministic bytes.

Planning (core.request.plan) decides the blocks; this module renders them: the result bound's projection
(core.request.projection) and the cache marks (core.request.marks) are applied here and nowhere else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from foldscope.core.model.session import FullRecord, Message, Session, canonical_json
from foldscope.core.request.marks import cache_control
from foldscope.core.request.plan import (  # noqa: F401 - re-exported: the compiler's public names
    ORPHAN_RESULT,
    ROLE,
    TEXT,
    TOOL_RESULT,
    TOOL_USE,
    BlockSpec,
    CompileError,
    IncludedRound,
    Plan,
    call_id_of,
    instruction_text,
    original_of,
    plan_request,
    value_text,
)
from foldscope.core.request.projection import PROJECTION_VERSION, ProjectionRefused, fits_whole, project_message

if TYPE_CHECKING:
    from foldscope.core.model.policy import Policy


def bound_for(message: Message, policy: Policy | None, first_round: IncludedRound | None = None) -> int | None:
    """The result bound a message compiles under: an included first round's frozen bound, else the policy's."""
    if first_round is not None and message.id in first_round.members and policy is not None and policy.caching:
        return first_round.bound
    return None if policy is None else policy.tool_result_max_chars


def result_output(message: Message, record: FullRecord | None, policy: Policy | None, first_round: IncludedRound | None = None) -> Any:
    """A tool result's output as the request carries it: projected from the original under the bound, else as stored."""
    output = message.content.get("output", "")
    bound = bound_for(message, policy, first_round)
    if bound is None:
        return output
    original = original_of(message, record)
    if original is message and message.is_clipped_copy:  # a copy whose original is not at hand
        if fits_whole(message, bound):
            return output
        raise CompileError(
            f"message {message.id} is a clipped copy whose original is not in the record, "
            f"and its output does not fit the result bound of {bound:,} characters"
        )
    if record is None or original.id not in record:
        if fits_whole(original, bound) and original is message:
            return output
        raise CompileError(f"message {message.id}: projecting its result needs the original's full-record index")
    index = record.index_of(original.id)
    try:
        projected, _ = project_message(message, original, index, bound)
    except ProjectionRefused as exc:
        raise CompileError(f"message at index {index} ({original.kind}): {exc}") from None
    return projected if "output" in original.content else ""


def result_text(message: Message, record: FullRecord | None, policy: Policy | None, first_round: IncludedRound | None = None) -> str:
    """A tool result's body as a tool_result block carries it."""
    return value_text(result_output(message, record, policy, first_round), message)


def render_block(
    spec: BlockSpec, record: FullRecord | None = None, policy: Policy | None = None, first_round: IncludedRound | None = None
) -> dict[str, Any]:
    """The content block for one view message, with its cache mark when it carries one (and nothing else changed by
    it: caching compiles the same blocks). Keys sort so that `type` is always the last key."""
    m = spec.message
    block: dict[str, Any]
    if spec.tag == TOOL_USE:
        args = m.content.get("arguments", {})
        data = dict(args) if isinstance(args, Mapping) else {"arguments": args}
        block = {"id": spec.call_id, "input": data, "name": str(m.content.get("function", "")), "type": "tool_use"}
    elif spec.tag == TOOL_RESULT:
        block = {"content": result_text(m, record, policy, first_round), "tool_use_id": spec.call_id, "type": "tool_result"}
        if m.metadata.get("is_error") is True:
            block["is_error"] = True
    elif spec.tag == ORPHAN_RESULT:
        call = f"{m.content.get('function', '')}({value_text(m.content.get('arguments', {}), m)})"
        text = f"Tool result of {call}, whose call is not in this request:\n{result_text(m, record, policy, first_round)}"
        block = {"text": text, "type": "text"}
    else:
        block = {"text": instruction_text(m) if m.kind == "instruction" else m.text, "type": "text"}
    if spec.mark is not None:
        block["cache_control"] = cache_control(spec.mark)
    return block


def block_key(spec: BlockSpec, record: FullRecord | None, policy: Policy | None, first_round: IncludedRound | None = None) -> tuple:
    """Everything a block's rendering depends on, for the counter's memo: the block (its message by identity,
    tag, call id, mark) and, for a result under a bound, its original, the original's index, its bound and the
    projection version."""
    if plain_key(policy, first_round):
        return (spec.message, spec.tag, spec.call_id, spec.mark)
    extra = []
    m = spec.message
    if m.kind == "action_response":
        original = original_of(m, record)
        index = record.index_of(original.id) if record is not None and original.id in record else None
        extra.append((original, index, bound_for(m, policy, first_round)))
    return (spec.message, spec.tag, spec.call_id, spec.mark, tuple(extra), PROJECTION_VERSION)


def plain_key(policy: Policy | None, first_round: IncludedRound | None) -> bool:
    """Whether block_key is the block alone under this policy and first round (its first, short form)."""
    return policy is None or (policy.tool_result_max_chars is None and (first_round is None or not policy.caching))


def memo_key(
    spec: BlockSpec, record: FullRecord | None, policy: Policy | None, first_round: IncludedRound | None = None, plain: bool | None = None
) -> Any:
    """block_key as the counter's memo holds it (core.request.count.Counter): the message itself for a block that is
    one message's text alone, unmarked, where block_key would be its short form (message, TEXT, None, None),
    which is nearly every block of a file of short prompts; block_key otherwise. The message is kept anyway,
    so the key costs nothing, where the tuple and its pair with the policy key cost 136 bytes a block.
    `plain`: plain_key(policy, first_round), when the caller has it."""
    if plain is None:
        plain = plain_key(policy, first_round)
    if plain:  # block_key's short form, without asking plain_key again
        if spec.tag == TEXT and spec.call_id is None and spec.mark is None:
            return spec.message
        return (spec.message, spec.tag, spec.call_id, spec.mark)
    return block_key(spec, record, policy, first_round)


def memo_keys(
    specs: Iterable[BlockSpec], record: FullRecord | None, policy: Policy | None, first_round: IncludedRound | None, plain: bool
) -> list:
    """memo_key of each block, in order (`plain`: plain_key's answer): in one comprehension where the keys are short,
    with no call a block (a cold count's thousand blocks)."""
    if plain:
        return [
            s.message if s.tag == TEXT and s.call_id is None and s.mark is None else (s.message, s.tag, s.call_id, s.mark) for s in specs
        ]
    return [block_key(s, record, policy, first_round) for s in specs]


def full_key(key: Any) -> tuple:
    """A memo_key as block_key gives it: a message stands for its text block's short form."""
    return (key, TEXT, None, None) if isinstance(key, Message) else key


def short_key(key: tuple) -> Any:
    """A block_key as memo_key gives it (full_key's inverse)."""
    if len(key) == 4 and key[1] == TEXT and key[2] is None and key[3] is None and isinstance(key[0], Message):
        return key[0]
    return key


def session_tools(session: Session) -> list | None:
    """The tool definitions the session's requests carry, when its file holds them."""
    tools = session.extras.get("tools")
    return tools if isinstance(tools, list) and tools else None


def system_blocks(plan: Plan) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = [{"text": m.text, "type": "text"} for m in plan.system if m.text]
    if blocks and plan.stable_mark is not None:
        blocks[-1]["cache_control"] = cache_control(plan.stable_mark)
    return blocks


def tool_list(plan: Plan, tools: list | None) -> list | None:
    """The request's tools; the last carries the stable mark when there is no system block to carry it."""
    if not tools:
        return None
    out = list(tools)
    if plan.stable_mark is not None and not any(m.text for m in plan.system) and isinstance(out[-1], Mapping):
        out[-1] = {**out[-1], "cache_control": cache_control(plan.stable_mark)}
    return out


def request_head(plan: Plan, tools: list | None) -> str:
    """The compiled request's text up to the cut before `messages`: `{`, the tools and the system blocks, then `"`;
    the counter counts it as one segment, apart from the turns (core.request.count)."""
    head = "{"
    listed = tool_list(plan, tools)
    if listed:
        head += '"tools":' + canonical(listed) + ","
    system = system_blocks(plan)
    if system:
        head += '"system":' + canonical(system) + ","
    return head + '"'


def make_plan(
    messages: Sequence[Message],
    *,
    record: FullRecord | None = None,
    policy: Policy | None = None,
    tools: list | None = None,
    first_round: IncludedRound | None = None,
    marks: bool = True,
) -> Plan:
    """The plan a view compiles from under a policy: its marks only while caching is on."""
    caching = policy is not None and policy.caching
    return plan_request(messages, record, caching=caching, first_round=first_round if caching else None, tools=bool(tools), marks=marks)


def compile_request(
    messages: Sequence[Message],
    *,
    record: FullRecord | None = None,
    policy: Policy | None = None,
    tools: list | None = None,
    first_round: IncludedRound | None = None,
) -> dict[str, Any]:
    """The Anthropic Messages payload for a view: `tools`, `system` and `messages`, in that order.

    `first_round` is the session's included protected first round (core.request.first_round.included_round);
    it matters only while the policy's prompt caching is on.
    """
    plan = make_plan(messages, record=record, policy=policy, tools=tools, first_round=first_round)
    return payload_from_plan(plan, record=record, policy=policy, tools=tools, first_round=first_round)


def payload_from_plan(plan: Plan, *, record=None, policy=None, tools=None, first_round=None) -> dict[str, Any]:
    payload: dict[str, Any] = {}
    listed = tool_list(plan, tools)
    if listed:
        payload["tools"] = listed
    system = system_blocks(plan)
    if system:
        payload["system"] = system
    payload["messages"] = [
        {"content": [render_block(b, record, policy, first_round) for b in blocks], "role": role} for role, blocks in plan.turns
    ]
    return payload


# The top-level keys come in the provider's prefix order; everything inside sorts its keys.
TOP_ORDER = ("tools", "system", "messages")


def canonical(value: Any) -> str:
    """The compiled form of a value: core.model.session.canonical_json, refusing NaN and infinities."""
    return canonical_json(value, allow_nan=False)


def payload_text(payload: Mapping[str, Any]) -> str:
    """The payload as JSON text: top-level keys in prefix order (then the rest sorted), no spaces."""
    keys = [k for k in TOP_ORDER if k in payload] + sorted(k for k in payload if k not in TOP_ORDER)
    return "{" + ",".join(f"{canonical(k)}:{canonical(payload[k])}" for k in keys) + "}"


def payload_bytes(payload: Mapping[str, Any]) -> bytes:
    """Deterministic bytes of a payload: the same view and policy give the same bytes on every run (a lone surrogate, half
    an emoji a tool cut, as surrogatepass writes it: the prefix meter measures it alike)."""
    return payload_text(payload).encode("utf-8", "surrogatepass")


def counted_text(payload: Mapping[str, Any]) -> str:
    """The text the estimate counts (Amendment 1's D3): the payload's system, messages and tools as JSON."""
    return payload_text({k: payload[k] for k in TOP_ORDER if k in payload})

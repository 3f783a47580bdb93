"""A lionagi message as lionagi renders it into the prompt: the text its provider reads, which the prediction counts
(core.request.provider_text, through FormatSpec.prompt_text)."""

from __future__ import annotations

from foldscope.core.model.session import Message

# lionagi renders a message into the prompt (khive-ai/lionagi @ fadabf8c, v0.14.1, lionagi/protocols/messages/):
# an Instruction by instruction.py's format_text_content, each part it holds under a heading in this order, a
# later version's `prompt_context` as its `context`; an AssistantResponse by assistant_response.jinja2. The
# payloads its logs keep (the cookbook Branch files) are this text.
LION_KINDS = frozenset({"instruction", "assistant"})
LION_PARTS = (
    ("guidance", "GUIDANCE"),
    ("instruction", "INSTRUCTION"),
    ("context", "CONTEXT"),
    ("prompt_context", "CONTEXT"),
    ("tool_schemas", "TOOL_SCHEMAS"),
    ("respond_schema_info", "RESPONSE SCHEMA INFO"),
    ("request_response_format", "RESPONSE FORMAT"),
)


def prompt_text(message: Message) -> str | None:
    """A lionagi instruction or answer as lionagi renders it into the prompt; None for any other message (its text)."""
    if message.kind not in LION_KINDS or "lion_class" not in message.metadata:
        return None
    c = message.content
    if message.kind == "assistant":
        return f"# Assistant Response\n\n**Response**:\n{message.text}"
    if isinstance(c.get("plain_content"), str):
        return str(c["plain_content"])
    lines: list[str] = []
    for key, heading in LION_PARTS:
        value = c.get(key)
        if _lion_not_empty(value):
            lines.append(f"\n## {heading}:\n")
            lines.extend(f"  {line}" for line in _lion_value(value).split("\n") if line.strip())
    return "\n".join(lines).strip()


def _lion_value(value: object) -> str:
    """instruction.py's _render_value: a list as bullets, a dict as `- key: value` lines, nested ones indented."""
    if isinstance(value, dict):
        rows = [(f"- {k}:", _lion_value(v)) for k, v in value.items() if _lion_not_empty(v)]
    elif isinstance(value, list):
        rows = [("-", _lion_value(v)) for v in value]
    else:
        return str(value).strip()
    lines: list[str] = []
    for head, sub in rows:
        sublines = sub.split("\n")
        if len(sublines) == 1:
            one = sublines[0][2:] if sublines[0].startswith("- ") else sublines[0]
            lines.append(f"{head} {one}")
        else:
            lines.append(head)
            lines.extend(f"  {line}" for line in sublines)
    return "\n".join(lines)


def _lion_not_empty(value: object) -> bool:
    if value is None or (isinstance(value, (list, dict)) and not value):
        return False
    return not (isinstance(value, str) and not value.strip())

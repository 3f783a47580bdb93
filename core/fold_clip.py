"""Clipped copies: a tool result's bodies, its recovery text, and a copy cut from the original with its marker.

The recovery text is what `read_result` pages through and what every marker's offsets address:
  - a text output is its own recovery text;
  - a mapping output is one section per key, in the mapping's order: `"{key}: "`, the value's
    text (a string as it is, anything else as JSON with sorted keys), then a newline;
  - any other output is its JSON text.
A body (ADR-0130 Amendment 2, point 3) is a text output, or one value of a mapping output other
than `success` and `error`. A string value is cut as it is; another JSON value is replaced, when
cut, by a labelled preview of its JSON text. Values JSON refuses are not bodies and stay whole.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from core.model import FullRecord, Message, sha256_of

CLIP_FLOOR = 1024  # never cut a body below this many characters (Amendment 2, a starting value)
HEAD_SHARE = 3  # head and tail kept in a three-to-one ratio
READ_LIMIT = 16_000  # most characters one read_result call returns
PREVIEW_LABEL = "[JSON preview] "
PROTECTED_KEYS = ("success", "error")
ACTION_RESPONSE_CLASS = "lionagi.protocols.messages.action_response.ActionResponse"


@dataclass(frozen=True)
class Body:
    """One cuttable body of an original result: `key` None for a whole output, else the mapping key."""

    key: str | None
    text: str  # the body's source text (what read_result returns at `offset`)
    offset: int  # where the text starts in the original's recovery text
    preview: bool  # a non-string value, shown as a labelled JSON preview when cut


def _json_text(value: Any) -> str | None:
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return None


def _section_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    text = _json_text(value)
    return text if text is not None else str(value)


def recovery_text(message: Message) -> str:
    """The text read_result pages through: a result's output as laid out above, else the message's text."""
    if message.kind != "action_response":
        return message.text
    output = message.content.get("output")
    if isinstance(output, str):
        return output
    if isinstance(output, Mapping):
        return "".join(f"{key}: {_section_text(value)}\n" for key, value in output.items())
    return _section_text(output)


def bodies_of(original: Message) -> list[Body]:
    """The bodies of an original result, with their offsets in its recovery text."""
    output = original.content.get("output")
    if isinstance(output, str):
        return [Body(None, output, 0, False)]
    if isinstance(output, Mapping):
        bodies, offset = [], 0
        for key, value in output.items():
            label = f"{key}: "
            text = _section_text(value)
            cuttable = str(key) not in PROTECTED_KEYS and (isinstance(value, str) or _json_text(value) is not None)
            if cuttable and value is not None:
                bodies.append(Body(str(key), text, offset + len(label), not isinstance(value, str)))
            offset += len(label) + len(text) + 1
        return bodies
    text = _json_text(output)
    return [] if text is None or output is None else [Body(None, text, 0, True)]


def original_of(message: Message, record: FullRecord) -> Message:
    """The original a result stands for: a copy's `clipped_from` (metadata only, never its output), else itself."""
    source = message.clipped_from
    if isinstance(source, str) and source in record:
        original = record.get(source)
        if original.kind == "action_response":
            return original
    return message


def kept_of(message: Message) -> dict[str | None, int]:
    """The characters of each body a copy keeps, by body key; empty for an original."""
    if not message.is_clipped_copy:
        return {}
    kept = message.metadata.get("context_clip_kept")
    if isinstance(kept, int) and not isinstance(kept, bool):
        return {None: kept}
    if isinstance(kept, Mapping):
        return {str(k): v for k, v in kept.items() if isinstance(v, int) and not isinstance(v, bool)}
    return {}


def marker(index: int, start: int, end: int, limit: int = READ_LIMIT) -> str:
    """The line standing for an omitted range: how much is left out and the exact read_result call for it."""
    omitted = end - start
    first = min(omitted, limit)
    more = f", then continue from next_offset until offset {end}" if omitted > first else ""
    return (
        f"\n[... {omitted:,} characters omitted here (offsets {start} to {end} of the original, full-record "
        f'index {index}); read them with context(action="read_result", index={index}, offset={start}, '
        f"limit={first}){more} ...]\n"
    )


def cut_text(body: Body, kept: int, index: int) -> str:
    """The body as a copy shows it: head, marker, tail, from the original's text; whole when kept covers it."""
    text = body.text
    if kept >= len(text):
        return text
    kept = max(kept, 0)
    head = (HEAD_SHARE * kept) // (HEAD_SHARE + 1)
    tail = kept - head
    start, end = body.offset + head, body.offset + len(text) - tail
    shown = text[:head] + marker(index, start, end) + (text[len(text) - tail :] if tail else "")
    return PREVIEW_LABEL + shown if body.preview else shown


def build_copy(
    original: Message,
    index: int,
    kept: Mapping[str | None, int],
    *,
    new_id: Callable[[], str] | None = None,
    created_at: float | None = None,
) -> Message:
    """A clipped copy of `original` keeping `kept[key]` characters of each body named; always cut from the original."""
    bodies = {b.key: b for b in bodies_of(original)}
    output = original.content.get("output")
    if isinstance(output, Mapping):
        shown = {}
        for key, value in output.items():
            body = bodies.get(str(key))
            cut = body is not None and str(key) in kept and kept[str(key)] < len(body.text)
            shown[key] = cut_text(body, kept[str(key)], index) if cut else value
        new_output: Any = shown
        recorded: Any = {k: v for k, v in kept.items() if k in bodies and v < len(bodies[k].text)}
    else:
        body = bodies[None]
        new_output = cut_text(body, kept[None], index)
        recorded = kept[None]
    return copy_of(original, new_output, recorded, new_id=new_id, created_at=created_at)


def build_bounded_copy(original: Message, index: int, bound: int, allowances: Mapping[str | None, int], *,
                       new_id: Callable[[], str] | None = None, created_at: float | None = None
                       ) -> tuple[Message, dict[str | None, int]]:
    """A clipped copy under the result bound (Amendment 3, point 4): its output is the original's projection
    under `allowances` (core.projection.project_output), with one marker derived from the original, and its
    `context_clip_kept` the retained count each shortened body really shows. Returns it and those counts."""
    from core.projection import project_output

    output, kept = project_output(original, index, bound, allowances)
    recorded: Any = kept.get(None, 0) if not isinstance(original.content.get("output"), Mapping) else dict(kept)
    return copy_of(original, output, recorded, new_id=new_id, created_at=created_at), kept


def copy_of(original: Message, output: Any, recorded: Any, *, new_id: Callable[[], str] | None = None,
            created_at: float | None = None) -> Message:
    """A copy standing for `original` with `output` and its kept counts: `clipped_from` names the original."""
    content = {"function": original.content.get("function"), "arguments": original.content.get("arguments", {})}
    content["output"] = output
    metadata = {
        "lion_class": original.metadata.get("lion_class", ACTION_RESPONSE_CLASS),
        "clipped_from": original.id,
        "context_clip_kept": recorded,
        "context_clip_sha256": original.sha256(),
    }
    return Message(
        id=(new_id or _uuid)(),
        kind="action_response",
        created_at=created_at,
        content=content,
        metadata=metadata,
    )


def _uuid() -> str:
    return str(uuid.uuid4())


def span_digest(messages: Sequence[Message]) -> str:
    """One SHA-256 over a span's messages (each message's own SHA-256, in order): what peek verifies."""
    return sha256_of([m.sha256() for m in messages])

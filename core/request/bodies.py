"""A tool result's bodies and its recovery text: what the result bound projects and what every marker addresses.

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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from foldscope.core.model.session import FullRecord, Message

HEAD_SHARE = 3  # head and tail kept in a three-to-one ratio
READ_LIMIT = 16_000  # most characters one read_result call returns
PREVIEW_LABEL = "[JSON preview] "
PROTECTED_KEYS = ("success", "error")


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
    whole = _json_text(output)
    return [] if whole is None or output is None else [Body(None, whole, 0, True)]


def original_of(message: Message, record: FullRecord | None, by_id: Mapping[str, Message] | None = None) -> Message:
    """The original a result stands for: a copy's `clipped_from` (metadata only, never its output), found among
    `by_id` (a view's messages) or in the record and itself a result, else the message itself."""
    source = message.clipped_from
    if not isinstance(source, str):
        return message
    original = by_id.get(source) if by_id else None
    if original is None and record is not None and source in record:
        original = record.get(source)
    return original if original is not None and original.kind == "action_response" else message


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

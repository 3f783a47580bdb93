"""Clipped copies: a copy of a tool result cut from its original, with the marker naming the omitted range.

The bodies a copy cuts and the recovery text its offsets address are `foldscope.core.request.bodies`'.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from foldscope.core.model.session import Message, sha256_of
from foldscope.core.request.bodies import (  # noqa: F401 (re-exported: the fold and actions name them here)
    HEAD_SHARE,
    PREVIEW_LABEL,
    PROTECTED_KEYS,
    READ_LIMIT,
    Body,
    bodies_of,
    kept_of,
    marker,
    original_of,
    recovery_text,
)
from foldscope.core.request.projection import project_output

CLIP_FLOOR = 1024  # never cut a body below this many characters (Amendment 2, a starting value)
ACTION_RESPONSE_CLASS = "lionagi.protocols.messages.action_response.ActionResponse"


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
    digest: bool = True,
) -> Message:
    """A clipped copy of `original` keeping `kept[key]` characters of each body named; always cut from the original."""
    bodies = {b.key: b for b in bodies_of(original)}
    output = original.content.get("output")
    if isinstance(output, Mapping):
        shown = {}
        for key, value in output.items():
            body = bodies.get(str(key))
            if body is not None and str(key) in kept and kept[str(key)] < len(body.text):
                shown[key] = cut_text(body, kept[str(key)], index)
            else:
                shown[key] = value
        new_output: Any = shown
        recorded: Any = {k: v for k, v in kept.items() if k in bodies and v < len(bodies[k].text)}
    else:
        body = bodies[None]
        new_output = cut_text(body, kept[None], index)
        recorded = kept[None]
    return copy_of(original, new_output, recorded, new_id=new_id, created_at=created_at, digest=digest)


def build_bounded_copy(
    original: Message,
    index: int,
    bound: int,
    allowances: Mapping[str | None, int],
    *,
    new_id: Callable[[], str] | None = None,
    created_at: float | None = None,
    digest: bool = True,
) -> tuple[Message, dict[str | None, int]]:
    """A clipped copy under the result bound (Amendment 3, point 4): its output is the original's projection
    under `allowances` (core.request.projection.project_output), with one marker derived from the original, and its
    `context_clip_kept` the retained count each shortened body really shows. Returns it and those counts."""

    output, kept = project_output(original, index, bound, allowances)
    recorded: Any = kept.get(None, 0) if not isinstance(original.content.get("output"), Mapping) else dict(kept)
    return copy_of(original, output, recorded, new_id=new_id, created_at=created_at, digest=digest), kept


def copy_of(
    original: Message,
    output: Any,
    recorded: Any,
    *,
    new_id: Callable[[], str] | None = None,
    created_at: float | None = None,
    digest: bool = True,
) -> Message:
    """A copy standing for `original` with `output` and its kept counts: `clipped_from` names the original, and with
    `digest` its SHA-256 (what read_result checks, its `verified`; a replay's fold, which never restores, records none: Fold.digests)."""
    content = {"function": original.content.get("function"), "arguments": original.content.get("arguments", {})}
    content["output"] = output
    metadata = {
        "lion_class": original.metadata.get("lion_class", ACTION_RESPONSE_CLASS),
        "clipped_from": original.id,
        "context_clip_kept": recorded,
    }
    if digest:
        metadata["context_clip_sha256"] = original.sha256()
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

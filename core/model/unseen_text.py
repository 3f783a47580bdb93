"""Unseen text in a message: a part of N characters the file does not hold (a sanitiser's marker stands in its place).

A reader that meets such a marker (a sanitised Codex rollout's `[REDACTED_OUTPUT len=N sha=S]`) names it in the
message's metadata, `"unseen_text": [{"marker": the marker as it stands in the text, "chars": N}]`: the marker's
own characters are no part of what the provider read, the N characters are. Which text is a marker is the reader's
to say; what the part's tokens are is the count's (core.request.unseen_text), from the file's own reported input.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

UNSEEN_TEXT = "unseen_text"  # the metadata key a reader names a message's unseen parts under


def unseen_part(marker: str, chars: int) -> dict[str, Any]:
    """One unseen part as a reader records it in the message's metadata (a list of them under UNSEEN_TEXT)."""
    return {"marker": marker, "chars": chars}


def unseen_parts(message: Any) -> list[tuple[str, int]]:
    """(marker, characters) for each unseen part a reader named in the message's metadata; [] without any."""
    metadata = getattr(message, "metadata", None)
    raw = metadata.get(UNSEEN_TEXT) if isinstance(metadata, Mapping) else None
    if not isinstance(raw, list):
        return []
    out = []
    for part in raw:
        if isinstance(part, Mapping) and isinstance(part.get("marker"), str) and type(part.get("chars")) is int:
            out.append((part["marker"], max(0, part["chars"])))
    return out


def unseen_chars(message: Any) -> int:
    """The characters of text the message stands for that the file does not hold."""
    return sum(chars for _, chars in unseen_parts(message))


def has_unseen(messages: Iterable[Any]) -> bool:
    """Whether any message names an unseen part."""
    return any(UNSEEN_TEXT in m.metadata for m in messages)

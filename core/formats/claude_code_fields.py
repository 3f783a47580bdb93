"""Claude Code's fields read into the record: the reported usage, a result's images, an attachment's text, a miss reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from foldscope.core.formats.images import describe as describe_image
from foldscope.core.model.session import Usage, bad_usage_warning, usage_figures, usage_object_warning


def miss_reason(value: Any) -> str:
    """The server's cache_miss_reason as one word: a string as it is, an object by its `type`."""
    if isinstance(value, dict) and isinstance(value.get("type"), str):
        return value["type"]
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def attachment_text(attachment: Mapping[str, Any]) -> str | None:
    """The text an attachment carries to the model: its `content` (a string or strings), a queued `prompt`."""
    for key in ("content", "prompt", "text"):
        value = attachment.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return "\n".join(value)
    return None


def images_of(blocks: Any) -> list[dict[str, Any]]:
    """The image blocks of a content list, each measured as the provider counts it (core.formats.images)."""
    if not isinstance(blocks, list):
        return []
    return [facts for b in blocks if (facts := describe_image(b)) is not None]


def usage_of(raw: Any, warn: Callable[[str], None]) -> Usage | None:
    """The reported usage; a figure of the wrong type makes it unknown (None), named in a warning."""
    if not isinstance(raw, dict):
        if raw is not None:
            warn(usage_object_warning(raw))
        return None
    creation = raw.get("cache_creation")
    detail = creation if isinstance(creation, dict) else {}
    got, bad = usage_figures(raw, ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"))
    one_hour, bad_1h = usage_figures(detail, ("ephemeral_1h_input_tokens",))
    if bad or bad_1h:
        warn(bad_usage_warning(bad + bad_1h))
        return None
    return Usage(
        input=got["input_tokens"],
        cache_read=got["cache_read_input_tokens"],
        cache_write=got["cache_creation_input_tokens"],
        output=got["output_tokens"],
        cache_write_1h=min(one_hour["ephemeral_1h_input_tokens"], got["cache_creation_input_tokens"]),
    )

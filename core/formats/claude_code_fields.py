"""Claude Code's fields read into the record: the reported usage, a result's images, an attachment's text, a miss reason."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from foldscope.core.formats.images import describe as describe_image
from foldscope.core.model.session import USAGE_LIMIT, Usage, bad_usage_warning, usage_figures, usage_object_warning


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


_INPUT, _READ, _WRITE, _OUTPUT = "input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens"
_ONE_HOUR = "ephemeral_1h_input_tokens"


def usage_of(raw: Any, warn: Callable[[str], None]) -> Usage | None:
    """The reported usage; a figure of the wrong type makes it unknown (None), named in a warning."""
    if not isinstance(raw, dict):
        if raw is not None:
            warn(usage_object_warning(raw))
        return None
    creation = raw.get("cache_creation")
    detail = creation if isinstance(creation, dict) else {}
    # Nearly every usage: each figure an int in range (or absent, 0), read without usage_figures' dicts and lists, a
    # third of this call's instructions a response (docs/performance.md); any other goes the checking way below.
    get = raw.get
    figures = fresh, read, write, output, one_hour = (
        get(_INPUT, 0),
        get(_READ, 0),
        get(_WRITE, 0),
        get(_OUTPUT, 0),
        detail.get(_ONE_HOUR, 0),
    )
    ints = type(fresh) is type(read) is type(write) is type(output) is type(one_hour) is int
    if ints and 0 <= min(figures) and max(figures) < USAGE_LIMIT:
        return Usage(input=fresh, cache_read=read, cache_write=write, output=output, cache_write_1h=min(one_hour, write))
    got, bad = usage_figures(raw, (_INPUT, _READ, _WRITE, _OUTPUT))
    one_hour, bad_1h = usage_figures(detail, (_ONE_HOUR,))
    if bad or bad_1h:
        warn(bad_usage_warning(bad + bad_1h))
        return None
    return Usage(
        input=got[_INPUT],
        cache_read=got[_READ],
        cache_write=got[_WRITE],
        output=got[_OUTPUT],
        cache_write_1h=min(one_hour[_ONE_HOUR], got[_WRITE]),
    )

"""Images in session files: their size read from the encoded header, and their tokens as the provider counts them.

Anthropic counts an image as about width x height / 750 tokens after scaling it to fit 1,568 pixels on
its long edge (docs.anthropic.com, Vision: "Calculate image costs"), so an image is counted from its
pixel size, never from its base64 text. A header this module cannot read gives no size; the image is then
counted at the most an image can cost (MAX_TOKENS), an upper bound that says it is one.

OpenAI counts by tiles (platform.openai.com/docs/guides/images-vision, "Calculating costs", the rule of
GPT-4o, GPT-4.1 and the o-series): `detail: low` costs the base tokens; otherwise the image is scaled to
fit 2048 x 2048, then down so its short side is 768 pixels, and costs the base plus a price per 512-pixel
tile (85 and 170 for GPT-4o; 2,833 and 5,667 for GPT-4o mini). `auto` is counted as high, the most it
can cost. The Codex models' own rule is not documented there; they are counted by GPT-4o's.
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from collections.abc import Mapping
from typing import Any

LONG_EDGE = 1568
MAX_TOKENS = 1600  # what a full-size image costs; the bound used when the size is unknown
_HEAD_CHARS = 64 * 1024  # base64 characters decoded to find the size (a JPEG's frame header can follow EXIF)


def image_size(data: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG, GIF, JPEG or WebP header; None when the bytes are none of those."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) >= 24:
        return struct.unpack(">II", data[16:24])
    if data[:6] in (b"GIF87a", b"GIF89a") and len(data) >= 10:
        return struct.unpack("<HH", data[6:10])
    if data.startswith(b"RIFF") and data[8:12] == b"WEBP" and len(data) >= 30:
        chunk = data[12:16]
        if chunk == b"VP8X":
            return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
        if chunk == b"VP8 ":
            w, h = struct.unpack("<HH", data[26:30])
            return w & 0x3FFF, h & 0x3FFF
        if chunk == b"VP8L" and len(data) >= 25:
            bits = int.from_bytes(data[21:25], "little")
            return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
        return None
    if data.startswith(b"\xff\xd8"):
        return _jpeg_size(data)
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5 : i + 9])
            return w, h
        i += 2 + length
    return None


def tokens_for(size: tuple[int, int] | None) -> int:
    """Anthropic's count for an image of this pixel size (MAX_TOKENS when the size is unknown)."""
    if size is None or min(size) <= 0:
        return MAX_TOKENS
    w, h = size
    scale = min(1.0, LONG_EDGE / max(w, h))
    w, h = max(1, round(w * scale)), max(1, round(h * scale))
    return min(MAX_TOKENS, math.ceil(w * h / 750))


OPENAI_TILE = 512
OPENAI_MAX_TILES = 8  # the most tiles a 2048-box, 768-short-side image can hold (2 x 4)


def openai_tokens(size: tuple[int, int] | None, detail: str | None = None, model: str | None = None) -> int:
    """OpenAI's tile count for an image of this pixel size (the most it can cost when the size is unknown)."""
    base, per_tile = (2833, 5667) if model and "4o-mini" in model else (85, 170)
    if detail == "low":
        return base
    if size is None or min(size) <= 0:
        return base + per_tile * OPENAI_MAX_TILES
    fit = min(1.0, 2048 / max(size))
    scale = fit * min(1.0, 768 / (min(size) * fit))
    return base + per_tile * math.ceil(size[0] * scale / OPENAI_TILE) * math.ceil(size[1] * scale / OPENAI_TILE)


def describe(block: Any, provider: str = "anthropic", model: str | None = None) -> dict[str, Any] | None:
    """An image content block's facts (media type, size, tokens, whether the count is exact), else None.
    `provider`: whose rule counts it ("anthropic", or "openai" for a Codex rollout's input_image)."""
    if not isinstance(block, dict) or block.get("type") not in ("image", "input_image", "image_url"):
        return None
    source: dict[str, Any] = block["source"] if isinstance(block.get("source"), dict) else {}
    data = source.get("data") if source.get("type") == "base64" else None
    if data is None and isinstance(block.get("data"), str):  # pi's ImageContent: {"type", "data", "mimeType"}
        data = block["data"]
        source = {"media_type": block.get("mimeType")}
    if data is None:
        url = block.get("image_url") or block.get("image")
        url = url.get("url") if isinstance(url, dict) else url
        if isinstance(url, str) and url.startswith("data:") and "," in url:
            data = url.split(",", 1)[1]
    size = None
    if isinstance(data, str):
        head = data[:_HEAD_CHARS]
        try:
            size = image_size(base64.b64decode(head[: len(head) - len(head) % 4], validate=False))
        except (binascii.Error, ValueError):
            size = None
    media = source.get("media_type") if isinstance(source.get("media_type"), str) else None
    detail = block.get("detail") if isinstance(block.get("detail"), str) else None
    if provider == "openai":
        tokens, exact = openai_tokens(size, detail, model), size is not None or detail == "low"
    else:
        tokens, exact = tokens_for(size), size is not None
    return {
        "media_type": media,
        "width": size[0] if size else None,
        "height": size[1] if size else None,
        "tokens": tokens,
        "exact": exact,
        "rule": provider,
        "base64_chars": len(data) if isinstance(data, str) else None,
    }


def image_tokens(message: Any) -> int:
    """The tokens of a message's images as its reader measured them (metadata "images"), 0 without any."""
    metadata = getattr(message, "metadata", None)
    images = metadata.get("images") if isinstance(metadata, Mapping) else None
    if not isinstance(images, list):
        return 0
    return sum(
        i["tokens"]
        for i in images
        if isinstance(i, dict) and isinstance(i.get("tokens"), int) and not isinstance(i.get("tokens"), bool) and i["tokens"] > 0
    )

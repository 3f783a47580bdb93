"""Newer Claude Code fields: postTokens, diagnostics.cache_miss_reason, attachment lines, image blocks, <synthetic>."""

from __future__ import annotations

import base64
import struct
import zlib

from foldscope.core.formats import claude_code
from foldscope.core.formats.images import MAX_TOKENS, image_size, tokens_for
from tests.core.reader_checks import check_session, write_lines

# Shapes: Claude Code 2.1's lines as the corpus README describes them; `diagnostics.cache_miss_reason` is
# the Messages API's cache-diagnosis beta answer on the response (an object with a `type`); attachment
# lines are {"type": "attachment", "attachment": {"type": ..., "content": ...}} with uuid and parentUuid.


def _png(width: int, height: int) -> str:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + header
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(header)) + chunk + struct.pack(">I", zlib.crc32(chunk))
    return base64.b64encode(data + b"\x00" * 3000).decode()


def _assistant(uuid, parent, mid, text, **message_extra):
    return {
        "type": "assistant",
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "message": {
            "id": mid,
            "role": "assistant",
            "model": "claude-x",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 4, "cache_read_input_tokens": 0, "cache_creation_input_tokens": 900, "output_tokens": 5},
            **message_extra,
        },
    }


def _user(uuid, parent, content, **extra):
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "sessionId": "s", "message": {"role": "user", "content": content}, **extra}


def test_the_server_s_cache_miss_reason_is_kept_on_its_request(tmp_path):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", None, "hi"),
            _assistant("a1", "u1", "m1", "hello"),
            _user("u2", "a1", "again"),
            _assistant("a2", "u2", "m2", "yes", diagnostics={"cache_miss_reason": {"type": "system_prompt_changed"}}),
        ],
    )
    session = claude_code.read(path)
    assert [r.cache_miss_reason for r in session.trace] == [None, "system_prompt_changed"]


def test_attachment_lines_with_text_are_sent_context_and_the_rest_are_not(tmp_path):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", None, "hi"),
            {
                "type": "attachment",
                "uuid": "t1",
                "parentUuid": "u1",
                "sessionId": "s",
                "attachment": {"type": "hook_additional_context", "content": ["branch: main", "tests: green"]},
            },
            {"type": "attachment", "uuid": "t2", "parentUuid": "t1", "sessionId": "s", "attachment": {"type": "goal_status", "met": True}},
            _assistant("a1", "t2", "m1", "hello"),
        ],
    )
    session = claude_code.read(path)
    check_session(session)
    added = session.record.get("t1")
    assert added.kind == "instruction" and added.text == "branch: main\ntests: green"
    assert added.metadata["attachment"] == "hook_additional_context" and added.metadata["is_meta"]
    assert session.trace[0].view == ("u1", "t1")
    assert [line for line, _ in session.extras["unsent"]["attachment:goal_status"]] == [3]


def test_images_are_image_blocks_counted_from_their_pixels_not_their_base64(tmp_path):
    small, large = _png(800, 600), _png(4000, 3000)
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user(
                "u1",
                None,
                [
                    {"type": "text", "text": "what is this?"},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": small}},
                ],
            ),
            _assistant("a1", "u1", "m1", "a chart"),
            _user(
                "u2",
                "a1",
                [
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": large}},
                    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
                ],
            ),
            _assistant("a2", "u2", "m2", "two more"),
        ],
    )
    session = claude_code.read(path)
    first, second = session.record.get("u1"), session.record.get("u2")
    assert small not in first.text and "[image]" in first.text
    (facts,) = first.metadata["images"]
    assert (facts["width"], facts["height"], facts["tokens"], facts["exact"]) == (800, 600, 640, True)
    big, unknown = second.metadata["images"]
    assert (big["width"], big["height"]) == (4000, 3000) and big["tokens"] == MAX_TOKENS
    assert unknown["exact"] is False and unknown["tokens"] == MAX_TOKENS  # a bound, and it says so


def test_image_sizes_are_read_from_png_gif_and_jpeg_headers():
    assert image_size(base64.b64decode(_png(31, 17))) == (31, 17)
    assert image_size(b"GIF89a" + struct.pack("<HH", 12, 34)) == (12, 34)
    jpeg = (
        b"\xff\xd8"
        + b"\xff\xe0"
        + struct.pack(">H", 16)
        + b"\x00" * 14
        + b"\xff\xc0"
        + struct.pack(">HBHH", 17, 8, 480, 640)
        + b"\x00" * 10
    )
    assert image_size(jpeg) == (640, 480)
    assert image_size(b"not an image") is None
    assert tokens_for((1568, 100)) == 210 and tokens_for(None) == MAX_TOKENS


def test_synthetic_responses_are_in_the_record_but_not_requests(tmp_path):
    path = write_lines(
        tmp_path / "s.jsonl",
        [
            _user("u1", None, "hi"),
            {
                **_assistant("a1", "u1", "m1", "No response requested."),
                "message": {
                    "id": "m1",
                    "role": "assistant",
                    "model": "<synthetic>",
                    "content": [{"type": "text", "text": "x"}],
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            },
            _user("u2", "a1", "again"),
            _assistant("a2", "u2", "m2", "yes"),
        ],
    )
    session = claude_code.read(path)
    assert len(session.trace) == 1 and session.record.get("m1").metadata["synthetic"] is True
    assert "m1" not in session.trace[0].view and session.model == "claude-x"

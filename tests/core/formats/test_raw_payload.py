"""The raw payload reader: an Anthropic or OpenAI request body is one request, its messages the record."""

from __future__ import annotations

import json

import pytest

from foldscope.core.formats import detect_format, load_session, raw_payload
from foldscope.core.model.session import ReadError
from tests.core.reader_checks import check_session


def _write(tmp_path, payload, indent=None):
    path = tmp_path / "payload.json"
    path.write_text(json.dumps(payload, indent=indent))
    return path


ANTHROPIC = {
    "model": "claude-x",
    "max_tokens": 100,
    "system": [{"type": "text", "text": "be brief"}],
    "tools": [{"name": "read", "input_schema": {}}],
    "messages": [
        {"role": "user", "content": "read a"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "ok"},
                {"type": "text", "text": "sure"},
                {"type": "tool_use", "id": "t1", "name": "read", "input": {"p": "a"}},
            ],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "A", "is_error": True}, {"type": "text", "text": "and?"}],
        },
    ],
}


def test_anthropic_payload_is_one_request_over_all_its_messages(tmp_path):
    path = _write(tmp_path, ANTHROPIC, indent=2)
    assert detect_format(path) == "raw_payload"
    session = load_session(path)
    check_session(session)
    assert [m.kind for m in session.record] == ["system", "instruction", "assistant", "action_request", "action_response", "instruction"]
    assert len(session.trace) == 1 and list(session.trace[0].view) == session.view == session.record.ids()
    assert session.record.get("t1").content["action_response_id"] == "m2.0"
    assert session.record.get("m2.0").metadata["is_error"] is True
    assert session.extras["request"]["tools"][0]["name"] == "read" and session.model == "claude-x"
    assert session.record.get("m1").metadata["thinking"] == "ok"
    assert session.record.get("m2.0").provenance.path == "$.messages[2].content[0]"


def test_openai_chat_payload_links_tool_calls_by_id(tmp_path):
    path = _write(
        tmp_path,
        {
            "model": "gpt-x",
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": '{"x": 1}'}}],
                },
                {"role": "tool", "tool_call_id": "c1", "content": "42"},
            ],
        },
    )
    session = raw_payload.read(path)
    check_session(session)
    assert session.extras["dialect"] == "openai"
    assert session.record.get("c1").content["arguments"] == {"x": 1}
    assert session.record.get("m3").content["output"] == "42"


def test_a_payload_without_messages_is_a_read_error(tmp_path):
    path = _write(tmp_path, {"model": "x", "prompt": "hi"})
    with pytest.raises(ReadError):
        raw_payload.read(path)
    with pytest.raises(ReadError):
        raw_payload.read(_write(tmp_path, {"messages": [{"role": "wizard", "content": "x"}]}))

"""A session holding half a surrogate pair: its requests, cache causes and report, as any other's."""

from __future__ import annotations

import json

import pytest

from foldscope.core.cli.main import main
from foldscope.core.formats import load_session
from foldscope.core.request.compile import payload_bytes
from foldscope.core.request.prefix import compile_for_prefix, divergence


def session_file(tmp_path):
    """A Claude Code session whose tool result and later prompt hold a lone surrogate (the agent's "\\ud83d" escape)."""
    call = {"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/x"}}
    lines = [
        {"type": "user", "uuid": "u0", "parentUuid": None, "message": {"role": "user", "content": "read it"}},
        {
            "type": "assistant",
            "uuid": "a0",
            "parentUuid": "u0",
            "requestId": "r0",
            "message": {
                "id": "m0",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [call],
                "usage": {"input_tokens": 10, "output_tokens": 1},
            },
        },
        {
            "type": "user",
            "uuid": "u1",
            "parentUuid": "a0",
            "message": {
                "role": "user",
                "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "cut \ud83d here " + "x" * 200}],
            },
        },
        {
            "type": "assistant",
            "uuid": "a1",
            "parentUuid": "u1",
            "requestId": "r1",
            "message": {
                "id": "m1",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "done"}],
                "usage": {"input_tokens": 90, "output_tokens": 1},
            },
        },
        {"type": "user", "uuid": "u2", "parentUuid": "a1", "message": {"role": "user", "content": "and \udc00 this"}},
        {
            "type": "assistant",
            "uuid": "a2",
            "parentUuid": "u2",
            "requestId": "r2",
            "message": {
                "id": "m2",
                "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": "ok"}],
                "usage": {"input_tokens": 99, "output_tokens": 1},
            },
        },
    ]
    for n, line in enumerate(lines):
        line.update(sessionId="s", timestamp=f"2026-12-01T10:0{n}:00Z")
    path = tmp_path / "s.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))  # ensure_ascii: the halves as JSON escapes
    return path


@pytest.mark.parametrize("command", [["requests", "--json"], ["cache", "--json"], ["report", "-o", "REPORT"]])
def test_a_session_holding_half_a_surrogate_pair_is_measured_and_reported(tmp_path, capsys, command):
    # Found by review7: the prefix meter and the payload's bytes encoded strictly, so requests, cache (and the window's
    # prefix share) ended in a UnicodeEncodeError traceback on such a session, and the report's page did too.
    path = session_file(tmp_path)
    assert "\ud83d" in load_session(path).record[3].text
    args = [str(tmp_path / "r.html") if a == "REPORT" else a for a in command]
    assert main([args[0], str(path), *args[1:]]) == 0
    capsys.readouterr()


def test_the_prefix_of_two_payloads_holding_a_lone_surrogate_is_measured_on_the_same_bytes(tmp_path):
    session = load_session(session_file(tmp_path))
    record = session.record
    a = compile_for_prefix(list(record)[:4], record=record)
    b = compile_for_prefix(list(record), record=record)
    assert a.data == payload_bytes(a.payload) and b"\xed\xa0\xbd" in a.data  # the half as surrogatepass writes it
    assert 0 < divergence(a, b, record).share <= 1

"""What a call fetched (a path read, a command run), worked out once a call's arguments by the compaction report."""

from __future__ import annotations

from foldscope.core.forensics import compaction_dropped
from foldscope.core.forensics.compaction_dropped import FetchKeys, fetch_key
from foldscope.core.model.session import Message


def _message(n: int, kind: str, content: dict) -> Message:
    return Message(f"m{n}", kind, float(n), content, {})


def test_a_call_and_its_result_holding_the_same_arguments_are_read_once_and_every_key_is_fetch_keys(monkeypatch):
    shared = {"file_path": "/repo/a.py"}
    contents = [
        ("action_request", {"function": "Read", "arguments": shared}),
        ("action_response", {"function": "Read", "arguments": shared, "output": "text"}),
        ("action_request", {"function": "Bash", "arguments": '{"command": " ls -la "}'}),
        ("action_request", {"function": "Bash", "arguments": {"cmd": ["git", "status"]}}),
        ("action_request", {"function": "Read", "arguments": {"input": '{"path": "/repo/b.py"}'}}),
        ("action_request", {"function": "Noop"}),
        ("action_response", {"function": "Noop", "arguments": None, "output": ""}),
        ("action_request", {"function": "Odd", "arguments": ["not", "a", "mapping"]}),
        ("assistant", {"assistant_response": "no call", "arguments": {"path": "/not/a/call"}}),
        ("instruction", {"instruction": "read /repo/a.py"}),
    ]
    messages = [_message(n, kind, content) for n, (kind, content) in enumerate(contents)]
    read: list[str] = []

    def counted(m: Message):
        read.append(m.id)
        return fetch_key(m)

    keys = FetchKeys()
    monkeypatch.setattr(compaction_dropped, "fetch_key", counted)
    got = [keys(m) for m in messages + messages]
    monkeypatch.undo()
    assert got == [fetch_key(m) for m in messages + messages]
    assert got[:2] == [("path", "/repo/a.py")] * 2 and got[2] == ("command", "ls -la") and got[8] is None
    assert read.count("m0") + read.count("m1") == 1  # the shared arguments read once, for the call and its result
    assert "m8" not in read and "m9" not in read  # a message that is neither a call nor a result is never read

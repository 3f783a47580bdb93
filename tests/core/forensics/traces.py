"""Constructed sessions for the forensics tests: messages, a trace whose timestamps and usage the test sets."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from foldscope.core.model.session import FullRecord, Message, Request, Session, Usage
from tests.core.fold_sessions import text_of


class Trace:
    """Messages appended in order (ids m0, m1, ...); `request(...)` records a request over the given view."""

    def __init__(self, model: str = "claude-sonnet-4-5") -> None:
        self.messages: list[Message] = []
        self.trace: list[Request] = []
        self.model = model

    def add(self, kind: str, content: dict[str, Any], metadata: dict[str, Any] | None = None) -> Message:
        m = Message(f"m{len(self.messages)}", kind, float(len(self.messages)), content, metadata or {})
        self.messages.append(m)
        return m

    def text(self, kind: str, chars: int, seed: int) -> Message:
        key = {"instruction": "instruction", "system": "system_message"}.get(kind, "assistant_response")
        return self.add(kind, {key: text_of(chars, seed)})

    def call(self, function: str, arguments: dict[str, Any], output: str) -> tuple[Message, Message]:
        n = len(self.messages)
        call = self.add(
            "action_request", {"function": function, "arguments": arguments, "action_response_id": f"m{n + 1}"}, {"call_id": f"c{n}"}
        )
        result = self.add(
            "action_response",
            {"function": function, "arguments": arguments, "output": output, "action_request_id": call.id},
            {"call_id": f"c{n}"},
        )
        return call, result

    def request(self, view: Sequence[Message], at: float | None, usage: Usage | None, model: str | None = None, **extra: Any) -> Request:
        r = Request(len(self.trace), tuple(m.id for m in view), None, usage, at, model or self.model, **extra)
        self.trace.append(r)
        return r

    def session(self, view: Sequence[Message] | None = None, format: str = "lionagi", **extras: Any) -> Session:
        record = FullRecord(self.messages)
        ids = [m.id for m in (view if view is not None else self.messages)]
        return Session(record=record, view=ids, format=format, trace=list(self.trace), model=self.model, extras=dict(extras))


def rounds(t: Trace, n: int, chars: int = 4000, seed: int = 0) -> list[Message]:
    """A system prompt, a task and n rounds of an assistant turn with a read and its result."""
    out = [t.text("system", 6000, seed), t.text("instruction", 800, seed + 1)]
    for i in range(n):
        out.append(t.text("assistant", 400, seed + 10 + i))
        out.extend(t.call("Read", {"file_path": f"/repo/src/module_{i}.py"}, text_of(chars, seed + 100 + i)))
    return out


# -- Claude Code: the compaction summariser's own file (agent-acompact-*), in the documented shape ----------
# The dev corpus has no agent-acompact file. Claude Code writes one per compaction beside the session, at
# <session>/subagents/agent-acompact-<id>.jsonl: an ordinary sidechain transcript (isSidechain true, the
# parent's sessionId) whose assistant line carries the summary call's usage (see claude-code-log's and
# spotter's readers of the subagents folder).


def line(kind: str, uuid: str, at: str, message: dict, **extra) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "S1", "timestamp": at, "message": message, **extra})


def assistant(mid: str, text: str, usage: dict) -> dict:
    return {
        "id": mid,
        "role": "assistant",
        "model": "claude-sonnet-4-5-20250929",
        "type": "message",
        "content": [{"type": "text", "text": text}],
        "usage": usage,
        "stop_reason": "end_turn",
    }


def usage(fresh: int, read: int, write: int, output: int) -> dict:
    return {"input_tokens": fresh, "cache_read_input_tokens": read, "cache_creation_input_tokens": write, "output_tokens": output}


def write_claude_code(tmp_path):
    """A Claude Code session with one compaction and its summariser's file beside it; returns the session file."""
    main = tmp_path / "S1.jsonl"
    body = text_of(6000, 3)
    main.write_text(
        "\n".join(
            [
                line("user", "u1", "2026-01-01T10:00:00Z", {"role": "user", "content": "Read /repo/a.py and /repo/b.py"}),
                line("assistant", "a1", "2026-01-01T10:00:05Z", assistant("msg1", body, usage(3, 0, 12000, 400)), requestId="r1"),
                line("user", "u2", "2026-01-01T10:00:30Z", {"role": "user", "content": "go on"}),
                line("assistant", "a2", "2026-01-01T10:00:35Z", assistant("msg2", "more", usage(3, 12000, 600, 50)), requestId="r2"),
                json.dumps(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": "b1",
                        "parentUuid": None,
                        "sessionId": "S1",
                        "timestamp": "2026-01-01T10:02:00Z",
                        "content": "Conversation compacted",
                        "compactMetadata": {"trigger": "auto", "preTokens": 12606},
                    }
                ),
                line(
                    "user", "s1", "2026-01-01T10:02:00Z", {"role": "user", "content": "Summary: we read /repo/a.py."}, isCompactSummary=True
                ),
                line("assistant", "a3", "2026-01-01T10:02:10Z", assistant("msg3", "ok", usage(3, 0, 2000, 20)), requestId="r3"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    sub = tmp_path / "S1" / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-acompact-7f3a.jsonl").write_text(
        "\n".join(
            [
                line(
                    "user",
                    "c1",
                    "2026-01-01T10:01:00Z",
                    {"role": "user", "content": "Summarise the conversation."},
                    isSidechain=True,
                    agentId="acompact-7f3a",
                ),
                line(
                    "assistant",
                    "c2",
                    "2026-01-01T10:01:50Z",
                    assistant("msgc", "Summary: we read /repo/a.py.", usage(5, 12000, 300, 900)),
                    isSidechain=True,
                    agentId="acompact-7f3a",
                    requestId="rc",
                ),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return main


def write_claude_code_continued(tmp_path):
    """A Claude Code session compacted by hand (/compact) and then given a new prompt: the reply before the compaction
    and the command's own line reached no request, yet the compaction took them; returns the session file."""
    main = tmp_path / "S2.jsonl"
    main.write_text(
        "\n".join(
            [
                line("user", "u1", "2026-01-01T10:00:00Z", {"role": "user", "content": "Read /repo/a.py and /repo/b.py"}),
                line(
                    "assistant", "a1", "2026-01-01T10:00:05Z", assistant("msg1", text_of(6000, 3), usage(3, 0, 12000, 400)), requestId="r1"
                ),
                line("user", "u2", "2026-01-01T10:00:30Z", {"role": "user", "content": "go on"}),
                line("assistant", "a2", "2026-01-01T10:00:35Z", assistant("msg2", "more", usage(3, 12000, 600, 50)), requestId="r2"),
                line("user", "c1", "2026-01-01T10:01:00Z", {"role": "user", "content": "<command-name>/compact</command-name>"}),
                json.dumps(
                    {
                        "type": "system",
                        "subtype": "compact_boundary",
                        "uuid": "b1",
                        "parentUuid": None,
                        "sessionId": "S1",
                        "timestamp": "2026-01-01T10:02:00Z",
                        "content": "Conversation compacted",
                        "compactMetadata": {"trigger": "manual", "preTokens": 12606},
                    }
                ),
                line(
                    "user", "s1", "2026-01-01T10:02:00Z", {"role": "user", "content": "Summary: we read /repo/a.py."}, isCompactSummary=True
                ),
                line("user", "u3", "2026-01-01T10:02:05Z", {"role": "user", "content": "now write the tests"}),
                line("assistant", "a3", "2026-01-01T10:02:10Z", assistant("msg3", "ok", usage(3, 0, 2000, 20)), requestId="r3"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return main


def write_claude_code_edit(tmp_path):
    """A Claude Code session whose third request follows an edited prompt (a rewind to the reply before it: the
    new prompt's line names that reply as its parent), sharing the old prompt's first words; returns the file."""
    main = tmp_path / "E1.jsonl"
    body = text_of(6000, 5)

    def linked(kind, uuid, parent, at, message, **extra):
        return json.dumps(
            {"type": kind, "uuid": uuid, "parentUuid": parent, "sessionId": "E1", "timestamp": at, "message": message, **extra}
        )

    main.write_text(
        "\n".join(
            [
                linked("user", "u1", None, "2026-01-01T10:00:00Z", {"role": "user", "content": "Read /repo/a.py"}),
                linked("assistant", "a1", "u1", "2026-01-01T10:00:05Z", assistant("msg1", body, usage(3, 0, 12000, 400)), requestId="r1"),
                linked(
                    "user",
                    "u2",
                    "a1",
                    "2026-01-01T10:00:30Z",
                    {"role": "user", "content": "Now explain the parser in a.py, line by line, slowly"},
                ),
                linked(
                    "assistant", "a2", "u2", "2026-01-01T10:00:35Z", assistant("msg2", "more", usage(3, 12000, 600, 50)), requestId="r2"
                ),
                linked("user", "u3", "a1", "2026-01-01T10:01:00Z", {"role": "user", "content": "Now explain the lexer in a.py instead"}),
                linked("assistant", "a3", "u3", "2026-01-01T10:01:05Z", assistant("msg3", "ok", usage(3, 12000, 500, 20)), requestId="r3"),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    return main

"""Constructed sessions for the forensics tests: messages, a trace whose timestamps and usage the test sets."""

from __future__ import annotations

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
        call = self.add("action_request", {"function": function, "arguments": arguments,
                                           "action_response_id": f"m{n + 1}"}, {"call_id": f"c{n}"})
        result = self.add("action_response", {"function": function, "arguments": arguments, "output": output,
                                              "action_request_id": call.id}, {"call_id": f"c{n}"})
        return call, result

    def request(self, view: Sequence[Message], at: float | None, usage: Usage | None, model: str | None = None,
                **extra: Any) -> Request:
        r = Request(len(self.trace), tuple(m.id for m in view), None, usage, at, model or self.model, **extra)
        self.trace.append(r)
        return r

    def session(self, view: Sequence[Message] | None = None, format: str = "lionagi", **extras: Any) -> Session:
        record = FullRecord(self.messages)
        ids = [m.id for m in (view if view is not None else self.messages)]
        return Session(record=record, view=ids, format=format, trace=list(self.trace), model=self.model,
                       extras=dict(extras))


def rounds(t: Trace, n: int, chars: int = 4000, seed: int = 0) -> list[Message]:
    """A system prompt, a task and n rounds of an assistant turn with a read and its result."""
    out = [t.text("system", 6000, seed), t.text("instruction", 800, seed + 1)]
    for i in range(n):
        out.append(t.text("assistant", 400, seed + 10 + i))
        out.extend(t.call("Read", {"file_path": f"/repo/src/module_{i}.py"}, text_of(chars, seed + 100 + i)))
    return out

"""Small sessions for the fold tests: a builder of rounds, the real counter, and checks on compiled requests."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from typing import Any

from foldscope.core.fold.delivery import DELIVERED_KEY
from foldscope.core.fold.fold import Fold
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.request.compile import compile_request
from foldscope.core.request.count import Counter
from foldscope.core.request.measure import Measure

WORDS = ["config", "profile", "loader", "cache", "session", "registry", "settings", "paths", "store", "policy"]


def text_of(chars: int, seed: int = 0) -> str:
    """Code-like text of exactly `chars` characters, different for each seed."""
    rng = random.Random(seed)
    lines, total = [], 0
    while total < chars:
        line = f"    {rng.choice(WORDS)}_{rng.choice(WORDS)} = load('{rng.choice(WORDS)}', {rng.randint(0, 999)})\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)[:chars]


class Build:
    """Append messages in order; ids are m0, m1, ... so failures read easily."""

    def __init__(self) -> None:
        self.messages: list[Message] = []

    def add(self, kind: str, content: dict[str, Any], metadata: dict[str, Any] | None = None) -> Message:
        m = Message(f"m{len(self.messages)}", kind, float(len(self.messages)), content, metadata or {})
        self.messages.append(m)
        return m

    def system(self, text: str = "You are a careful coding agent.") -> Message:
        return self.add("system", {"system_message": text})

    def task(self, text: str = "Find where the config is loaded.") -> Message:
        return self.add("instruction", {"instruction": text})

    def answer(self, text: str = "I'll read the files.") -> Message:
        return self.add("assistant", {"assistant_response": text})

    def round(self, outputs: Iterable[Any], function: str = "reader") -> list[tuple[Message, Message]]:
        """One assistant turn of calls, then their results; each output's call reads a path of its own."""
        outputs = list(outputs)
        n = len(self.messages)
        req_ids = [f"m{n + i}" for i in range(len(outputs))]
        res_ids = [f"m{n + len(outputs) + i}" for i in range(len(outputs))]
        calls = [
            self.add("action_request", {"function": function, "arguments": {"path": f"src/f{n + i}.py"}, "action_response_id": res_ids[i]})
            for i in range(len(outputs))
        ]
        results = [
            self.add(
                "action_response",
                {"function": function, "arguments": {"path": f"src/f{n + i}.py"}, "output": out, "action_request_id": req_ids[i]},
            )
            for i, out in enumerate(outputs)
        ]
        return list(zip(calls, results))

    def session(self, view: list[str] | None = None, delivered: Iterable[str] | None = None) -> Session:
        s = Session(record=FullRecord(self.messages), view=view or [m.id for m in self.messages])
        if delivered is not None:
            s.branch_metadata[DELIVERED_KEY] = list(delivered)
        return s


def fold_measure(
    session: Session, ceiling: int, fold_at: float | None = None, target: float | None = None, policy: Policy | None = None
) -> Measure:
    """The session's Measure under `policy` (default: none set) with this ceiling, line and target."""
    return Measure(session, (policy or Policy()).with_values(max_input_tokens=ceiling, context_fold_at=fold_at, context_fold_target=target))


def fold_for(session: Session, ceiling: int, fold_at: float = 0.8, target: float = 0.6, **options: Any) -> Fold:
    """A fold over the session with the real incremental counter."""
    counter = Counter()
    count = lambda ms: counter.count(list(ms), record=session.record)  # noqa: E731
    return Fold(session, fold_measure(session, ceiling, fold_at, target), count=count, **options)


def record_hashes(session: Session) -> list[tuple[str, str]]:
    """Each record message's id and SHA-256 (of its identity-bearing parts and its raw form)."""
    out = []
    for m in session.record:
        raw = hashlib.sha256(repr(m.raw).encode()).hexdigest()
        out.append((m.id, m.sha256() + raw))
    return out


def payload(session: Session) -> dict[str, Any]:
    return compile_request(session.view_messages(), record=session.record)


def calls_have_results(request: dict[str, Any]) -> bool:
    """Every tool_use block is answered by a tool_result with its id in the next message."""
    messages = request["messages"]
    for i, message in enumerate(messages):
        for block in message["content"]:
            if block["type"] != "tool_use":
                continue
            following = messages[i + 1]["content"] if i + 1 < len(messages) else []
            if not any(b["type"] == "tool_result" and b["tool_use_id"] == block["id"] for b in following):
                return False
    return True


def request_text(session: Session) -> str:
    from foldscope.core.request.compile import payload_text

    return payload_text(payload(session))

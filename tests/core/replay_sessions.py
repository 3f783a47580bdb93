"""Hand-built sessions for the replay tests: a system, a task, then rounds of a call and its result."""

from typing import Any

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Request, Session, Usage
from foldscope.core.request.measure import Measure


def words(seed: int, n: int) -> str:
    return " ".join(f"w{(seed * 7919 + i * 104729) % 100003}" for i in range(n))


def tool_session(rounds: int, result_words: int = 400, gap: float = 10.0, usage=None) -> Session:
    """`rounds` requests; request k carries everything before the k-th assistant response."""
    msgs = [
        Message("sys", "system", 0.0, {"system_message": "You are a careful agent. " + words(1, 700)}),
        Message("task", "instruction", 0.0, {"instruction": "Do the task. " + words(2, 50)}),
    ]
    trace = []
    for r in range(rounds):
        asst = Message(f"a{r}", "assistant", r * gap, {"assistant_response": f"Step {r}: reading."})
        trace.append(Request(r, tuple(m.id for m in msgs), asst.id, usage(r) if usage else None, r * gap))
        msgs.append(asst)
        msgs.append(Message(f"c{r}", "action_request", r * gap, {"function": "read", "arguments": {"n": r}}))
        msgs.append(
            Message(f"o{r}", "action_response", r * gap, {"function": "read", "arguments": {"n": r}, "output": words(r + 3, result_words)})
        )
    return Session(record=FullRecord(msgs), view=[m.id for m in msgs], format="test", trace=trace, model="claude-haiku-5-5")


def with_usage(session: Session, usages: list[Usage]) -> Session:
    trace = [Request(r.index, r.view, r.response_id, u, r.at, r.model) for r, u in zip(session.trace, usages)]
    return Session(record=session.record, view=session.view, format=session.format, trace=trace, model=session.model)


def under(session: Session, ceiling: int | None = None, caching: bool = False, **keys: Any) -> Measure:
    """The session's Measure under a policy with this ceiling (None: no ceiling) and caching."""
    return Measure(session, Policy(max_input_tokens=ceiling if ceiling is not None else "none", prompt_caching=caching, **keys))


def stall_on_stuck(path, points):
    """A sweep's task in a worker process: the session named stuck.json holds its worker (at most 120 s, so that
    a failure can never hang the suite); the others are tuned. It lives in this helper module, not in a test
    module, so that a spawned worker can import it by name however pytest imported the tests."""
    from foldscope.core.replay.tune import tune_session

    if path.endswith("stuck.json"):
        import time

        time.sleep(120)
    return tune_session(path, points)

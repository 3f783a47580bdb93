"""One pass over a recorded trace: each request's count and where it parts from the request before.

Both the cache causes and the compaction reports read this pass, so a session is counted once. The
divergence is core.request.prefix's, the one the request panel shows; a request's count includes the
unseen head (core.request.trace), so positions map onto the provider's reported input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.request.count import Counter
from foldscope.core.request.prefix import Divergence, PrefixMeter
from foldscope.core.request.trace import rounds_of, session_tools, trace_views, unseen_heads


@dataclass(frozen=True)
class Measured:
    """One recorded request as counted: its tokens (unseen head included), where it parts from the request
    before (None for the first) and the tokens before that place (None for an append)."""

    counted: int
    head: int
    divergence: Divergence | None
    parted_at: int | None


def measure_requests(session: Session, policy: Policy | None = None, counter: Counter | None = None) -> list[Measured]:
    """Every request of the session's trace counted once, incrementally, with its divergence."""
    policy = policy or Policy()
    counter = counter or Counter()
    tools = session_tools(session)
    record = session.record
    meter = PrefixMeter(record, policy, tools)
    rows: list[tuple[int, Divergence | None, int | None]] = []
    trace = session.trace
    for request, (messages, first_round) in zip(trace, rounds_of(session, policy, counter, trace_views(record, trace))):
        m = counter.measure(messages, record=record, policy=policy, tools=tools, first_round=first_round)
        ids = request.view if len(request.view) == len(messages) else tuple(x.id for x in messages)
        found = meter.step(ids, m.laid, first_round)
        rows.append((m.counted, found, _tokens_before(found, m.parts, record) if found else None))
    heads = unseen_heads(session, [c for c, _, _ in rows], trace)
    # A change of unseen head (a source compaction re-attaches what the file does not hold) is a change
    # inside it: the request parts no later than the shorter of the two heads.
    return [Measured(c + h, h, d, _with_head(at, d, min(h, heads[k - 1]) if k else h))
            for k, ((c, d, at), h) in enumerate(zip(rows, heads))]


def _with_head(at: int | None, found: Divergence | None, head: int) -> int | None:
    """A place in the messages lies past the unseen head; a change in the stable segment is at 0."""
    if at is None or found is None:
        return None
    return 0 if found.message is None else at + head


def _tokens_before(found: Divergence, parts: Sequence, record) -> int | None:
    """Counted tokens ahead of the block where the request parts from the one before (0 in the stable
    segment; None for an append or no change, which leave every cached byte in place)."""
    if found.cause in ("none", "append"):
        return None
    if found.message is None or found.index is None:
        return 0
    first = record[found.index].id
    before = 0
    for part in parts:
        if part.message is not None and part.message.id == first:
            return before
        before += part.tokens
    return before  # the differing message was the earlier request's only: it parts at this one's end

"""One pass over a recorded trace: each request's count and where it parts from the request before.

Both the cache causes and the compaction reports read this pass, so a session is counted once. A request
whose view only adds to the one before (no new system message, the same first round) parts nowhere: every
byte of the one before is repeated. Any other is compiled beside the one before and compared with
core.request.prefix.divergence, the comparison the request panel shows. A request's count includes the
unseen head (core.request.trace), so positions map onto the provider's reported input.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from foldscope.core.model.policy import Policy
from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import Session
from foldscope.core.model.shared_start import since
from foldscope.core.request.count import Counter
from foldscope.core.request.prefix import Divergence, Place, PrefixMeter, compile_for_prefix, divergence, place
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace import rounds_of, session_tools, trace_views, unseen_heads, use_unseen_rate


@dataclass(frozen=True, slots=True)
class Measured:
    """One recorded request as counted: its tokens (unseen head included), where it parts from the request
    before (None for the first and for one that only adds to the one before), the exact place its bytes part
    (core.request.prefix.place, the request panel's) and the counted tokens before that place."""

    count_with_head: int
    head: int
    divergence: Divergence | None
    parted_at: int | None
    place: Place | None = None


class MeasuredPass:
    """The pass one request at a time, from each request's measurement as the counter made it: the trace's own
    counting pass (core.request.trace_measure.measure_trace's on_measured) can feed it, so a session is counted once
    for its sizes and its cache causes both. `tokens`, when given, gets each message's part of the count."""

    def __init__(self, session: Session, policy: Policy | None = None, tokens: dict[str, int] | None = None) -> None:
        self.session = session
        self.policy = policy or Policy()
        self.tools = session_tools(session)
        self.tokens = tokens
        self.rows: list[tuple[int, Divergence | None, int | None, Place | None]] = []
        self._serial = -2  # the counter's serial of the measurement before (none yet)
        self._before: tuple = ()  # the request before: (its messages, its first round)

    def step(self, messages: Sequence, first_round, m, meter: PrefixMeter | None = None) -> None:
        """The next request: its messages, its included first round and the counter's measurement of them. `meter`:
        the trace's prefix meter, stepped over this request under the same record, policy and tools (measure_trace's
        on_measured): where the request parts from the one before is read from it, not compiled again."""
        record, policy, tools, before = self.session.record, self.policy, self.tools, self._before
        found = where = None
        if before and not _only_adds(before, messages, first_round):
            parted = meter.parted() if meter is not None else None
            if parted is not None:
                found, where = parted
            else:
                a = compile_for_prefix(before[0], record=record, policy=policy, tools=tools, first_round=before[1])
                b = compile_for_prefix(messages, record=record, policy=policy, tools=tools, first_round=first_round)
                found, where = divergence(a, b, record), place(a, b, record)
        self._before = (messages, first_round)
        if self.tokens is not None:
            # Only the parts this measurement did not keep from the one before are new.
            start = max(0, m.kept - 1) if m.since == self._serial else 0
            for part in since(m.parts, start):  # no list of the parts made (a Headed slice is one)
                if part.message is not None:
                    self.tokens[part.message.id] = part.tokens
            self._serial = m.serial
        self.rows.append((m.count, found, _tokens_before(found, where, m.parts, record) if found else None, where))

    def measured(self, heads: Sequence[int] | None = None) -> list[Measured]:
        """Every request stepped so far, its unseen head added (`heads`: core.request.trace.unseen_heads of the
        counts, when the caller has them already)."""
        rows = self.rows
        if heads is None:
            heads = unseen_heads(self.session, [c for c, _, _, _ in rows], self.session.trace)
        # A change of unseen head (a source compaction re-attaches what the file does not hold) is a change
        # inside it: the request parts no later than the shorter of the two heads.
        return [
            Measured(c + h, h, d, _with_head(at, d, min(h, heads[k - 1]) if k else h), w)
            for k, ((c, d, at, w), h) in enumerate(zip(rows, heads))
        ]


def measure_requests(
    session: Session, policy: Policy | None = None, counter: Counter | None = None, tokens: dict[str, int] | None = None
) -> list[Measured]:
    """Every request of the session's trace counted once, incrementally, with its divergence. With `tokens`,
    each message's tokens as the latest request carrying it counted them are put there (its part of the count)."""
    steps = MeasuredPass(session, policy, tokens)
    counter = counter or Counter()
    use_unseen_rate(session, counter)  # unseen text counted as every other count of the session counts it
    record, policy, tools = session.record, steps.policy, steps.tools
    for messages, first_round in rounds_of(session, policy, counter, trace_views(record, session.trace)):
        steps.step(messages, first_round, counter.measure(messages, record=record, policy=policy, tools=tools, first_round=first_round))
    return steps.measured()


def _only_adds(before: tuple, messages: Sequence, first_round) -> bool:
    """Whether a view repeats the one before whole and adds after it (a new system message would join the
    stable segment at the head, and another first round compiles the results under another bound)."""
    old, old_round = before
    n = len(old)
    # Messages compare by identity (eq=False): views grown from the one before share their chunks (core.model.shared_start).
    if len(messages) < n or old_round != first_round or common_start(messages, old) != n:
        return False
    return all(m.kind != "system" for m in since(messages, n))


def _with_head(at: int | None, found: Divergence | None, head: int) -> int | None:
    """A place in the messages lies past the unseen head; a change in the stable segment is at 0."""
    if at is None or found is None:
        return None
    return 0 if found.message is None else at + head


def _tokens_before(found: Divergence, where: Place | None, parts: Sequence, record) -> int | None:
    """Counted tokens ahead of the byte where the request parts from the one before: the parts before the
    block holding it, plus the tokens of that block's shared start (0 in the stable segment; None for an
    append or no change, which leave every cached byte in place)."""
    if found.cause in ("none", "append"):
        return None
    index = where.index if where is not None and where.index is not None else found.index
    if found.message is None or index is None:
        return 0
    first = record[index].id
    before = 0
    for part in parts:
        if part.message is not None and part.message.id == first:
            inside = count_text(where.block_text[: where.block_char]) if where is not None and where.block_char else 0
            return before + min(inside, part.tokens)
        before += part.tokens
    return before  # the differing message was the earlier request's only: it parts at this one's end

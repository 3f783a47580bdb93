"""A session followed live: the open document grown by what a poll read, and the next request against its limits.

`grow_document` counts only the messages the file gained and measures the trace again with the document's
memoised counter (so each earlier block costs a lookup, not a tokenisation). `next_request` says how the next
request (the active view now) stands against the model's context window and the agent's own compaction
point, and its estimate against the policy's line and ceiling, each by name; `crossed` names the limits a
request newly reaches, for the notice.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.readout.agent_limits import agent_limits
from foldscope.core.readout.document import Document, Report, _no_report, is_note, next_revision
from foldscope.core.readout.message_sizes import record_sizes


def grow_document(document: Document, session: Session, report: Report = _no_report) -> int:
    """Show `session` (the same file read further) in `document`: its record extends the document's. Returns how
    many messages were new. Counting costs the new messages; the trace's pass goes on from the last growth's."""
    from foldscope.core.readout.fold_facts import fold_rows
    from foldscope.core.readout.trace_facts import measure_requests
    from foldscope.core.request.trace import build_trace
    from foldscope.core.request.trace_resume import TraceResume

    old, record = document.session.record, session.record
    # A response still being written is made afresh in each snapshot: count again from the first message that
    # is not the very one shown before (only those at the end), then the new ones.
    first = min(len(old), len(record), len(document.tokens))
    while first > 0 and old[first - 1] is not record[first - 1]:
        first -= 1
    before = len(document.tokens)
    del document.chars[first:]
    document.chars.extend(len(record[index].text) for index in range(first, len(record)))
    document.session = session
    document.trace_revision = next_revision()  # another session and trace: facts made for the old ones stand no more
    assert document.counter is not None
    # The trace's counting pass and predictions go on from the last poll's (core.request.trace_resume): a poll
    # measures the requests the file gained, not every request again; anything else changed measures from the start.
    resume = getattr(document, "_live_resume", None)
    if resume is None:
        resume = document._live_resume = TraceResume()  # type: ignore[attr-defined]
    facts = measure_requests(session, document.counter, report, document.policy, resume=resume)
    assert facts.measure is not None
    # Sized as at load (core.readout.message_sizes): after the trace's pass only the new blocks are counted.
    sizes = record_sizes(facts.measure)
    document.tokens[:], document.record_count = sizes.tokens, sizes.total
    document.measure = document._measure = facts.measure
    document.requests, document.rules, document.unseen_head = facts.requests, facts.rules, facts.unseen_head
    document.now_size, document.scale = facts.now_estimate, facts.scale
    document.now_predicted, document.next_basis = facts.now_predicted, facts.next_basis
    document.context_window, document.window_source = facts.context_window, facts.window_source
    session.unseen_head = facts.unseen_head
    document.show_view(session.view)
    # Fold rows change only with a new note, fold record or event: otherwise the old rows stand (they are
    # the slowest part of a growth to build again).
    marks = (sum(1 for m in record if is_note(m)), len(session.events), len((session.manifest or {}).get("context_folds") or []))
    if marks != getattr(document, "_live_fold_marks", None):
        views = [r.view for r in document.requests] + [tuple(session.view)]
        document.folds = fold_rows(session, views, [r.at for r in build_trace(session)])
        document._live_fold_marks = marks  # type: ignore[attr-defined]
    return len(record) - before


@dataclass(frozen=True)
class Limit:
    name: str  # "context window", "compaction point", "line", "ceiling"
    tokens: int
    source: str

    @property
    def label(self) -> str:
        return f"{self.name} {self.tokens:,}"


@dataclass(frozen=True)
class NextRequest:
    """The next request's size and the limits it is read against (the first two by the size, the policy's by the estimate)."""

    size: int  # the best forecast of the next request's input: its estimate until predicted input is at hand
    size_name: str  # "predicted input" or "estimate"
    estimate: int
    agent: tuple[Limit, ...] = ()  # the context window and the agent's compaction point
    policy: tuple[Limit, ...] = ()  # the policy's line and ceiling
    reached: frozenset[str] = field(default_factory=frozenset)  # names of the limits it is at or past

    def text(self) -> str:
        parts = [f"next request: {self.size_name} {self.size:,}"]
        if self.size_name != "estimate":
            parts.append(f"estimate {self.estimate:,}")
        for limit in self.agent:
            parts.append(f"{self.size / limit.tokens:.0%} of the {limit.name} {limit.tokens:,}")
        for limit in self.policy:
            parts.append(f"{self.estimate / limit.tokens:.0%} of the {limit.name} {limit.tokens:,}")
        return " · ".join(parts)


def next_request(document: Document) -> NextRequest:
    """The next request, from the active view now, against the agent's limits and the policy's."""
    return next_request_of(document.session, document.policy, document.rules, document.now_size, document.now_predicted)


def next_request_of(session: Session, under: Policy | None, rules: Any, estimate: int, predicted: int) -> NextRequest:
    """The next request of `session` (its estimate and predicted input) against the agent's limits under the policy
    `under` and the line and ceiling of `rules` (core.readout.trace_facts.Rules)."""
    limits = agent_limits(session, under)
    size, name = (predicted, "predicted input") if predicted else (estimate, "estimate")
    agent = tuple(
        Limit(n, lim.tokens, lim.said) for n, lim in (("context window", limits.window), ("compaction point", limits.compaction)) if lim
    )
    policy: tuple[Limit, ...] = ()
    ceiling = getattr(rules, "ceiling", None)
    if rules is not None and ceiling:
        policy = (Limit("line", round(ceiling * rules.line), f"{rules.line:g} of the ceiling"), Limit("ceiling", ceiling, rules.source))
    reached = {lim.name for lim in agent if size >= lim.tokens} | {lim.name for lim in policy if estimate >= lim.tokens}
    return NextRequest(size, name, estimate, agent, policy, frozenset(reached))


def crossed(before: NextRequest | None, after: NextRequest) -> list[str]:
    """The limits the next request reaches now that it did not before, in the order they are listed."""
    old = before.reached if before is not None else frozenset()
    order = [lim.name for lim in after.agent + after.policy]
    return [name for name in order if name in after.reached and name not in old]

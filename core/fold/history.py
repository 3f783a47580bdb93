"""Replaying a session's trace through the fold: the view history, one version per change with its cause.

Before each request of the trace, the messages recorded since the previous request join the view,
the fold runs under the settings (at the line, then at most two refused-and-folded resumes), the
request's compile decides the protected first round once (core.request.first_round.decide_first_round, the
first request that carries it whole, while the policy caches), and the request completes, marking
its view delivered. The source's own notes and copies enter the
record but not the view: the fold under replay decides what stands for what. The session itself
is never changed; the replay works on its own session over the same messages.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.fold.delivery import DELIVERED_KEY, mark_delivered
from foldscope.core.fold.fold import Count, Fold, Refusal
from foldscope.core.fold.summarise import Summariser
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import FullRecord, Message, Request, Session
from foldscope.core.model.shared_start import Shared
from foldscope.core.model.views import SharedView
from foldscope.core.request.count import Counter
from foldscope.core.request.estimators import PredictedSize as Estimator
from foldscope.core.request.first_round import decide_first_round, read_decision
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace import build_trace, use_unseen_rate


@dataclass(frozen=True)
class ViewVersion:
    """The view as it stood at one step: `cause` is "request" (messages appended), "fold" or "refused"."""

    request: int  # the request this version comes before
    view: Sequence[str]  # a tuple, or a SharedView (reads, compares and hashes as the tuple)
    cause: str
    estimate: int
    record: dict[str, Any] | None = None  # the context_folds record of a fold step


@dataclass
class FoldReplay:
    """The replay's own session (record with its notes and copies), every view version, and the refusals."""

    session: Session
    versions: list[ViewVersion] = field(default_factory=list)
    refusals: dict[int, Refusal] = field(default_factory=dict)
    floors: dict[int, int] = field(default_factory=dict)  # a refused request's floor view estimate

    def view_before(self, request: int) -> Sequence[str]:
        """The view request `request` was compiled from, after its folds."""
        found = [v.view for v in self.versions if v.request == request]
        return found[-1] if found else ()


def response_index(session: Session, trace: Sequence[Request], request: int) -> int:
    """Where request `request`'s answer sits in the full record (the record's end when it has none)."""
    response = trace[request].response_id
    return session.record.index_of(response) if response and response in session.record else len(session.record)


def session_at_request(session: Session, request: int, policy: Policy | None = None, counter: Counter | None = None) -> Session:
    """The session as it stood before request `request`: its record up to the answer, its view, delivery so far,
    and (while `policy` caches) the first round as the earlier requests' compiles decided it."""
    trace = build_trace(session)
    if not 0 <= request < len(trace):
        raise IndexError(f"request {request} is not in the trace (it has {len(trace)} requests)")
    end = response_index(session, trace, request)
    record = FullRecord(session.record[i] for i in range(end))
    view = [mid for mid in trace[request].view if mid in record]
    branch = copy.deepcopy(session.branch)
    delivered: list[str] = []
    seen: set[str] = set()
    for earlier in trace[:request]:  # each completed request delivered its view
        for mid in earlier.view:
            if mid not in seen and mid in record:
                seen.add(mid)
                delivered.append(mid)
    branch.setdefault("metadata", {})[DELIVERED_KEY] = delivered
    manifest = copy.deepcopy(session.manifest) if session.manifest is not None else None
    at = Session(
        record=record,
        view=view,
        format=session.format,
        source=session.source,
        branch=branch,
        manifest=manifest,
        trace=list(trace[:request]),
        model=session.model,
        scale=session.scale,
        unseen_head=session.unseen_head,
    )
    if policy is not None:
        decide_from_trace(at, policy, counter)
    return at


def decide_from_trace(session: Session, policy: Policy, counter: Counter | None = None) -> dict[str, Any] | None:
    """The first round as the session's completed requests decided it: each request's compile, in order, until
    one carries the round whole (a stored decision stands). The next request's fold reads it, never makes it."""
    counter = counter or Counter()
    use_unseen_rate(session, counter)
    decision = read_decision(session)
    for request in session.trace:
        if decision is not None or not policy.caching:
            break
        view = [session.record.get(mid) for mid in request.view if mid in session.record]
        decision = decide_first_round(session, policy, counter, view=view)
    return decision


def replay_folds(
    session: Session,
    measure: Measure,
    *,
    count: Count | None = None,
    summariser: Summariser | None = None,
    clock: Callable[[], float] | None = None,
    scale: float | None = None,
    head: int | None = None,
    estimator: Estimator | None = None,
) -> FoldReplay:
    """Run the fold before every request of the trace under the measure's policy and ceiling; returns the
    view history the GUI steps through. The fold counts every view as the request compiles under the
    policy (bound, marks), and each request's compile decides the first round once while it caches.
    `scale` and `head` (default: the session's) are the scale and unseen head the fold estimates with: the
    replay lab passes its own, so the fold decides on the very estimate the replay records. With an `estimator`
    (core.request.estimators.PredictedSize) the fold decides on its size instead, moved to each request first."""
    folding = Folding(session, measure, count=count, summariser=summariser, clock=clock, scale=scale, head=head, estimator=estimator)
    for _ in folding:
        pass
    return folding.replay


class Folding:
    """replay_folds one request at a time: iterating yields each request's index once its folds, its compile's
    decision and its delivery are done and its versions are in `replay`. The replay lab's adr strategy lays each
    request out right then, under the fold's own `measure`, while the counter still holds the fold's layout of
    that very view (core.request.count), so a request is laid out once, not once for the fold and once after."""

    def __init__(
        self,
        session: Session,
        measure: Measure,
        *,
        count: Count | None = None,
        summariser: Summariser | None = None,
        clock: Callable[[], float] | None = None,
        scale: float | None = None,
        head: int | None = None,
        estimator: Estimator | None = None,
        digests: bool = True,
        arrivals: Sequence[tuple[Sequence[Message], Collection[str]]] | None = None,
    ) -> None:
        branch = copy.deepcopy(session.branch)
        branch.setdefault("metadata", {})[DELIVERED_KEY] = []
        cache = branch["metadata"].get("prompt_cache")
        if isinstance(cache, dict):
            cache.pop("protected", None)  # the replay's own requests decide the round
        work = Session(
            record=FullRecord(),
            view=[],
            format=session.format,
            source=session.source,
            branch=branch,
            manifest={"context_folds": []},
            model=session.model,
            scale=session.scale if scale is None else scale,
            unseen_head=session.unseen_head if head is None else head,
            extras={k: v for k, v in session.extras.items() if k == "tools"},
        )
        options: dict[str, Any] = {"summariser": summariser}
        if clock is not None:
            options["clock"] = clock
        self.source = session
        self.fold = Fold(work, measure, count=count, size=estimator, digests=digests, **options)
        self.measure = self.fold.measure  # the working session's: its record holds the fold's notes and copies
        self.replay = FoldReplay(work)
        self.estimator = estimator
        # Per request, the messages the view gains (in record order) and the ids a rewind took out (core.replay.strategies.arrivals):
        # given, the view is fed as every replay strategy's is; else with the record's messages up to each answer.
        self.arrivals = arrivals
        # The view's messages as the request yielded last was sent (after its folds), kept as a Shared grown with
        # the view: the fold estimates on it and the replay lab lays the request out on the very same object, so
        # neither rebuilds the view's list nor compares it with the one before, item by item, every request.
        self.messages: Shared[Message] = Shared()

    def __iter__(self) -> Iterator[int]:
        session, fold, replay, estimator = self.source, self.fold, self.replay, self.estimator
        work, policy, counter = replay.session, self.measure.policy, self.measure.counter
        taken = 0
        trace = build_trace(session)
        # The view's ids as the versions share them (core.model.views): it grows with the view, and only a fold,
        # which may change the view anywhere, starts a new list; so a version costs what arrived, not a copy.
        shared: list[str] = []
        messages: Shared[Message] = Shared()
        for k in range(len(trace)):
            end = response_index(session, trace, k)
            if self.arrivals is None:
                joined = _arrive(work, [session.record[i] for i in range(taken, end)])
            else:
                new, dropped = self.arrivals[k]
                if dropped and _leave(work, dropped):  # a rewind: the view changes before this request's messages join
                    shared = list(work.view)
                    messages = Shared(work.record.all_of(shared))
                if new:  # in record order (Arrival): the last is the furthest the record must reach
                    end = max(end, session.record.index_of(new[-1].id) + 1)
                for i in range(taken, end):
                    work.record.append(session.record[i])
                joined = list(new)
            ids = [m.id for m in joined]
            if self.arrivals is not None:
                work.view.extend(ids)
            shared.extend(ids)
            messages = messages.grown(len(messages), joined)
            taken = max(taken, end)
            if estimator is not None:
                estimator.at(k)
            estimate = fold.estimate(messages)
            arrived = SharedView(shared, len(shared))  # the view as the request's messages joined it
            replay.versions.append(ViewVersion(k, arrived, "request", estimate))
            runs, refusal = fold.prepare_request(estimate, check_calls=False)  # recorded views and the fold's
            if runs:  # only a fold changes the view between two requests
                shared = list(work.view)
                messages = Shared(work.record.all_of(shared))
                arrived = SharedView(shared, len(shared))
            self.messages = messages
            for run in runs:
                for record, view in zip(run.records, run.views):
                    if record["outcome"] == "landed":
                        replay.versions.append(ViewVersion(k, view, "fold", record["estimate_after"], record))
            # This request's compile, after its fold, decides the first round while caching; a refusal comes after.
            decide_first_round(work, policy, counter)
            if refusal is not None:
                replay.refusals[k] = refusal
                floor = next((r.floor_estimate for r in reversed(runs) if r.floor_estimate is not None), None)
                replay.floors[k] = fold.floor_estimate() if floor is None else floor
                replay.versions.append(ViewVersion(k, arrived, "refused", refusal.estimate))
                yield k
                continue  # a refused request is not sent, so it delivers nothing
            mark_delivered(work, arrived)  # the view sent: as it arrived, or as its folds left it
            yield k
        _arrive(work, [session.record[i] for i in range(taken, len(session.record))])


def _arrive(work: Session, messages: Sequence[Message]) -> list[Message]:
    """The messages join the record, and those the fold decides on join the view; returns the messages the view
    gained."""
    added = []
    for m in messages:
        work.record.append(m)
        if m.kind != "note" and not m.is_clipped_copy:
            work.view.append(m.id)
            added.append(m)
    return added


def _leave(work: Session, dropped: Collection[str]) -> bool:
    """Take what a rewind dropped out of the view: the messages, a clipped copy of one, and a note that replaced
    nothing else. Returns whether the view changed."""
    record = work.record

    def gone(mid: str) -> bool:
        m = record.get(mid)
        if mid in dropped or m.clipped_from in dropped:
            return True
        replaced = m.metadata.get("context_replaced") if m.kind == "note" else None
        return isinstance(replaced, list) and bool(replaced) and all(record[i].id in dropped for i in replaced)

    kept = [mid for mid in work.view if not gone(mid)]
    if len(kept) == len(work.view):
        return False
    work.view[:] = kept
    return True


def session_for_request(session: Session, measure: Measure, request: int) -> Session:
    """The session a fold of recorded request `request` starts from, as `fold --at-request` and the GUI's fold
    preview both take it: the view as it stood before the request, the first round its earlier compiles decided,
    and the request's own scale and its stretch's unseen head."""
    session.trace = measure.requests
    target = session_at_request(session, request, measure.policy, measure.counter)
    row = measure.calibrate(prefix=False).rows[request]
    target.scale, target.unseen_head = max(row.scale, 1.0), row.unseen_head
    return target

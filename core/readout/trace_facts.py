"""Per-request facts the timeline and window map draw (from core.request.trace), and the policy's rules in tokens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from foldscope.core.forensics.trace_pass import MeasuredPass
from foldscope.core.model import pricing
from foldscope.core.model.launch import session_policy
from foldscope.core.model.policy import FOLD_AT, FOLD_TARGET, Policy, PolicyChoice, PolicyError, Resolution
from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import Session
from foldscope.core.readout.agent_limits import context_window
from foldscope.core.readout.record_index import record_index
from foldscope.core.request.count import Counter
from foldscope.core.request.measure import Measure
from foldscope.core.request.trace import NextRule, RequestRow
from foldscope.core.request.trace_resume import TraceResume

Report = Callable[[int, int, str], None]


@dataclass(frozen=True, slots=True)
class RequestFacts:
    """One request of the trace as drawn: its view, its estimate and what the provider reported."""

    index: int
    view: Sequence[str]  # the recorded view's ids (a tuple, or a view of the reader's shared list)
    estimate: int  # the exact o200k_base count of the compiled request with its unseen head, times the scale
    own_count: int  # foldscope's own count of what the file holds (RequestRow.own_count: no unseen head)
    scale: float
    reported_input: int | None
    over_ceiling: bool
    prefix_share: float | None  # how much of this request the next one repeats from its start
    folded_before: bool  # a note entered the view since the previous request (a fold or compaction)
    compacted_before: bool = False  # that note is the source's own compaction (the agent's), not a fold
    predicted: int = 0  # predicted input (core.request.predict): the size this request is shown with
    predicted_from: int | str = "count"  # the request it was anchored on, or `count`
    flagged: bool = False  # its report disagrees wildly with its neighbours
    unseen_head: int = 0  # the head it carried that the file does not hold, its stretch's (estimated from reports)

    @property
    def headline(self) -> int:
        """The size shown for this request everywhere: its predicted input."""
        return self.predicted

    def difference(self) -> str:
        """Predicted against reported, as a panel shows it: `+1,234 (+0.8%)`; empty when nothing was reported."""
        if not self.reported_input:
            return ""
        d = self.predicted - self.reported_input
        return f"{d:+,} ({d / self.reported_input:+.1%})"


def unseen_head_note(r: RequestFacts) -> str:
    """Why a request predicted with no report before it falls short of its reported input: its unseen head was unknown."""
    # A prediction smaller than the head alone cannot hold it: the first request of a stretch, before any report.
    if r.predicted_from != "count" or not r.unseen_head or not r.reported_input or r.predicted >= r.unseen_head:
        return ""
    return (
        f"\nNo report came before this request, so its prediction could not include the {r.unseen_head:,} tokens the "
        "agent sends unseen (its system prompt and tools); its reported input holds them."
    )


@dataclass(frozen=True)
class Rules:
    """The ceiling and the line and target under it, in tokens, the price-tier boundary, and why."""

    ceiling: int | None
    line: float = FOLD_AT
    target: float = FOLD_TARGET
    source: str = ""
    tier: int | None = None  # the model's first price-tier boundary, when the pricing table knows it

    def at(self, name: str) -> int | None:
        if name == "tier":
            return self.tier
        if self.ceiling is None:
            return None
        return {"ceiling": self.ceiling, "line": round(self.ceiling * self.line), "target": round(self.ceiling * self.target)}[name]

    def past_ceiling(self, size: int) -> int | None:
        """How far `size` is past the ceiling (0: at it, below 0: under it); None without a ceiling."""
        return None if self.ceiling is None else size - self.ceiling


def rule_names(rules: Rules) -> list[str]:
    """The rules to draw: target, line, ceiling, and the price-tier boundary when it is a separate place."""
    names = ["target", "line", "ceiling"] if rules.ceiling is not None else []
    if rules.tier is not None and rules.tier != rules.ceiling:
        names.append("tier")
    return names


def rule_label(rules: Rules, name: str) -> str:
    value = rules.at(name)
    if name == "tier":
        return f"price tier {value:,}"
    if name == "ceiling" and rules.tier == rules.ceiling:
        return f"ceiling {value:,} (= price tier)"
    return f"{name} {value:,}"


def gui_policy(session: Session, choice: PolicyChoice | None) -> tuple[Policy, str]:
    """The policy the GUI measures under: the launch record (core.model.launch.session_policy, the one reading)
    with the choice made at start over it. A malformed launch record is set aside with a note, so the
    session still opens (the CLI refuses it in one line instead)."""
    try:
        return session_policy(session, choice), ""
    except PolicyError as exc:
        return (choice.over(Policy()) if choice is not None else Policy()), f"launch record refused ({exc}); "


def rules_for(session: Session, policy: Policy, resolution: Resolution, note: str = "", *, named: bool = False) -> Rules:
    """The policy's rules in tokens for this session: the one place they are made, when a session is measured and
    when another policy is put in force (core.readout.workspace). `resolution`: the policy's ceiling for the session's
    model; `note`: how the policy came to be in force, said before the ceiling's why; `named`: the why names the
    policy's source (`auto: ... (the policy editor)`) when it does not already. With no ceiling, the newest cap the
    fold records name stands for it."""
    why = resolution.why if not named or policy.source in resolution.why else f"{resolution.why} ({policy.source})"
    ceiling, why = resolution.ceiling, note + why
    if ceiling is None:
        caps = [f.get("cap") for f in (session.manifest or {}).get("context_folds") or [] if isinstance(f, dict)]
        caps = [c for c in caps if isinstance(c, int) and not isinstance(c, bool) and c > 0]
        if caps:
            ceiling, why = caps[-1], f"{why}; the fold records name a cap of {caps[-1]:,}"
    # The tier of the model the ceiling resolved for (the policy's, else the file's, as the Measure names it): a
    # --model changes the auto ceiling, so it changes the tier drawn beside it too.
    model = policy.model or session.model or next((r.model for r in session.trace if r.model), None)
    return Rules(ceiling, policy.fold_at, policy.fold_target, why, pricing.first_boundary(model))


@dataclass(frozen=True, kw_only=True)
class TraceFacts:
    """A session's trace measured as the panels show it: each request's facts, the rules, the next request."""

    requests: tuple[RequestFacts, ...]
    rules: Rules
    now_estimate: int  # the request the active view compiles to now, at the calibrated scale
    scale: float
    policy: Policy
    unseen_head: int = 0  # tokens every request carried that the file does not hold (core.request.trace.unseen_head)
    now_predicted: int = 0  # the next request's predicted input
    next_basis: NextRule | None = None  # how the next request is predicted: to predict an edited view
    context_window: int | None = None  # the model's context window (core.readout.agent_limits.context_window)
    window_source: str = ""  # where that window came from, in words (its source and any note)
    measure: Measure | None = None  # the Measure every figure here came from
    cache_pass: MeasuredPass | None = None  # the cache causes' pass over the same count, when asked for


def measure_requests(
    session: Session,
    counter: Counter,
    report: Report,
    policy: Policy | PolicyChoice | None = None,
    on_count: Callable[[int, int, int], None] | None = None,
    *,
    cache_pass: bool = False,
    resume: TraceResume | None = None,
    per_request: bool = True,
    at_last: Callable[[Measure], None] | None = None,
) -> TraceFacts:
    """Measure the trace with the session's Measure under `policy` (a Policy: as it is; a PolicyChoice or None:
    the launch record with the choice over it, core.model.launch.session_policy); the counter memoises.
    `on_count(k, requests, count)` hears each request's count as the counting pass reaches it. With `cache_pass`,
    the cache causes' pass (core.forensics.trace_pass.MeasuredPass) rides on the same count: facts.cache_pass.
    With `resume` (a session measured again as it grows) both passes go on from where the last measure left them.
    Without `per_request` no request's facts are made (facts.requests is empty): the status line's totals need none.
    `at_last(measure)` (not with `resume`) is called once the last request is measured, while the child counting ahead
    still runs: what it counts (the record's sizes) takes the child's counts, so this process builds no tokenizer for
    the few blocks no request carried (a result a compaction left unsent)."""
    per_call = None
    if isinstance(policy, Policy):
        note = f"the policy given at start ({policy.source}); "
    else:
        per_call = policy.per_call if policy is not None else None
        policy, note = gui_policy(session, policy)
    report(0, 0, "Measuring requests")
    measure = Measure(session, policy, per_call=per_call, counter=counter)
    # session.trace is the trace measured (core.request.trace.build_trace) whenever the reader filled one; the cache
    # report reads only session.trace, so a session without one has no requests there and no pass to ride.
    steps = None
    if cache_pass and session.trace:
        policy_measured = measure.policy
        make = lambda: MeasuredPass(session, policy_measured, {})  # noqa: E731
        steps = resume.cache_pass(session, make) if resume is not None else make()
    on_measured = steps.step if steps is not None else None
    if at_last is not None and session.trace and resume is None:  # resumed, the pass hears only the new requests
        step, left = on_measured, iter(range(len(session.trace) - 1, -1, -1))  # requests left after each one heard

        def then_last(messages, first_round, m, meter) -> None:  # the cache pass's step, then at_last at the last
            if step is not None:
                step(messages, first_round, m, meter)
            if next(left) == 0:
                at_last(measure)

        on_measured = then_last

    measured = measure.calibrate(on_count=on_count, on_measured=on_measured, resume=resume)
    out = _request_facts(session, measure, measured.rows) if per_request else []
    rules = rules_for(session, policy, measured.resolution, note)
    now = measure.estimate(measure.messages(session.view))
    nxt = measured.next_predicted
    window = context_window(session, measure.policy)
    return TraceFacts(
        requests=tuple(out),
        rules=rules,
        now_estimate=now,
        scale=measure.scale,
        policy=policy,
        unseen_head=measured.unseen_head,
        now_predicted=nxt.predicted if nxt else 0,
        next_basis=measured.next_rule if nxt else None,
        context_window=window.tokens if window else None,
        window_source=window.said if window else "",
        measure=measure,
        cache_pass=steps,
    )


def _request_facts(session: Session, measure: Measure, rows: Sequence[RequestRow]) -> list[RequestFacts]:
    """Each request's facts from its measured row: its view as recorded (what the record holds of it), and whether a
    fold or a compaction came before it (a note new to its view)."""
    record = session.record
    out: list[RequestFacts] = []
    previous_notes: set[str] = set()
    # Set operations run in C: a long session's views add up to millions of ids.
    record_ids = set(record.ids())
    # The record's notes from its index (one pass a record, made by the window's first step): not each message asked.
    note_ids = {record[i].id for i in record_index(record).any_notes}
    compaction_notes = {e.get("note_id") for e in session.events if isinstance(e, dict) and e.get("kind") == "compaction"}
    before: Sequence[str] = ()  # the request before's view as recorded, when the record holds all of it
    for request, row in zip(measure.requests, rows):
        # The recorded view as the reader keeps it (a tuple, or a view of one shared list): never copied per request.
        raw, n = request.view, len(before)
        if before and len(raw) >= n and common_start(raw, before, equal=True) == n:
            # It repeats the one before (all in the record) and adds to it: only what it adds is looked at.
            added = raw[n:]
            whole = record_ids.issuperset(added)
            notes = previous_notes | note_ids.intersection(added) if whole else set()
        else:
            whole = record_ids.issuperset(raw)
            notes = note_ids.intersection(raw) if whole else set()
        if whole:
            view = raw
        else:
            view = tuple(mid for mid in raw if mid in record_ids)
            notes = note_ids.intersection(view)
        before = raw if whole else ()
        out.append(
            RequestFacts(
                index=row.index,
                view=view,
                estimate=row.estimate,
                own_count=row.own_count,
                scale=row.scale,
                reported_input=row.reported_input,
                over_ceiling=row.over_ceiling,
                prefix_share=row.prefix_share,
                folded_before=bool(notes - previous_notes) and bool(out),
                compacted_before=bool(out) and bool(notes - previous_notes) and (notes - previous_notes) <= compaction_notes,
                predicted=measure.headline(row.index),
                predicted_from=row.predicted_from,
                flagged=row.flagged,
                unseen_head=row.unseen_head,
            )
        )
        previous_notes = notes
    return out

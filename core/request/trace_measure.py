"""The trace measured in three steps, count, predict and calibrate (TraceMeasure), into a frozen TraceReport."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from foldscope.core.formats.registry import sending_format
from foldscope.core.model.policy import Policy, resolve_ceiling
from foldscope.core.model.session import Message, Request, Session, estimated_usage
from foldscope.core.request.compile import IncludedRound, session_tools
from foldscope.core.request.count import Counter, Measurement, estimate, policy_key
from foldscope.core.request.counting.ahead import CountsAhead, position_of
from foldscope.core.request.first_round import decide_first_round, frontier, included_round
from foldscope.core.request.head_priors import head_prior
from foldscope.core.request.predict import Prediction, Predictor, Sent
from foldscope.core.request.prefix import Divergence, PrefixMeter
from foldscope.core.request.provider_text import PredictionCounter, Render, ViewCount, prompt_renderer, reads_text
from foldscope.core.request.scale import calibrated
from foldscope.core.request.trace import (
    Decisions,
    LazyViews,
    NextRule,
    RequestRow,
    TraceReport,
    action_for,
    build_trace,
    holds_no_head,
    partial_file_warning,
    refusal_for,
    stretch_ids,
    trace_views,
    unseen_heads,
    use_unseen_rate,
)
from foldscope.core.request.trace_resume import Kept, TraceResume, request_key
from foldscope.core.request.unseen_text import UnseenRate

if TYPE_CHECKING:
    from foldscope.core.request.counting.later_half import LaterHalf

# Hears each recorded request's compiled count as the counting pass reaches it: (request, requests, count).
OnCount = Callable[[int, int, int], None]
# Gets each request's measurement as the counter made it: (messages, first round, measurement, prefix meter).
OnMeasured = Callable[[Sequence[Message], Any, Measurement, PrefixMeter | None], None]


class PredictionCounts:
    """Each request's view counted as the predictions count it (PredictionCounter), in order, as the trace's count
    reaches it: the view at hand, not made again from the record for a second pass."""

    def __init__(self, fmt: str, counter: Counter, render: Render = None) -> None:
        self.counter = PredictionCounter(fmt, counter.count_text, render)
        self.counts: list[ViewCount] = []

    def add(self, view: Sequence[Message], compiled: int, model: str | None) -> None:
        self.counts.append(self.counter.count(view, compiled, model))


@dataclass(frozen=True)
class Predictions:
    """Every recorded request's predicted input, the next request's, and what each rests on."""

    rows: list[Prediction]
    estimated: list[bool]  # the count behind it holds placeholders' characters
    stretches: list[int]
    next: Prediction
    next_compiled: int  # the active view's compiled count (no unseen head)
    next_count: int  # the active view's count as the prediction counts it
    heads_from: list[str | None] = field(default_factory=list)  # where an unmeasured head came from (core.request.head_priors)
    rule: NextRule | None = None  # how the next request is predicted, for a view edited since


@dataclass
class Carried:
    """The predictions after the last recorded request, to go on from when the session grows (core.request.trace_resume):
    the predictor as every report left it, each request's prediction, estimated flag, head source, stretch and the
    reported input it was fed, and the head prior they began from."""

    predictor: Predictor
    rows: list[Prediction]
    estimated: list[bool]
    heads_from: list[str | None]
    stretches: list[int]
    reported: list[int | None]
    prior: Any


def _stretches(session: Session, trace: Sequence[Request], following: Sequence[str], carried: Carried | None) -> list[int]:
    """Each request's stretch and the next one's (stretch_ids), numbered on from the carried requests' when there are some."""
    n = len(carried.rows) if carried is not None else 0
    if not n:
        return stretch_ids(session, trace, following)
    assert carried is not None
    # stretch_ids numbers each view from the one before: from the last carried view on, offset by its stretch.
    after = stretch_ids(session, trace[n - 1 :], following)
    return carried.stretches + [carried.stretches[-1] + s for s in after[1:]]


def predict_requests(
    session: Session,
    trace: Sequence[Request],
    counting: PredictionCounts,
    models: Sequence[str | None],
    counter: Counter,
    policy: Policy | None = None,
    carried: Carried | None = None,
) -> tuple[Predictions, set[int], Carried]:
    """Predicted input for each recorded request and the next one (core.request.predict), the requests whose
    reports it flagged, and the state to go on from. Each request's count is the provider's view of it
    (core.request.provider_text), made as the trace was measured (`counting`). With `carried` (the predictions of
    the same requests a measure ago) only the requests after them are predicted, when every report they were fed
    is unchanged and they began from the same head prior; else all are."""
    rec = session.record
    active = session.view_messages()
    reported = [u.reported_input if (u := r.usage) is not None and u.reported_input > 0 else None for r in trace]
    # Before the session's first report, the head its file lacks is the one its agent was measured to send on
    # other sessions (core.request.head_priors); such a prediction is flagged as estimated and names that source.
    prior = head_prior(sending_format(session), models[0] if models else None) if holds_no_head(session) else None
    if carried is not None:
        n = len(carried.rows)
        if not 0 < n <= len(trace) or carried.prior != prior or reported[:n] != carried.reported:
            carried = None
    stretches = _stretches(session, trace, session.view, carried)
    sent = [Sent(c.total, models[k], stretches[k]) for k, c in enumerate(counting.counts)]
    if carried is None:
        predictor = Predictor(prior.tokens if prior is not None else 0)
        rows: list[Prediction] = []
        heads_from: list[str | None] = []
        estimated: list[bool] = []
    else:
        predictor, rows = carried.predictor, list(carried.rows)
        heads_from, estimated = list(carried.heads_from), list(carried.estimated)
    for k in range(len(rows), len(sent)):
        rows.append(predictor.predict(k, sent[k]))
        heads_from.append(prior.source if prior is not None and not predictor.measured and rows[-1].anchor is None else None)
        estimated.append(counting.counts[k].estimated or heads_from[-1] is not None)
        predictor.report(k, reported[k])
    done = len(rows)
    kept = Carried(predictor.copy(), rows, estimated, heads_from, stretches[:done], reported[:done], prior)
    model = (policy.model if policy else None) or session.model or (models[-1] if models else None)
    next_compiled = counter.measure(active, record=rec, policy=policy, tools=session_tools(session)).count
    nc = counting.counter.count(active, next_compiled, model)
    rule = NextRule(predictor.copy(), model, len(trace), trace[-1].view if trace else (), stretches[len(trace) - 1] if trace else 0)
    following = predictor.predict(len(trace), Sent(nc.total, model, stretches[-1]))
    return (
        Predictions(list(rows), list(estimated), stretches[: len(trace)], following, next_compiled, nc.total, list(heads_from), rule),
        set(predictor.flagged_now()),
        kept,
    )


def _predicted(predictions: Predictions, k: int, flags: set[int]) -> dict[str, Any]:
    """Request k's RequestRow fields from the predictions: its predicted input and what it rests on."""
    p = predictions.rows[k]
    return {
        "predicted": p.predicted,
        "predicted_from": p.predicted_from,
        "predicted_estimated": predictions.estimated[k],
        "flagged": k in flags,
        "prediction": p,
        "stretch": predictions.stretches[k],
        "predicted_head_source": predictions.heads_from[k] if k < len(predictions.heads_from) else None,
    }


@dataclass(frozen=True)
class TraceCounts:
    """What the counting pass gives: each request's measurement, the divergence its prefix meter read (None without
    `prefix`), its included first round and Amendment 4's frontier, the unseen head each carried, the first round's
    decision, and each view counted as the predictions count it (None without `predict`)."""

    counts: list[Measurement]
    parted: list[Divergence | None]
    rounds: list[IncludedRound | None]
    frontiers: list[str | None]  # None until the first round is decided, then same or changed
    heads: list[int]
    decision: Any
    counting: PredictionCounts | None


def kept_pass(key, trace, models, messages, counts, parted, rounds, frontiers, decision, counting, meter) -> Kept:
    """The counting pass as it ended, to go on from (the prediction counts copied: the next request's count changes them)."""
    copied = None
    if counting is not None:
        copied = PredictionCounts.__new__(PredictionCounts)
        copied.counter, copied.counts = counting.counter.clone(), list(counting.counts)
    requests = [request_key(request, model) for request, model in zip(trace, models)]
    return Kept(key, requests, trace[-1].view, messages, list(counts), list(parted), list(rounds), list(frontiers), decision, copied, meter)


class TraceMeasure:
    """Every request of a session's trace measured under a policy, in three steps: count (one pass: each request's
    count, prefix share and first round), predict (each request's predicted input and the next one's) and calibrate
    (the scale, request by request from reported input, each estimate at the scale its predecessors set, with its
    decision and refusal). `run` takes the three in turn and gives a frozen TraceReport; nothing is kept with the
    session (TraceReport.record_into keeps it)."""

    def __init__(
        self,
        session: Session,
        policy: Policy | None = None,
        *,
        per_call: int | str | None = None,
        counter: Counter | None = None,
        resume: TraceResume | None = None,
    ):
        self.session = session
        self.policy = policy = policy or Policy()
        self.model = policy.model or session.model
        self.resolution = resolve_ceiling(policy, self.model, per_call)
        self.counter = counter or Counter()
        self.trace: list[Request] = []
        self.models: list[str | None] = []
        self._ahead: CountsAhead | LaterHalf | None = None
        self._estimated: str | None = None
        self._carried: Carried | None = None  # the predictions kept with the counting pass that went on
        self.resume = resume  # the counting pass kept by the last measure of this growing session (core.request.trace_resume)

    def run(
        self, *, prefix: bool = True, predict: bool = True, on_count: OnCount | None = None, on_measured: OnMeasured | None = None
    ) -> TraceReport:
        """Count, predict and calibrate. Without `predict` the rows carry no predicted input (predicted 0, no rule) and
        the next request none: the counts, scales, estimates and refusals are the same, since the scale is calibrated
        on reported input, not on predictions. `on_count(k, requests, count)` hears each request's compiled count as
        the counting pass reaches it (the GUI's timeline fills in as it goes); the count has no unseen head or scale
        yet, so it is progress, not a size to show. `on_measured(messages, first_round, measurement, meter)` gets each
        request's measurement and the prefix meter that has just stepped over it (None without `prefix`), so another
        pass over the same requests (core.forensics.trace_pass.MeasuredPass) need not count or compile them again."""
        rate = use_unseen_rate(self.session, self.counter)
        self.trace = build_trace(self.session)
        self.models = [request.model or self.model for request in self.trace]
        try:  # from here on the finally below stops the counter noting lengths, whatever fails
            trace_counts = self.count(prefix=prefix, predict=predict, on_count=on_count, on_measured=on_measured)
            predictions, flags = self.predict(trace_counts)
        finally:  # the thinking the predictions count was sent ahead too (core.request.counting.ahead)
            self.counter.lengths = None  # the meter keeps what it read; the counter stops noting lengths
            # The child this measure counted with stopped and reaped, and one started during the read it never took.
            ahead, self._ahead = self._ahead, None
            self.counter.backend.stop(self.counter, ahead)
        return self.calibrate(trace_counts, predictions, flags, rate, prefix=prefix, predict=predict)

    def count(self, *, prefix: bool, predict: bool, on_count: OnCount | None, on_measured: OnMeasured | None) -> TraceCounts:
        """One pass counts each request and reads its prefix share while its layout is at hand (incremental: each
        request costs what changed); only the count and the three largest parts are kept per request."""
        session, policy, counter, trace, rec = self.session, self.policy, self.counter, self.trace, self.session.record
        tools = session_tools(session)
        meter = None
        if prefix:  # the counter notes each body's length as it renders it, so the meter need not render it again
            counter.lengths = {}
            meter = PrefixMeter(rec, policy, tools, lengths=counter.lengths.setdefault(policy_key(policy), {}))
        counts: list[Measurement] = []
        parted: list[Divergence | None] = []
        rounds: list[IncludedRound | None] = []
        decision = None
        frontiers: list[str | None] = []
        thinking = predict and not reads_text(policy.model or session.model, session.format)  # the predictions count thinking
        counting = PredictionCounts(session.format, counter, prompt_renderer(session)) if predict else None
        views, start, key = trace_views(rec, trace), 0, (session.format, policy, tools, prefix, predict)
        kept = self.resume.take(key, trace, self.models, rec) if self.resume is not None else None
        if kept is not None:  # the requests measured before, as they were: the pass goes on from the first new one
            start, counts, parted, rounds, frontiers = kept.start, kept.counts, kept.parted, kept.rounds, kept.frontiers
            decision, counting, meter = kept.decision, kept.counting, kept.meter
            views = trace_views(rec, trace[start:], kept.last_view, kept.messages)
            if meter is not None:
                meter.record = rec
                counter.lengths = {policy_key(policy): meter._counted}
        messages = kept.messages if kept is not None else None
        self._carried = kept.predicted if kept is not None else None
        ahead = self._ahead = counter.backend.start(counter, rec, policy, policy_key(policy), thinking) if trace else None
        for request, messages in zip(trace[start:], views):
            if policy.caching and decision is None:  # decided once, by the first request carrying the round whole
                decision = decide_first_round(session, policy, counter, view=list(messages), store=False)
                frontiers.append(None)
            else:
                frontiers.append(frontier(session, policy, decision, messages))  # no copy: a view is never changed
            first_round = included_round(decision)
            if ahead is not None:
                ahead.reach(position_of(rec, messages), first_round)
            m = counter.measure(messages, record=rec, policy=policy, tools=tools, first_round=first_round)
            counts.append(Measurement(m.count, tuple(m.largest(3))))
            if counting is not None:
                counting.add(messages, m.count, self.models[len(counts) - 1])
            rounds.append(first_round)
            if meter is not None:
                ids = request.view if len(request.view) == len(messages) else tuple(x.id for x in messages)
                parted.append(meter.step(ids, m.laid, first_round))
            if on_measured is not None:
                on_measured(messages, first_round, m, meter)
            if on_count is not None:
                on_count(len(counts) - 1, len(trace), m.count)
        if self.resume is not None and trace:
            self.resume.keep(kept_pass(key, trace, self.models, messages, counts, parted, rounds, frontiers, decision, counting, meter))
        heads = unseen_heads(session, [m.count for m in counts], trace)
        return TraceCounts(counts, parted, rounds, frontiers, heads, decision, counting)

    def predict(self, trace_counts: TraceCounts) -> tuple[Predictions | None, set[int]]:
        """Each request's predicted input and the next one's, and the requests whose reports they flagged (none
        without the predictions' count)."""
        if trace_counts.counting is None:
            return None, set()
        predictions, flags, carried = predict_requests(
            self.session, self.trace, trace_counts.counting, self.models, self.counter, self.policy, self._carried
        )
        if self.resume is not None and self.resume.kept is not None:
            self.resume.kept.predicted = carried  # the kept counting pass's requests are these
        return predictions, flags

    def calibrate(
        self,
        trace_counts: TraceCounts,
        predictions: Predictions | None,
        flags: set[int],
        rate: UnseenRate | None,
        *,
        prefix: bool,
        predict: bool,
    ) -> TraceReport:
        """The scale calibrated request by request from reported input (request k's estimate uses the scale its
        predecessors of its model set), each request's row and decision, and the warnings."""
        session, trace, models, resolution = self.session, self.trace, self.models, self.resolution
        self._estimated = estimated_usage(session)  # the reported usage is foldscope's own estimate: every row says so
        head = trace_counts.heads[-1] if trace_counts.heads else 0
        rows: list[RequestRow] = []
        actions: list[str] = []
        warnings: list[str] = []
        scales: dict[str | None, float] = {}
        for k, request in enumerate(trace[: len(trace_counts.counts)]):
            scale = scales.get(models[k], 1.0)  # each model's requests raise only its own scale
            row, action = self._row(k, request, trace_counts, scale, predictions, flags)
            rows.append(row)
            actions.append(action)
            raised = calibrated(scale, row.count_with_head, row.reported_input)
            if k in flags and raised > scale:
                # A report both neighbours contradict cannot be true (a corrupt figure): let it raise the scale, which
                # never falls, and every later estimate is wrong by its error. It is kept as reported, and named.
                warnings.append(
                    f"request {k}: reported input {row.reported_input:,} cannot be true beside its neighbours' reports "
                    f"(predicted {row.predicted:,}); kept as reported, left out of the scale of {models[k] or 'the model'}"
                )
                raised = scale
            scales[models[k]] = raised
        partial = partial_file_warning(session, rows, LazyViews(session.record, trace), rate, flags)
        estimated = self._estimated
        warnings = ([f"{session.source}: {estimated}"] if estimated is not None else []) + ([partial] if partial else []) + warnings
        # The scale in force for the next request: its model's (the session's, unless the policy names another).
        scale = scales[self.model] if self.model in scales else scales.get(models[-1], 1.0) if trace else 1.0
        nxt = predictions
        kept_rows = tuple(rows)
        return TraceReport(
            resolution,
            self.policy,
            rows=kept_rows,
            decisions=Decisions(resolution, self.model, kept_rows, actions, tuple(trace_counts.frontiers)),
            scale=scale,
            unseen_head=head,
            prefix=prefix,
            predicted=predict,
            scales=scales,
            next_predicted=nxt.next if nxt is not None else None,
            next_count_with_head=nxt.next_compiled + head if nxt is not None else 0,
            next_count=nxt.next_count if nxt is not None else 0,
            next_rule=nxt.rule if nxt is not None else None,
            warnings=tuple(warnings),
            partial=partial,
            decision=trace_counts.decision,
        )

    def _row(
        self, k: int, request: Request, trace_counts: TraceCounts, scale: float, predictions: Predictions | None, flags: set[int]
    ) -> tuple[RequestRow, str]:
        """Request k's row at `scale`, and its action (none, notice or refuse)."""
        m, head, ceiling = trace_counts.counts[k], trace_counts.heads[k], self.resolution.ceiling
        total = m.count + head
        reported = request.usage.reported_input if request.usage is not None else None
        refusal = refusal_for(m, ceiling, scale, self.session.record, reported, head)
        size = estimate(total, scale)
        nxt = trace_counts.parted[k + 1] if k + 1 < len(trace_counts.parted) else None
        row = RequestRow(
            index=request.index,
            estimate=size,
            count_with_head=total,
            scale=scale,
            reported_input=reported,
            prefix_share=nxt.share if nxt else None,
            over_ceiling=refusal is not None,
            refusal=refusal,
            diverges=nxt.as_dict() if nxt else None,
            unseen_head=head,
            first_round=trace_counts.rounds[k],
            reported_over_ceiling=bool(ceiling is not None and reported is not None and reported >= ceiling),
            model=self.models[k],
            reported_estimated=self._estimated is not None and reported is not None,
            **(_predicted(predictions, k, flags) if predictions is not None else {}),
        )
        return row, "refuse" if refusal else action_for(size, ceiling)


def measure_trace(
    session: Session,
    policy: Policy | None = None,
    *,
    per_call: int | str | None = None,
    counter: Counter | None = None,
    prefix: bool = True,
    predict: bool = True,
    on_count: OnCount | None = None,
    on_measured: OnMeasured | None = None,
    resume: TraceResume | None = None,
) -> TraceReport:
    """Measure every request of the session's trace under a policy (TraceMeasure.run): count, scale, estimate,
    decision. Nothing is kept with the session: `measure_trace(session).record_into(session)` keeps it. With
    `resume` the counting pass goes on from where the last measure of the same session left it."""
    return TraceMeasure(session, policy, per_call=per_call, counter=counter, resume=resume).run(
        prefix=prefix, predict=predict, on_count=on_count, on_measured=on_measured
    )

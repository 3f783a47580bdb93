"""The replay lab: a session's trace under several strategies, with the cache model and cost per request."""

from __future__ import annotations

import os
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import partial
from itertools import compress, count, islice
from operator import is_not
from typing import Any, NamedTuple

from foldscope.core.model import pricing
from foldscope.core.model.cost import ModelPrices
from foldscope.core.model.policy import Policy
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.model.session import Message, Session, Usage
from foldscope.core.model.shared_start import Shared, since
from foldscope.core.replay import parallel
from foldscope.core.replay.cache_model import CacheRules, Layout, Mark, PrefixCache
from foldscope.core.replay.strategies import BAND_MAX, BAND_MIN, STRATEGIES, Step, decides_on, recorded_views
from foldscope.core.request import tokens
from foldscope.core.request.count import Counter, Measurement, estimate
from foldscope.core.request.estimators import ADR, check_estimator
from foldscope.core.request.first_round import included_ids, included_round
from foldscope.core.request.marks import SEARCH, replay_marks
from foldscope.core.request.measure import Measure, refused
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace import TraceReport, holds_no_head, unseen_head

MESSAGE_OVERHEAD = 8  # the JSON framing a text block costs beyond its text
LOOKBACK = 20  # blocks a provider looks back from a mark for a hit (ADR-0127)
OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "codex", "chatgpt")

# A progress callback (done, total, label); the GUI worker's Progress.report fits and may raise to cancel.
Report = Callable[[int, int, str], None]


HIDDEN_HEAD = ("hidden-head",)  # the key of the block that stands for what the file does not hold


def with_hidden_head(keys: Sequence[Any], ends: Sequence[int], head_end: int) -> tuple[tuple, tuple]:
    """A request's blocks behind one hidden head block ending at `head_end` tokens: the system prompt and
    tools every request carried that the file does not hold (core.request.trace.unseen_head). Its key is a tuple,
    so the stable mark goes on it. Replay and the cache check (core.replay.cache_check) both lay requests out so."""
    if head_end < 1:
        return tuple(keys), tuple(ends)
    return (HIDDEN_HEAD, *keys), (head_end, *ends)


class _Laid(NamedTuple):
    """The last layout: its measurement's serial and parts, its keys and ends (hidden head included, as the Layout
    holds them), the counted tokens to each part's end, where its notes and protected members are (part indices),
    whether a hidden head leads it, and its head part's key."""

    serial: int
    keys: Shared[Any]
    ends: Shared[int]
    notes: list[int]
    members: list[int]
    totals: Shared[int]
    parts: Sequence[Any]
    shift: int
    head_key: Any


def kept_parts(serial: int, parts: Sequence[Any], head_key: Any, m: Measurement, key: Callable[[Measurement, int, Any], Any]) -> int:
    """How many leading parts of measurement `m` are those of the one laid out before (`serial`, its `parts` and its
    head's key): the counter's own `kept` when it laid `m` out from that one, else found by identity (the counter
    may have stepped from another view in between, as the band's estimate of the view before its commit). A part
    that is the same object has the same message and tokens, so its block's key and end are the same; the head is
    made afresh for every measurement, so it is kept when its key and tokens are."""
    if m.since == serial and m.since >= 0:
        return m.kept
    if not parts or not m.parts:
        return 0
    head, old_head = m.parts[0], parts[0]
    if head.tokens != old_head.tokens or key(m, 0, head) != head_key:
        return 0
    n = min(len(parts), len(m.parts))
    # a C-level walk over both from the second part: what changed costs the walk, not a Python step per part
    return next(compress(count(1), map(is_not, islice(parts, 1, n), islice(m.parts, 1, n))), n)


def recorded_head(measure: Measure, report: TraceReport | None = None) -> int:
    """The unseen head for a session whose usage was reported: the one kept with it, else measured as
    core.request.trace does (the smallest gap between reported input and the recorded view's count).
    With the measure's own trace `report`, the counts it already made are read from it (recorded_counts)."""
    session = measure.session
    if not holds_no_head(session) or not any(r.usage for r in session.trace):
        return 0
    if session.unseen_head:
        return session.unseen_head
    if report is not None:
        counted = recorded_counts(measure, report)
    else:
        counted = [measure.count(view) for view in recorded_views(session)]
    return unseen_head(session, counted, session.trace)


def recorded_counts(measure: Measure, report: TraceReport) -> list[int]:
    """Each recorded request's count as measure.count gives it, read from the measure's trace where that request
    compiled with the first round the measure compiles every view with (the trace's decision, or none while
    caching is off): only a request before the decision, which the trace compiled without it, is counted again."""
    want = included_round(report.decision) if measure.policy.caching else None
    return [
        row.counted - row.unseen_head if row.first_round == want else measure.count(measure.request_messages(k))
        for k, row in enumerate(report.rows)
    ]


class Layouts:
    """The replay's view of the one Measure (core.request.measure): each compiled request cut into one cache
    block per message, for the cache model.

    A block's key is its message id (the tools and system head is one block keyed by the system ids),
    its tokens are the message's part of the count; every figure is counted times the scale. `head`
    is the unseen head (None: measured when the session reported usage, see recorded_head): it joins
    every estimate and leads every layout as one hidden block. A view that extends the one measured
    before costs about its new blocks: the counter re-plans from its last turn, and the layout keeps
    the keys and ends of the parts the counter kept.
    """

    def __init__(self, measure: Measure, head: int | None = None, scale: float | None = None, estimator: str = ADR) -> None:
        self.measure = measure
        self.estimator = check_estimator(estimator)  # what the adr fold decides on (core.request.estimators)
        self.record = measure.session.record
        report = None
        if scale is None:
            # The scale the session's trace calibrates: the one `requests`, `fold` and the GUI measure with. The
            # replay reads its counts, scales and estimates, never its predicted inputs (the `predicted` estimator
            # reads the measure's whole trace itself): the predictions' pass is left out.
            report = measure.calibrate(prefix=False, predict=False)
        self.scale = measure.scale if scale is None else scale
        self.protected = included_ids(measure.session)
        self._laid: _Laid | None = None  # the last layout
        # Each block key of the last layout -> its position (a view holds a message once, so keys are unique); kept
        # as layouts change, so finding the last request's tail costs what changed, not a search back.
        self._where: dict[Any, int] = {}
        self._alone: dict[str, float] = {}
        self.head = recorded_head(measure, report) if head is None else head
        # Where the compaction strategy compacts, when an agent's own knob puts it (tune --compact-at); None: at the
        # policy's line of the ceiling.
        self.compact_point: int | None = None

    @property
    def ceiling(self) -> int | None:
        return self.measure.ceiling

    @property
    def policy(self) -> Policy:
        return self.measure.policy

    @property
    def counter(self) -> Counter:
        return self.measure.counter

    def measurement(self, view: Sequence[Message]) -> Measurement:
        return self.measure.measurement(view)

    def _key(self, m: Measurement, i: int, part) -> Any:
        if i == 0:
            system = m.laid.system if m.laid is not None else tuple(p.message for p in m.parts[:1] if p.message)
            return ("head", tuple(x.id for x in system if x.kind == "system"))
        return part.message.id

    def blocks(self, view: Sequence[Message]) -> list[tuple[Any, int]]:
        """(key, counted tokens) per block of the compiled request, in order (the hidden head not among them)."""
        m = self.measurement(view)
        return [(self._key(m, i, part), part.tokens) for i, part in enumerate(m.parts)]

    def estimate(self, view: Sequence[Message], over: Measure | None = None) -> int:
        """A view's estimate at the replay's scale and unseen head; `over` as for layout()."""
        if not view:
            return 0
        if over is None:
            return self.measure.estimate(view, head=self.head, scale=self.scale)
        return over.estimate(view, head=self.head, scale=self.scale, decide=False)

    def sizes(self, view: Sequence[Message]) -> dict[str, float]:
        """Each message's part of the estimate; the head's goes to the first system message."""
        out: dict[str, float] = {}
        for part in self.measurement(view).parts:
            if part.message is not None:
                out[part.message.id] = out.get(part.message.id, 0) + part.tokens * self.scale
        return out

    def alone(self, message: Message) -> float:
        """A message's estimate on its own, for a note or summary not yet in any view."""
        n = self._alone.get(message.id)
        if n is None:
            n = self._alone[message.id] = (count_text(message.text) + MESSAGE_OVERHEAD) * self.scale
        return n

    def layout(self, view: Sequence[Message], marks: tuple[Mark, ...], at: float | None, over: Measure | None = None) -> Layout:
        """The request's blocks, hidden head first, with the token end of each; keys and ends of the parts
        the counter kept from the previous layout's measurement are taken from it. `over`: the measure the view
        compiles under when not this one's (adr's fold measures its own working session, with the first round
        its requests decided): the view is counted as the fold counted it, so the layout reads the fold's."""
        m = self.measurement(view) if over is None else over.measurement(view, decide=False)
        scale, protected = self.scale, self.protected
        hidden = estimate(self.head, scale) if self.head else 0
        shift = 1 if hidden >= 1 else 0  # the hidden head's block leads the keys and ends (with_hidden_head)
        prev = self._laid
        keep = 0
        if prev is not None and prev.shift == shift:
            keep = kept_parts(prev.serial, prev.parts, prev.head_key, m, self._key)
        # the kept parts' notes and members (sorted part indices), cut where the kept parts end
        notes = prev.notes[: bisect_left(prev.notes, keep)] if prev is not None and keep else []
        members = prev.members[: bisect_left(prev.members, keep)] if prev is not None and keep else []
        # counted tokens to the end of each block, the head's included
        total = prev.totals[keep - 1] if prev is not None and keep else self.head
        keys: list[Any] = []
        ends: list[int] = []
        totals: list[int] = []
        for i, part in enumerate(since(m.parts, keep), keep):  # the parts are shared: read from `keep`, no copy
            total += part.tokens
            totals.append(total)
            keys.append(self._key(m, i, part))
            ends.append(estimate(total, scale))
            if i and part.kind == "note":
                notes.append(i)
            if i:
                assert part.message is not None  # only the head (part 0) may have no message
                if part.message.id in protected:
                    members.append(i)
        where = self._where
        if prev is not None and keep:  # the kept blocks' keys and ends are shared with the layout before, not copied
            laid_keys, laid_ends = prev.keys.grown(keep + shift, keys), prev.ends.grown(keep + shift, ends)
            laid_totals = prev.totals.grown(keep, totals)
            for i, key in enumerate(since(prev.keys, keep + shift), keep + shift):  # the blocks not kept leave
                if where.get(key) == i:
                    del where[key]
            where.update(zip(keys, count(keep + shift)))
        else:
            laid_keys = Shared([HIDDEN_HEAD, *keys] if shift else keys)
            laid_ends = Shared([hidden, *ends] if shift else ends)
            laid_totals = Shared(totals)
            where.clear()
            where.update(zip(laid_keys, count()))
        head_key = laid_keys[shift] if len(laid_keys) > shift else None
        self._laid = _Laid(m.serial, laid_keys, laid_ends, notes, members, laid_totals, m.parts, shift, head_key)
        return Layout(laid_keys, laid_ends, marks, at)

    def position(self, key: Any) -> int | None:
        """Where block `key` is in the last layout (hidden head counted), None when it is not there."""
        return self._where.get(key)

    def anchors(self) -> tuple[list[int], list[int]]:
        """Positions (in the last layout, hidden head counted) of the blocks holding a note and a protected message."""
        assert self._laid is not None, "anchors() reads the layout laid just before"
        shift, notes, members = self._laid.shift, self._laid.notes, self._laid.members
        return [i + shift for i in notes], [i + shift for i in members]


def place_marks(
    keys: Sequence[Any],
    kinds: Mapping[str, str],
    previous_tail: Any,
    protected: frozenset[str],
    *,
    notes: Sequence[int] | None = None,
    members: Sequence[int] | None = None,
    tail_at: int | None | object = SEARCH,
) -> tuple[Mark, ...]:
    """ADR-0127's marks on a request's blocks, as core.request.marks decides them for every request (one place)."""
    found = replay_marks(keys, kinds, previous_tail, protected, LOOKBACK, notes=notes, members=members, tail_at=tail_at)
    return tuple(Mark(m.block, m.lifetime) for m in found)


def model_name(measure: Measure) -> str | None:
    """The model the replay prices and caches as (the Measure's, without a provider prefix)."""
    name = measure.model
    return name.rsplit("/", 1)[-1] if name else None


def shows_caching(session: Session) -> bool:
    return any(r.usage and (r.usage.cache_read or r.usage.cache_write) for r in session.trace)


def cache_rules(measure: Measure) -> tuple[CacheRules, str]:
    """Which cache the replay models, and why."""
    session = measure.session
    model = model_name(measure) or ""
    if model.lower().startswith(OPENAI_PREFIXES):
        return CacheRules.openai(), f"{model} caches automatically"
    if measure.policy.caching:
        return CacheRules.anthropic(), "caching on: marks placed as ADR-0127 says"
    if measure.policy.prompt_caching is False:  # said off (not left unset): no marks, so nothing is read back
        return CacheRules.off(), "caching off in the policy: no marks placed, so no cache reads"
    if shows_caching(session):
        return CacheRules.anthropic(), "the source's usage shows caching: marks placed as ADR-0127 says"
    return CacheRules.off(), "caching off and the source shows none"


@dataclass(frozen=True)
class Row:
    """One modelled request under one strategy."""

    strategy: str
    step: int
    request: int
    kind: str
    messages: int
    estimate: int
    over_ceiling: bool
    fresh: int
    cache_read: int
    cache_write: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    change: str
    rewritten: int
    folds: int
    folded: int
    cost_usd: float | None
    refused: bool = False  # refused before the send: nothing sent, so no input, output or cost
    floor_estimate: int | None = None  # a refused request's floor view estimate
    # The recorded strategy takes fresh, cache read, cache write and output as the file reported them (`reported`);
    # the cache model's figures for the same request stay beside them, since the counterfactual strategies rest
    # on that model. For every other strategy the modelled figures are the row's own.
    reported: bool = False
    modelled_fresh: int = 0
    modelled_cache_read: int = 0
    modelled_cache_write: int = 0
    modelled_cache_write_1h: int = 0  # of which under one-hour marks: the stable head's, by the same rule for every strategy
    modelled_cost_usd: float | None = None

    def as_dict(self) -> dict[str, Any]:
        """The row as plain data: what dataclasses.asdict gives for its scalar fields, without the deep walk."""
        return {name: getattr(self, name) for name in ROW_FIELDS}

    reported_input: int | None = None  # what the provider counted for the recorded request, where it reported usage
    reported_over_ceiling: bool = False  # the provider's own count was at or past the ceiling
    predicted: int | None = None  # where the fold decided on the predicted input (--estimator predicted): its size


ROW_FIELDS = tuple(f.name for f in fields(Row))


@dataclass
class StrategyRun:
    strategy: str
    rows: list[Row] = field(default_factory=list)
    views: list[Sequence[Message]] = field(default_factory=list)  # per row, when asked to keep them
    estimator: str | None = None  # what its policy decides on (strategies.decides_on); None: nothing decides
    summed: dict[str, Any] | None = None  # the totals of rows let go (summarised), which totals() then gives

    def totals(self) -> dict[str, Any]:
        if self.summed is not None:
            return dict(self.summed)
        rows = self.rows
        costs = [r.cost_usd for r in rows]
        refusals = sum(r.refused for r in rows)
        # A refused request sends nothing and bills nothing: a cost summed over the others is not the session's, so
        # it is given as None with why (never as the $0 an all-refused run would sum to); what was sent, apart.
        not_comparable = not_comparable_why(refusals, len(rows)) if refusals else None
        return {
            "strategy": self.strategy,
            "estimator": self.estimator,
            "requests": len(rows),
            "peak": max((r.estimate for r in rows), default=0),
            "reported_peak": max((r.reported_input or 0 for r in rows), default=0) or None,
            "over_ceiling": sum(r.over_ceiling for r in rows),
            "refused": sum(r.refused for r in rows),
            "fresh": sum(r.fresh for r in rows),
            "cache_read": sum(r.cache_read for r in rows),
            "cache_write": sum(r.cache_write for r in rows),
            "cache_write_1h": sum(r.cache_write_1h for r in rows),
            "output": sum(r.output for r in rows),
            "rewrites": sum(r.change == "rewrite" for r in rows),
            "appends": sum(r.change == "append" for r in rows),
            "folds": sum(r.folds for r in rows),
            "cost_usd": None if not_comparable else usd_sum(costs),
            "cost_not_comparable": not_comparable,
            "cost_sent_usd": usd_sum(costs) if not_comparable else None,
            "reported_requests": sum(r.reported for r in rows),
            "reported_over_ceiling": sum(r.reported_over_ceiling for r in rows),
            "modelled_fresh": sum(r.modelled_fresh for r in rows),
            "modelled_cache_read": sum(r.modelled_cache_read for r in rows),
            "modelled_cache_write": sum(r.modelled_cache_write for r in rows),
            "modelled_cache_write_1h": sum(r.modelled_cache_write_1h for r in rows),
            "modelled_cost_usd": None if not_comparable else usd_sum([r.modelled_cost_usd for r in rows]),
            # the largest predicted input the fold decided on (None: it never decided, as with no ceiling)
            **(
                {"predicted_peak": max((r.predicted for r in rows if r.predicted is not None), default=None)}
                if self.estimator == "predicted"
                else {}
            ),
        }


def not_comparable_why(refusals: int, requests: int) -> str:
    """Why a strategy's cost is not set beside the others': the requests it refused sent nothing."""
    return (
        f"not comparable: {refusals:,} of {requests:,} requests refused (nothing sent, nothing billed), so the "
        "cost leaves out what the others pay for them"
    )


def cost_text(t: Mapping[str, Any]) -> str:
    """A strategy's cost as every screen shows it: not comparable where it refused requests, n/a where unpriced."""
    if t.get("cost_not_comparable"):
        return f"not comparable ({t['refused']:,} refused)"
    return usd_text(t.get("cost_usd"))


def summarised(run: StrategyRun) -> StrategyRun:
    """The run's totals without its rows: what a forked child sends back when no reader asks for the rows (each
    request's row pickled and read back cost the parent about 0.2 s at 25,000 requests, after the last child ends)."""
    return StrategyRun(run.strategy, estimator=run.estimator, summed=run.totals())


def _summarised(job: Callable[[], StrategyRun]) -> StrategyRun:
    return summarised(job())


def model_vs_reported(t: dict[str, Any]) -> str:
    """One line: the recording as billed against what the cache model gives for the same requests."""
    return (
        f"recorded as billed ({t['reported_requests']:,} of {t['requests']:,} requests reported); model vs reported: "
        f"fresh {t['modelled_fresh']:,} vs {t['fresh']:,}, cache read {t['modelled_cache_read']:,} vs "
        f"{t['cache_read']:,}, cache write {t['modelled_cache_write']:,} vs {t['cache_write']:,}, "
        f"cost {usd_text(t['modelled_cost_usd'])} vs {usd_text(t['cost_usd'])}"
    )


def usd_text(value: float | None) -> str:
    return "n/a" if value is None else f"${value:,.4f}"


def usd_sum(costs: Sequence[float | None]) -> float | None:
    return None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)


def recorded_output(session: Session, k: int, measure: Layouts) -> int:
    request = session.trace[k]
    if request.usage is not None:
        return request.usage.output
    if request.response_id and request.response_id in session.record:
        return round(measure.alone(session.record.get(request.response_id)))
    return 0


def run_strategy(
    session: Session,
    strategy: str,
    measure: Measure | Layouts,
    prices: ModelPrices | None = None,
    rules: CacheRules | None = None,
    report: Report | None = None,
    keep_views: bool = False,
) -> StrategyRun:
    """Drive one strategy through the trace, modelling each request's cache use and cost.

    `report(done, total, label)` is called after each request when given (total: the recorded requests);
    with `keep_views` the run keeps each row's view, so a reader can show what that request carried."""
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {strategy!r}; expected one of {', '.join(STRATEGIES)}")
    measure = measure if isinstance(measure, Layouts) else Layouts(measure)
    rules = rules or cache_rules(measure.measure)[0]
    if prices is None:
        prices = lookup_prices(model_name(measure.measure))
    cache, run = PrefixCache(rules), StrategyRun(strategy, estimator=decides_on(strategy, measure.estimator))
    protected, tail = measure.protected, None
    for i, step in enumerate(STRATEGIES[strategy](session, measure)):
        if step.refused:  # nothing is sent: the cache is untouched and nothing is billed
            run.rows.append(refused_row(strategy, i, step, measure))
            if keep_views:
                run.views.append(step.view)
            if report is not None:
                report(step.request + 1, len(session.trace), strategy)
            continue
        layout = measure.layout(step.view, (), session.trace[step.request].at, step.measure)
        if rules.mode == "marks":
            notes, members = measure.anchors()
            marks = place_marks(
                layout.keys, {}, tail, protected, notes=notes, members=members, tail_at=None if tail is None else measure.position(tail)
            )
            layout = Layout(layout.keys, layout.ends, marks, layout.at)  # dataclasses.replace's result, without its field walk
        tail = layout.keys[-1] if layout.keys else None
        out = cache.step(layout)
        run.rows.append(make_row(session, strategy, i, step, out, measure, prices))
        if keep_views:
            run.views.append(step.view)
        if report is not None:
            report(step.request + 1, len(session.trace), strategy)
    return run


def refused_row(strategy: str, i: int, step: Step, measure: Layouts) -> Row:
    """A request refused before the send: its measured size and floor view, and no tokens or cost."""
    size = measure.estimate(step.view, step.measure)
    ceiling = measure.ceiling
    return Row(
        strategy=strategy,
        step=i,
        request=step.request,
        kind=step.kind,
        messages=len(step.view),
        estimate=size,
        over_ceiling=refused(size, ceiling),
        fresh=0,
        cache_read=0,
        cache_write=0,
        cache_write_5m=0,
        cache_write_1h=0,
        output=0,
        change="refused",
        rewritten=0,
        folds=step.folds,
        folded=step.folded,
        cost_usd=0.0,
        refused=True,
        floor_estimate=step.floor,
        modelled_cost_usd=0.0,
        predicted=step.predicted,
    )


def make_row(session, strategy, i, step: Step, out, measure: Layouts, prices) -> Row:
    if step.output is not None:
        output = round(step.output)
    else:
        output = recorded_output(session, step.request, measure)
    request = session.trace[step.request]
    # A replayed request is sent when the recorded one was, at the prices then in force (core.model.cost.ModelPrices.at).
    modelled = prices.at(request.at).cost(out.fresh, out.read, out.write_5m, out.write_1h, output) if prices else None
    usage = request.usage if step.kind == "request" else None
    ceiling = measure.ceiling
    reported_input = usage.reported_input if usage is not None else None
    fresh, read, write, write_5m, write_1h, cost = out.fresh, out.read, out.write, out.write_5m, out.write_1h, modelled
    billed = strategy == "recorded" and usage is not None
    size = out.tokens
    if strategy == "recorded" and step.kind == "request":
        # The recorded request is the one `requests` and the GUI show: its estimate at the scale it ran at, read
        # from the trace the replay calibrated (Measure.request would measure it all again for the prefix shares,
        # which a replay never shows and which leave every count and scale as they are).
        size = measure.measure.calibrate(prefix=False, predict=False).rows[step.request].estimate
    if billed:
        assert usage is not None
        bill = as_billed(usage, request_prices(measure.measure, request.model, prices), request.at)
        fresh, read, write, write_5m, write_1h, output, cost = (
            bill.fresh,
            bill.cache_read,
            bill.cache_write,
            bill.cache_write_5m,
            bill.cache_write_1h,
            bill.output,
            bill.cost_usd,
        )
    return Row(
        strategy=strategy,
        step=i,
        request=step.request,
        kind=step.kind,
        messages=len(step.view),
        estimate=size,
        over_ceiling=refused(size, ceiling),
        fresh=fresh,
        cache_read=read,
        cache_write=write,
        cache_write_5m=write_5m,
        cache_write_1h=write_1h,
        output=output,
        change=out.change,
        rewritten=out.rewritten,
        folds=step.folds,
        folded=step.folded,
        cost_usd=cost if billed or cost is None else round(cost, 8),
        reported=billed,
        modelled_fresh=out.fresh,
        modelled_cache_read=out.read,
        modelled_cache_write=out.write,
        modelled_cache_write_1h=out.write_1h,
        modelled_cost_usd=None if modelled is None else round(modelled, 8),
        reported_input=reported_input if strategy == "recorded" else None,
        reported_over_ceiling=strategy == "recorded" and reported_input is not None and refused(reported_input, ceiling),
        predicted=step.predicted,
    )


def request_prices(measure: Measure, model: str | None, prices: ModelPrices | None) -> ModelPrices | None:
    """The prices a recorded request was billed at: its own model's (a session may switch models), unless the
    replay names a model; the run's prices when the request names none."""
    return billing_prices(measure.policy.model, model_name(measure), model, prices)


def billing_prices(named: str | None, run_model: str | None, model: str | None, prices: ModelPrices | None) -> ModelPrices | None:
    """request_prices without a Measure: `named` is the model the replay names (it prices every request), `run_model`
    the model the run is priced at (`prices`), `model` the request's own."""
    if named or not pricing.is_model(model) or model == run_model:
        return prices
    return lookup_prices(model) or prices


@dataclass(frozen=True)
class Billed:
    """One recorded request as billed: the file's own figures and their price (None: its model has none)."""

    fresh: int
    cache_read: int
    cache_write: int
    cache_write_5m: int
    cache_write_1h: int
    output: int
    cost_usd: float | None


def as_billed(usage: Usage, billing: ModelPrices | None, at: float | None) -> Billed:
    """The recording as billed: the file's own figures, priced at the request's own model (tiers per request) as in
    force when it was sent (`at`). The recorded replay's rows and the untokenised summary (core.replay.billed) both
    take it from here."""
    billing = billing.at(at) if billing is not None else None
    write_1h = min(usage.cache_write_1h, usage.cache_write)
    write_5m = usage.cache_write - write_1h
    cost = billing.cost(usage.input, usage.cache_read, write_5m, write_1h, usage.output) if billing else None
    return Billed(
        usage.input, usage.cache_read, usage.cache_write, write_5m, write_1h, usage.output, None if cost is None else round(cost, 8)
    )


@dataclass
class ReplayRuns:
    """Every named strategy's run over one session, and what the model, cache and prices were."""

    model: str | None
    priced: bool
    cache_mode: str
    cache_why: str
    settings: dict[str, Any]  # the policy it ran under, and the band's lines
    runs: list[StrategyRun]


# Each strategy's CPU time against the others' on one calibrated measure (bench/bench_replay_scale.py at 10k and 50k
# messages): how core.replay.parallel splits one file's strategies over processes, the heaviest first.
STRATEGY_WEIGHTS = {"adr": 10.0, "compaction": 9.0, "band": 6.5, "none": 3.0, "recorded": 3.0}


# How much lower a strategy child's priority is than the parent's (os.nice): the parent runs the heaviest share, and
# with more processes than cores an equal share of the time would slow it (a 50k Branch's adr, 5.7 s alone, ended
# at 7.1 s beside band and compaction on two cores); so weighted, the scheduler keeps the parent on a core of its own
# and the children share the other, each taking a core once the parent is done. Small enough that other work on the
# machine does not starve them.
CHILD_NICE = 5


def strategy_child() -> None:
    """In a strategy's forked child: let go of the tokenizer's helper (its pipe is the parent's) and step back."""
    tokens.forget_helper()
    try:
        os.nice(CHILD_NICE)
    except OSError:  # not allowed here: the child runs at the parent's priority, only less finely shared
        pass


def replay_runs(
    session: Session,
    strategies: Iterable[str],
    measure: Measure,
    prices: ModelPrices | None = None,
    report: Report | None = None,
    keep_views: bool = False,
    estimator: str = ADR,
    workers: int = 1,
    said: Callable[[str], None] | None = None,
    rows: bool = True,
) -> ReplayRuns:
    """Run every named strategy over one session, sharing one measure; the adr fold decides on `estimator`.

    `report(done, total, label)` counts requests over all strategies, for a progress bar. With `workers` above 1,
    and where a fork is safe (core.replay.parallel.can_fork; never ask for it in the GUI), the strategies run
    in up to that many processes at once after the measure is calibrated, with the same runs as one after another;
    `report` is then called as each strategy's run is in hand, and `said` says a child that failed (its strategies
    then run here). Without `rows` a child's run comes back summarised, its totals without its rows."""
    layouts = Layouts(measure, estimator=estimator)
    rules, why = cache_rules(measure)
    model = model_name(measure)
    if prices is None:
        prices = lookup_prices(model)
    strategies = list(strategies)
    per = len(session.trace)
    total = per * len(strategies)
    # A process a strategy, one more than the workers at most: on two cores three strategies of about equal weight
    # then share the time, all done at 1.5 times one strategy's time, where two processes leave one running two
    # strategies, done at twice. The children run at a lower priority (strategy_child), so the parent's share, the
    # heaviest, keeps a core to itself and is never slowed by them (docs/performance.md, issue 17's fifteenth session).
    processes = min(workers + 1, len(strategies)) if workers > 1 else 1
    # Views are the parent's messages: a child's would come back as copies, so a run that keeps them stays here.
    if processes > 1 and not keep_views and parallel.can_fork():
        jobs = [partial(run_strategy, session, name, layouts, prices, rules) for name in strategies]
        if not rows:  # the rows stay where they were made: only the totals cross the pipe
            jobs = [partial(_summarised, job) for job in jobs]
        groups = parallel.split([STRATEGY_WEIGHTS.get(name, 1.0) for name in strategies], processes)
        finished: list[int] = []

        def done(i: int) -> None:
            finished.append(i)
            if report is not None:
                report(len(finished) * per, total, strategies[i])

        runs = parallel.run_forked(jobs, groups, said=said, done=done, names=strategies, in_child=strategy_child)
        return ReplayRuns(model, prices is not None, rules.mode, why, settings_of(measure, estimator), runs)
    runs = []
    for n, name in enumerate(strategies):
        step = None if report is None else (lambda d, t, label, n=n: report(n * per + d, total, label))
        runs.append(run_strategy(session, name, layouts, prices, rules, step, keep_views))
    return ReplayRuns(model, prices is not None, rules.mode, why, settings_of(measure, estimator), runs)


def settings_of(measure: Measure, estimator: str = ADR) -> dict[str, Any]:
    """What a replay ran under, as its output names it: the policy resolved, the band's lines, and what the
    adr fold decides on."""
    p = measure.policy
    return {
        "ceiling": measure.ceiling,
        "fold_at": p.fold_at,
        "target": p.fold_target,
        "result_max": p.tool_result_max_chars,
        "caching": p.caching,
        "band_max": BAND_MAX,
        "band_min": BAND_MIN,
        "model": p.model,
        "estimator": estimator,
    }


def replay(
    session: Session,
    strategies: Iterable[str],
    measure: Measure,
    prices: ModelPrices | None = None,
    report: Report | None = None,
    estimator: str = ADR,
    workers: int = 1,
    said: Callable[[str], None] | None = None,
    rows: bool = True,
) -> dict[str, Any]:
    """Every named strategy over one session: totals side by side, and the rows, as plain data (`workers`, `said`:
    as replay_runs; without `rows` the rows are an empty list, for a caller that shows the totals alone)."""
    out = replay_runs(session, strategies, measure, prices, report, estimator=estimator, workers=workers, said=said, rows=rows)
    found = pricing.resolve(out.model)
    return {
        "model": out.model,
        "priced": out.priced,
        "price_source": found.source if out.priced else None,
        "price_reason": None if out.priced else found.reason,
        "cache": {"mode": out.cache_mode, "why": out.cache_why},
        "settings": out.settings,
        "totals": [r.totals() for r in out.runs],
        "rows": [row.as_dict() for r in out.runs for row in r.rows] if rows else [],
        "warnings": [w for w in (measure.impossible_ceiling(),) if w],
    }

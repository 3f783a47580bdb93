"""The replay lab: a session's trace under several strategies, with the cache model and cost per request."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

from core.cache_model import CacheRules, Layout, Mark, PrefixCache
from core.cost import ModelPrices, lookup_prices
from core.count import Counter, Measurement, estimate
from core.first_round import included_ids
from core.marks import replay_marks
from core.model import Message, Session
from core.strategies import STRATEGIES, Settings, Step
from core.tokens import count_text
from core.trace import session_tools, stored_scale

MESSAGE_OVERHEAD = 8  # the JSON framing a text block costs beyond its text
LOOKBACK = 20  # blocks a provider looks back from a mark for a hit (ADR-0127)
OPENAI_PREFIXES = ("gpt-", "o1", "o3", "o4", "codex", "chatgpt")

# A progress callback (done, total, label); the GUI worker's Progress.report fits and may raise to cancel.
Report = Callable[[int, int, str], None]


class Measure:
    """The exact o200k count of each compiled request (core.count), cut into one block per message.

    A block's key is its message id (the tools and system head is one block keyed by the system ids),
    its tokens are the message's part of the count; every figure is counted times the scale.
    """

    def __init__(self, session: Session, scale: float = 1.0, policy: Any = None, counter: Counter | None = None):
        self.record = session.record
        self.scale = scale
        self.policy = policy
        self.counter = counter or Counter()
        self.tools = session_tools(session)
        self._last: tuple[tuple[str, ...], Measurement] | None = None
        self._alone: dict[str, float] = {}

    def measurement(self, view: Sequence[Message]) -> Measurement:
        ids = tuple(m.id for m in view)
        if self._last is None or self._last[0] != ids:
            self._last = (ids, self.counter.measure(view, record=self.record, policy=self.policy, tools=self.tools))
        return self._last[1]

    def blocks(self, view: Sequence[Message]) -> list[tuple[Any, int]]:
        """(key, counted tokens) per block of the compiled request, in order."""
        out = []
        for part in self.measurement(view).parts:
            if part.kind == "system" and (part.message is None or part.message.kind == "system"):
                key: Any = ("head", tuple(m.id for m in view if m.kind == "system"))
            else:
                key = part.message.id
            out.append((key, part.tokens))
        return out

    def estimate(self, view: Sequence[Message]) -> int:
        return estimate(self.measurement(view).counted, self.scale) if view else 0

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

    def layout(self, view: Sequence[Message], marks: tuple[Mark, ...], at: float | None) -> Layout:
        keys, ends, total = [], [], 0
        for key, tokens in self.blocks(view):
            total += tokens
            keys.append(key)
            ends.append(estimate(total, self.scale))
        return Layout(tuple(keys), tuple(ends), marks, at)


def place_marks(
    keys: Sequence[Any], kinds: Mapping[str, str], previous_tail: Any, protected: frozenset[str]
) -> tuple[Mark, ...]:
    """ADR-0127's marks on a request's blocks, as core.marks decides them for every request (one place)."""
    return tuple(Mark(m.block, m.lifetime) for m in replay_marks(keys, kinds, previous_tail, protected, LOOKBACK))


def policy_for(settings: Settings) -> Any:
    """The policy compile renders under (its result bound), once core.policy gives one."""
    if settings.result_max is None:
        return None
    try:
        from core.policy import Policy
    except ImportError:
        return None
    return Policy(max_input_tokens=settings.ceiling, tool_result_max_chars=settings.result_max)


def model_name(settings: Settings, session: Session) -> str | None:
    name = settings.model or session.model or next((r.model for r in session.trace if r.model), None)
    return name.rsplit("/", 1)[-1] if name else None


def shows_caching(session: Session) -> bool:
    return any(r.usage and (r.usage.cache_read or r.usage.cache_write) for r in session.trace)


def cache_rules(settings: Settings, session: Session) -> tuple[CacheRules, str]:
    """Which cache the replay models, and why."""
    model = model_name(settings, session) or ""
    if model.lower().startswith(OPENAI_PREFIXES):
        return CacheRules.openai(), f"{model} caches automatically"
    if settings.caching:
        return CacheRules.anthropic(), "caching on: marks placed as ADR-0127 says"
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


@dataclass
class StrategyRun:
    strategy: str
    rows: list[Row] = field(default_factory=list)
    views: list[tuple[Message, ...]] = field(default_factory=list)  # per row, when asked to keep them

    def totals(self) -> dict[str, Any]:
        rows = self.rows
        costs = [r.cost_usd for r in rows]
        return {
            "strategy": self.strategy,
            "requests": len(rows),
            "peak": max((r.estimate for r in rows), default=0),
            "over_ceiling": sum(r.over_ceiling for r in rows),
            "fresh": sum(r.fresh for r in rows),
            "cache_read": sum(r.cache_read for r in rows),
            "cache_write": sum(r.cache_write for r in rows),
            "cache_write_1h": sum(r.cache_write_1h for r in rows),
            "output": sum(r.output for r in rows),
            "rewrites": sum(r.change == "rewrite" for r in rows),
            "appends": sum(r.change == "append" for r in rows),
            "folds": sum(r.folds for r in rows),
            "cost_usd": None if any(c is None for c in costs) else round(sum(costs), 6),
        }


def recorded_output(session: Session, k: int, measure: Measure) -> int:
    request = session.trace[k]
    if request.usage is not None:
        return request.usage.output
    if request.response_id and request.response_id in session.record:
        return round(measure.alone(session.record.get(request.response_id)))
    return 0


def run_strategy(
    session: Session,
    strategy: str,
    settings: Settings,
    measure: Measure | None = None,
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
    measure = measure or Measure(session, stored_scale(session), policy_for(settings))
    rules = rules or cache_rules(settings, session)[0]
    if prices is None:
        prices = lookup_prices(model_name(settings, session))
    cache, run = PrefixCache(rules), StrategyRun(strategy)
    protected, tail = included_ids(session), None
    for i, step in enumerate(STRATEGIES[strategy](session, settings, measure)):
        layout = measure.layout(step.view, (), session.trace[step.request].at)
        if rules.mode == "marks":
            kinds = {m.id: m.kind for m in step.view}
            layout = replace(layout, marks=place_marks(layout.keys, kinds, tail, protected))
        tail = layout.keys[-1] if layout.keys else None
        out = cache.step(layout)
        run.rows.append(make_row(session, strategy, i, step, out, settings, measure, prices))
        if keep_views:
            run.views.append(step.view)
        if report is not None:
            report(step.request + 1, len(session.trace), strategy)
    return run


def make_row(session, strategy, i, step: Step, out, settings, measure, prices) -> Row:
    if step.output is not None:
        output = round(step.output)
    else:
        output = recorded_output(session, step.request, measure)
    cost = prices.cost(out.fresh, out.read, out.write_5m, out.write_1h, output) if prices else None
    return Row(
        strategy=strategy, step=i, request=step.request, kind=step.kind, messages=len(step.view),
        estimate=out.tokens, over_ceiling=bool(settings.ceiling and out.tokens >= settings.ceiling),
        fresh=out.fresh, cache_read=out.read, cache_write=out.write, cache_write_5m=out.write_5m,
        cache_write_1h=out.write_1h, output=output, change=out.change, rewritten=out.rewritten,
        folds=step.folds, folded=step.folded, cost_usd=None if cost is None else round(cost, 8),
    )


@dataclass
class ReplayRuns:
    """Every named strategy's run over one session, and what the model, cache and prices were."""

    model: str | None
    priced: bool
    cache_mode: str
    cache_why: str
    settings: Settings
    runs: list[StrategyRun]


def replay_runs(
    session: Session, strategies: Iterable[str], settings: Settings, prices: ModelPrices | None = None,
    report: Report | None = None, keep_views: bool = False,
) -> ReplayRuns:
    """Run every named strategy over one session, sharing one measure.

    `report(done, total, label)` counts requests over all strategies, for a progress bar."""
    measure = Measure(session, stored_scale(session), policy_for(settings))
    rules, why = cache_rules(settings, session)
    model = model_name(settings, session)
    if prices is None:
        prices = lookup_prices(model)
    strategies = list(strategies)
    per = len(session.trace)
    runs = []
    for n, name in enumerate(strategies):
        step = None if report is None else (lambda d, t, label, n=n: report(n * per + d, per * len(strategies), label))
        runs.append(run_strategy(session, name, settings, measure, prices, rules, step, keep_views))
    return ReplayRuns(model, prices is not None, rules.mode, why, settings, runs)


def replay(
    session: Session, strategies: Iterable[str], settings: Settings, prices: ModelPrices | None = None,
    report: Report | None = None,
) -> dict[str, Any]:
    """Every named strategy over one session: totals side by side, and the rows, as plain data."""
    out = replay_runs(session, strategies, settings, prices, report)
    return {
        "model": out.model,
        "priced": out.priced,
        "cache": {"mode": out.cache_mode, "why": out.cache_why},
        "settings": asdict(settings),
        "totals": [r.totals() for r in out.runs],
        "rows": [asdict(row) for r in out.runs for row in r.rows],
    }

"""A strategy's run and its rows: each modelled request's tokens, cache use and cost, the recorded ones as billed, and the totals."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from foldscope.core.model import pricing
from foldscope.core.model.cost import ModelPrices
from foldscope.core.model.money_text import usd_text
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.model.session import Message, Session, Usage
from foldscope.core.replay.layouts import Layouts, model_name
from foldscope.core.replay.strategies import Step
from foldscope.core.request.measure import Measure, refused

if TYPE_CHECKING:
    import msgspec
else:
    from foldscope.core.model.canonical import msgspec  # imported its way (core.model.canonical._msgspec)


class Row(msgspec.Struct, frozen=True, gc=False):
    """One modelled request under one strategy: a msgspec Struct, frozen as a frozen dataclass and made in C (one a
    request a strategy: 28 fields set one descriptor at a time cost a frozen dataclass about 10 us)."""

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

    reported_input: int | None = None  # what the provider counted for the recorded request, where it reported usage
    # the provider's own count was at or past the ceiling; None where the provider counted nothing (every modelled
    # strategy's request): no figure, never a False or 0 that reads as measured
    reported_over_ceiling: bool | None = None
    predicted: int | None = None  # where the fold decided on the predicted input (--estimator predicted): its size

    def as_dict(self) -> dict[str, Any]:
        """The row as plain data: each field by name, in their order (msgspec.structs.asdict's, a field at a time)."""
        return {name: getattr(self, name) for name in ROW_FIELDS}


ROW_FIELDS: tuple[str, ...] = Row.__struct_fields__


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
        # The recording's bill is what the provider reported: a request that reported no usage (a failed one, as Cline
        # records it) is in the modelled figures, never in the bill, as `usage` and `cache` leave it out of theirs.
        billed = [r for r in rows if r.reported] if self.strategy == "recorded" and any(r.reported for r in rows) else rows
        unbilled = [r for r in rows if not r.reported] if billed is not rows else []
        costs = [r.cost_usd for r in billed]
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
            "fresh": sum(r.fresh for r in billed),
            "cache_read": sum(r.cache_read for r in billed),
            "cache_write": sum(r.cache_write for r in billed),
            "cache_write_1h": sum(r.cache_write_1h for r in billed),
            "output": sum(r.output for r in billed),
            "rewrites": sum(r.change == "rewrite" for r in rows),
            "appends": sum(r.change == "append" for r in rows),
            "folds": sum(r.folds for r in rows),
            "cost_usd": None if not_comparable else usd_sum(costs),
            "cost_not_comparable": not_comparable,
            "cost_sent_usd": usd_sum(costs) if not_comparable else None,
            "reported_requests": sum(r.reported for r in rows),
            # None (shown "-") for a strategy the provider counted none of: its 0 would read as measured
            "reported_over_ceiling": (
                sum(bool(r.reported_over_ceiling) for r in rows) if any(r.reported_over_ceiling is not None for r in rows) else None
            ),
            "modelled_fresh": sum(r.modelled_fresh for r in rows),
            "modelled_cache_read": sum(r.modelled_cache_read for r in rows),
            "modelled_cache_write": sum(r.modelled_cache_write for r in rows),
            "modelled_cache_write_1h": sum(r.modelled_cache_write_1h for r in rows),
            "modelled_cost_usd": None if not_comparable else usd_sum([r.modelled_cost_usd for r in rows]),
            # the requests left out of the bill: how many, their modelled cost, and every request's output for the
            # modelled recording, which holds them
            **(
                {
                    "unreported_requests": len(unbilled),
                    "unreported_modelled_usd": usd_sum([r.modelled_cost_usd for r in unbilled]),
                    # and their modelled tokens, so the model is set against the bill on the same requests
                    "unreported_modelled_fresh": sum(r.modelled_fresh for r in unbilled),
                    "unreported_modelled_cache_read": sum(r.modelled_cache_read for r in unbilled),
                    "unreported_modelled_cache_write": sum(r.modelled_cache_write for r in unbilled),
                    "modelled_output": sum(r.output for r in rows),
                }
                if unbilled
                else {}
            ),
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


def model_vs_reported(t: dict[str, Any]) -> str:
    """One line: the recording as billed against what the cache model gives for the same requests (the ones that
    reported usage: a request left out of the bill is left out of the model's side too)."""

    def model(part: str) -> Any:
        value = t[f"modelled_{part}"]
        left_out = t.get("unreported_modelled_usd" if part == "cost_usd" else f"unreported_modelled_{part}")
        if left_out is None or value is None:
            return value
        return round(value - left_out, 6) if part == "cost_usd" else value - left_out

    return (
        f"recorded as billed ({t['reported_requests']:,} of {t['requests']:,} requests reported"
        + (
            f"; the {t['unreported_requests']:,} that reported no usage left out of the bill and of this line, "
            f"{usd_text(t['unreported_modelled_usd'])} modelled"
            if t.get("unreported_requests")
            else ""
        )
        + "); model vs reported: "
        f"fresh {model('fresh'):,} vs {t['fresh']:,}, cache read {model('cache_read'):,} vs "
        f"{t['cache_read']:,}, cache write {model('cache_write'):,} vs {t['cache_write']:,}, "
        f"cost {usd_text(model('cost_usd'))} vs {usd_text(t['cost_usd'])}"
    )


def usd_sum(costs: Sequence[float | None]) -> float | None:
    return None if any(c is None for c in costs) else round(sum(c for c in costs if c is not None), 6)


def recorded_output(session: Session, k: int, measure: Layouts) -> int:
    request = session.trace[k]
    if request.usage is not None:
        return request.usage.output
    if request.response_id and request.response_id in session.record:
        return round(measure.alone(session.record.get(request.response_id)))
    return 0


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


def make_row(session, strategy, i, step: Step, out, measure: Layouts, prices, ceiling: int | None) -> Row:
    """One sent request's row (`ceiling`: the measure's, read once a run by the caller, not through its properties a
    request)."""
    request = session.trace[step.request]
    output = round(step.output) if step.output is not None else recorded_output(session, step.request, measure)
    # The outcome's figures read once each (write and fresh are its properties: the rule lives there)
    m_read, m_write_5m, m_write_1h, m_write, m_fresh = out.read, out.write_5m, out.write_1h, out.write, out.fresh
    # A replayed request is sent when the recorded one was, at the prices then in force (core.model.cost.ModelPrices.at).
    modelled = prices.at(request.at).cost(m_fresh, m_read, m_write_5m, m_write_1h, output) if prices else None
    usage = request.usage if step.kind == "request" else None
    recorded = strategy == "recorded"
    reported_input = usage.reported_input if recorded and usage is not None else None  # read only where it is shown
    fresh, read, write, write_5m, write_1h, cost = m_fresh, m_read, m_write, m_write_5m, m_write_1h, modelled
    billed = recorded and usage is not None
    # The modelled cost to 8 places, once: unbilled, the row's cost is the same figure (round writes it out in decimal).
    rounded = None if modelled is None else round(modelled, 8)
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
        cost_usd=cost if billed or cost is None else rounded,
        reported=billed,
        modelled_fresh=m_fresh,
        modelled_cache_read=m_read,
        modelled_cache_write=m_write,
        modelled_cache_write_1h=m_write_1h,
        modelled_cost_usd=rounded,
        reported_input=reported_input,
        reported_over_ceiling=refused(reported_input, ceiling) if reported_input is not None else None,
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

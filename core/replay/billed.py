"""The recording as billed, without tokenising: a session's reported usage summed and priced per request.

`foldscope replay DIR --strategy recorded` (and any summary of many sessions' usage and cost) needs only what the
files report: each request's fresh input, cache read, cache write (5-minute and 1-hour) and output, priced at the
request's own model with tiers per request, exactly as the recorded replay's rows bill them (core.replay.rows
as_billed). Nothing is compiled or counted, so the figures that rest on a count (the estimate's `peak` and
`over_ceiling`, the cache model's `modelled_*`, rewrites and appends) are None here: `--count` asks for them. A
session with a request that reported no usage is not summarised here: its recorded figures come from the cache
model, which counts (the caller replays it whole).
"""

from __future__ import annotations

from typing import Any

from foldscope.core.model import pricing
from foldscope.core.model.policy import Policy, Resolution, resolve_ceiling
from foldscope.core.model.pricing import lookup_prices
from foldscope.core.model.session import Session
from foldscope.core.replay.rows import as_billed, billing_prices, usd_sum, usd_text
from foldscope.core.request.measure import refused

# The totals a count would give: absent from an untokenised summary (None), present with --count.
COUNT_TOTALS = (
    "peak",
    "over_ceiling",
    "rewrites",
    "appends",
    "modelled_fresh",
    "modelled_cache_read",
    "modelled_cache_write",
    "modelled_cache_write_1h",
    "modelled_cost_usd",
)


def run_model(session: Session, policy: Policy) -> str | None:
    """The model the run is priced and resolved at, as the Measure names it, without its provider prefix."""
    name = policy.model or session.model or next((r.model for r in session.trace if r.model), None)
    return name.rsplit("/", 1)[-1] if name else None


def named_model_line(session: Session, policy: Policy) -> str | None:
    """One line when the policy names a model whose prices are not the file's: every column, the recording's too, is
    then priced at the named model, so `recorded, as billed` is not what was billed; the line gives both. None when no
    model is named or its prices give the same bill."""
    if not policy.model:
        return None
    named = lookup_prices(run_model(session, policy))
    own, at_named, models = [], [], set()
    for request in session.trace:
        if request.usage is None:
            continue
        model = request.model or session.model
        models.add(model or "unknown")
        own.append(as_billed(request.usage, lookup_prices(model) if pricing.is_model(model) else None, request.at).cost_usd)
        at_named.append(as_billed(request.usage, named, request.at).cost_usd)
    bill, priced = usd_sum(own), usd_sum(at_named)
    if not own or bill == priced:
        return None
    return (
        f"priced at {policy.model} (the policy's model), not at the file's {', '.join(sorted(models))}: recorded, as billed is "
        f"the reported usage at those prices ({usd_text(priced)}), not the bill ({usd_text(bill)} at the file's own models)"
    )


def fully_reported(session: Session) -> bool:
    return bool(session.trace) and all(r.usage is not None for r in session.trace)


def billed_summary(
    session: Session, policy: Policy, per_call: int | str | None = None, resolution: Resolution | None = None
) -> dict[str, Any] | None:
    """The recorded strategy's totals from the reported usage alone, keyed as core.replay.rows' StrategyRun.totals;
    None when a request reported no usage (its figures need the cache model)."""
    if not fully_reported(session):
        return None
    full = policy.model or session.model or next((r.model for r in session.trace if r.model), None)
    resolution = resolution or resolve_ceiling(policy, full, per_call)
    model = run_model(session, policy)
    prices = lookup_prices(model)
    ceiling = resolution.ceiling
    bills = []
    over = 0
    for request in session.trace:
        usage = request.usage
        assert usage is not None  # fully_reported
        bills.append(as_billed(usage, billing_prices(policy.model, model, request.model, prices), request.at))
        over += refused(usage.reported_input, ceiling)
    totals: dict[str, Any] = {
        "strategy": "recorded",
        "estimator": None,
        "requests": len(bills),
        "refused": 0,
        "fresh": sum(b.fresh for b in bills),
        "cache_read": sum(b.cache_read for b in bills),
        "cache_write": sum(b.cache_write for b in bills),
        "cache_write_1h": sum(b.cache_write_1h for b in bills),
        "output": sum(b.output for b in bills),
        "folds": 0,
        "cost_usd": usd_sum([b.cost_usd for b in bills]),
        "cost_not_comparable": None,
        "cost_sent_usd": None,  # the recording refuses nothing
        "reported_requests": len(bills),
        "reported_over_ceiling": over,
        "peak_reported_input": max(r.usage.reported_input for r in session.trace if r.usage is not None),
        "counted": False,
        **dict.fromkeys(COUNT_TOTALS),
    }
    found = pricing.resolve(model)
    return {
        "model": model,
        "priced": prices is not None,
        "price_source": found.source if prices else None,
        "price_reason": None if prices else found.reason,
        "ceiling": {"tokens": ceiling, "source": resolution.source, "why": resolution.why},
        "totals": [totals],
        "warnings": [w for w in (named_model_line(session, policy),) if w],
    }

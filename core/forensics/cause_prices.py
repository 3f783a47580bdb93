"""The price of each cause: a request's bill split into fresh input, cache read, output and each write cause.

Every part is priced at the request's model and tier (core.model.cost), so the parts of a request add up
to its bill. `waste` is what a write of text that could have been read cost beyond reading it: the causes
`rewrite`, `expired`, `provider` and `unexplained` only. A `first` or `append` write is the expected cost of
growing (the text was never cached): it wastes nothing, so it has no waste figure, on any screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from foldscope.core.forensics.causes import RequestCauses
from foldscope.core.model.cost import PER_TOKEN, ModelPrices
from foldscope.core.model.pricing import lookup_prices

# The parts a bill is made of, in the order the CLI and the Cost panel list them.
PARTS = ("fresh", "cache_read", "first", "append", "rewrite", "expired", "provider", "unexplained", "output")
READ_INSTEAD = frozenset({"rewrite", "expired", "provider", "unexplained"})


@dataclass(frozen=True)
class UnitPrices:
    """USD per token for one request's tier (the multiplier applied)."""

    input: float
    read: float
    write_5m: float
    write_1h: float
    output: float


def unit_prices(prices: ModelPrices, prompt: int) -> UnitPrices:
    """Per-token prices of the tier a request of `prompt` input tokens is billed at, as ModelPrices.cost reads them."""
    t = prices.tier_for(prompt)
    r = prices.multiplier / PER_TOKEN
    read = t.input if t.cache_read is None else t.cache_read
    w5 = t.input if t.cache_write_5m is None else t.cache_write_5m
    w1 = w5 if t.cache_write_1h is None else t.cache_write_1h
    return UnitPrices(t.input * r, read * r, w5 * r, w1 * r, t.output * r)


class Pricer:
    """Prices per model name, looked up once each."""

    def __init__(self, fallback: str | None = None) -> None:
        self.fallback = fallback
        self._found: dict[str | None, ModelPrices | None] = {}

    def __call__(self, model: str | None, at: float | None = None) -> ModelPrices | None:
        """The model's prices as in force at `at` (a request's time; None: core.model.pricing.priced_at's)."""
        name = model or self.fallback
        if name not in self._found:
            self._found[name] = lookup_prices(name.rsplit("/", 1)[-1] if name else None)
        found = self._found[name]
        return found.at(at) if found is not None else None


@dataclass(frozen=True)
class Priced:
    """One request's bill by part (None when its model has no price), and the waste of each wasting write cause."""

    cost_usd: dict[str, float] | None
    waste_usd: dict[str, float] | None
    bill_usd: float | None


def price(row: RequestCauses, prices: ModelPrices | None) -> Priced:
    u = row.usage
    if u is None or prices is None:
        return Priced(None, None, None)
    p = unit_prices(prices, u.reported_input)
    cost = {"fresh": u.input * p.input, "cache_read": u.cache_read * p.read}
    waste: dict[str, float] = {}
    for span in row.spans:
        hour = row.one_hour_tokens(span)
        written = hour * p.write_1h + (span.tokens - hour) * p.write_5m
        cost[span.cause] = cost.get(span.cause, 0.0) + written
        if span.cause in READ_INSTEAD:
            waste[span.cause] = waste.get(span.cause, 0.0) + max(0.0, written - span.tokens * p.read)
    cost["output"] = u.output * p.output
    bill = prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
    return Priced(cost, waste, bill)

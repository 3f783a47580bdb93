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


class Priced:
    """One request's bill by part (None when its model has no price), and the waste of each wasting write cause.

    The parts are worked out from the request's causes each time they are asked for, not kept: a session's cache
    report holds one of these a request for the window's whole life (two dicts and ten floats a request were 4.5 MiB
    of the window's memory at 50,000 messages), and reads each request's parts only to add them up or show them."""

    __slots__ = ("_row", "_prices", "bill_usd")

    def __init__(self, row: RequestCauses | None, prices: ModelPrices | None, bill_usd: float | None) -> None:
        self._row, self._prices, self.bill_usd = row, prices, bill_usd

    @property
    def cost_usd(self) -> dict[str, float] | None:
        parts = self.parts()
        return None if parts is None else parts[0]

    @property
    def waste_usd(self) -> dict[str, float] | None:
        parts = self.parts()
        return None if parts is None else parts[1]

    @property
    def has_parts(self) -> bool:
        """Whether parts() gives any (it gives None exactly when this is False), asked without working them out."""
        row = self._row
        return row is not None and self._prices is not None and row.usage is not None

    def parts(self) -> tuple[dict[str, float], dict[str, float]] | None:
        """(cost_usd, waste_usd) worked out at once (None when unpriced): what reads both asks for this."""
        row, prices = self._row, self._prices
        if row is None or prices is None or row.usage is None:
            return None
        u = row.usage
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
        return cost, waste

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Priced):
            return NotImplemented
        return (self.cost_usd, self.waste_usd, self.bill_usd) == (other.cost_usd, other.waste_usd, other.bill_usd)

    def __hash__(self) -> int:
        return hash(self.bill_usd)

    def __repr__(self) -> str:
        return f"Priced(cost_usd={self.cost_usd!r}, waste_usd={self.waste_usd!r}, bill_usd={self.bill_usd!r})"


def price(row: RequestCauses, prices: ModelPrices | None) -> Priced:
    u = row.usage
    if u is None or prices is None:
        return Priced(None, None, None)
    bill = prices.cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)
    return Priced(row, prices, bill)

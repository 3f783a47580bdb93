"""Cost of a request from a tiered price table: fresh input, cache reads, writes per lifetime, output."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

PER_TOKEN = 1_000_000  # prices are USD per million tokens
# How long a cache mark keeps its prefix after the request that last read or wrote it, by the write it was priced as.
LIFETIME_SECONDS = {"5m": 300.0, "1h": 3600.0}


@dataclass(frozen=True)
class Tier:
    """Prices that apply to a whole request whose prompt (fresh + read + write) exceeds `above` tokens."""

    above: int
    input: float
    output: float
    cache_read: float | None = None  # None: the provider has no cache read price; reads cost input
    cache_write_5m: float | None = None  # None: writes cost input (automatic caching has no write price)
    cache_write_1h: float | None = None


@dataclass(frozen=True)
class ModelPrices:
    """One model's tiers, lowest boundary first, and a multiplier (a region's surcharge, say)."""

    model: str
    tiers: tuple[Tier, ...]
    multiplier: float = 1.0
    # For prices that change with the time a request is sent (a provider's peak and off-peak hours, a new price from
    # a date): those in force at a moment (seconds since the epoch), or None when none are listed then; set by
    # core.model.pricing for genai-prices' timed models. None for prices that never change (the project's table, the
    # user's overrides).
    timed: Callable[[float], ModelPrices | None] | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not self.tiers:
            raise ValueError(f"{self.model}: a price table needs at least one tier")
        bounds = [t.above for t in self.tiers]
        if bounds[0] != 0 or bounds != sorted(set(bounds)):
            raise ValueError(f"{self.model}: tier boundaries must start at 0 and rise: {bounds}")

    def at(self, when: float | None) -> ModelPrices:
        """The prices in force for a request sent at `when` (seconds since the epoch): these, when they never
        change or the time is not known (core.model.pricing.priced_at says which day's those are)."""
        if self.timed is None or when is None:
            return self
        return self.timed(when) or self

    def tier_for(self, prompt: int) -> Tier:
        """The tier a request of `prompt` input tokens is priced at: past a boundary, the whole request."""
        chosen = self.tiers[0]
        for tier in self.tiers:
            if prompt > tier.above:
                chosen = tier
        return chosen

    def cost(self, fresh: int, read: int = 0, write_5m: int = 0, write_1h: int = 0, output: int = 0) -> float:
        """USD for one request."""
        t = self.tier_for(fresh + read + write_5m + write_1h)
        read_price = t.input if t.cache_read is None else t.cache_read
        w5 = t.input if t.cache_write_5m is None else t.cache_write_5m
        w1 = w5 if t.cache_write_1h is None else t.cache_write_1h
        usd = fresh * t.input + read * read_price + write_5m * w5 + write_1h * w1 + output * t.output
        return usd * self.multiplier / PER_TOKEN


def prices_from_mapping(model: str, entry: Mapping[str, Any], multiplier: float = 1.0) -> ModelPrices:
    """Build prices from a table entry: {"tiers": [{"above": 0, "input": .., "output": .., "cache_read": ..,
    "cache_write_5m": .., "cache_write_1h": ..}, ...]} or one flat tier with those keys at the top."""
    raw_tiers = entry.get("tiers") or [entry]
    tiers = []
    for raw in raw_tiers:
        tiers.append(
            Tier(
                above=int(raw.get("above", raw.get("above_tokens", 0)) or 0),
                input=float(raw["input"]),
                output=float(raw["output"]),
                cache_read=_opt(raw, "cache_read"),
                cache_write_5m=_opt(raw, "cache_write_5m", "cache_write"),
                cache_write_1h=_opt(raw, "cache_write_1h"),
            )
        )
    return ModelPrices(model, tuple(sorted(tiers, key=lambda t: t.above)), multiplier)


def _opt(raw: Mapping[str, Any], *names: str) -> float | None:
    for name in names:
        if raw.get(name) is not None:
            return float(raw[name])
    return None

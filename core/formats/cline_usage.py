"""Cline's recorded usage read as its provider billed it (core.formats.cline)."""

from __future__ import annotations

from typing import Any

from foldscope.core.model import pricing
from foldscope.core.model.session import Usage

# How near the cost Cline recorded a reading of a request's usage must price to be taken as what was billed.
BILLED_WITHIN = 0.01


def as_billed(usage: Usage, cost: Any, model: str | None, at: float | None) -> Usage:
    """The usage as the provider billed it. Cline's own provider passes Anthropic's cache writes on as tokensIn with
    cacheWrites 0 (a real task: 50,868 tokensIn and $0.1999575, Sonnet 4.5's cache-write price to the cent fraction,
    where fresh input prices $0.16): so where the cost Cline recorded is priced, within BILLED_WITHIN, by reading
    tokensIn as cache writes and not by reading it as fresh input, that is the reading taken."""
    if usage.cache_write or not usage.input or type(cost) not in (int, float) or not cost > 0:
        return usage
    prices = pricing.resolve(model).prices
    if prices is None:
        return usage
    priced = prices.at(at)
    as_input = priced.cost(usage.input, usage.cache_read, 0, 0, usage.output)
    as_write = priced.cost(0, usage.cache_read, usage.input, 0, usage.output)
    if abs(as_write - cost) <= BILLED_WITHIN * cost and abs(as_write - cost) < abs(as_input - cost):
        return Usage(cache_read=usage.cache_read, cache_write=usage.input, output=usage.output)
    return usage

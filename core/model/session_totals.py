"""A session's reported usage and cost, rolled up with its subagents', and shown apart: main, subagents, compaction summariser."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from foldscope.core.model import pricing
from foldscope.core.model.session import Request, Session

PARTS = ("main", "subagents", "summariser")
PART_LABELS = {"main": "main", "subagents": "subagents", "summariser": "compaction summariser", "total": "total"}


@dataclass(frozen=True)
class Totals:
    """Requests and what the provider reported for them; cost None when a request's model has no price."""

    requests: int = 0
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    cost_usd: float | None = 0.0

    def __add__(self, other: Totals) -> Totals:
        cost = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd
        return Totals(
            self.requests + other.requests,
            self.input + other.input,
            self.cache_read + other.cache_read,
            self.cache_write + other.cache_write,
            self.output + other.output,
            cost,
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "input": self.input,
            "cache_read": self.cache_read,
            "cache_write": self.cache_write,
            "output": self.output,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
        }


def totals_of(requests: Iterable[Request], model: str | None) -> Totals:
    """Reported usage summed as the provider counted it (a read is a read, a write a write), and priced."""
    out = Totals()
    for r in requests:
        u = r.usage
        if u is not None:
            out += Totals(1, u.input, u.cache_read, u.cache_write, u.output, request_cost(r, model))
        else:
            out += Totals(1)
    return out


def request_cost(r: Request, model: str | None) -> float | None:
    """A request's reported usage priced at its own model (else `model`) as in force when it was sent; 0 with no
    usage, None when the model has no price."""
    u = r.usage
    if u is None:
        return 0.0
    prices = pricing.resolve(r.model or model).prices
    if prices is None:
        return None
    return prices.at(r.at).cost(u.input, u.cache_read, u.cache_write - u.cache_write_1h, u.cache_write_1h, u.output)


def child_part(child: Session) -> str:
    return "summariser" if child.extras.get("child_kind") == "summariser" else "subagents"


def rolled_up(session: Session) -> dict[str, Totals]:
    """The parent's own requests, its subagents', its compaction summariser's, and all of them together."""
    parts = {"main": totals_of(session.trace, session.model), "subagents": Totals(), "summariser": Totals()}
    for child in session.children:
        parts[child_part(child)] += totals_of(child.trace, child.model or session.model)
    parts["total"] = parts["main"] + parts["subagents"] + parts["summariser"]
    return parts

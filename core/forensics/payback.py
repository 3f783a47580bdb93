"""Payback: after how many requests a fold or compaction had saved more than it cost, modelled against modelled.

A compaction costs its summariser and the rewrite of the cached prefix (the first request after it writes
what it would have read); it saves on every later request, which carries less. Both sides are modelled by
one rule, never a model against the bill: each request reads the request before it from the cache while
that is within the mark's lifetime and writes the rest (an ideal prefix cache), priced at the model's tier.
`with` is the recorded (or folded) sizes; `without` is the size before the fold plus what was added since.
The saving is counted until the next fold or compaction, which would have happened either way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from foldscope.core.model.cost import LIFETIME_SECONDS, ModelPrices


def paid_back_after(savings: Sequence[float], spent: float) -> int | None:
    """How many requests (counting the first after the fold as 1) until the savings cover what it cost; None: never."""
    total = -spent
    for n, saved in enumerate(savings, 1):
        total += saved
        if total >= 0:
            return n
    return None


@dataclass(frozen=True)
class Modelled:
    """One request as the payback model prices it."""

    tokens: int
    read: int
    write: int
    cost_usd: float


def ideal_cache(
    sizes: Sequence[int],
    times: Sequence[float | None],
    prices: ModelPrices,
    *,
    head: int = 0,
    start_read: int = 0,
    lifetime: str = "5m",
    start_at: float | None = None,
    outputs: Sequence[int] | None = None,
) -> list[Modelled]:
    """Price a run of requests under the ideal prefix cache: each reads min(its size, the previous size) while
    the previous is live, else only the stable head (kept an hour), and writes the rest. `start_read` is what
    the first request reads (the request before the run, at `start_at`)."""
    out: list[Modelled] = []
    previous, at = start_read, start_at
    for k, size in enumerate(sizes):
        t = times[k]
        live = at is None or t is None or t - at <= LIFETIME_SECONDS[lifetime]
        read = min(size, previous if live else min(previous, head))
        write = size - read
        w5, w1 = (write, 0) if lifetime == "5m" else (0, write)
        output = outputs[k] if outputs is not None else 0
        out.append(Modelled(size, read, write, prices.at(t).cost(0, read, w5, w1, output)))
        previous, at = size, t if t is not None else at
    return out


@dataclass(frozen=True)
class Payback:
    """A fold's modelled cost against its modelled saving, request by request after it."""

    spent_usd: float
    with_usd: list[float]
    without_usd: list[float]
    requests: int | None  # after how many requests it paid back; None: never before the window ended

    @property
    def saved_usd(self) -> float:
        return sum(self.without_usd) - sum(self.with_usd)


def payback(
    before: int,
    with_sizes: Sequence[int],
    times: Sequence[float | None],
    prices: ModelPrices,
    *,
    summariser_usd: float,
    head: int = 0,
    lifetime: str = "5m",
    before_at: float | None = None,
    outputs: Sequence[int] | None = None,
) -> Payback:
    """`before`: the modelled size of the request before the fold; `with_sizes`: the requests after it, up to the
    next fold. Without the fold each would carry `before` plus what the session added since the fold. With it,
    the first request after reads only the stable head and writes the rest (the rewrite)."""
    if not with_sizes:
        return Payback(summariser_usd, [], [], None)
    after = with_sizes[0]
    without = [before + max(0, size - after) for size in with_sizes]

    def run(sizes: Sequence[int], start_read: int) -> list[float]:
        return [
            m.cost_usd
            for m in ideal_cache(
                sizes, times, prices, head=head, start_read=start_read, lifetime=lifetime, start_at=before_at, outputs=outputs
            )
        ]

    w, wo = run(with_sizes, min(head, after)), run(without, before)
    return Payback(summariser_usd, w, wo, paid_back_after([b - a for a, b in zip(w, wo)], summariser_usd))

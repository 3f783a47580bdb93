"""Payback in the replay lab: for each fold, band commit or compaction a strategy landed, after how many
requests it had saved more than it cost, modelled against modelled (the `none` replay's requests against
the strategy's own, both from core.replay.lab's cache model and prices; never a model against the bill).

A fold costs what its strategy spent for it (a compaction's summary call; the rewrite of the cached
prefix is in the cost of the request after it) and saves on each later request the difference from the
`none` replay. Savings are counted from the fold to the next one, less what the strategy was already
saving on the request before the fold (the earlier folds' share), so each fold answers for its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from foldscope.core.forensics.payback import paid_back_after
from foldscope.core.replay.lab import ReplayRuns
from foldscope.core.replay.rows import StrategyRun


@dataclass(frozen=True)
class FoldPayback:
    """One fold of a strategy's run: the request it preceded, what it spent, what it saved, and when it paid back."""

    strategy: str
    request: int
    spent_usd: float
    saved_usd: float
    requests: int | None  # paid back after this many requests; None: never before the next fold or the end

    def as_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "spent_usd": round(self.spent_usd, 8),
            "saved_usd": round(self.saved_usd, 8),
            "payback_requests": self.requests,
        }


def _by_request(run: StrategyRun) -> dict[int, float]:
    """Each recorded request's cost under a run (its ordinary request; a summary call is counted apart)."""
    return {r.request: r.cost_usd or 0.0 for r in run.rows if r.kind != "summary"}


def strategy_paybacks(result: ReplayRuns) -> dict[str, list[FoldPayback]]:
    """Per strategy (other than `none`), each fold's payback against the `none` replay; {} without a priced none run."""
    none = next((run for run in result.runs if run.strategy == "none"), None)
    if none is None or not result.priced:
        return {}
    baseline = _by_request(none)
    out: dict[str, list[FoldPayback]] = {}
    for run in result.runs:
        if run.strategy == "none":
            continue
        costs = _by_request(run)
        folds = [r for r in run.rows if r.folds and r.kind != "summary"]
        spent = {r.request: 0.0 for r in folds}
        for r in run.rows:
            if r.kind == "summary":
                spent[r.request] = spent.get(r.request, 0.0) + (r.cost_usd or 0.0)
        starts = [r.request for r in folds]
        found = []
        for n, start in enumerate(starts):
            end = starts[n + 1] if n + 1 < len(starts) else max(baseline, default=start) + 1
            already = baseline.get(start - 1, 0.0) - costs.get(start - 1, 0.0) if start else 0.0
            savings = [baseline.get(k, 0.0) - costs.get(k, 0.0) - already for k in range(start, end) if k in costs]
            found.append(
                FoldPayback(run.strategy, start, spent.get(start, 0.0), sum(savings), paid_back_after(savings, spent.get(start, 0.0)))
            )
        out[run.strategy] = found
    return out


def payback_line(paybacks: list[FoldPayback]) -> str:
    """A strategy's folds in a few words: 'after 3, after 12, never'."""
    if not paybacks:
        return "no folds"
    return ", ".join("never" if p.requests is None else f"after {p.requests}" for p in paybacks)

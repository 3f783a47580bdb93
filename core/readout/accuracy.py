"""How close our sizes come to what the provider reported: predicted input, the ADR estimate and a trivial baseline."""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from foldscope.core.formats.registry import agents
from foldscope.core.model.session import Session, estimated_usage
from foldscope.core.request.trace import TraceReport, holds_no_head
from foldscope.core.request.trace_measure import measure_trace


@dataclass
class Errors:
    """|size / reported - 1| per request, for one way of sizing."""

    values: list[float] = field(default_factory=list)

    def add(self, size: float | None, reported: int) -> None:
        if size is not None:
            self.values.append(abs(size / reported - 1))

    def quantile(self, q: float) -> float | None:
        xs = sorted(self.values)
        if not xs:
            return None
        return xs[min(len(xs) - 1, int(q * len(xs)))]

    @property
    def median(self) -> float | None:
        return statistics.median(self.values) if self.values else None

    @property
    def p90(self) -> float | None:
        return self.quantile(0.9)

    def extend(self, other: Errors) -> None:
        self.values.extend(other.values)


@dataclass
class Accuracy:
    """One session's (or a pool's) errors: anchored requests apart from the first of each stretch."""

    predicted: Errors = field(default_factory=Errors)  # requests with an anchor
    paired: Errors = field(default_factory=Errors)  # predicted, on the anchored requests the baseline sizes too
    trivial: Errors = field(default_factory=Errors)  # the baseline's, on those same requests
    estimate: Errors = field(default_factory=Errors)  # the same requests, the ADR estimate's
    first_predicted: Errors = field(default_factory=Errors)  # first requests of a stretch (no anchor)
    first_estimate: Errors = field(default_factory=Errors)
    requests: int = 0

    def extend(self, other: Accuracy) -> None:
        for name in ("predicted", "paired", "trivial", "estimate", "first_predicted", "first_estimate"):
            getattr(self, name).extend(getattr(other, name))
        self.requests += other.requests


def trivial_sizes(counts: Sequence[int], reported: Sequence[int | None]) -> list[float | None]:
    """The baseline: the previous request's reported/counted ratio times this request's count."""
    out: list[float | None] = [None]
    for k in range(1, len(counts)):
        prev = reported[k - 1]
        out.append(counts[k] * prev / counts[k - 1] if prev and counts[k - 1] else None)
    return out[: len(counts)]


def provider_usage(session: Session, report: TraceReport) -> bool:
    """Whether a session's usage reads as a provider's. A hand-written fixture reports less than its own text
    counts (the dev corpus's handmade Claude Code files report 20 to 270 tokens for requests we count at 33 to
    500, with no system prompt at all); a provider's count of a file that lacks the system prompt and tools
    carries them, so it is above our count of the file (below 0.9 of it: not a provider's). Usage foldscope shared
    out of totals (core.model.session.estimated_usage) is not a provider's either."""
    if estimated_usage(session) is not None:
        return False
    ratios = [r.reported_input / r.count_with_head for r in report.rows if r.reported_input and r.count_with_head]
    floor = 0.9 if holds_no_head(session) else 0.5
    return bool(ratios) and statistics.median(ratios) >= floor


def accuracy(session: Session, report: TraceReport | None = None) -> Accuracy:
    """The session's errors against its reported input, each request sized from what came before it."""
    report = report or measure_trace(session, prefix=False)
    rows = report.rows
    reported = [r.reported_input or None for r in rows]
    counts = [r.own_count for r in rows]
    baseline = trivial_sizes(counts, reported)
    out = Accuracy(requests=len(rows))
    for k, row in enumerate(rows):
        rep = reported[k]
        if not rep:
            continue
        if row.predicted_from == "count":
            out.first_predicted.add(row.predicted, rep)
            out.first_estimate.add(row.estimate, rep)
            continue
        out.predicted.add(row.predicted, rep)
        out.estimate.add(row.estimate, rep)
        if baseline[k] is not None:
            out.paired.add(row.predicted, rep)
            out.trivial.add(baseline[k], rep)
    return out


def pooled(sessions: Iterable[Session], formats: Iterable[str] | None = None) -> dict[str, Accuracy]:
    """Per format (by default the agents' formats: those whose sessions are found on a machine), the errors of every
    session whose usage reads as a provider's, pooled."""
    wanted = set(formats) if formats is not None else {spec.name for spec in agents()}
    out: dict[str, Accuracy] = {}
    for session in sessions:
        if session.format not in wanted:
            continue
        report = measure_trace(session, prefix=False)
        if not provider_usage(session, report):
            continue
        out.setdefault(session.format, Accuracy()).extend(accuracy(session, report))
    return out

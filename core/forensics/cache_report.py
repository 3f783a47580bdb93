"""A session's cache report: every request's causes priced, and the totals `foldscope cache` prints."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.forensics.cause_prices import PARTS, READ_INSTEAD, Priced, Pricer, price
from foldscope.core.forensics.causes import CAUSES, CausesCarry, RequestCauses, attribute
from foldscope.core.forensics.children import KINDS, children, children_parts
from foldscope.core.forensics.reads import ReadRow, read_rows, read_totals
from foldscope.core.forensics.trace_pass import Measured, measure_requests
from foldscope.core.formats.registry import format_named
from foldscope.core.formats.spec import CacheModel
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session
from foldscope.core.request.count import Counter

GAP_MARKS = (300.0, 3600.0)  # the five-minute and one-hour lifetimes the timeline marks gaps past
# The parts of an implicit cache's bill (core.forensics.reads): no write is billed, so no write cause is a part.
READ_PARTS = ("fresh", "cache_read", "output")


@dataclass(frozen=True, slots=True)
class CacheRow:
    causes: RequestCauses
    priced: Priced
    read: ReadRow | None = None  # under an implicit cache: what it read of the prefix before, and what broke it

    @property
    def index(self) -> int:
        return self.causes.index

    @property
    def wasted(self) -> float:
        """What this request's writes of unchanged or changed text cost beyond reading it (first and append
        writes are the expected cost of growing, not waste): the sum of its `waste_usd`."""
        return sum((self.priced.waste_usd or {}).values())

    def as_dict(self) -> dict[str, Any]:
        c, u = self.causes, self.causes.usage
        reported = None
        if u is not None:
            reported = {
                "fresh": u.input,
                "cache_read": u.cache_read,
                "cache_write": u.cache_write,
                "cache_write_5m": u.cache_write - u.cache_write_1h,
                "cache_write_1h": u.cache_write_1h,
                "output": u.output,
            }
        out: dict[str, Any] = {
            "index": c.index,
            "reported": reported,
            "causes": c.causes,
            "gap_s": None if c.gap_s is None else round(c.gap_s, 3),
            "cost_usd": _rounded(self.priced.cost_usd),
            "waste_usd": _rounded(self.priced.waste_usd),
        }
        if c.rewrite is not None:
            out["rewrite"] = c.rewrite.as_dict()
        if c.miss_reason is not None:
            out["cache_miss_reason"] = c.miss_reason
        return out


def _rounded(values: dict[str, float] | None) -> dict[str, float] | None:
    return None if values is None else {k: round(v, 8) for k, v in values.items()}


@dataclass
class CacheReport:
    """Every request of one session with its causes and prices; `measured` is kept for the compaction report."""

    session: Session
    rows: list[CacheRow]
    measured: list[Measured]
    priced: bool
    tokens: dict[str, int] = field(default_factory=dict)  # each message's part of the count, by id
    model: CacheModel = "explicit"  # the format's declared cache model (core.formats.spec)

    @property
    def implicit(self) -> bool:
        """The provider reads its cache by itself and bills no write: reads are explained, not writes."""
        return self.model == "implicit"

    def totals(self) -> dict[str, Any]:
        """The session's own parts (`by_cause`, adding up to `bill_usd`), its children's apart (`children`:
        subagents and the compaction summariser, each its own reported usage priced) and `total_usd`, all of it.
        An implicit cache's parts are fresh, cache read and output, with its reads (`reads`) in place of writes."""
        out = totals_of(self.rows, self.priced)
        if self.implicit:
            out = _read_only(out)
            out["reads"] = read_totals([r.read for r in self.rows if r.read is not None])
        kids = children_parts(children(self.session))
        out["children"] = kids
        costs = [out["bill_usd"], *(kids[k]["cost_usd"] for k in KINDS)]
        out["total_usd"] = None if any(c is None for c in costs) else round(sum(costs), 8)
        return out

    def top_wasted(self, n: int = 5) -> list[CacheRow]:
        """The requests whose cache writes wasted most, largest first."""
        ranked = sorted((r for r in self.rows if r.wasted > 0), key=lambda r: (-r.wasted, r.index))
        return ranked[:n]

    def as_dict(self) -> dict[str, Any]:
        if self.implicit:
            return self._read_dict()
        return {
            "file": self.session.source,
            "format": self.session.format,
            "model": self.session.model,
            "priced": self.priced,
            "children": self.session.children_files(),
            "requests": [r.as_dict() for r in self.rows],
            "totals": self.totals(),
            "top_wasted": [{"index": r.index, "waste_usd": round(r.wasted, 8), "causes": r.causes.causes} for r in self.top_wasted()],
        }

    def _read_dict(self) -> dict[str, Any]:
        """An implicit cache's report: each request's reported usage, cost and read, no write cause."""
        requests = []
        for row in self.rows:
            read = row.read
            assert read is not None  # an implicit report's rows each carry their read
            out = row.as_dict()
            if out["reported"] is not None:
                out["reported"] = {k: out["reported"][k] for k in READ_PARTS}
            del out["causes"], out["waste_usd"]
            out["read"] = read.as_dict()
            requests.append(out)
        return {
            "file": self.session.source,
            "format": self.session.format,
            "model": self.session.model,
            "cache_model": self.model,
            "priced": self.priced,
            "children": self.session.children_files(),
            "requests": requests,
            "totals": self.totals(),
            "top_wasted": [],
        }


def _read_only(totals: dict[str, Any]) -> dict[str, Any]:
    """Totals without the write causes (an implicit cache writes nothing billed)."""
    out = {k: v for k, v in totals.items() if k != "cache_write"}
    out["by_cause"] = {part: totals["by_cause"][part] for part in READ_PARTS}
    return out


def totals_of(rows: Sequence[CacheRow], priced: bool = True) -> dict[str, Any]:
    """Tokens and cost_usd per part (fresh, cache read, each cause, output) over the rows, and the bill."""
    tokens = dict.fromkeys(PARTS, 0)
    cost: dict[str, float] = dict.fromkeys(PARTS, 0.0)
    waste: dict[str, float] = dict.fromkeys(READ_INSTEAD, 0.0)
    bill, unpriced = 0.0, 0
    for row in rows:
        u = row.causes.usage
        if u is None:
            continue
        tokens["fresh"] += u.input
        tokens["cache_read"] += u.cache_read
        tokens["output"] += u.output
        for cause, n in row.causes.causes.items():
            tokens[cause] += n
        parts = row.priced.parts()  # both worked out in one go (Priced keeps neither)
        if parts is None:
            unpriced += 1
            continue
        for part, usd in parts[0].items():
            cost[part] += usd
        for cause, usd in parts[1].items():
            waste[cause] += usd
        bill += row.priced.bill_usd or 0.0
    has_prices = priced and not unpriced
    return {
        "cache_write": sum(tokens[c] for c in CAUSES),
        "by_cause": {
            part: {
                "tokens": tokens[part],
                "cost_usd": round(cost[part], 8) if has_prices else None,
                **({"waste_usd": round(waste[part], 8) if has_prices else None} if part in READ_INSTEAD else {}),
            }
            for part in PARTS
        },
        "bill_usd": round(bill, 8) if has_prices else None,
        "unpriced_requests": unpriced,
    }


def cache_report(
    session: Session,
    policy: Policy | None = None,
    counter: Counter | None = None,
    *,
    measured: list[Measured] | None = None,
    tokens: dict[str, int] | None = None,
    carry: CausesCarry | None = None,
) -> CacheReport:
    """Count the session's trace once, attribute every cache write and price it. `measured` (with its `tokens`):
    the pass already made (core.forensics.trace_pass.MeasuredPass fed by the trace's own count), not made again.
    `carry`: the attribution and prices of this trace a measure ago, gone on from (causes.attribute)."""
    if measured is None:
        tokens = {}
        measured = measure_requests(session, policy, counter, tokens)
    tokens = tokens if tokens is not None else {}
    rows = attribute(session, measured, carry)
    pricer = Pricer(session.model)
    sent = {request.index: request.at for request in session.trace}
    # With `carry` a row carried from the measure before (the same object) keeps its price, made by the same pricer.
    done = carry.priced if carry is not None and carry.fallback == session.model else []
    done = done[: next((k for k, (r, p) in enumerate(zip(rows, done)) if r is not p[0]), len(done))]
    priced = [p for _, p in done] + [price(r, pricer(r.model, sent.get(r.index))) for r in rows[len(done) :]]
    if carry is not None:
        carry.priced, carry.fallback = list(zip(rows, priced)), session.model
    # Asked of each request without working its parts out (a dict of floats a request, 0.05 s at 50,000 messages
    # on the window's path to its counted document): the same answer as its cost_usd being None.
    any_unpriced = any(not p.has_parts and r.usage is not None for r, p in zip(rows, priced))
    spec = format_named(session.format)
    model: CacheModel = spec.cache if spec is not None else "explicit"
    reads: list[ReadRow | None] = list(read_rows(session, measured)) if model == "implicit" else [None] * len(rows)
    cached = [CacheRow(r, p, read) for r, p, read in zip(rows, priced, reads)]
    return CacheReport(session, cached, measured, not any_unpriced, tokens, model)


def counted_cache_report(
    session: Session, policy: Policy | None = None, counter: Counter | None = None, texts: Sequence[str] = ()
) -> CacheReport:
    """The cache report from one measure of the trace (core.request.trace_measure, without the predictions, which
    this report does not show), the cache causes' pass riding on its count as the report's does: that count may have
    a child count ahead on the other core, as `requests`' does, where the cache report's own pass counts on one.
    `texts`: what the caller will count with `counter` after (the compactions' summaries), counted by that child as
    the last request is heard (Counter.count_ahead), so this process builds no encoder for them alone."""
    from foldscope.core.forensics.trace_pass import MeasuredPass
    from foldscope.core.request.trace_measure import measure_trace

    steps = MeasuredPass(session, policy, {})
    counter = counter or Counter()
    last = len(session.trace) - 1

    def heard(messages, first_round, m, meter) -> None:
        steps.step(messages, first_round, m, meter)
        if len(steps.rows) - 1 == last and texts:
            counter.count_ahead(texts)

    measured = measure_trace(session, steps.policy, counter=counter, predict=False, on_measured=heard)
    if len(steps.rows) != len(session.trace):  # pragma: no cover - every request is heard; else the cache report counts
        return cache_report(session, policy, counter)
    heads = [row.unseen_head for row in measured.rows]
    return cache_report(session, steps.policy, measured=steps.measured(heads), tokens=steps.tokens)

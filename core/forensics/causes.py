"""Why each cache write happened: every written token of a recorded request attributed to one cause.

The reported input of a request is split as the provider counted it: cache read [0, R), cache write
[R, R + W) and fresh input after. The previous request that reported usage had cached the prefix up
to C (its read plus its write, its tail mark's end). Positions in the written span are then read, in
the order of evidence of DESIGN.md's `cache cause`:

- `first`: nothing cached yet (the session's first request, or every one before it wrote nothing);
- `append`: past C, the new tail (the expected cost of growing);
- `rewrite`: between M and C, where D is the place this request's bytes part from the one before (the
  request panel's place, core.request.prefix.place, or position 0 on a model switch) and M the last place
  before D where an earlier request left a mark (its read or its write's end): the provider reads a prefix
  only up to a mark, so the unchanged bytes between M and D are written again because of the change too;
- `expired` / `provider`: before min(M, C), an unchanged prefix written again: `expired` when the gap
  since the request that last read or wrote it passed its mark's lifetime (five minutes, or an hour
  for the part written with one-hour marks), else `provider` (a miss on the provider's side, with
  Claude Code's `diagnostics.cache_miss_reason` quoted where it recorded one);
- `unexplained`: what no rule places (an unchanged prefix written again when the file has no time).

The spans partition [R, R + W), so the causes of a request sum exactly to its reported cache write.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from foldscope.core.forensics.trace_pass import Measured
from foldscope.core.model.cost import LIFETIME_SECONDS
from foldscope.core.model.pricing import normalise
from foldscope.core.model.session import Request, Session, Usage

CAUSES = ("first", "append", "rewrite", "expired", "provider", "unexplained")

# core.request.prefix's divergence causes, as the place a rewrite happened at.
REWRITE_WHY = {
    "fold": "a compaction or fold note replaced messages",
    "restore": "a message came back into the view",
    "rewrite": "a message was edited, moved or removed",
    "stable": "the system prompt or tool list changed",
    "policy": "the result bound or prompt caching changed",
    "model": "the model changed: its cache holds nothing of the other model's",
}


@dataclass(frozen=True, slots=True)
class Span:
    """Written tokens [start, end) of one request, in the provider's counting, and their cause."""

    cause: str
    start: int
    end: int

    @property
    def tokens(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class Rewrite:
    """Where a rewrite happened: the payload message, record index and character where the bytes first part
    (core.request.prefix.place, the place the request panel names), that place in reported tokens, and why."""

    position: int
    message: int | None
    index: int | None
    cause: str
    char: int | None = None  # characters of the message both requests share before they part
    byte: int | None = None  # bytes of the payloads shared from the start

    @property
    def why(self) -> str:
        return REWRITE_WHY.get(self.cause, self.cause)

    def as_dict(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "message": self.message,
            "index": self.index,
            "char": self.char,
            "byte": self.byte,
            "cause": self.cause,
            "why": self.why,
        }


@dataclass(frozen=True, slots=True)
class RequestCauses:
    """One recorded request: what it reported, the spans its cache write is made of, and the evidence."""

    index: int
    usage: Usage | None
    model: str | None
    gap_s: float | None  # seconds since the previous request
    since_cached_s: float | None  # seconds since the request that last read or wrote the prefix
    cached: int  # C: the prefix the previous requests had cached
    spans: tuple[Span, ...] = ()
    rewrite: Rewrite | None = None
    miss_reason: str | None = None
    one_hour_end: int = 0  # the cached prefix up to here was written with one-hour marks

    @property
    def causes(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for span in self.spans:
            if span.tokens:
                out[span.cause] = out.get(span.cause, 0) + span.tokens
        return out

    def one_hour_tokens(self, span: Span) -> int:
        """The part of a span written with one-hour marks (Anthropic writes one-hour marks first)."""
        if self.usage is None or not self.usage.cache_write_1h:
            return 0
        start = self.usage.cache_read
        return max(0, min(span.end, start + self.usage.cache_write_1h) - span.start)


def miss_reason_of(request: Request) -> str | None:
    """Claude Code's `diagnostics.cache_miss_reason` for the request, where the reader kept one."""
    reason = getattr(request, "cache_miss_reason", None)
    if isinstance(reason, dict):
        reason = reason.get("type")
    return reason if isinstance(reason, str) and reason else None


def _same_model(a: str | None, b: str | None) -> bool:
    # one name twice (nearly every request after the first) is the same model without reading it twice
    return a is None or b is None or a == b or normalise(a) == normalise(b)


def _position(measured: Measured, usage: Usage) -> int | None:
    """The place where the bytes part, in the provider's tokens: the counted tokens before that byte (the
    unseen head, the messages before its block and the block's shared start) at the request's reported/counted
    ratio, the one conversion between our tokenizer and the provider's."""
    if measured.parted_at is None:
        return None
    if measured.count_with_head <= 0:
        return 0
    return min(usage.reported_input, round(measured.parted_at / measured.count_with_head * usage.reported_input))


def rewrite_of(request: Request, last: Request, m: Measured | None) -> Rewrite | None:
    """What changed from the request before where this one's prefix parted from it: the model, or the first changed
    place in the provider's tokens (None: nothing changed in the prefix). Read by the write causes and the read
    shortfalls alike (core.forensics.reads)."""
    if not _same_model(request.model, last.model):
        return Rewrite(0, None, None, "model")
    if m is None or m.divergence is None or request.usage is None or (at := _position(m, request.usage)) is None:
        return None
    p = m.place
    return Rewrite(
        at,
        m.divergence.message if p is None else p.message,
        m.divergence.index if p is None or p.index is None else p.index,
        m.divergence.cause,
        None if p is None else p.char,
        None if p is None else p.byte,
    )


def gaps(trace: Sequence[Request]) -> list[float | None]:
    """Seconds since the previous request with a time (None without one): the idle gap before each request."""
    out: list[float | None] = []
    previous_at: float | None = None
    for request in trace:
        out.append(None if request.at is None or previous_at is None else max(0.0, request.at - previous_at))
        previous_at = request.at if request.at is not None else previous_at
    return out


class Marks:
    """The places earlier requests left a cache mark (each one's read's end and its write's end, and 0), asked for the
    last one at or before a place. `sorted` holds them in order, `fresh` those left since in any order: they are
    sorted into the rest when a rewrite asks and they are a quarter as many, else among themselves. At 50,000
    messages 22,768 marks are left and 151 rewrites ask; each mark put in its place as it came (insort) moved half
    the list, 0.04 s of attribute's 0.1 on the window's path to its counted document."""

    __slots__ = ("sorted", "fresh")

    def __init__(self) -> None:
        self.sorted: list[int] = [0]
        self.fresh: list[int] = []

    def at_or_before(self, limit: int) -> int:
        """The last mark at or before `limit` (marks start at 0, and a place is never before it)."""
        kept, fresh = self.sorted, self.fresh
        if len(fresh) * 4 > len(kept):
            kept += fresh
            kept.sort()
            fresh.clear()  # in place, never a new list: attribute appends to this one through its own name
        else:
            fresh.sort()
        at = bisect_right(kept, limit)
        if at == 0:
            raise ValueError(f"no cache mark at or before {limit}")
        found = kept[at - 1]
        at = bisect_right(fresh, limit)
        return fresh[at - 1] if at and fresh[at - 1] > found else found


@dataclass
class CausesCarry:
    """attribute's walk as it ended, to go on from when the same trace has grown (the status line's warm reader,
    core.readout.status): what each request was attributed from, its row, and the walk's state after the last one.
    cache_report keeps each row's price beside it (`priced`, made with the pricer of fallback model `fallback`)."""

    inputs: list[tuple] = field(default_factory=list)  # per request: (index, usage, model, at, measured)
    rows: list[RequestCauses] = field(default_factory=list)
    last: Request | None = None
    previous_at: float | None = None
    one_hour_end: int = 0
    cached_any: bool = False
    marks: Marks = field(default_factory=Marks)
    priced: list[Any] = field(default_factory=list)
    fallback: Any = None


def attribute(session: Session, measured: Sequence[Measured], carry: CausesCarry | None = None) -> list[RequestCauses]:
    """Every request's cache write split into causes (see the module docstring). With `carry` (the walk over this
    trace a measure ago) only the requests after the carried ones are attributed, when each carried one is the same
    request measured the same (else the walk starts again, in `carry`); the rows are the ones a whole walk gives."""
    inputs = [(r.index, r.usage, r.model, r.at, m) for r, m in zip(session.trace, measured)]
    state = carry if carry is not None else CausesCarry()
    if carry is not None and carry.inputs != inputs[: len(carry.inputs)]:
        state = CausesCarry()
        carry.__dict__.update(state.__dict__)  # the caller's carry, started again
        state = carry
    out = state.rows
    last, one_hour_end, cached_any, marks = state.last, state.one_hour_end, state.cached_any, state.marks
    fresh = marks.fresh  # each request's two marks appended here, in C: a method call each cost more than the list
    previous_at = state.previous_at
    for request, m in zip(session.trace[len(out) :], measured[len(out) :]):
        # The idle gap before the request (gaps()): since the latest request before it with a time.
        gap = None if request.at is None or previous_at is None else max(0.0, request.at - previous_at)
        previous_at = request.at if request.at is not None else previous_at
        u = request.usage
        if u is None:
            out.append(RequestCauses(request.index, None, request.model, gap, None, 0))
            continue
        start, end = u.cache_read, u.cache_read + u.cache_write
        if last is None or not cached_any:
            spans = (Span("first", start, end),) if end > start else ()
            row = RequestCauses(request.index, u, request.model, gap, None, 0, spans, one_hour_end=0)
        else:
            row = _attributed(request, m, last, gap, one_hour_end, marks)
        out.append(row)
        one_hour_end = start + u.cache_write_1h if u.cache_write_1h else min(one_hour_end, start)
        cached_any = cached_any or end > 0
        fresh.append(start)
        fresh.append(end)
        last = request
    state.inputs, state.last, state.previous_at, state.one_hour_end, state.cached_any = inputs, last, previous_at, one_hour_end, cached_any
    return list(out)


def _attributed(request: Request, m: Measured, last: Request, gap: float | None, one_hour_end: int, marks: Marks) -> RequestCauses:
    u, lu = request.usage, last.usage
    assert u is not None and lu is not None
    cached = lu.cache_read + lu.cache_write
    since = None if request.at is None or last.at is None else max(0.0, request.at - last.at)
    rewrite = rewrite_of(request, last, m)
    # Without a change the whole cached prefix is unchanged; with one, the prefix the provider could still read:
    # up to the last mark an earlier request left before the place.
    parted = cached if rewrite is None else marks.at_or_before(min(rewrite.position, cached))
    start, end = u.cache_read, u.cache_read + u.cache_write
    spans: list[Span] = []
    # Before the parting: an unchanged prefix written again, split where its one-hour part ends.
    split = min(one_hour_end, parted)
    for lo, hi, lifetime in ((0, split, "1h"), (split, parted, "5m")):
        a, b = max(start, lo), min(end, hi)
        if b > a:
            spans.append(Span(_unchanged_cause(since, lifetime, read_inside=start > lo), a, b))
    if rewrite is not None and parted < cached:
        a, b = max(start, parted), min(end, cached)
        if b > a:
            spans.append(Span("rewrite", a, b))
    a = max(start, cached)
    if end > a:
        spans.append(Span("append", a, end))
    causes = [s.cause for s in spans]  # up to four spans: a list asked twice, where a generator each time cost more
    return RequestCauses(
        request.index,
        u,
        request.model,
        gap,
        since,
        cached,
        tuple(_merged(spans) if len(spans) > 1 else spans),  # one span, nearly every request: nothing to sort or merge
        rewrite if "rewrite" in causes else None,
        miss_reason_of(request) if "provider" in causes else None,  # read only where a provider's write is named
        one_hour_end,
    )


def _unchanged_cause(since: float | None, lifetime: str, read_inside: bool) -> str:
    """An unchanged prefix written again: `expired` past its lifetime, `provider` within it. Past its lifetime
    while the provider still read part of the same lifetime's span, something the file does not hold kept the
    cache warm and the rules disagree: `unexplained`. Without timestamps nothing decides: `unexplained`."""
    if since is None:
        return "unexplained"
    if since > LIFETIME_SECONDS[lifetime]:
        return "unexplained" if read_inside else "expired"
    return "provider"


def _merged(spans: list[Span]) -> list[Span]:
    """Adjacent spans of one cause as one, in order."""
    out: list[Span] = []
    for s in sorted(spans, key=lambda s: s.start):
        if out and out[-1].cause == s.cause and out[-1].end == s.start:
            out[-1] = Span(s.cause, out[-1].start, s.end)
        else:
            out.append(s)
    return out


@dataclass
class CauseTotals:
    """Tokens per cause over a session (or a folder), and how many requests had each."""

    tokens: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CAUSES, 0))
    requests: dict[str, int] = field(default_factory=lambda: dict.fromkeys(CAUSES, 0))

    def add(self, row: RequestCauses) -> None:
        for cause, n in row.causes.items():
            self.tokens[cause] += n
            self.requests[cause] += 1

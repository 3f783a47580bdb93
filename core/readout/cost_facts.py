"""Where the money went, as the Cost panel shows it: the bill by part, each request's cache cause in words,
each compaction's numbers, and one plain sentence for each figure (Qt-free, so tests and the report read it)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from foldscope.core.forensics.cache_report import GAP_MARKS, CacheReport, CacheRow, cache_report
from foldscope.core.forensics.causes import Rewrite
from foldscope.core.forensics.children import KINDS
from foldscope.core.forensics.trace_pass import Measured
from foldscope.core.model.money_text import usd_text
from foldscope.core.model.session import Session
from foldscope.core.readout.divergence import CAUSE_WORDS, place_words, where_words
from foldscope.core.readout.words import plural

if TYPE_CHECKING:  # the compactions' module (and its literal checks) is imported when the Cost panel first asks for them
    from foldscope.core.forensics.compactions import Compaction

# The bill's parts in the order the bar draws them, with what each means to someone who never heard of a cache.
PART_WORDS = {
    "fresh": ("fresh input", "text sent without the cache, at the full input price"),
    "cache_read": ("cache reads", "the repeated start of each request, read back from the cache at a fraction of the price"),
    "first": ("first write", "the first request storing its start in the cache so later ones can read it"),
    "append": ("append writes", "each request storing what it added, so the next can read it: the normal cost of growing"),
    "rewrite": ("rewrites", "something earlier changed (a compaction, an edit, a model switch), so all after it was stored again"),
    "expired": ("expired", "the session sat idle past the cache's lifetime (5 minutes, or 1 hour), so unchanged text was stored again"),
    "provider": ("provider misses", "nothing changed and the cache should still have held it, yet the provider stored it again"),
    "unexplained": ("unexplained", "written tokens that no rule accounts for"),
    "output": ("output", "what the model wrote back"),
    "subagents": ("subagents", "the helper sessions this one started, each its own reported usage priced"),
    "summariser": ("compaction summariser", "the calls that wrote compaction summaries (reading this session's cache counts as reads)"),
}
PARTS = tuple(PART_WORDS)
# The parts whose name alone tells a newcomer too little, said in one sentence under the legend.
PART_EXPLAINED = {
    "provider": (
        "Provider misses: the start of these requests was unchanged and sent while the cache should still "
        "have held it, so it could have been read back at a fraction of the price; the provider stored it "
        "again and billed a cache write instead, and nothing foldscope can see in the file caused it (the system "
        "prompt and tools a Claude Code, Codex or pi file does not hold are not seen; a change there would "
        "look the same)."
    ),
}


@dataclass(frozen=True)
class Part:
    """One part of the bill: its tokens, its dollars (None unpriced) and the requests that make it up."""

    name: str
    tokens: int
    usd: float | None
    requests: tuple[int, ...] = ()

    @property
    def label(self) -> str:
        return PART_WORDS[self.name][0]

    @property
    def meaning(self) -> str:
        return PART_WORDS[self.name][1]


@dataclass(frozen=True)
class CostFacts:
    """Everything the Cost panel shows for one session."""

    parts: tuple[Part, ...]
    cache: CacheReport
    compactions: tuple[Compaction, ...]
    priced: bool
    bill_usd: float | None  # the session's own bill, reported usage priced per request
    children_usd: float | None  # subagents and summarisers together
    notes: tuple[str, ...] = ()

    @property
    def total_usd(self) -> float | None:
        if self.bill_usd is None:
            return None
        return self.bill_usd + (self.children_usd or 0.0)

    def part(self, name: str) -> Part:
        return next(p for p in self.parts if p.name == name)

    def sentence(self, near: str = "") -> str:
        """The bar's sentence: the total and its three largest parts, in words; `near` ("~", usage_precision.near)
        before each figure of a session whose usage is approximate or foldscope's estimate, and said once."""
        total = self.total_usd
        rows = self.cache.rows if self.cache is not None else []
        if rows and all(r.causes.usage is None for r in rows) and not self.children_usd:
            # Nothing reported is nothing billed that the file shows: "$0.0000 ... Most went to nothing" read as free.
            return (
                f"No request of this session reported its usage ({plural(len(rows), 'request')}), "
                "so the file holds no bill to show: the Requests tab and the timeline give foldscope's counts."
            )
        if total is None:
            return (
                "This session's model has no price, so its bill is shown in tokens: "
                + ", ".join(f"{p.label} {near}{p.tokens:,}" for p in self.parts if p.tokens)
                + "."
            )
        top = sorted((p for p in self.parts if p.usd), key=lambda p: -(p.usd or 0))[:3]
        share = ", ".join(f"{p.label} {near}{_usd(p.usd)} ({(p.usd or 0) / total:.0%})" for p in top) if total else "nothing"
        how = " (~: the file's usage is approximate, or foldscope's estimate from its totals)" if near else ""
        return (
            f"The session cost {near}{_usd(total)} as billed{how}. Most went to {share}. Click a part to list the requests that make it up."
        )


def parts_explained(parts: list[Part]) -> list[str]:
    """One sentence for each part shown whose name needs one (PART_EXPLAINED), in the bar's order."""
    return [PART_EXPLAINED[p.name] for p in parts if p.name in PART_EXPLAINED and (p.tokens or p.usd)]


def _usd(value: float | None) -> str:
    """Four places at any size, as the legend, the tables and `foldscope cache` give a part: one figure for one
    quantity (the sentence above the legend said $5.00 where the legend said $4.9951); under a hundredth of a cent
    "<$0.0001", as `cache` writes it (money_text.usd_text), never $0.0000."""
    return usd_text(value)


def duration(seconds: float) -> str:
    """A gap as a person reads it: 42 s, 7 min, 2 h 5 min."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = seconds / 60
    if minutes < 60:
        return f"{minutes:.0f} min"
    hours, rest = int(minutes // 60), int(minutes % 60)
    return f"{hours} h" if not rest else f"{hours} h {rest} min"


def request_sentence(row: CacheRow) -> str:
    """Why a request wrote to the cache, in one sentence, with the place and cause of a rewrite."""
    c, u = row.causes, row.causes.usage
    if u is None:
        return f"Request {c.index}: the file reports no usage for it."
    if row.read is not None:
        return read_sentence(row)
    if not u.cache_write:
        return f"Request {c.index} read {u.cache_read:,} tokens from the cache and wrote nothing to it ({u.input:,} fresh)."
    parts = []
    for cause, tokens in c.causes.items():
        if cause == "first":
            parts.append(f"{tokens:,} first stored (nothing was cached yet)")
        elif cause == "append":
            parts.append(f"{tokens:,} appended (new since the request before)")
        elif cause == "rewrite" and c.rewrite is not None:
            parts.append(f"{tokens:,} rewritten from {rewrite_place(c.rewrite)} because {c.rewrite.why}")
        elif cause == "expired":
            idle = duration(c.since_cached_s or 0.0)
            parts.append(f"{tokens:,} stored again after {idle} idle, past the cache's lifetime")
        elif cause == "provider":
            said = f"; the provider said: {c.miss_reason}" if c.miss_reason else ""
            parts.append(f"{tokens:,} stored again although unchanged and still live (the provider's miss{said})")
        else:
            parts.append(f"{tokens:,} unexplained")
    wasted = f" Wasted beyond reading it from the cache: {_usd(row.wasted)}." if row.wasted else ""
    return f"Request {c.index} read {u.cache_read:,} tokens from the cache and wrote {u.cache_write:,}: " + "; ".join(parts) + "." + wasted


def read_sentence(row: CacheRow) -> str:
    """Under an implicit cache (core.forensics.reads): what the request read, and what broke a read that fell short."""
    read, u = row.read, row.causes.usage
    assert read is not None and u is not None
    said = (
        f"Request {row.index} read {u.cache_read:,} of its {u.reported_input:,} input tokens from the cache"
        + (f" ({read.share:.0%})" if read.share is not None else "")
        + "; the provider caches by itself and bills no write."
    )
    if read.prefix is None:
        return said
    if not read.broke:
        return said + f" It read the prefix the request before had sent ({read.prefix:,} tokens) as far as the provider caches."
    parts = []
    for cause, tokens in read.broke.items():
        if cause == "rewrite" and read.rewrite is not None:
            parts.append(f"{tokens:,} changed from {rewrite_place(read.rewrite)} because {read.rewrite.why}")
        elif cause == "expired":
            parts.append(f"{tokens:,} unchanged but idle {duration(row.causes.gap_s or 0.0)}, past the cache's lifetime")
        elif cause == "provider":
            parts.append(f"{tokens:,} unchanged and in time, yet not read (the provider's miss)")
        else:
            parts.append(f"{tokens:,} unexplained")
    return said + f" It fell {read.short:,} short of the {read.prefix:,} tokens the request before had sent: " + "; ".join(parts) + "."


def reads_words(reads: dict[str, Any]) -> str:
    """An implicit cache's reads over a session (core.forensics.reads' totals), in plain words."""
    share = "" if reads["share"] is None else f" ({reads['share']:.0%})"
    said = (
        "The provider caches by itself and bills reads only, so no write is put down to a cause: "
        f"{reads['read']:,} of {reads['input']:,} input tokens were read from the cache{share}"
    )
    if not reads["short"]:
        return said + "."
    causes = ", ".join(f"{c} {n:,}" for c, n in reads["broke"].items() if n)
    n = reads["requests_short"]
    return said + (
        f"; {n:,} request{'' if n == 1 else 's'} read {reads['short']:,} tokens less than the prefix the request "
        f"before had sent ({causes})."
    )


def rewrite_place(r: Rewrite) -> str:
    """Where a rewrite starts, in the request panel's words (a model switch rewrites from the start)."""
    if r.cause == "model":
        return "the start"
    return where_words(r.message, r.index, r.char)


def divergence_sentence(row: CacheRow, measured: Measured | None = None) -> str:
    """How this request parts from the one before, at the place the request panel names (core.request.prefix.place)."""
    r = row.causes.rewrite
    if r is not None and r.cause == "model":
        return f"It parts from the request before at the start: {r.why}."
    found = measured.divergence if measured is not None else None
    if found is None or found.cause in ("none", "append"):
        if r is None:
            return "It repeats the request before it from the start and adds after it."
        return (
            f"It parts from the request before at {rewrite_place(r)} (about token {r.position:,} of its input): "
            f"{CAUSE_WORDS.get(r.cause, r.why)}."
        )
    tokens = f" (about token {r.position:,} of its input)" if r is not None else ""
    return (
        f"It parts from the request before at {place_words(found, measured.place if measured else None)}{tokens}: "
        f"{CAUSE_WORDS.get(found.cause, found.cause)}."
    )


def untimed(rows: Sequence[CacheRow]) -> bool:
    """No request after the first has a time to measure its idle gap from (an Aider history dates only its run)."""
    return len(rows) > 1 and all(row.causes.gap_s is None for row in rows[1:])


def gap_sentence(implicit: bool = False, timed: bool = True, requests: int | None = None) -> str:
    """The idle strip in words; `implicit`: a cache the provider keeps by itself, read but never billed as a write;
    not `timed`: the file dates none of its requests, so the strip stays empty and says why; fewer than two
    `requests`: no request has one before it to be idle after, and the empty strip says so."""
    five, hour = (duration(s) for s in GAP_MARKS)
    if requests is not None and requests < 2:
        return (
            f"The session made {plural(requests, 'request')}, so no request waited after another: no idle bar is "
            f"drawn. With more, each bar is the idle time before a request, against the {five} and {hour} lines."
        )
    if not timed:
        return (
            "The file records no time for its requests, so the idle time before each is not known: no bar is drawn, "
            f"and a prefix written again is counted unexplained, not put down to an idle past {five} or {hour}."
        )
    if implicit:
        return (
            f"Each bar is the idle time before a request; the lines mark {five} and {hour}. The provider keeps what it "
            "caches by itself for minutes, not a set lifetime; a bar past the first line often means the next request "
            "read little back and paid the full input price."
        )
    return (
        f"Each bar is the idle time before a request; the lines mark {five} and {hour}, how long the cache keeps "
        "text. A bar past a line often means the next request paid to store everything again (coloured by cause)."
    )


def compaction_sentence(c: Compaction) -> str:
    """A compaction or fold in one sentence: what it shrank, what it cost, what it lost, and whether it paid back."""
    what = "The compaction" if c.kind == "compaction" else "The fold"
    cost = []
    if c.summariser_cost_usd is not None:
        cost.append(f"its summariser cost {_usd(c.summariser_cost_usd)}")
    if c.rewrite_cost_usd is not None:
        cost.append(f"storing the new start again cost {_usd(c.rewrite_cost_usd)}")
    lost = c.literals.lost
    kept = len(c.literals.kept)
    paid = (
        "it never paid back before the session moved on"
        if c.payback_requests is None
        else f"it paid back after {plural(c.payback_requests, 'request')}"
    )
    back = c.refetched_tokens
    refetch = f" The agent fetched {plural(len(c.refetched), 'dropped thing')} again ({back:,} tokens)." if c.refetched else ""
    return (
        f"{what} before request {c.request} took the conversation from {c.before:,} to {c.after:,} tokens; "
        + ("; ".join(cost) + "; " if cost else "")
        + f"the summary kept {kept} of {kept + len(lost)} names, paths and numbers; {paid}.{refetch}"
    )


def cost_facts(session: Session, policy=None, counter=None, cache: CacheReport | None = None) -> CostFacts:
    """The Cost panel's facts: one count of the trace, every cause priced, every compaction explained (`cache`:
    the cache report already made from the trace's own count)."""
    from foldscope.core.forensics.compactions import compaction_report  # not at the window's start (Compaction above)

    cache = cache if cache is not None else cache_report(session, policy, counter)
    report = compaction_report(session, policy, counter, cache=cache)
    totals = cache.totals()
    notes = []
    by: dict[str, list[int]] = {}
    for row in cache.rows:
        u = row.causes.usage
        if u is None:
            continue
        for name, n in (("fresh", u.input), ("cache_read", u.cache_read), ("output", u.output), *row.causes.causes.items()):
            if n:
                by.setdefault(name, []).append(row.index)
    parts = [Part(name, cell["tokens"], cell["cost_usd"], tuple(by.get(name, ()))) for name, cell in totals["by_cause"].items()]
    for kind, cell in totals["children"].items():
        if cell["cost_usd"] is None:
            notes.append(f"a {PART_WORDS[kind][0]} file has a model without a price")
        parts.append(Part(kind, cell["tokens"], cell["cost_usd"] if cell["cost_usd"] is not None else 0.0))
    children_usd = sum(p.usd or 0.0 for p in parts if p.name in KINDS)
    return CostFacts(tuple(parts), cache, tuple(report.compactions), cache.priced, totals["bill_usd"], children_usd, tuple(notes))


def document_cache(document: Any) -> CacheReport:
    """The cache report (every request's cache causes, priced) for a counted Document (core.readout.document),
    from the cache causes' pass that rode on its trace's count: no count of its own. Kept on the document: the
    cache lane reads it, and the Cost panel adds the compactions to it (cost_facts(..., cache=))."""
    steps = document.cache_pass
    session, policy = document.session, document.policy
    if steps is None:  # no trace of the reader's: the cache report has no requests
        cache = cache_report(session, policy, measured=[], tokens={})
    else:
        heads = [row.unseen_head for row in document.measure.trace.rows]  # the trace's own, from the same counts
        cache = cache_report(session, policy, measured=steps.measured(heads), tokens=steps.tokens)
    document.cache, document.cache_for = cache, document.trace_revision
    document.cache_pass = None
    return cache

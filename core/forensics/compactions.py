"""Every compaction explained: sizes before and after, the summariser's cost, what left the view, which
literals the summary lost, what the agent fetched again, the cache rewrite it caused, and its payback.

A compaction (Claude Code `compact_boundary`, Codex `compacted`, pi `compaction`) or a fold is found in the
trace itself: a request whose view holds a note the request before did not. Its `kind` is `compaction` for
the source's own (the reader marks the note) and `fold` for foldscope's or lionagi's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from foldscope.core.forensics.cache_report import CacheReport, counted_cache_report
from foldscope.core.forensics.children import Child, children
from foldscope.core.forensics.compaction_dropped import FetchKeys, Refetch, dropped_facts, literal_text, refetched
from foldscope.core.forensics.literals import LiteralCheck, check
from foldscope.core.forensics.payback import Payback, payback
from foldscope.core.formats.registry import format_named
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Message, Session
from foldscope.core.model.views import added, left_between
from foldscope.core.request.count import Counter
from foldscope.core.request.tokens import count_text

if TYPE_CHECKING:
    from foldscope.core.forensics.literals_ahead import LiteralChecks, Span
    from foldscope.core.forensics.trace_pass import Measured


@dataclass
class Compaction:
    """One compaction or fold, explained."""

    request: int  # the request it preceded
    kind: str  # "compaction" (the source's own) or "fold"
    source: str  # claude_code, codex, pi, foldscope ...
    note: Message
    before: int
    after: int
    sizes_from: str  # where before and after come from: the file's figures, reported input, or measured
    summariser_cost_usd: float | None
    summariser_why: str
    dropped: dict[str, Any]
    literals: LiteralCheck
    refetched: list[Refetch] = field(default_factory=list)
    rewrite_tokens: int = 0
    rewrite_cost_usd: float | None = None
    payback: Payback | None = None
    payback_why: str = ""

    @property
    def payback_requests(self) -> int | None:
        return self.payback.requests if self.payback is not None else None

    @property
    def refetched_tokens(self) -> int:
        """What the results the agent fetched again after it brought back, together."""
        return sum(r.tokens for r in self.refetched)

    def as_dict(self) -> dict[str, Any]:
        p = self.payback
        return {
            "request": self.request,
            "kind": self.kind,
            "source": self.source,
            "note_index": None,
            "before": self.before,
            "after": self.after,
            "sizes_from": self.sizes_from,
            "summariser_cost_usd": _r(self.summariser_cost_usd),
            "summariser_why": self.summariser_why,
            "dropped": self.dropped,
            "literals": self.literals.as_dict(),
            "refetched": [r.as_dict() for r in self.refetched],
            "rewrite_tokens": self.rewrite_tokens,
            "rewrite_cost_usd": _r(self.rewrite_cost_usd),
            "payback_requests": self.payback_requests,
            "payback_why": self.payback_why,
            "modelled": None
            if p is None
            else {
                "spent_usd": _r(p.spent_usd),
                "saved_usd": _r(p.saved_usd),
                "with_usd": _r(sum(p.with_usd)),
                "without_usd": _r(sum(p.without_usd)),
                "requests": len(p.with_usd),
            },
        }


def _r(value: float | None) -> float | None:
    return None if value is None else round(value, 8)


@dataclass(frozen=True)
class Unsent:
    """A compaction or fold no recorded request carried: `pending` (in the active view now: the next request
    carries it), `abandoned` (on a branch the session left) or `superseded` (folded again before any request)."""

    note: Message
    kind: str
    source: str
    fate: str
    why: str
    before: int | None  # the file's figure, else the last request's reported input, else its count
    after: int | None  # pending: the active view's count now; the file's figure where it has one; else None
    sizes_from: str

    def as_dict(self, record) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "source": self.source,
            "fate": self.fate,
            "why": self.why,
            "note_index": record.index_of(self.note.id) if self.note.id in record else None,
            "before": self.before,
            "after": self.after,
            "sizes_from": self.sizes_from,
        }


@dataclass
class CompactionReport:
    session: Session
    cache: CacheReport
    compactions: list[Compaction]
    unsent: list[Unsent] = field(default_factory=list)

    def totals(self) -> dict[str, Any]:
        cs = self.compactions
        summ = [c.summariser_cost_usd for c in cs]
        rew = [c.rewrite_cost_usd for c in cs]
        return {
            "compactions": len(cs),
            "summariser_cost_usd": _r(sum(x for x in summ if x is not None)) if any(x is not None for x in summ) else None,
            "rewrite_cost_usd": _r(sum(x for x in rew if x is not None)) if any(x is not None for x in rew) else None,
            "lost_literals": sum(c.literals.lost_count for c in cs),
            "refetched_tokens": sum(r.tokens for c in cs for r in c.refetched),
            "paid_back": sum(c.payback_requests is not None for c in cs),
        }

    def as_dict(self) -> dict[str, Any]:
        out = []
        for c in self.compactions:
            d = c.as_dict()
            d["note_index"] = self.session.record.index_of(c.note.id) if c.note.id in self.session.record else None
            out.append(d)
        return {
            "file": self.session.source,
            "format": self.session.format,
            "model": self.session.model,
            "children": self.session.children_files(),
            "compactions": out,
            "unsent": [u.as_dict(self.session.record) for u in self.unsent],
            "totals": self.totals(),
        }


def find_compactions(session: Session) -> list[tuple[int, Message]]:
    """(request, note) for every request whose view holds a note the request before did not carry."""
    record, found = session.record, []
    before: Sequence[str] = ()
    for k, request in enumerate(session.trace):
        view = request.view
        if k and added(view, before) is None:  # a view that only adds took nothing out
            had = set(before)
            new = [mid for mid in view if mid not in had and mid in record and record.get(mid).kind == "note"]
            if new:
                found.append((k, record.get(new[-1])))
        before = view
    return found


def carried_notes(session: Session) -> set[str]:
    """The ids of the notes some recorded request's view held. A view that repeats the one before and adds
    after it is read only for what it adds, so the pass costs what changed, not every view whole."""
    record = session.record
    notes = {m.id for m in record if m.kind == "note"}
    carried: set[str] = set()
    if not notes:
        return carried
    before: Sequence[str] = ()
    for request in session.trace:
        view = request.view
        new = added(view, before) if before else None
        carried.update(mid for mid in (view if new is None else new) if mid in notes)
        before = view
    return carried


def _fate(session: Session, note: Message, in_view: set[str]) -> tuple[str, str]:
    if note.id in in_view:
        return "pending", "in the active view now: the next request carries it"
    record = session.record
    folds = (session.manifest or {}).get("context_folds")
    for entry in folds if isinstance(folds, list) else []:
        if isinstance(entry, Mapping) and entry.get("note_index") == record.index_of(note.id) and entry.get("outcome") == "rolled_back":
            return "rolled back", f"its {entry.get('stage', 'fold')} fold was rolled back before any request carried it"
    for event in session.events:
        if isinstance(event, Mapping) and event.get("kind") == "branch" and note.id in (event.get("abandoned") or ()):
            at, line, parent = event.get("at_request"), event.get("line"), event.get("parent_line")
            where = f" (line {line} continued from line {parent})" if line is not None and parent is not None else ""
            return "abandoned", (
                f"on a branch the session left at request {at}{where}: no request carried it"
                if at is not None
                else f"on a branch the session left{where}: no request carried it"
            )
    for other in record:
        replaced = other.metadata.get("context_replaced") if other.kind == "note" and other.id != note.id else None
        if isinstance(replaced, list) and record.index_of(note.id) in replaced:
            return "superseded", (f"folded again into the note at index {record.index_of(other.id)} before any request carried it")
    at = record.index_of(note.id)
    later = next((record[j] for j in range(at + 1, len(record)) if record[j].kind == "note"), None)
    if later is not None:
        return "superseded", (f"left the view before any request carried it; a later fold (note #{record.index_of(later.id)}) followed it")
    return "abandoned", "left the view before any request carried it"


def find_unsent(session: Session, found: Sequence[tuple[int, Message]]) -> list[Message]:
    """The notes of the record no recorded request carried, in the record's order."""
    carried = carried_notes(session) | {note.id for _, note in found}
    return [m for m in session.record if m.kind == "note" and m.id not in carried]


def _events_by_note(session: Session) -> dict[str, Mapping[str, Any]]:
    return {
        e["note_id"]: e
        for e in session.events
        if isinstance(e, dict) and e.get("kind") == "compaction" and isinstance(e.get("note_id"), str)
    }


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _summariser(kind: str, source: str, note: Message, summarisers: list[Child], used: set[str]) -> tuple[float | None, str]:
    """The summariser's cost: the child the reader linked to this note, else the latest unused summariser that
    ended by the note's time; a fold of our own calls no model."""
    if kind == "fold":
        if note.metadata.get("summariser") not in (None, "brief", "deterministic"):
            return None, f"summarised by {note.metadata.get('summariser')}; its cost is not in the file"
        return 0.0, "a deterministic brief written from the span: no model call"
    at = note.created_at
    linked = [c for c in summarisers if c.path not in used and c.note == note.id]
    candidates = linked or [
        c for c in summarisers if c.path not in used and c.note is None and (at is None or c.ended is None or c.ended <= at + 60)
    ]
    if candidates:
        chosen = candidates[0] if linked or at is None else max(candidates, key=lambda c: c.ended or 0.0)
        used.add(chosen.path)
        if chosen.bill_usd is None:
            return None, f"the summariser's model in {chosen.path} has no price"
        t = chosen.totals
        return chosen.bill_usd, (
            f"the summariser's own call ({Path(chosen.path).name}, {t.requests} requests: "
            f"{t.cache_read:,} read from the cache, {t.cache_write:,} written, {t.input:,} fresh, "
            f"{t.output:,} output), its reported usage priced"
        )
    spec = format_named(source)
    if spec is not None and spec.no_summary is not None:
        return None, spec.no_summary
    return None, f"the {source} file holds no summary request"


def _lifetime(session: Session) -> str:
    return "1h" if any(r.usage and r.usage.cache_write_1h for r in session.trace) else "5m"


def dropped_by(session: Session, k: int) -> list[Message]:
    """What the step to request k took out of the view, as the Folds table and the inspector count it (core.model.views)."""
    record, trace = session.record, session.trace
    return [record[i] for i in left_between(record, trace[k - 1].view, trace[k].view)]


def literal_spans(session: Session) -> list[Span]:
    """The literal check to make for every compaction `compaction_report` explains (core.forensics.literals_ahead)."""
    from foldscope.core.forensics.literals_ahead import Span

    return [Span(k, note, dropped_by(session, k), literal_text) for k, note in find_compactions(session)]


def literal_checks(session: Session, fork: bool | None = None, counted_after: bool = False) -> LiteralChecks:
    """The literal checks of every compaction `compaction_report` explains, started in a forked child where it may
    (core.forensics.literals_ahead; `fork` overrides whether); `counted_after`: the session's trace is counted next,
    so its counting child is asked for before the fork (literals_ahead.counting_child_first)."""
    from foldscope.core.forensics.literals_ahead import LiteralChecks

    return LiteralChecks(literal_spans(session), fork, counted_after=session.source if counted_after else None)


def compaction_report(
    session: Session,
    policy: Policy | None = None,
    counter: Counter | None = None,
    cache: CacheReport | None = None,
    literals: LiteralChecks | None = None,
    found: Sequence[tuple[int, Message]] | None = None,
) -> CompactionReport:
    """Every compaction and fold of the session explained; the cache report is built (one count) when not given.
    `literals`: the literal checks started before the count (core.forensics.literals_ahead), else each is made here.
    Without them, a session with compactions has its checks forked (where it may) before that count. `found`: the
    session's find_compactions when the caller has it already (the literal checks' spans were cut from it)."""
    found = find_compactions(session) if found is None else list(found)
    if cache is None:
        return _counted_first(session, policy, counter, literals, found)
    keys = [(k, note.id) for k, note in found]
    ahead = literals.of(keys) if literals is not None else None  # collected last: a child behind gets this report's time
    events = _events_by_note(session)
    summarisers = [c for c in children(session) if c.summariser] if found else []
    used: set[str] = set()
    trace, measured = session.trace, cache.measured
    key_of = FetchKeys()  # a call is read again by the compaction that drops it and by the one before, which it follows
    from foldscope.core.forensics.cause_prices import Pricer

    pricer = Pricer(session.model)
    lifetime = _lifetime(session)
    out: list[Compaction] = []
    for n, (k, note) in enumerate(found):
        prev, this = trace[k - 1], trace[k]
        event = events.get(note.id, {})
        kind = "compaction" if note.metadata.get("compaction") else "fold"
        source = str(event.get("source") or ("foldscope" if kind == "fold" else session.format))
        before, after, sizes_from = _sizes(event, prev, this, measured[k - 1].count_with_head, measured[k].count_with_head)
        dropped = ahead.spans[n].dropped if ahead is not None else dropped_by(session, k)
        end = found[n + 1][0] if n + 1 < len(found) else len(trace)
        summariser_usd, why = _summariser(kind, source, note, summarisers, used)
        row = cache.rows[k]
        rewrite_tokens = row.causes.causes.get("rewrite", 0)
        costs = row.priced.cost_usd
        c = Compaction(
            k,
            kind,
            source,
            note,
            before,
            after,
            sizes_from,
            summariser_usd,
            why,
            dropped_facts(dropped, cache.tokens, key_of),
            LiteralCheck() if ahead is not None else check((literal_text(m) for m in dropped), note.text),  # collected below
            refetched(session, k, end, dropped, cache.tokens, key_of),
            rewrite_tokens,
            None if costs is None else costs.get("rewrite", 0.0),
        )
        prices = pricer(this.model, this.at)  # the summariser ran just before this request
        if prices is None:
            c.payback_why = "the model has no price"
        else:
            sizes = [measured[j].count_with_head for j in range(k, end)]
            spent = summariser_usd if summariser_usd is not None else _modelled_summariser(prices, measured[k - 1], note, counter)
            c.payback = payback(
                measured[k - 1].count_with_head,
                sizes,
                [trace[j].at for j in range(k, end)],
                prices,
                summariser_usd=spent,
                head=measured[k].head,
                lifetime=lifetime,
                before_at=prev.at,
            )
            c.payback_why = (
                "modelled: the requests after it as recorded against the same requests carrying the view "
                "before it, one ideal cache for both, until the next compaction"
                + ("" if summariser_usd is not None else "; the summariser modelled as a read of the view before and the summary as output")
            )
        out.append(c)
    for c, checked in zip(out, (ahead.collect(keys) or ()) if ahead is not None else (), strict=ahead is not None):
        c.literals = checked
    return CompactionReport(session, cache, out, _unsent(session, found, events, policy, counter, cache))


def _counted_first(
    session: Session, policy: Policy | None, counter: Counter | None, literals: LiteralChecks | None, found: list[tuple[int, Message]]
) -> CompactionReport:
    """compaction_report with its cache report counted first (counted_cache_report: one measure of the trace), whose
    count's own child counts the compactions' summaries as it ends, so this process builds no encoder for the
    summariser modelled alone (as the report's, core.readout.report); a session with compactions has its literal
    checks forked (where it may) before that count."""
    counter, summaries = counter or Counter(), [note.text for _, note in found]
    if literals is None and found:
        with literal_checks(session, counted_after=True) as started:
            cache = counted_cache_report(session, policy, counter, summaries)
            return compaction_report(session, policy, counter, cache, started, found)
    return compaction_report(session, policy, counter, counted_cache_report(session, policy, counter, summaries), literals, found)


def _unsent(session: Session, found, events, policy: Policy | None, counter: Counter | None, cache: CacheReport) -> list[Unsent]:
    """Each compaction or fold no recorded request carried, with its fate and the sizes the file or a count gives."""
    notes = find_unsent(session, found)
    if not notes:
        return []
    from foldscope.core.request.measure import Measure

    in_view = set(session.view)
    trace, measured = session.trace, cache.measured
    last = trace[-1] if trace else None
    out = []
    for note in notes:
        event = events.get(note.id, {})
        kind = "compaction" if note.metadata.get("compaction") else "fold"
        source = str(event.get("source") or ("foldscope" if kind == "fold" else session.format))
        fate, why = _fate(session, note, in_view)
        pre = _int(event.get("pre_tokens")) or _int(event.get("tokens_before"))
        post = _int(event.get("post_tokens")) or _int(event.get("tokens_after"))
        froms = []
        if pre is not None:
            froms.append("before: the file's figure")
        elif last is not None and last.usage and last.usage.reported_input:
            pre = last.usage.reported_input
            froms.append("before: the last request's reported input")
        elif measured:
            pre = measured[-1].count_with_head
            froms.append("before: the last request's count")
        if post is not None:
            froms.append("after: the file's figure")
        elif fate == "pending":
            post = Measure(session, policy, counter=counter).next_predicted
            froms.append("after: the next request's predicted input")
        out.append(Unsent(note, kind, source, fate, why, pre, post, "; ".join(froms) or "no figure"))
    return out


def _modelled_summariser(prices, before: Measured, note: Message, counter: Counter | None = None) -> float:
    """The summariser as a read of the view before and the summary as output: the summary counted by `counter` when
    given (its memo may hold it: the report has the counting child count the summaries, core.readout.report), else here."""
    return prices.cost(0, before.count_with_head, 0, 0, (counter.count_text if counter is not None else count_text)(note.text))


def _sizes(event: Mapping[str, Any], prev, this, counted_before: int, counted_after: int) -> tuple[int, int, str]:
    """Tokens before and after: the file's own figures (preTokens, postTokens, tokensBefore), else reported
    input, else the count."""
    pre = _int(event.get("pre_tokens")) or _int(event.get("tokens_before"))
    post = _int(event.get("post_tokens")) or _int(event.get("tokens_after"))
    froms = []
    if pre is None:
        pre = prev.usage.reported_input if prev.usage else counted_before
        froms.append("before: reported input" if prev.usage else "before: measured")
    else:
        froms.append("before: the file's figure")
    if post is None:
        post = this.usage.reported_input if this.usage else counted_after
        froms.append("after: reported input" if this.usage else "after: measured")
    else:
        froms.append("after: the file's figure")
    return pre, post, "; ".join(froms)

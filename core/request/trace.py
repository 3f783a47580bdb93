"""The trace measured: each request's count, calibrated scale and estimate, its decision (D7) and refusal (D4)."""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterable, Iterator, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field, replace
from typing import Any

from foldscope.core.formats.lionagi import build_trace as lionagi_trace
from foldscope.core.formats.registry import format_named, sending_format
from foldscope.core.model.policy import Policy, Resolution
from foldscope.core.model.running_sum import RunningSum, common_start
from foldscope.core.model.session import FullRecord, Message, Request, Session
from foldscope.core.model.shared_start import Shared
from foldscope.core.model.unseen_text import UNSEEN_TEXT, unseen_chars
from foldscope.core.request.compile import IncludedRound, session_tools
from foldscope.core.request.count import Counter, Measurement, estimate
from foldscope.core.request.first_round import decide_first_round, frontier, included_round
from foldscope.core.request.head_priors import head_prior
from foldscope.core.request.predict import Prediction, Predictor, Sent
from foldscope.core.request.scale import keep_scale
from foldscope.core.request.unseen_text import DEFAULT_TOKENS_PER_CHAR, UnseenRate, fit_rate, unseen_tokens

METHOD = "o200k_base count of the compiled request, times the scale"


def build_trace(session: Session) -> list[Request]:
    """The session's requests: the reader's own trace when it filled one, else one request per
    assistant response, compiled from the record before it, with the usage that response recorded."""
    if session.trace:
        return session.trace
    return lionagi_trace(session.record, session.manifest, [])


def holds_no_head(session: Session) -> bool:
    """Whether the session's file (or, for an export, the file it came from) lacks the system prompt and tools."""
    # Its format's declaration says (FormatSpec.unseen_head): the file holds the conversation but not the system
    # prompt or tool definitions the provider was sent, so its reported input carries a head no count sees.
    source = (session.manifest or {}).get("source_format") if isinstance(session.manifest, dict) else None
    return any(spec is not None and spec.unseen_head for spec in (format_named(session.format), format_named(source)))


def stretch_ids(session: Session, trace: Sequence[Request], following: Sequence[str] | None = None) -> list[int]:
    """Per request, its stretch: a new one starts where a note enters the view (the source compacted) or the
    view's system messages change (a head change). A model change starts one too (core.request.predict sees
    each request's model). With `following`, one more id for a next request of that view."""
    notes = {m.id for m in session.record if m.kind == "note"}
    record = session.record
    out: list[int] = []
    heads: tuple[str, ...] | None = None
    views = [r.view for r in trace] + ([tuple(following)] if following is not None else [])
    for view, entered in zip(views, notes_entering(notes, views)):
        system = tuple(m for m in view[:8] if m in record and record.get(m).kind == "system")
        if not out:
            out.append(0)
        else:
            out.append(out[-1] + 1 if entered or system != heads else out[-1])
        heads = system
    return out


def notes_entering(notes: AbstractSet[str], views: Iterable[Sequence[str]]) -> Iterator[bool]:
    """Per view, whether it holds a note the view before did not (`notes.intersection(view) - before`, `before` the
    view before's notes), from what changed: the notes in the start a view shares with the one before stay, so only
    its other ids are looked at, and a request costs its new ids, not its view."""
    before: Sequence[str] = ()
    placed: list[tuple[int, str]] = []  # (position, id) of each note the view before holds, in order
    held: dict[str, int] = {}  # the notes the view before holds, each with how many times
    for view in views:
        k = common_start(before, view, equal=True)
        rest = view[k:]
        yield any(mid in notes and mid not in held for mid in rest)
        while placed and placed[-1][0] >= k:  # the view before's notes past the shared start leave
            mid = placed.pop()[1]
            held[mid] -= 1
            if not held[mid]:
                del held[mid]
        for i, mid in enumerate(rest, k):
            if mid in notes:
                placed.append((i, mid))
                held[mid] = held.get(mid, 0) + 1
        before = view


def unseen_heads(session: Session, counts: Sequence[int], trace: Sequence[Request]) -> list[int]:
    """Per request, the tokens it carried that the file does not hold, for formats that keep no
    system prompt or tools: in each stretch between source compactions, the smallest gap between
    a request's reported input and its count.

    The gap is constant in truth within a stretch (the same system prompt and tools, and after a
    compaction whatever the agent re-attached, such as files it had read); taking the smallest
    keeps tokenizer differences, which grow with the request, out of it. Without this, the scale
    (which never falls) would absorb the head and over-estimate every later, larger request.
    """
    if not holds_no_head(session) or not trace:
        return [0] * len(trace)
    notes = {m.id for m in session.record if m.kind == "note"}
    stretches: list[list[int]] = []
    for k, entered in enumerate(notes_entering(notes, [r.view for r in trace])):
        if not stretches or entered:  # a note entered the view: the source compacted
            stretches.append([])
        stretches[-1].append(k)
    heads: list[int] = []
    head = 0
    for stretch in stretches:
        gaps = [u.reported_input - counts[k] for k in stretch if (u := trace[k].usage) is not None and u.reported_input > 0]
        head = max(0, min(gaps)) if gaps else head
        heads.extend([head] * len(stretch))
    return heads


UNSEEN_RATE = "unseen_rate"  # Session.caches' key: ((record length, requests), the UnseenRate or None)


def unseen_rate(session: Session) -> UnseenRate | None:
    """The tokens per character the session's unseen text counts at (core.request.unseen_text), fitted to its own
    reported input; None when no message names unseen text. Kept with the session until its record or trace grows."""
    key = (len(session.record), len(session.trace))
    kept = session.caches.get(UNSEEN_RATE)
    if kept is not None and kept[0] == key:
        return kept[1]
    rate = _fit_unseen_rate(session)
    session.caches[UNSEEN_RATE] = (key, rate)
    return rate


def _fit_unseen_rate(session: Session) -> UnseenRate | None:
    """Per stretch, each reported request's input less the count of its view with every unseen part at no tokens,
    against the unseen characters of its view: the slope is the rate (core.request.unseen_text.fit_rate), the default
    where the reports cannot measure it. Fitted to the same count the rate then enters (a counter of its own, under
    the default policy), so the unseen head the trace takes from the same reports is the fit's intercept."""
    chars = sum(unseen_chars(m) for m in session.record if UNSEEN_TEXT in m.metadata)
    if not chars:
        return None
    trace = build_trace(session)
    counter = Counter()
    counter.use_unseen_rate(0.0)  # the text the file holds, its markers out
    tools, policy, record = session_tools(session), Policy(), session.record
    hidden: RunningSum[Message] = RunningSum(unseen_chars)
    stretches: dict[int, list[tuple[int, int]]] = {}
    for request, view, stretch in zip(trace, trace_views(record, trace), stretch_ids(session, trace)):
        usage = request.usage
        if usage is None or usage.reported_input <= 0:
            continue
        held = counter.measure(view, record=record, policy=policy, tools=tools).count
        stretches.setdefault(stretch, []).append((hidden.total(view), usage.reported_input - held))
    fitted = fit_rate(list(stretches.values()))
    if fitted is None:
        return UnseenRate(DEFAULT_TOKENS_PER_CHAR, 0, chars)
    return UnseenRate(fitted[0], fitted[1], chars)


PARTIAL_SHARE = 0.5  # a file that accounts for less than this of a request's reported input is said to be partial


def partial_file_warning(
    session: Session, rows: Sequence[RequestRow], views: Sequence[Sequence[Message]], rate: UnseenRate | None, untrue: Collection[int] = ()
) -> str | None:
    """One line when the file accounts for less than half of its largest reported request: the text it holds (its
    unseen parts out) plus the head its agent is known to send (core.request.head_priors), against the reported input.
    The rest is text the file does not hold (sanitised, or a session it holds only the end of), so every size
    drawn from it is an estimate; None when it accounts for half or more, or nothing was reported. Reports that
    cannot be true (`untrue`: both neighbours contradict them) are not measured against."""
    reported = [(row.reported_input, k) for k, row in enumerate(rows) if row.reported_input and k not in untrue]
    if not reported:
        return None
    top, k = max(reported)
    row = rows[k]
    unseen = sum(unseen_tokens(m, rate.tokens_per_char) for m in views[k]) if rate is not None else 0
    held = max(0, row.own_count - unseen)
    prior = head_prior(sending_format(session), row.model or session.model) if holds_no_head(session) else None
    known = held + (prior.tokens if prior is not None else 0)
    if known >= PARTIAL_SHARE * top:
        return None
    head = f" and {prior.tokens:,} the head {session.format} sends" if prior is not None else ""
    why = (
        f"{rate.chars:,} characters of it were sanitised, counted at {rate.describe()}"
        if rate is not None
        else "the file holds only part of the session"
    )
    return (
        f"{session.source}: the file accounts for {known / top:.0%} of request {k}'s reported input ({held:,} "
        f"tokens in its text{head}, of {top:,}); {why}: its sizes are estimates"
    )


def use_unseen_rate(session: Session, counter: Counter) -> UnseenRate | None:
    """Set the counter to count the session's unseen text at its rate (unseen_rate); the rate, or None."""
    rate = unseen_rate(session)
    if rate is not None:
        counter.use_unseen_rate(rate.tokens_per_char)
    return rate


def unseen_head(session: Session, counts: Sequence[int], trace: Sequence[Request]) -> int:
    """The unseen head of the session's latest stretch: what its next request would carry."""
    heads = unseen_heads(session, counts, trace)
    return heads[-1] if heads else 0


@dataclass(frozen=True)
class LargestPart:
    index: int | None  # the message's index in the full record (a candidate copy: its original's)
    kind: str
    tokens: int

    def __str__(self) -> str:
        return part_words(self.index, self.kind, self.tokens)


# A part's kind as `view` and the lists name it (core.readout.document.KIND_LABELS), not the record's own word.
_PART_KIND = {"action_request": "call", "action_response": "result"}


def part_words(index: int | None, kind: str, tokens: int) -> str:
    """One of a refused request's largest parts as the lists name it: "#11 result 10,190", or its system and tools
    block (no message of the record when the file holds no system prompt) as such rather than "#None system"."""
    said = "the system and tools block" if index is None else f"#{index} {_PART_KIND.get(kind, kind)}"
    return f"{said} {tokens:,}"


@dataclass(frozen=True)
class Refusal:
    """A request at or past the ceiling, refused before the send (D4 steps 1 and 3)."""

    estimate: int
    ceiling: int
    count_with_head: int  # the exact o200k count of the request, its unseen head included: what the scale multiplies
    scale: float
    parts: tuple[LargestPart, ...] = ()
    # D4: the tool calls the request would carry without their results (core.request.plan.unanswered_calls), named;
    # such a request is refused whatever its size
    unanswered: tuple[str, ...] = ()
    unseen_head: int = 0  # of `count_with_head`, the head the file does not hold (estimated from reported input)

    @property
    def own_count(self) -> int:
        """foldscope's own count of what the file holds (RequestRow.own_count): `count_with_head` less the unseen head."""
        return self.count_with_head - self.unseen_head

    def __str__(self) -> str:
        if self.unanswered:
            return "refused: a request never carries a tool call without its result, and this one would carry " + "; ".join(self.unanswered)
        parts = ", ".join(map(str, self.parts))
        counted = (
            f"(counted {self.own_count:,} + unseen head {self.unseen_head:,})" if self.unseen_head else f"counted {self.count_with_head:,}"
        )
        return f"refused: estimate {self.estimate:,} is at or past the ceiling of {self.ceiling:,} ({counted} x scale {self.scale:.4g})" + (
            f"; largest parts: {parts}" if parts else ""
        )


def record_index(message: Message | None, record: FullRecord | None) -> int | None:
    if message is None or record is None:
        return None
    for mid in (message.id, message.clipped_from):
        if mid is not None and mid in record:
            return record.index_of(mid)
    return None


def refusal_for(
    measurement: Measurement, ceiling: int | None, scale: float, record: FullRecord | None, reported: int | None = None, unseen: int = 0
) -> Refusal | None:
    """A Refusal when the estimate (or a reported input, cache reads and writes included) is at or past the ceiling."""
    size = estimate(measurement.count + unseen, scale)
    if ceiling is None or max(size, reported or 0) < ceiling:
        return None
    top = measurement.largest(3)
    parts = tuple(LargestPart(record_index(p.message, record), p.kind, p.tokens) for p in top)
    return Refusal(size, ceiling, measurement.count + unseen, scale, parts, unseen_head=unseen)


def check_request(
    messages: Sequence[Message],
    ceiling: int | None,
    scale: float = 1.0,
    *,
    record: FullRecord | None = None,
    policy: Policy | None = None,
    tools: list | None = None,
    counter: Counter | None = None,
) -> Refusal | None:
    """Count a view as it would be sent and refuse it at or past the ceiling, with its three largest parts."""
    m = (counter or Counter()).measure(messages, record=record, policy=policy, tools=tools)
    return refusal_for(m, ceiling, scale, record)


NOTICE_AT = 0.8  # D4's one-line notice: at or past 80% of the ceiling; Amendment 3's fold line leaves it unchanged


def action_for(size: int, ceiling: int | None) -> str:
    """none under 80% of the ceiling, notice at or past it, refuse at or past the ceiling (D4, D7)."""
    if ceiling is None:
        return "none"
    if size >= ceiling:
        return "refuse"
    return "notice" if size >= NOTICE_AT * ceiling else "none"


@dataclass(frozen=True, kw_only=True)
class RequestRow:
    """One request measured: the row `foldscope requests` prints."""

    index: int
    estimate: int
    count_with_head: int  # the exact o200k count of the compiled request, its unseen head included: what the scale multiplies
    scale: float
    reported_input: int | None
    prefix_share: float | None
    over_ceiling: bool
    refusal: Refusal | None = None
    diverges: dict[str, Any] | None = None  # where the next request first differs, and why (core.request.prefix)
    unseen_head: int = 0  # the head this request carried that the file does not hold (its stretch's)
    first_round: IncludedRound | None = field(default=None, compare=False)  # the included round it compiled with
    # Predicted input (core.request.predict): the best forecast of the reported input, from what was known before
    # the send; the size a recorded request is shown with everywhere. `estimate` stays the ADR's, for the ceiling.
    predicted: int = 0
    predicted_from: int | str = "count"  # the request it was anchored on, or `count` with no anchor
    predicted_estimated: bool = False  # part of it is estimated: text a sanitised file no longer holds, or a table head
    flagged: bool = False  # its report disagrees wildly with its neighbours: not trusted by the prediction
    # before the session's first report: where the head its prediction adds came from (core.request.head_priors)
    predicted_head_source: str | None = None
    reported_over_ceiling: bool = False  # the provider's own count was at or past the ceiling
    model: str | None = None
    stretch: int = 0
    prediction: Prediction | None = field(default=None, compare=False)  # the rule it was made by (Prediction.size)
    # its reported usage is foldscope's estimate, shared out of totals (core.model.session.estimated_usage), not a report
    reported_estimated: bool = False

    @property
    def headline(self) -> int:
        """The size this request is shown with: its predicted input."""
        return self.predicted

    @property
    def own_count(self) -> int:
        """foldscope's own count of what the file holds for this request: the compiled request without the unseen
        head (which is estimated from the reported input, so a count with it would only echo the report). Every
        screen that says "counted" shows this; `count_with_head` is it with the head, what the scale multiplies."""
        return self.count_with_head - self.unseen_head

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "estimate": self.estimate,
            "counted": self.own_count,
            "unseen_head": self.unseen_head,
            "scale": round(self.scale, 6),
            "reported_input": self.reported_input,
            "prefix_share": self.prefix_share,
            "over_ceiling": self.over_ceiling,
            "diverges": self.diverges,
            "predicted": self.predicted,
            "predicted_from": self.predicted_from,
            "predicted_estimated": self.predicted_estimated,
            "predicted_head_source": self.predicted_head_source,
            "flagged": self.flagged,
            "reported_over_ceiling": self.reported_over_ceiling,
            "model": self.model,
            **({"reported_estimated": True} if self.reported_estimated else {}),
        }


class Decisions(Sequence[dict[str, Any]]):
    """The context decisions a measured trace records, the ceiling's then one a request, each made from its request's
    row when read: kept as dicts they held a second copy of every row's figures (5 MB at 50,000 messages,
    docs/performance.md), and only record_into reads them all."""

    __slots__ = ("_resolution", "_model", "_rows", "_actions", "_frontiers")

    def __init__(
        self, resolution: Resolution, model: str | None, rows: Sequence[RequestRow], actions: Sequence[str], frontiers: Sequence[str | None]
    ) -> None:
        self._resolution, self._model, self._rows, self._actions, self._frontiers = resolution, model, rows, actions, frontiers

    def __len__(self) -> int:
        return 1 + len(self._actions)

    def __getitem__(self, k: Any) -> Any:
        if isinstance(k, slice):
            return [self[i] for i in range(*k.indices(len(self)))]
        if k < 0:
            k += len(self)
        if not 0 <= k < len(self):
            raise IndexError(k)
        resolution = self._resolution
        if k == 0:
            return {
                "type": "context_decision",
                "request": None,
                "ceiling": resolution.ceiling,
                "source": resolution.source,
                "why": resolution.why,
                "model": self._model,
            }
        row, frontier = self._rows[k - 1], self._frontiers[k - 1]
        return {
            "type": "context_decision",
            "request": row.index,
            "ceiling": resolution.ceiling,
            "source": resolution.source,
            "method": METHOD,
            "size": row.estimate,
            "counted": row.count_with_head,
            "scale": row.scale,
            "unseen_head": row.unseen_head,
            "reported_input": row.reported_input,
            "action": self._actions[k - 1],
            "predicted": row.predicted,
            **({"frontier": frontier} if frontier else {}),
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]  # compared by value, as the tuple it stands for

    def __repr__(self) -> str:
        return f"Decisions({list(self)!r})"


@dataclass(frozen=True)
class TraceReport:
    """Every request of the trace measured (core.request.trace_measure.TraceMeasure): its rows and decisions, the scale
    calibrated over them and the next request's prediction. Nothing of it is kept with the session but by record_into."""

    resolution: Resolution
    policy: Policy
    rows: tuple[RequestRow, ...] = ()
    decisions: Sequence[dict[str, Any]] = ()  # Decisions: made from the rows when read
    scale: float = 1.0
    unseen_head: int = 0
    prefix: bool = True  # whether the rows carry their prefix share and divergence
    predicted: bool = True  # whether the rows carry their predicted input (measure_trace's `predict`)
    scales: dict[str | None, float] = field(default_factory=dict)  # the ADR scale per model, after the trace
    next_predicted: Prediction | None = None  # the next request's (the active view's) predicted input
    next_count_with_head: int = 0  # the active view's compiled count, with the latest stretch's unseen head
    next_count: int = 0  # the active view's count as the prediction counts it (core.request.provider_text)
    next_rule: NextRule | None = None  # how the next request is predicted, for a view edited since
    warnings: tuple[str, ...] = ()
    partial: str | None = None  # the file accounts for under half of what was sent (partial_file_warning); also in warnings
    decision: dict[str, Any] | None = None  # the first round as the trace's requests decided it (not stored)

    def record_into(self, session: Session) -> TraceReport:
        """Keep the measure with the session: the latest stretch's unseen head, the decisions joining its events and
        the scale (never lowering a kept one); returns the report with the scale as kept."""
        session.unseen_head = self.unseen_head
        session.events.extend(self.decisions)
        return replace(self, scale=keep_scale(session, self.scale))


class LazyViews(Sequence):
    """Request k's view as messages, made when asked (one request's, for a warning): not every view of a long trace."""

    def __init__(self, record: FullRecord, trace: Sequence[Request]) -> None:
        self.record, self.trace = record, trace

    def __len__(self) -> int:
        return len(self.trace)

    def __getitem__(self, k):
        return self.record.found(self.trace[k].view)


def first_rounds(session: Session, policy: Policy, counter: Counter, views: Iterable[Sequence[Message]]) -> list:
    """Each request's included first round while caching: decided once, by the first request carrying it whole
    (without writing the session; a stored decision stands)."""
    return [first_round for _, first_round in rounds_of(session, policy, counter, views)]


def rounds_of(
    session: Session, policy: Policy, counter: Counter, views: Iterable[Sequence[Message]], frontiers: list[str | None] | None = None
) -> Iterator[tuple[Sequence[Message], Any]]:
    """Each view with its included first round, as first_rounds decides them, one view at a time. With a
    `frontiers` list, each request after the decision appends whether it compiles the round as decided
    ("same") or not ("changed": Amendment 4's frontier, a cache miss; the round is not decided again)."""
    decision = None
    for messages in views:
        decided_here = False
        if policy.caching and decision is None:
            decision = decide_first_round(session, policy, counter, view=list(messages), store=False)
            decided_here = decision is not None
        if frontiers is not None:
            frontiers.append(None if decided_here else frontier(session, policy, decision, list(messages)))
        yield messages, included_round(decision)


def trace_views(
    record: FullRecord, trace: Sequence[Request], ids: Sequence[str] = (), view: Shared[Message] | None = None
) -> Iterator[Shared[Message]]:
    """Each request's view as the record's messages (ids the record lacks left out), one at a time; a view
    that extends the one before shares its messages (core.model.shared_start) and looks up only the new ids.
    `ids` and `view`: the request before the first's (a kept pass going on, core.request.trace_resume)."""
    view = view if view is not None else Shared()
    for request in trace:
        n = len(ids)
        new = request.view[n:] if len(request.view) >= n and common_start(request.view, ids, equal=True) == n else None
        if new is None:
            view = Shared(record.found(request.view))
        else:
            view = view.grown(len(view), record.found(new))
        ids = request.view
        yield view


def next_stretch(session: Session, last_view: Sequence[str], last_stretch: int, following: Sequence[str]) -> int:
    """The stretch a view following `last_view` (of stretch `last_stretch`) falls in, as stretch_ids numbers it: a
    new one when it brings in a note or its system messages change."""
    record = session.record
    notes = {m.id for m in record if m.kind == "note"}
    entered = list(notes_entering(notes, [last_view, following]))[1]

    def system(view: Sequence[str]) -> tuple[str, ...]:
        return tuple(m for m in view[:8] if m in record and record.get(m).kind == "system")

    return last_stretch + 1 if entered or system(following) != system(last_view) else last_stretch


@dataclass(frozen=True)
class NextRule:
    """How the next request is predicted, kept so an edited view is predicted as `requests` and `inspect` of the
    edited session predict it: the predictor after every recorded report (copied for each prediction), the model,
    and the last recorded request's view and stretch."""

    predictor: Predictor
    model: str | None
    index: int  # the next request's index: the number of recorded requests
    last_view: Sequence[str] = ()
    last_stretch: int = 0

    def predict(self, session: Session, following: Sequence[str], count: int) -> Prediction:
        """The prediction for a next request of view `following`, whose count as the predictions count it is `count`."""
        stretch = next_stretch(session, self.last_view, self.last_stretch, following) if self.index else 0
        return copy.deepcopy(self.predictor).predict(self.index, Sent(count, self.model, stretch))

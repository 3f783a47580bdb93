"""Replay strategies: each decides every request's view from the session's fixed recorded messages."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, NamedTuple, Protocol

from foldscope.core.fold.history import Folding
from foldscope.core.model.one_line import collapsed_start
from foldscope.core.model.policy import Policy
from foldscope.core.model.running_sum import common_start
from foldscope.core.model.session import Message, Session
from foldscope.core.model.shared_start import Shared
from foldscope.core.replay.brief_counts import BriefCounts
from foldscope.core.request.estimators import ADR, PREDICTED, PredictedSize
from foldscope.core.request.measure import Measure
from foldscope.core.request.tokens import count_text
from foldscope.core.request.trace import trace_views

if TYPE_CHECKING:
    import msgspec
else:
    from foldscope.core.model.canonical import msgspec  # imported its way (core.model.canonical._msgspec)


class Sizes(Protocol):
    """What a strategy asks of the measure (core.request.measure.Measure): the policy and its ceiling, a view's
    estimate and each message's part of it."""

    @property
    def ceiling(self) -> int | None: ...

    @property
    def policy(self) -> Policy: ...

    def estimate(self, view: Sequence[Message]) -> int: ...

    def sizes(self, view: Sequence[Message]) -> Mapping[str, float]: ...

    def alone(self, message: Message) -> float: ...

    @property
    def measure(self) -> Measure: ...


BAND_BRIEF_CHARS = 2000  # pi-fold bounds each brief at 2,000 characters
BAND_MAX = 0.80  # pi-fold maxTarget: a commit fires when the view reaches it, a fraction of the ceiling
BAND_MIN = 0.20  # pi-fold minTarget: a commit folds down to it
CONSOLIDATE_AFTER = 10  # pi-fold consolidateAfter: how many visible roots (briefs) a parent brief is owed
SUMMARY_CHARS = 8000  # a compaction summary: a few thousand tokens, as native compaction writes
COMPACT_PROMPT = (
    "Summarise the conversation so far for a continuation: the task, what was done, what was found, "
    "what remains. The session will continue from this summary alone."
)


class Step(msgspec.Struct, frozen=True):
    """One request a strategy sends: its view, the recorded request it stands for, and what it changed (a msgspec
    Struct, frozen as a frozen dataclass and made in C: one a request a strategy)."""

    view: Sequence[Message]  # a tuple, or a Shared grown from the view before (core.model.shared_start)
    request: int  # the recorded request (a summary call: the one it precedes)
    kind: str = "request"  # or "summary", compaction's own call
    folds: int = 0  # commits or compactions landed just before this request
    folded: int = 0  # messages those took out of the view
    output: float | None = None  # a summary call's output; None: the recorded request's output
    refused: bool = False  # refused before the send (D4 step 3): nothing sent, nothing billed
    floor: int | None = None  # a refused request's floor view estimate: what no fold could go under
    predicted: int | None = None  # where the fold decided on the predicted input: that size of the view sent
    # The measure the view compiles under, when not the lab's: adr's is the fold's own, over its working session
    # (its record holds the fold's notes and copies, its first round is the one the replay's requests decided).
    measure: Measure | None = None


def material(session: Session) -> list[list[Message]]:
    """Per recorded request, the messages it first carries: the fixed input every strategy starts from.

    A message is material from the first recorded view that holds it, in record order. The source's
    own management (its notes and clipped copies) is left out: each strategy makes its own.
    """
    return [new for new, _ in arrivals(session)]


class Arrival(NamedTuple):
    """What one recorded request changes in every strategy's input: the messages it first carries (`new`, in record
    order) and the ones a rewind took out of the view there (`dropped`, ids), which leave before `new` joins."""

    new: list[Message]
    dropped: frozenset[str]


def abandoned_ids(session: Session) -> set[str]:
    """Every message a `branch` event names abandoned: a Claude Code rewind or edited prompt, a Gemini CLI
    `$rewindTo` or rollback (docs/readers.md). A rewind is the user's act, not context management."""
    return {
        mid
        for e in session.events
        if isinstance(e, dict) and e.get("kind") == "branch"
        for mid in e.get("abandoned") or ()
        if isinstance(mid, str)
    }


_NONE_DROPPED: frozenset[str] = frozenset()  # a request's that dropped nothing, shared


def arrivals(session: Session) -> list[Arrival]:
    """Per recorded request, the material it first carries and the material a rewind dropped there: at the first
    recorded request whose view no longer holds an abandoned message every strategy drops it, as the recording
    did; a message that comes back into a recorded view later is material again there."""
    record, out = session.record, []
    index_of = record.index_of
    seen: set[str] = set()
    abandoned = abandoned_ids(session)
    live: set[str] = set()  # abandoned messages some strategy's input still holds
    before: Sequence[str] = ()
    for request in session.trace:
        new: list[Message] = []
        dropped = _NONE_DROPPED
        if live:
            held = set(request.view)
            dropped = frozenset(mid for mid in live if mid not in held)
            live -= dropped
            seen -= dropped
        # Every id of the view before is seen already: only the ids after the views' shared start are looked at;
        # a message a rewind dropped is looked for anywhere in the view, should it come back.
        start = 0 if dropped else common_start(before, request.view, equal=True)
        before = request.view
        last, ordered = -1, True  # a view mostly lists what it first carries in record order: then no sort
        for mid in request.view[start:]:
            if mid in seen:
                continue
            seen.add(mid)
            i = index_of(mid)
            m = record[i]
            if m.kind != "note" and not m.is_clipped_copy:
                new.append(m)
                ordered = ordered and i > last
                last = i
                if mid in abandoned:
                    live.add(mid)
        if not ordered:
            new.sort(key=lambda m: index_of(m.id))
        out.append(Arrival(new, dropped))
    return out


def arrivals_of(session: Session, measure: Sizes) -> list[Arrival]:
    """The session's arrivals as the measure keeps them (Layouts.arrivals: made once for every strategy it runs, and
    before a fork for every child), else made here."""
    kept = getattr(measure, "arrivals", None)
    return kept(session) if kept is not None else arrivals(session)


def without(view: Sequence[Message], dropped: frozenset[str]) -> list[Message]:
    """The view less what a rewind dropped: the messages themselves, and a strategy's brief that stood for nothing
    else (a brief that also holds kept messages stays, as a summary once written does)."""
    return [
        m
        for m in view
        if m.id not in dropped and not (m.kind == "note" and (ids := m.metadata.get("folded_ids")) and all(i in dropped for i in ids))
    ]


def recorded_views(session: Session) -> Iterator[Sequence[Message]]:
    """Each recorded request's view as messages; a view that extends the one before reuses its messages."""
    return trace_views(session.record, session.trace)


def recorded(session: Session, measure: Sizes) -> Iterator[Step]:
    """The views the source actually used, its own compactions included."""
    for k, view in enumerate(recorded_views(session)):
        yield Step(view, k)


def none(session: Session, measure: Sizes) -> Iterator[Step]:
    """Everything so far, no management."""
    view: Shared[Message] = Shared()
    for k, (new, dropped) in enumerate(arrivals_of(session, measure)):
        if dropped:
            view = regrown(view, without(view, dropped))
        view = view.grown(len(view), new)
        yield Step(view, k)


def regrown(sent: Shared[Message], view: Sequence[Message]) -> Shared[Message]:
    """`view` as a Shared grown from the view sent before: the start they share keeps its chunks, so the measure,
    the counter and the layout see how much two requests share without a compare (core.model.shared_start)."""
    keep = common_start(sent, view)
    return sent.grown(keep, view[keep:])


def first_index(session: Session, m: Message) -> int:
    """The record index a message stands for: its own, or for a note the first one it replaced."""
    if m.id in session.record:
        return session.record.index_of(m.id)
    return int(m.metadata.get("context_first_index", 0))


def brief(session: Session, span: list[Message], max_chars: int) -> str:
    """A deterministic brief of a span, written from the span itself, bounded to max_chars."""
    first, last = first_index(session, span[0]), first_index(session, span[-1])
    lines = [f"[folded {len(span)} messages, record #{first} to #{last}; the originals stay in the full record]"]
    size = len(lines[0])
    for m in span:
        if size > max_chars:
            break  # the lines after this one would be cut off: a compaction's span is the whole view
        label = m.kind if m.kind != "action_request" else "call"
        lines.append(f"- {label}: {collapsed_start(m.text, 110)}")
        size += 1 + len(lines[-1])
    out = "\n".join(lines)
    return out if len(out) <= max_chars else out[: max_chars - 1] + "…"


FILL = " x"  # one o200k token a time: what stands for the summary's text beyond the brief
MARKER = "\n[summary modelled on the session's own compactions]"


@cache
def _marker_tokens() -> int:
    """The marker's count: the same text every compaction, counted once."""
    return count_text(MARKER)


def sized_brief(session: Session, span: list[Message], tokens: int) -> str:
    """A brief of the span counting `tokens` o200k tokens, give or take one: cut when longer, filled when shorter."""
    text = brief(session, span, max(64, tokens * 4))
    counts = BriefCounts(text)  # each cut is a prefix of the brief: counted from the brief's count, as count_text counts it
    n = counts.prefix(len(text))
    while n > tokens and len(text) > 64:
        text = text[: max(64, len(text) * tokens // n)]
        n = counts.prefix(len(text))
    gap = tokens - n - _marker_tokens()
    return text + MARKER + FILL * gap if gap > 0 else text


def folded_ids(span: Sequence[Message]) -> Shared[str]:
    """The record ids a brief of `span` stands for, in order (a brief's own, for a brief in it), grown from the
    first brief's when the span starts with one: compaction's every summary holds the one before, so copying
    its ids would cost the whole session's length at every compaction."""
    first = span[0].metadata.get("folded_ids") if span and span[0].kind == "note" else None
    ids: Shared[str] = first if isinstance(first, Shared) else Shared()
    new = [
        i
        for m in (span[1:] if isinstance(first, Shared) else span)
        for i in (m.metadata.get("folded_ids", ()) if m.kind == "note" else (m.id,))
    ]
    return ids.grown(len(ids), new)


def make_note(session: Session, span: list[Message], note_id: str, max_chars: int, tokens: int | None = None) -> Message:
    """A brief of `span`; its `folded_ids` (a Shared) are the record messages it stands for. With `tokens`, the
    brief is cut or filled to that many tokens: a summary the size the session's own summaries were."""
    ids = folded_ids(span)
    metadata = {"context_first_index": first_index(session, span[0]), "folded_ids": ids}
    children = [m.id for m in span if m.kind == "note"]
    if children:
        metadata["children"] = children  # the briefs it nests (pi-fold: folds nest, never partly overlap)
    return Message(
        id=note_id,
        kind="note",
        created_at=span[-1].created_at,
        content={"assistant_response": brief(session, span, max_chars) if tokens is None else sized_brief(session, span, tokens)},
        metadata=metadata,
    )


def head_length(view: list[Message]) -> int:
    """How many leading system messages the view has: the stable segment, never folded."""
    n = 0
    while n < len(view) and view[n].kind == "system":
        n += 1
    return n


def units(view: list[Message], undelivered: set[str]) -> list[tuple[int, int]]:
    """Closed units of a view as [start, end) ranges: an instruction, or an assistant turn with its tool
    calls and results. The head, the task instruction, notes and any unit still open (holding a message
    no request has carried yet, or the tail) are not units."""
    start = head_length(view)
    if start < len(view) and view[start].kind == "instruction":
        start += 1  # the task instruction stays
    spans, open_at = [], None
    for i in range(start, len(view)):
        m, prev = view[i], view[i - 1] if i else None
        begins = m.kind in ("instruction", "assistant", "note") or (
            m.kind == "action_request" and prev is not None and prev.kind == "action_response"
        )
        if begins and open_at is not None:
            spans.append((open_at, i))
            open_at = None
        if m.kind == "note":
            continue  # a standing fold is never folded again here
        if open_at is None:
            open_at = i
    # the last unit is the open tail: never marked
    return [(a, b) for a, b in spans if not any(view[i].id in undelivered for i in range(a, b))]


def band(session: Session, measure: Sizes) -> Iterator[Step]:
    """pi-fold's band: closed units are marked and change nothing; when the view reaches band_max of the
    ceiling one commit folds standing marks, stalest first, down to band_min, in a single rewrite."""
    view: list[Message] = []  # for the commit's own reading; each step sends it as a Shared grown from the last
    sent: Shared[Message] = Shared()
    for k, (new, dropped) in enumerate(arrivals_of(session, measure)):
        if dropped:
            view = without(view, dropped)
            sent = regrown(sent, view)
        view.extend(new)
        sent = sent.grown(len(sent), new)
        folds = folded = 0
        if measure.ceiling and measure.estimate(sent) >= BAND_MAX * measure.ceiling:
            view, folded = commit(session, view, {m.id for m in new}, measure, sent)
            sent = regrown(sent, view)
            folds = 1 if folded else 0
        yield Step(sent, k, folds=folds, folded=folded)


def commit(
    session: Session, view: list[Message], undelivered: set[str], measure: Sizes, sent: Sequence[Message] | None = None
) -> tuple[list[Message], int]:
    """Apply standing marks stalest first until the view would be at band_min; adjacent ones share a brief.
    `sent`: the same view as the step holds it (a Shared), which the measure compares at no cost."""
    goal = BAND_MIN * (measure.ceiling or 0)
    measured = view if sent is None else sent
    sizes = measure.sizes(measured)
    projected: float = measure.estimate(measured)  # less the sizes, which are scaled (float)
    chosen: list[tuple[int, int]] = []
    for a, b in units(view, undelivered):
        if projected <= goal:
            break
        chosen.append((a, b))
        projected -= sum(sizes.get(view[i].id, 0) for i in range(a, b))
    runs: list[list[int]] = []
    for a, b in chosen:
        if runs and runs[-1][1] == a:
            runs[-1][1] = b
        else:
            runs.append([a, b])
    out, at, folded = [], 0, 0
    for a, b in runs:
        out.extend(view[at:a])
        span = view[a:b]
        note = make_note(session, span, f"band:{span[0].id}:{span[-1].id}", BAND_BRIEF_CHARS)
        if measure.alone(note) < sum(sizes.get(m.id, 0) for m in span):
            out.append(note)
            folded += len(span)
        else:
            out.extend(span)  # a fold must strictly shrink the view
        at = b
    out.extend(view[at:])
    out, nested = consolidate(session, out, sizes, measure)
    return out, folded + nested


def consolidate(session: Session, view: list[Message], sizes: Mapping[str, float], measure: Sizes) -> tuple[list[Message], int]:
    """pi-fold's nesting, in the commit's one rewrite: once the view holds CONSOLIDATE_AFTER visible roots (briefs no
    brief in the view holds), the stalest CONSOLIDATE_AFTER of them, with what lies between them, fold into one parent
    brief, itself a root. Without it every commit of a long session leaves one more brief that is never folded again,
    until the briefs alone pass max_target and every request commits. `sizes`: the pre-commit view's parts."""
    taken = 0
    while True:
        roots = [i for i, m in enumerate(view) if m.kind == "note"]
        if len(roots) < CONSOLIDATE_AFTER:
            return view, taken
        a, b = roots[0], roots[CONSOLIDATE_AFTER - 1] + 1
        span = view[a:b]
        ids = span[0].metadata["folded_ids"], span[-1].metadata["folded_ids"]
        parent = make_note(session, span, f"band:{ids[0][0]}:{ids[1][-1]}:parent", BAND_BRIEF_CHARS)
        size = sum(measure.alone(m) if m.kind == "note" else sizes.get(m.id, 0) for m in span)
        if measure.alone(parent) >= size:
            return view, taken  # a fold must strictly shrink the view
        view = view[:a] + [parent] + view[b:]
        taken += len(span)


def compaction(session: Session, measure: Sizes) -> Iterator[Step]:
    """Native compaction: one summary call over the whole view, then start again from the stable head and the
    summary. The summary call is a request of its own; the summary's size and the call's output are the session's
    own compactions' where it has any (summary_model), else a brief.

    At the agent's compaction point (the measure's `compact_point`, where `tune --compact-at` put the agent's own
    knob) it compacts as the agents do: after a response, when the request just sent and its output reached the
    point (Claude Code's check on the last usage, Codex's on the turn's total, pi's on the context after a reply), so
    the request that crosses the point is sent as it is. Else, at fold_at of the ceiling, before the send."""
    model = summary_model(session)
    point = getattr(measure, "compact_point", None)
    view: list[Message] = []
    sent: Shared[Message] = Shared()  # the view as each step sends it, grown from the one before
    last: float | None = None  # with a compaction point: the request sent before, and its output
    for k, (new, dropped) in enumerate(arrivals_of(session, measure)):
        if dropped:
            view = without(view, dropped)
            sent = regrown(sent, view)
        kept: Sequence[Message] = ()
        if point is not None:
            # The agent compacts what it held after the last response; the prompt that follows stays after the summary.
            at = next((i for i, m in enumerate(new) if m.kind == "instruction"), len(new))
            new, kept = new[:at], new[at:]
        view.extend(new)
        sent = sent.grown(len(sent), new)
        head = head_length(view)
        if point is not None:
            over = last is not None and last >= point
        else:
            over = bool(measure.ceiling) and measure.estimate(sent) >= measure.policy.fold_at * (measure.ceiling or 0)
        folds = folded = 0
        if over and any(view[i].kind != "note" for i in range(head, len(view))):
            body = view[head:]
            prompt = Message(id=f"compaction-prompt:{k}", kind="instruction", created_at=None, content={"instruction": COMPACT_PROMPT})
            note = make_note(session, body, f"compaction:{k}", SUMMARY_CHARS, model.tokens)
            output = measure.alone(note) if model.output is None else model.output
            yield Step(sent.grown(len(sent), (prompt,)), k, kind="summary", output=output)
            view = view[:head] + [note]
            sent = sent.grown(head, (note,))
            folds, folded = 1, len(body)
        view.extend(kept)
        sent = sent.grown(len(sent), kept)
        yield Step(sent, k, folds=folds, folded=folded)
        if point is not None:
            usage = session.trace[k].usage
            last = measure.estimate(sent) + (usage.output if usage is not None else 0)


@dataclass(frozen=True)
class SummaryModel:
    """The size a replayed compaction's summary is given, from the session's own compactions."""

    tokens: int | None  # the summary's tokens (None: the deterministic brief, SUMMARY_CHARS at most)
    output: int | None  # the summary call's output tokens (None: the summary's own size)
    compactions: int  # the session's own compactions it was modelled from
    before: int | None  # their median size before (the file's figure, else the last request's reported input)
    why: str


def summary_model(session: Session) -> SummaryModel:
    """The session's own compaction summaries (each note's exact count), their median the modelled summary; the
    summariser's reported output (Claude Code's agent-acompact files) as the summary call's output where recorded.
    A session with none of its own is given the deterministic brief, as before."""
    events = {e.get("note_id"): e for e in session.events if isinstance(e, dict) and e.get("kind") == "compaction"}
    notes = [m for m in session.record if m.kind == "note" and m.metadata.get("compaction")]
    if not notes:
        return SummaryModel(None, None, 0, None, "no compaction of its own: a deterministic brief of the view")
    sizes = sorted(count_text(m.text) for m in notes)
    befores = sorted(
        b for m in notes if isinstance(b := (events.get(m.id) or {}).get("pre_tokens"), int) and not isinstance(b, bool) and b > 0
    )
    outputs = sorted(
        sum(r.usage.output for r in child.trace if r.usage)
        for child in session.children
        if child.extras.get("child_kind") == "summariser" and any(r.usage for r in child.trace)
    )
    tokens = _median(sizes)
    output = _median(outputs) if outputs else None
    before = _median(befores) if befores else None
    why = f"the median of the session's {len(sizes)} own compaction summaries, {tokens:,} tokens" + (
        f" (from a median {before:,} before)" if before else ""
    )
    why += f"; the summariser's reported output, median {output:,} tokens over {len(outputs)} calls" if output is not None else ""
    return SummaryModel(tokens, output, len(sizes), before, why)


def _median(values: Sequence[int]) -> int:
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) // 2


def adr(session: Session, measure: Sizes) -> Iterator[Step]:
    """Our fold (core.fold.fold, ADR-0130 as amended) before every request, under the ceiling, line and target:
    the fold the CLI and GUI run, under the measure's policy and with the replay's own estimate (its scale and
    unseen head), so a request the replay shows over the ceiling is one the fold could not bring under.
    Such a request is refused before the send (D4 step 3): its step says so, with the floor view's size,
    and the replay goes on with the next recorded request, as the agent did."""
    if not measure.ceiling:
        yield from none(session, measure)  # no ceiling: nothing ever folds
        return
    # The fold under the same Measure: its counts and the replay's tokenise each body once, under one policy.
    # It decides on the ADR's estimate (the spec's), or with `--estimator predicted` on the predicted input.
    sizer = PredictedSize(measure.measure) if getattr(measure, "estimator", ADR) == PREDICTED else None
    folding = Folding(
        session,
        measure.measure,
        clock=lambda: 0.0,
        scale=getattr(measure, "scale", None),
        head=getattr(measure, "head", None),
        estimator=sizer,
        digests=False,
        arrivals=arrivals_of(session, measure),  # fed as every strategy is: a rewind drops what the recording dropped
    )  # its notes' span digests and its copies' originals' digests are never read here
    replay = folding.replay
    seen = 0  # the versions read so far
    # Each request is yielded as soon as the fold has done with it, so the lab lays it out under the fold's own
    # measure while the counter still holds the fold's layout of that view: one layout per request, not two.
    for k in folding:
        if k >= len(session.trace):
            break  # the fold walks the trace the session's reader filled, as the replay does
        sized = folds = 0
        for v in replay.versions[seen:]:  # this request's versions: the view as it arrived, then each fold's
            sized = v.estimate
            folds += v.cause == "fold"
        seen = len(replay.versions)
        # The fold's own Shared of the view as sent, grown with it: the lab's layout of this request finds the
        # fold's measurement of it by identity, with nothing rebuilt or compared item by item.
        messages = folding.messages
        yield Step(
            messages,
            k,
            folds=folds,
            refused=k in replay.refusals,
            floor=replay.floors.get(k),
            predicted=sized if sizer is not None else None,
            measure=folding.measure,
        )


def decides_on(strategy: str, estimator: str = ADR) -> str | None:
    """What a strategy's policy decides on: the adr fold on the replay's estimator, the band and compaction on the
    ADR's estimate; the recorded views and `none` decide nothing."""
    if strategy == "adr":
        return estimator
    return ADR if strategy in ("band", "compaction") else None


STRATEGIES: dict[str, Callable[[Session, Sizes], Iterator[Step]]] = {
    "recorded": recorded,
    "none": none,
    "band": band,
    "compaction": compaction,
    "adr": adr,
}

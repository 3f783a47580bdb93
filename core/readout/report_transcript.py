"""The report's walkthrough: the session's conversation (collapsible, tool calls and results folded with their
sizes, each request, compaction and fold marked where it happened) and every request's composition, each row
an anchor the timeline's bars link to. Session text is escaped here too: it is data, never markup."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import lru_cache, partial
from typing import Any

from foldscope.core.model.session import Message, Session
from foldscope.core.readout.composition import MessageFacts, bar_figures, request_composition
from foldscope.core.readout.fold_facts import note_first_index
from foldscope.core.readout.head_split import HeadSources, sources_for
from foldscope.core.readout.report_bars import RequestBars
from foldscope.core.readout.report_html import esc
from foldscope.core.request.measure import Measure

PREVIEW_CHARS = 90  # of a folded message's first line, in the line that folds it
SHOWN_CHARS = 4000  # of one message's text; the rest is named by its size, so a large result cannot swell the page
WHO = {
    "system": "system",
    "instruction": "user",
    "assistant": "assistant",
    "action_request": "tool call",
    "action_response": "tool result",
    "note": "note",
}


def request_anchor(k: int) -> str:
    return f"request-{k}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def _shown(text: str) -> tuple[str, bool]:
    """The text's block (up to SHOWN_CHARS of it, the rest named by its size) and whether the characters shown are
    written as they are (esc changed none: it writes each character alone, and none the same length but itself)."""
    if len(text) <= SHOWN_CHARS:  # most texts: no slice, nothing more to name
        escaped = esc(text)
        return f"<pre>{escaped}</pre>", len(escaped) == len(text)
    escaped = esc(text[:SHOWN_CHARS])
    more = f"<p class=more>… {_plural(len(text) - SHOWN_CHARS, 'more character')} in the file, not shown here</p>"
    return f"<pre>{escaped}</pre>{more}", len(escaped) == SHOWN_CHARS


def _text_block(text: str) -> str:
    return _shown(text)[0]


# A message's time of day, as the text its line shows, by minute of the day and by second: made once, not a message
# at a time (figures and colons: nothing to escape).
_MINUTES = tuple(f" <span class=at>{h:02d}:{m:02d}:" for h in range(24) for m in range(60))
_SECONDS = tuple(f"{s:02d}</span>" for s in range(60))
# Up to here (year 9892) the time of day is read from the timestamp's seconds; past it, and for a value that is not a
# plain number, datetime reads it (and refuses what it cannot show).
_SECONDS_TO_DAY = 2.5e11


def _when(at: float | None) -> str:
    if at is None:
        return ""
    if type(at) in (float, int) and 0 <= at < _SECONDS_TO_DAY:
        # as datetime.fromtimestamp reads it, without making one a message: rounded to the microsecond, half to even,
        # so a time less than half a microsecond before a second (or half, exactly: 1,000,000 is even) is that second
        second = int(at)
        if (at - second) * 1e6 >= 999_999.5:
            second += 1
        minute, second = divmod(second % 86400, 60)
        return _MINUTES[minute] + _SECONDS[second]
    t = datetime.fromtimestamp(at, UTC)
    return f" <span class=at>{t.hour:02d}:{t.minute:02d}:{t.second:02d}</span>"


@lru_cache(maxsize=1024)
def _escaped_name(name: str) -> str:
    """A kind's label or a tool's name escaped, once a name: a session has a handful, and every message shows one."""
    return esc(name)


def _tool_name(m: Message) -> str:
    name = m.content.get("function") if m.kind in ("action_request", "action_response") else None
    return str(name) if name else ""


def note_kind(m: Message) -> str:
    return "compaction" if m.metadata.get("compaction") else "fold"


_FOLDED = frozenset(("action_request", "action_response", "system"))  # shown folded under a line with a preview
_OUT_OF_VIEW = " <span class=tag>not in the active view</span>"


def message_item(index: int, m: Message, in_view: bool) -> str:
    """One message: prose shown (up to SHOWN_CHARS), tool calls, results and notes folded under a line with their size."""
    text, kind = m.text, m.kind
    head = f"<span class=who>#{index} {_escaped_name(WHO.get(kind, kind))}</span>{_when(m.created_at)}{'' if in_view else _OUT_OF_VIEW}"
    if kind == "note" or note_first_index(m) is not None:  # is_note, asked here without a call a message
        note = note_kind(m)
        return (
            f"<li class='m mark {note}' id=message-{index}>{head} <b>{esc(note.capitalize())}</b>: the messages "
            f"before it were replaced by this summary in what later requests carried<details><summary>the "
            f"summary, {_plural(len(text), 'character')}</summary>{_text_block(text)}</details></li>"
        )
    if kind in _FOLDED:
        tool = _tool_name(m)
        stripped = text.strip()
        line_end = stripped.find("\n")  # the first line found, not the text split (a copy of all the rest)
        first = stripped if line_end < 0 else stripped[:line_end]
        preview = first[:PREVIEW_CHARS]
        block, as_is = _shown(text)
        if not (as_is and text.startswith(preview)):  # a preview the block shows as it is needs no escaping of its own
            preview = esc(preview)
        more = "…" if len(first) > PREVIEW_CHARS or line_end >= 0 else ""
        # the tool's name escaped (once a name) before a count, which needs no escaping
        label = f"{_escaped_name(tool) + ', ' if tool else ''}{_plural(len(text), 'character')}"
        return (
            f"<li class='m {kind}' id=message-{index}><details><summary>{head} {label}"
            f"<span class=preview>{preview}{more}</span></summary>{block}</details></li>"
        )
    if not text.strip():
        return f"<li class='m {kind}' id=message-{index}>{head} <span class=tag>no text</span></li>"
    return f"<li class='m {kind}' id=message-{index}>{head}{_text_block(text)}</li>"


MESSAGES_A_JOB = 256  # at most this many messages in one segment of the conversation (conversation_segments)


def conversation_segments(session: Session) -> list[tuple[int, int, int | None]]:
    """The full record cut where each request is marked, and every MESSAGES_A_JOB messages between (a piece of the
    page stays small whatever the requests): (start, end, the request marked before `start` or None). What lies
    between two marks needs nothing of the count, so it can be made before it (conversation_jobs)."""
    answered = {r.response_id: k for k, r in enumerate(session.trace) if r.response_id}
    out: list[tuple[int, int, int | None]] = []
    start, marked = 0, None
    for index, m in enumerate(session.record):
        k = answered.get(m.id)
        if k is not None or index - start >= MESSAGES_A_JOB:
            if index:
                out.append((start, index, marked))
            start, marked = index, k
    if len(session.record):
        out.append((start, len(session.record), marked))
    return out


def segment_text(session: Session, view: set[str], start: int, end: int) -> str:
    """The messages start..end-1 of the full record, each as message_item makes it, one string."""
    record = session.record
    items = []
    for index in range(start, end):
        m = record[index]
        items.append(message_item(index, m, m.id in view))
    return "".join(items)


def conversation_jobs(session: Session, segments: Sequence[tuple[int, int, int | None]]) -> list[Callable[[], str]]:
    """Each segment's text as a job a forked child can run (core.forensics.literals_ahead.JobsAhead), in order."""
    view: list[set[str]] = []  # made once, in whichever process runs the first job

    def made(start: int, end: int) -> str:
        if not view:
            view.append(set(session.view))
        return segment_text(session, view[0], start, end)

    return [partial(made, start, end) for start, end, _ in segments]


def conversation_pieces(
    session: Session,
    measure: Measure,
    events: Sequence[tuple[int, str]],
    made: Callable[[int], str | None] | None = None,
    segments: Sequence[tuple[int, int, int | None]] | None = None,
) -> Iterator[str]:
    """The full record in order, collapsible, each request marked before the response it got: made a segment at a
    time as the page is written (the conversation is most of the page, never held whole). `made(j)`: segment j's
    text if a child made it already (conversation_jobs), else None and it is made here. `segments`: the record cut
    as conversation_segments cuts it, when the caller cut it already (the segments `made` numbers)."""
    record = session.record
    kinds = {"compaction": 0, "fold": 0}
    for _, kind in events:
        kinds[kind] += 1
    yield (
        f"<p>The full record, {_plural(len(record), 'message')} in the order they happened: what was typed "
        "and answered shown, tool calls, results and summaries folded under a line with their size (click to "
        f"open). Each request is marked where it was sent, with a link to its composition; "
        f"{_plural(kinds['compaction'], 'compaction')} and {_plural(kinds['fold'], 'fold')} are marked "
        "where their summary entered. Times are UTC.</p>"
        f"<details class=transcript><summary>The conversation ({_plural(len(record), 'message')})"
        "</summary><ol class=msgs>"
    )
    view = set(session.view)
    rows = measure.trace.rows
    for j, (start, end, k) in enumerate(conversation_segments(session) if segments is None else segments):
        if k is not None:
            predicted = f", predicted input {rows[k].predicted:,} tokens" if k < len(rows) else ""
            yield f"<li class=req>request {k} sent{esc(predicted)}: <a href=#{request_anchor(k)}>its composition</a></li>"
        text = made(j) if made is not None else None
        yield text if isinstance(text, str) else segment_text(session, view, start, end)
    yield "</ol></details>"


ROWS_A_JOB = 256  # rows of the every-request table a forked child makes as one job (every_request_jobs)


Bar = Callable[[Sequence[tuple[str, int]], "int | None", int, float], str]  # figures, window, estimate, scale: the bar
Largest = Callable[[Sequence[tuple[str, int]], int], str]  # figures, size: the largest part


def every_request_rows(
    measure: Measure,
    window: int | None,
    bar: Bar,
    largest_part: Largest,
    bars: RequestBars | None,
    start: int,
    end: int,
    kept: dict[str, Any],
    head: HeadSources | None = None,
) -> str:
    """Rows start..end-1 of the every-request table, one string. `kept`: what one process works out once for all
    its rows (the unseen head's parts, each message's category), filled at the first call. `head`: the unseen head's
    parts as the caller read them (sources_for), else read here. The bar and the largest part take each category's
    (name, tokens) in the bar's order: heard (`bars`), no Composition is made for them (composition.bar_figures)."""
    if not kept:
        kept["head"] = sources_for(measure.session) if head is None else head  # the same parts name every request's head
        kept["facts"] = MessageFacts()  # each message's category worked out once, not once per request that carries it
        kept["splits"] = {}  # the unseen head split, by its tokens (most requests carry the same head)
        kept["kinds"] = {}  # bar_figures' runs of names
    head, facts, splits, kinds = kept["head"], kept["facts"], kept["splits"], kept["kinds"]
    out = []
    for row in measure.trace.rows[start:end]:
        if bars is not None:
            parts, summed = bars.heard(row.index)
            split = splits.get(parts.unseen_head)
            if split is None:
                split = splits[parts.unseen_head] = head.split(parts.unseen_head)
            figures, size = bar_figures(parts, summed, split, kinds)
        else:  # the bar and the largest part need the categories only, not the groups and repeats
            c = request_composition(measure, row.index, window=window, head=head, facts=facts, details=False)
            figures, size = [(p.name, p.tokens) for p in c.parts], c.size
        out.append(
            f"<tr id={request_anchor(row.index)}><td class=n>{row.index}</td><td class=n>{row.predicted:,}</td>"
            f"<td class=n>{'' if row.reported_input is None else f'{row.reported_input:,}'}</td>"
            f"<td class=mini>{bar(figures, window, row.estimate, row.scale)}</td><td>{largest_part(figures, size)}</td></tr>"
        )
    return "".join(out)


def every_request_job_count(requests: int) -> int:
    """How many jobs every_request_jobs makes of a table of `requests` rows."""
    return -(-requests // ROWS_A_JOB)


def every_request_jobs(
    measure: Measure,
    window: int | None,
    bar: Bar,
    largest_part: Largest,
    bars: RequestBars | None,
    head: HeadSources | None = None,
) -> list[Callable[[], str]]:
    """The every-request table's rows, ROWS_A_JOB at a time, as jobs a forked child can run after the count
    (core.forensics.literals_ahead.JobsAhead), in order."""
    kept: dict[str, Any] = {}
    n = len(measure.trace.rows)
    return [
        partial(every_request_rows, measure, window, bar, largest_part, bars, start, min(n, start + ROWS_A_JOB), kept, head)
        for start in range(0, n, ROWS_A_JOB)
    ]


def every_request_pieces(
    measure: Measure,
    window: int | None,
    bar: Bar,
    largest_part: Largest,
    bars: RequestBars | None = None,
    made: Callable[[int], str | None] | None = None,
    head: HeadSources | None = None,
) -> Iterator[str]:
    """A row per request (its anchor), its predicted input and its composition as a bar with the largest part: made
    ROWS_A_JOB rows at a time as the page is written. `bars`: each request's parts as the trace's count heard them
    (else each request is measured again). `made(j)`: the j-th ROWS_A_JOB rows if a child made them already
    (every_request_jobs), else None and they are made here. `head`: as every_request_rows'."""
    yield (
        "<p>Every request as it was sent: the bar is its count split by the composition legend above (the "
        "timeline's bars link here). The bar's full width is the context window where known.</p>"
        "<table class=requests><thead><tr><th class=n>Request</th><th class=n>Predicted input</th>"
        "<th class=n>Reported input</th><th>Composition</th><th>Largest part</th></tr></thead><tbody>"
    )
    kept: dict[str, Any] = {}
    n = len(measure.trace.rows)
    for j, start in enumerate(range(0, n, ROWS_A_JOB)):
        text = made(j) if made is not None else None
        yield (
            text
            if isinstance(text, str)
            else every_request_rows(measure, window, bar, largest_part, bars, start, min(n, start + ROWS_A_JOB), kept, head)
        )
    yield "</tbody></table>"

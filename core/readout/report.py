"""A session as one self-contained HTML file to share: summary, timeline, the largest request's composition, cost.

The file loads nothing: no script, no stylesheet or image from elsewhere, charts as inline SVG, and a
Content-Security-Policy of `default-src 'none'` (inline style and data: images allowed) so that a browser
refuses any load even if something slipped in. Every piece of session text is escaped (html.escape with
quotes) before it enters the page: a session is data, never markup.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import nullcontext
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from foldscope.core.forensics.usage import session_facts
from foldscope.core.formats.lionagi_write import input_paths
from foldscope.core.formats.registry import format_title
from foldscope.core.model.outputs import output_target, write_output
from foldscope.core.model.policy import Policy
from foldscope.core.model.session import Session, estimated_usage
from foldscope.core.model.views import added
from foldscope.core.readout.agent_limits import agent_limits
from foldscope.core.readout.composition import Composition, request_composition
from foldscope.core.readout.cost_facts import duration
from foldscope.core.readout.document import is_note
from foldscope.core.readout.head_split import sources_for
from foldscope.core.readout.report_bars import RequestBars
from foldscope.core.readout.report_cost import cost_sections
from foldscope.core.readout.report_data import ReportData
from foldscope.core.readout.report_html import RULE_COLOURS, STYLE, Markup, Section, bar_svg, esc, largest_of, num, swatch, table
from foldscope.core.readout.report_transcript import (
    conversation_jobs,
    conversation_pieces,
    conversation_segments,
    every_request_job_count,
    every_request_jobs,
    every_request_pieces,
    request_anchor,
)
from foldscope.core.readout.unseen_heads import unseen_head_words
from foldscope.core.readout.usage_precision import near as near_mark
from foldscope.core.readout.usage_precision import no_requests, usage_note
from foldscope.core.readout.words import plural, sizes_words
from foldscope.core.request.measure import Measure

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def fold_events(session: Session, measure: Measure) -> list[tuple[int, str]]:
    """The requests a note first entered the view at, and whether the source compacted or a fold put it there."""
    record = session.record
    notes = {m.id: ("compaction" if m.metadata.get("compaction") else "fold") for m in record if is_note(m)}
    out: list[tuple[int, str]] = []
    before: set[str] = set()
    view: Sequence[str] = ()
    for k, request in enumerate(measure.requests):
        new = added(request.view, view) if k else None  # most requests only add: only what they add is read
        view = request.view
        if new is None:
            present = {mid for mid in view if mid in notes}
            entered = present - before
        else:
            entered = {mid for mid in new if mid in notes} - before
            present = before | entered
        if entered and k:
            out.append((k, "compaction" if any(notes[mid] == "compaction" for mid in entered) else "fold"))
        before = present
    return out


# -- charts ------------------------------------------------------------------------------------------------


def timeline_svg(measure: Measure, events: Sequence[tuple[int, str]], width: int = 960, height: int = 260) -> str:
    """Bars for each request's predicted input (the headline, as the GUI's timeline draws it), dots for its reported
    input, the policy's rules across (a bar outlined as over when its estimate is at or past the ceiling), folds marked."""
    rows = measure.trace.rows
    left, right, top, bottom = 70, 12, 14, 28
    ceiling = measure.ceiling
    rules = {"ceiling": ceiling, "line": measure.line_tokens, "target": measure.target_tokens} if ceiling else {}
    peak = max([r.predicted for r in rows] + [r.reported_input or 0 for r in rows] + [int(ceiling or 0), 1])
    span = peak * 1.08
    plot_w, plot_h = width - left - right, height - top - bottom
    n = max(len(rows), 1)
    step = plot_w / n

    def y(v: float) -> float:
        return top + plot_h * (1 - v / span)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Timeline of requests" '
        f'viewBox="0 0 {width} {height}" width="100%" class="chart">'
    ]
    for tick in _ticks(span):
        parts.append(
            f'<line x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}" class="grid"/>'
            f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end" class="axis">{tick:,}</text>'
        )
    for k, kind in events:
        x = left + step * k
        parts.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h}" class="{kind}">'
            f"<title>{esc(kind)} before request {k}</title></line>"
        )
    for row in rows:
        x = left + step * row.index + step * 0.15
        h = plot_h * row.predicted / span
        over = " over" if row.over_ceiling else ""
        tip = (
            f"request {row.index}: predicted input {row.predicted:,}"
            + (f", reported input {row.reported_input:,}" if row.reported_input else "")
            + (f", estimate {row.estimate:,} (count × scale, against the ceiling)")
        )
        parts.append(
            f'<a href="#{request_anchor(row.index)}"><rect x="{x:.1f}" y="{top + plot_h - h:.1f}" '
            f'width="{max(step * 0.7, 0.5):.1f}" height="{h:.1f}" class="bar{over}"><title>{esc(tip)} '
            f"(click: its composition)</title></rect></a>"
        )
        if row.reported_input:
            parts.append(
                f'<circle cx="{x + step * 0.35:.1f}" cy="{y(row.reported_input):.1f}" r="{min(3.0, step / 3 + 1):.1f}" class="reported"/>'
            )
    for name, value in rules.items():
        if value:
            parts.append(
                f'<line x1="{left}" x2="{width - right}" y1="{y(value):.1f}" y2="{y(value):.1f}" '
                f'stroke="{RULE_COLOURS[name]}" class="rule"/>'
                f'<text x="{left + 4}" y="{y(value) - 3:.1f}" fill="{RULE_COLOURS[name]}" class="axis">'
                f"{esc(name)} {int(value):,}</text>"
            )
    for tick in range(0, n, max(1, math.ceil(n / 12))):
        parts.append(f'<text x="{left + step * (tick + 0.5):.1f}" y="{height - 10}" text-anchor="middle" class="axis">{tick}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _ticks(span: float, count: int = 4) -> list[int]:
    raw = span / count
    power = 10 ** max(len(str(int(raw))) - 1, 0)
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    return list(range(0, int(span) + 1, step))


def composition_legend(c: Composition) -> str:
    """Each category the bar draws, its colour and tokens: readable without hovering, in a screenshot or on paper."""
    items = "".join(f"<span class=key>{swatch(p.name)}{esc(p.name)} {num(p.tokens)}</span>" for p in c.parts if p.tokens > 0)
    free = f"<span class=key><span class='swatch free'></span>free context window {num(c.free)}</span>" if c.window and c.free else ""
    return f"<p class='legend keys'>{items}{free}</p>"


def composition_svg(c: Composition, width: int = 960, height: int = 34, css: str = "chart") -> str:
    """The request as one bar: a segment per category (of the estimate), then the free context window."""
    return bar_svg([(p.name, p.tokens) for p in c.parts], c.window, c.estimate, c.scale, width, height, css)


# -- tables ------------------------------------------------------------------------------------------------


def _utc(at: float | None) -> str:
    return "not recorded" if at is None else datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def summary_section(data: ReportData) -> Section:
    s, m = data.session, data.measure
    rows = m.trace.rows
    limits = agent_limits(s, m.policy)
    reported = [r.reported_input for r in rows if r.reported_input]
    ran = session_facts(s)
    took = duration(ran.duration_s) if ran.duration_s is not None else "not recorded"
    near = near_mark(s)  # an agent's rounded usage (Aider's) or foldscope's estimate (Copilot CLI's), and what is made from it
    facts: list[tuple[str, str]] = [
        ("File", Path(s.source).name),
        ("Format", format_title(s.format)),  # the agent by its name, as the window's status bar and `sessions` give it
        ("Model", s.model or "not recorded"),
        ("Date", f"{_utc(ran.start)} to {_utc(ran.end)}" if ran.start is not None else "not recorded"),
        ("Duration", f"{took} (first to last message or request, wall time)"),
        ("Project", ran.project),
        ("Agent version", f"{format_title(s.format)} {ran.version}" if ran.version else "not recorded in the file"),
        ("Full record", plural(len(s.record), "message")),
        ("Active view", plural(len(s.view), "message")),
        ("Requests", f"{len(rows):,}"),
        ("Peak reported input", near + num(max(reported)) if reported else "not recorded"),
        *((("Reported usage", estimated),) if (estimated := estimated_usage(s)) else ()),
        *((("Reported usage", rounded),) if (rounded := usage_note(s)) else ()),
        *((("Requests' contents", missing),) if (missing := no_requests(s, "composition")) else ()),
        ("Largest predicted input", near + num(max((r.predicted for r in rows), default=0))),
        ("Largest estimate", f"{num(max((r.estimate for r in rows), default=0))} (count × scale: what the ceiling is checked against)"),
        ("Ceiling", f"{num(m.ceiling)} ({m.resolution.why})" if m.ceiling else f"none ({m.resolution.why})"),
    ]
    if m.ceiling:
        facts.append(("Line and target", f"{num(round(m.line_tokens or 0))} and {num(round(m.target_tokens or 0))}"))
    if limits.window:
        facts.append(("Context window", f"{num(limits.window.tokens)} ({limits.window.said})"))
    if limits.compaction:
        facts.append(("Agent's compaction point", f"{num(limits.compaction.tokens)} ({limits.compaction.source})"))
    heads = unseen_head_words([r.unseen_head for r in rows], s.format)
    if heads:
        facts.append(("Unseen head", heads))
    kinds = {"compaction": 0, "fold": 0}
    for _, kind in data.events:
        kinds[kind] += 1
    facts.append(("Compactions and folds", f"{kinds['compaction']:,} compactions by the agent, {kinds['fold']:,} folds"))
    body = "<dl>" + "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts) + "</dl>"
    return Section("Summary", body)


def timeline_section(data: ReportData) -> Section:
    legend = (
        "<p class=legend><span class=swatch style='background:#4a7fd0'></span> predicted input (the forecast "
        "of what the provider counts; a bar outlined red has its estimate, count × scale, at or past the ceiling) "
        "<span class=dot></span> reported input "
        "<span class=swatch style='background:#0f8a8a'></span> compaction by the agent "
        "<span class=swatch style='background:#7d3c98'></span> fold</p>"
    )
    return Section("Timeline of requests", timeline_svg(data.measure, data.events) + legend)


def composition_section(data: ReportData, top: int = 12) -> Section:
    c = data.composition
    if c is None:
        return Section("What is eating the context", "<p>The session has no requests.</p>")
    near = near_mark(data.session)  # its predicted input made from an agent's rounded or foldscope's estimated usage
    free = (
        f"; the predicted input is over the {num(c.window)}-token context window by {num(c.over)}"
        if c.window and c.over is not None  # past the window: how far, not 0 free (core.readout.free_window)
        else f"; {num(c.free)} of the {num(c.window)}-token context window free (the window less the predicted input)"
        if c.window and c.free is not None
        else ""
    )
    intro = (
        f"<p>The largest request, <b>request {esc(c.request)}</b>: "
        f"{esc(sizes_words(c.own_count, c.unseen_head, c.estimate, c.scale, c.predicted, near))}{esc(free)}. "
        "The parts add up to the count.</p>"
    )
    parts = table(
        ("Category", "Tokens", "Share", "Blocks", "Note"),
        [
            (Markup(swatch(p.name) + esc(p.name)), num(p.tokens), f"{p.tokens / c.size:.1%}" if c.size else "—", num(p.blocks), p.note)
            for p in c.parts
        ],
        numeric=(1, 2, 3),
    )
    named = [(p.name, name, tokens) for p in c.head_parts for name, tokens in p.items]
    if named:  # what the unseen head's parts name: memory files by path, MCP tools by name
        parts += "<h3>What the unseen head's parts name</h3>" + table(
            ("Part", "Tokens", "What"), [(part, num(tokens), name) for part, name, tokens in named], numeric=(1,)
        )
    largest = table(("Tokens", "Times", "What"), [(num(g.tokens), num(g.times), g.label) for g in c.top(top)], numeric=(0, 1))
    repeats = (
        table(
            ("Repeats cost", "Times", "In all", "Why", "What"),
            [(num(r.repeat_tokens), num(r.times), num(r.tokens), r.why, r.label) for r in c.repeats[:top]],
            numeric=(0, 1, 2),
        )
        if c.repeats
        else "<p>Nothing is carried twice.</p>"
    )
    return Section(
        "What is eating the context",
        intro
        + composition_svg(c)
        + composition_legend(c)
        + parts
        + "<h3>The largest things in it</h3>"
        + largest
        + "<h3>Carried more than once</h3>"
        + repeats,
    )


def mini_bar(figures: Sequence[tuple[str, int]], window: int | None, estimate: int, scale: float) -> str:
    """A request's composition as the every-request table draws it, from its categories' (name, tokens) in order."""
    return bar_svg(figures, window, estimate, scale, width=400, height=14, css="minibar")


def every_request_section(data: ReportData, window: int | None) -> Section:
    return Section(
        "Every request",
        pieces=lambda: every_request_pieces(data.measure, window, mini_bar, largest_of, data.bars, data.every_request, data.head),
    )


def conversation_section(data: ReportData) -> Section:
    return Section(
        "The conversation",
        pieces=lambda: conversation_pieces(data.session, data.measure, data.events, data.conversation, data.segments),
    )


def replay_section(data: ReportData, strategies: Sequence[str]) -> Section:
    from foldscope.core.readout.replay_facts import beside_bill, compare_line, no_ceiling_line
    from foldscope.core.replay.lab import replay
    from foldscope.core.replay.rows import cost_text

    m = data.measure
    try:
        result = replay(data.session, strategies, m)
    except Exception as exc:  # noqa: BLE001
        return Section("Replay", f"<p>Not available: {esc(type(exc).__name__)}: {esc(exc)}</p>")
    # The recorded row as the bill and the modelled recording beside it (core.readout.replay_facts), as the CLI does.
    rows = [
        (
            label,
            num(t["requests"]),
            num(t["peak"]),
            num(t["over_ceiling"]),
            num(t.get("refused")),
            num(t["fresh"]),
            num(t["cache_read"]),
            num(t["cache_write"]),
            num(t["rewrites"]),
            num(t["folds"]),
            cost_text(t),
        )
        for label, t in beside_bill(result["totals"])
    ]
    why = result.get("cache", {}).get("why") or ""
    notes = [
        no_ceiling_line(m, strategies, "--ceiling N (max_input_tokens)"),
        compare_line(result["totals"]),
        *(f"{t['strategy']}: cost {t['cost_not_comparable']}" for t in result["totals"] if t.get("cost_not_comparable")),
        *(f"warning: {w}" for w in result.get("warnings", [])),
    ]
    ceiling = f"The ceiling is {num(m.ceiling)} tokens ({m.resolution.why})." if m.ceiling else f"No ceiling is set ({m.resolution.why})."
    return Section(
        "Replay under other strategies",
        f"<p>{esc(ceiling)} {esc(why)}</p>"
        + "".join(f"<p>{esc(line)}</p>" for line in notes if line)
        + table(
            ("Strategy", "Requests", "Peak", "Over ceiling", "Refused", "Fresh", "Cache read", "Cache write", "Rewrites", "Folds", "Cost"),
            rows,
            numeric=tuple(range(1, 11)),
        ),
    )


def gather(
    session: Session,
    policy: Policy | None = None,
    *,
    replay: Sequence[str] = (),
    measure: Measure | None = None,
    checks: Any = None,
    conversation: Callable[[int], str | None] | None = None,
    rows_ahead: bool = False,
    segments: Sequence[tuple[int, int, int | None]] | None = None,
    row_slots: range | None = None,
) -> ReportData:
    """Everything the page shows, measured once by `measure` (default: a Measure of the session under `policy`).
    `checks`: the compactions' literal checks started before (core.forensics.literals_ahead.LiteralChecks), else
    gather starts them; `conversation`: the conversation's segments made ahead, `segments` the record cut into them
    (report_transcript.conversation_segments); `rows_ahead`: the every-request table made in a child forked after the
    count, which the caller stops (ReportData.helpers; write_report does); `row_slots`: where the checks' shared jobs
    (LiteralChecks.ahead) keep a place for that table's jobs, made by the checks' child forked again once the count is
    done (_count_done), where it is."""
    measure = measure or Measure(session, policy or Policy())
    if checks is not None:
        return _gathered(session, measure, replay, checks, conversation, rows_ahead, segments, row_slots)
    from foldscope.core.forensics.compactions import literal_checks

    # The compactions' literal checks need only the session: started now, they are made on the other core while the
    # trace is counted (core.forensics.literals_ahead), and the cost sections collect them.
    with literal_checks(session) if session.trace else nullcontext() as started:
        return _gathered(session, measure, replay, started, conversation, rows_ahead, segments)


def _gathered(
    session: Session,
    measure: Measure,
    replay: Sequence[str],
    checks: Any,
    conversation: Any,
    rows_ahead: bool = False,
    segments: Any = None,
    row_slots: range | None = None,
) -> ReportData:
    from foldscope.core.forensics.trace_pass import MeasuredPass

    # The cache causes' pass rides on the trace's count (as the GUI's does, core.readout.trace_facts): one count of
    # the session for the sizes and the cost sections both. A measure counted before gather hears nothing here, and
    # the cost sections count again.
    steps = MeasuredPass(session, measure.policy, {}) if session.trace else None
    bars = RequestBars(measure)  # the bars, heard from the same count
    # The compactions' summaries, which the cost sections count after the count (the summariser modelled): counted by
    # the count's own child as the last request is heard, so this process builds no encoder for them alone.
    summaries = [span.note.text for span in getattr(checks, "spans", ())]
    last = len(session.trace) - 1
    beside: list[bool] = []  # whether a child counted beside this process, read as the last request is heard

    def heard(messages, first_round, m, meter) -> None:
        if steps is not None:
            steps.step(messages, first_round, m, meter)
        bars.hear(m)
        if len(bars) - 1 == last:
            beside.append(measure.counter.ahead is not None)
            if summaries:
                measure.counter.count_ahead(summaries)

    rows = measure.calibrate(on_measured=heard if steps is not None else None).rows
    bars.heard_all()
    window = agent_limits(session, measure.policy).window
    tokens = window.tokens if window else None
    head = sources_for(session)  # read once: the largest request's composition and every request's bar name the same parts
    heard_bars = bars if len(bars) == len(rows) else None
    rows_made = _count_done(
        checks, beside == [True], row_slots, lambda: every_request_jobs(measure, tokens, mini_bar, largest_of, heard_bars, head)
    )
    largest = max(rows, key=lambda r: (r.count_with_head, -r.index)).index if rows else None
    composition = (
        request_composition(measure, largest, window=tokens, window_source=window.said if window else "", head=head)
        if largest is not None
        else None
    )
    data = ReportData(
        session,
        measure,
        largest,
        composition,
        fold_events(session, measure),
        cache_pass=steps,
        bars=heard_bars,
        literals=checks,
        conversation=conversation,
        segments=segments,
        head=head,
    )
    if rows_made is not None:
        data.every_request = rows_made
    elif rows_ahead:
        _rows_ahead(data, tokens)
    return _sectioned(data, replay, tokens)


def _sectioned(data: ReportData, replay: Sequence[str], window: int | None) -> ReportData:
    """The page's sections made from the gathered data; a child forked for them stopped if one cannot be made."""
    try:
        data.sections = [
            summary_section(data),
            timeline_section(data),
            composition_section(data),
            *cost_sections(data),
            every_request_section(data, window),
            conversation_section(data),
        ]
        if replay:
            data.sections.append(replay_section(data, replay))
    except BaseException:
        for helper in data.helpers:  # never handed to the caller: stopped here
            helper.stop()
        raise
    return data


def _count_done(
    checks: Any, beside: bool, slots: range | None, row_jobs: Callable[[], list[Callable[[], str]]]
) -> Callable[[int], str | None] | None:
    """The count is done. Where a child counted beside this process, its core is free: the checks' child, niced below
    it, goes on at this process's priority (LiteralChecks.count_done), and the every-request table's rows join its
    jobs, in the `slots` write_report keeps for them between the checks and the conversation: one list of rows and
    segments, which the page takes in order. The child reaches them only after the checks, so where the page catches it
    up it passes on to the list's second half (literals_ahead's in-order rule): at 50k the page makes the rows and the
    first half of the segments, the child the rest (docs/performance.md, report25). So after the count one child works
    beside this process, not two: a second child at this process's priority would
    share a core with it (three processes on two cores), and niced (as _rows_ahead's is) it got little beside the
    checks' child, so this process made most rows itself. Returns how the page takes those rows, else None (the caller
    forks their own child). Where no child counted (no core to spare), the checks' child stays niced: at this
    process's priority it would take this process's time."""
    if not beside or not hasattr(checks, "count_done"):
        return None
    jobs = row_jobs() if slots else []
    filled = dict(zip(slots, jobs)) if slots and len(jobs) == len(slots) else {}
    if not checks.count_done(filled) or not filled or slots is None:  # the last for the type: filled needs slots
        return None
    ahead, first = checks.ahead, slots.start
    return lambda j: ahead.take(first + j, in_order=True)  # the page takes its rows in order


def _rows_ahead(data: ReportData, window: int | None) -> None:
    """The every-request table needs the count, nothing after it: its rows are made in a child forked now, on the other
    core, while the cost sections are made here (core.forensics.literals_ahead; write_report stops it)."""
    from foldscope.core.forensics.literals_ahead import JobsAhead

    ahead = JobsAhead(every_request_jobs(data.measure, window, mini_bar, largest_of, data.bars, data.head))
    data.helpers.append(ahead)
    data.every_request = lambda j: ahead.take(j, in_order=True)  # the page takes its rows in order


def render(data: ReportData, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> str:
    """The page: one HTML document, every piece of session text escaped, nothing loaded from anywhere."""
    return "".join(render_pieces(data, now))


def render_pieces(data: ReportData, now: Callable[[], datetime] = lambda: datetime.now(UTC)) -> Iterator[str]:
    """The page in the order it is written, each long section made as it goes (Section.pieces)."""
    name = Path(data.session.source).name
    from importlib.metadata import PackageNotFoundError, version

    try:
        __version__ = version("foldscope")
    except PackageNotFoundError:  # run from a checkout that was never installed
        __version__ = "(not installed)"

    yield (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>foldscope report: {esc(name)}</title><style>{STYLE}</style></head><body>"
        f"<h1>foldscope report: {esc(name)}</h1>"
        f"<p class=legend>What this agent session sent the model, request by request, and what it cost.</p>"
    )
    for s in data.sections:
        yield f"<section><h2>{esc(s.title)}</h2>"
        yield from s.parts()
        yield "</section>"
    yield (
        f"<footer>Made by foldscope {esc(__version__)} on {esc(now().strftime('%Y-%m-%d %H:%M UTC'))}, offline: "
        "this file loads nothing from anywhere.</footer></body></html>\n"
    )


def _encoded(pieces: Iterable[str], size: int = 1 << 20) -> Iterator[bytes]:
    """The pieces as UTF-8 in blocks of about `size` characters: few writes, and no copy of the whole page."""
    held: list[str] = []
    n = 0
    for piece in pieces:
        held.append(piece)
        n += len(piece)
        if n >= size:
            yield "".join(held).encode("utf-8", "backslashreplace")  # a lone surrogate (half an emoji) as its escape
            held, n = [], 0
    yield "".join(held).encode("utf-8", "backslashreplace")


def write_report(
    session: Session,
    out: str | Path,
    policy: Policy | None = None,
    *,
    replay: Sequence[str] = (),
    measure: Measure | None = None,
    early: Any = None,
) -> ReportData:
    """Write the report of `session` to `out` (written as it is made; a failed write leaves no half file), never
    over the files the session was read from, a device or a link (core.model.outputs); private when new. `early`: the
    child forked during the read that checks the compactions read by then (core.forensics.literals_during_read), which
    this stops."""
    read = {path: "a file the session was read from" for path in input_paths(session)}
    output_target(out, read)  # refused before the work of gathering, not after
    from foldscope.core.forensics.compactions import literal_spans
    from foldscope.core.forensics.literals_ahead import JobsAhead, LiteralChecks

    # What needs only the session is made on the other core while the trace is counted, in one forked child
    # (core.forensics.literals_ahead): the compactions' literal checks, then the conversation between the requests'
    # marks. What the child has not made when it is wanted is made here; leaving, the child is killed and reaped.
    spans = literal_spans(session) if session.trace else []
    segments = conversation_segments(session)
    helpers: list[JobsAhead] = []
    early_made = early.matched(spans) if early is not None else []  # checks the child forked during the read makes
    # The every-request table's jobs need the count: their places are kept, between the checks and the conversation,
    # for the child forked again once the count is done (_count_done).
    slots = range(len(spans), len(spans) + every_request_job_count(len(session.trace)))
    jobs: list[Callable[[], Any] | None] = [s.parts for s in spans]
    jobs += [None] * len(slots)
    jobs += conversation_jobs(session, segments)
    # The trace is counted after this fork: its counting child asked for before it (literals_ahead.counting_child_first).
    with JobsAhead(jobs, counted_after=session.source, elsewhere=early_made) as ahead:
        first = slots.stop
        try:
            data = gather(
                session,
                policy,
                replay=replay,
                measure=measure,
                checks=LiteralChecks(spans, ahead=ahead, early=early if early_made else None),
                conversation=lambda j: ahead.take(first + j, in_order=True),  # the page takes its segments in order
                rows_ahead=True,
                segments=segments,  # cut once: the child's jobs and the page number the same segments
                row_slots=slots,
            )
            helpers = data.helpers
            write_output(out, lambda: _encoded(render_pieces(data)), read)
        finally:
            for helper in helpers:
                helper.stop()
            if early is not None:
                early.stop()
    data.conversation = data.every_request = None  # the children's results are gone with them
    data.helpers = []
    return data

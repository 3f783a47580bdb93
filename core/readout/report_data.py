"""What the report's page shows, gathered once (core.readout.report gathers it; its sections read it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from foldscope.core.model.session import Session
from foldscope.core.readout.composition import Composition
from foldscope.core.readout.report_html import Section
from foldscope.core.request.measure import Measure


@dataclass
class ReportData:
    """What the page shows, gathered once (tests read it beside the HTML)."""

    session: Session
    measure: Measure
    largest: int | None
    composition: Composition | None
    events: list[tuple[int, str]] = field(default_factory=list)  # (request, "compaction" | "fold") before it
    sections: list[Section] = field(default_factory=list)
    # The cache causes' pass that rode on the trace's count (core.forensics.trace_pass.MeasuredPass), when gather made
    # that count: the cost sections read it instead of counting every request again.
    cache_pass: Any = None
    # Each request's bar as that count heard it (core.readout.report_bars.RequestBars), when gather made the count:
    # the every-request section reads it instead of measuring every request again.
    bars: Any = None
    # The compactions' literal checks started before that count (core.forensics.literals_ahead.LiteralChecks), which
    # the compactions section collects; None where gather started none.
    literals: Any = None
    # Segment j of the conversation as a forked child made it (core.readout.report_transcript.conversation_segments),
    # or None where it has not: write_report gives it while the child lives.
    conversation: Any = None
    # The record cut into those segments (conversation_segments), when the caller cut it already: cut once a page.
    segments: Any = None
    # What names the unseen head's parts (core.readout.head_split.sources_for), read once for the page's compositions.
    head: Any = None
    # The every-request table's j-th rows as a child forked after the count made them, or None (gather's rows_ahead),
    # and the children the caller stops once the page is written.
    every_request: Any = None
    helpers: list[Any] = field(default_factory=list)

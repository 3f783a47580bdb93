"""The timeline's cache lane: the gap before each request drawn, gaps past 5 minutes and 1 hour marked, each
cache write coloured by cause (the Cost panel's causes), and a legend that says what they mean."""

from __future__ import annotations

from dataclasses import replace

import pytest

from foldscope.app.panels.cache_lane import band_colour
from foldscope.app.panels.cost import part_colour
from foldscope.app.panels.timeline import Timeline
from foldscope.core.forensics.cache_report import cache_report
from foldscope.core.forensics.trace_pass import measure_requests
from foldscope.core.model.session import Usage
from foldscope.core.readout.opening import build_document
from tests.core.forensics.traces import Trace, rounds

T0 = 1_800_000_000.0
GAPS = (None, 30.0, 7 * 60.0, 2 * 3600.0, 20.0)  # before requests 0..4


def session_with_gaps():
    """Five requests, each adding a round; request 2 waits 7 minutes and request 3 two hours, so the provider
    stores the unchanged prefix again (expired); the others read what the one before wrote and append."""
    t = Trace()
    ms = rounds(t, 5)
    at = T0
    for k, gap in enumerate(GAPS):
        at += gap or 0.0
        t.request(ms[: 4 + 3 * k], at, None)
    s = t.session()
    c = [m.count_with_head for m in measure_requests(s)]
    usage = [Usage(cache_write=c[0])]
    for k in range(1, 5):
        expired = GAPS[k] > 300
        usage.append(Usage(cache_read=0 if expired else c[k - 1], cache_write=c[k] if expired else c[k] - c[k - 1]))
    s.trace = [replace(r, usage=u) for r, u in zip(s.trace, usage)]
    return s


def shown_timeline(qtbot, session, width=1200, height=170):
    timeline = Timeline()
    qtbot.addWidget(timeline)
    timeline.set_document(build_document(session, "constructed"))
    timeline.resize(width, height)  # 170: the window's first height for it
    timeline.grab()  # paints it
    return timeline


@pytest.mark.parametrize("height", [170, 260])  # the compact lane and the roomy one
def test_the_gap_before_each_request_is_drawn_and_gaps_past_5_minutes_and_1_hour_are_marked(qtbot, height):
    timeline = shown_timeline(qtbot, session_with_gaps(), height=height)
    assert timeline._plot().height() >= 60 and timeline.lane.drawn.idle.bottom() < height
    drawn = timeline.lane.drawn
    gaps = {k: (seconds, band, bar) for k, seconds, band, bar in drawn.gaps}
    assert sorted(gaps) == [1, 2, 3, 4]  # request 0 has nothing before it
    assert [gaps[k][1] for k in (1, 2, 3, 4)] == ["short", "past_5m", "past_1h", "short"]
    assert [gaps[k][0] for k in (1, 2, 3, 4)] == list(GAPS[1:])
    heights = [gaps[k][2].height() for k in (4, 1, 2, 3)]  # 20 s, 30 s, 7 min, 2 h
    assert heights == sorted(heights) and heights[0] < heights[-1]
    lines = dict(drawn.lines)
    assert set(lines) == {"5 min", "1 h"} and lines["1 h"] < lines["5 min"]  # an hour is drawn higher
    # A gap past a line reaches above it; one within it stays below.
    assert gaps[2][2].top() < lines["5 min"] < gaps[1][2].top()
    assert gaps[3][2].top() < lines["1 h"] < gaps[2][2].top()
    # Each bar sits under its own request on the timeline.
    plot = timeline._plot()
    for k, (_, _, bar) in gaps.items():
        slot = timeline._slot_rect(k, plot)
        assert slot.left() <= bar.left() and bar.right() <= slot.right()
    image = timeline.grab().toImage()
    for _, band, bar in gaps.values():
        assert image.pixelColor(bar.center().toPoint()).name() == band_colour(band).name()


def test_cache_writes_are_coloured_by_the_cost_panels_causes(qtbot):
    session = session_with_gaps()
    timeline = shown_timeline(qtbot, session)
    drawn = {(k, cause): (n, rect) for k, cause, n, rect in timeline.lane.drawn.writes}
    report = cache_report(session, timeline.document.policy)
    expected = {(r.index, cause): n for r in report.rows for cause, n in r.causes.causes.items() if n}
    assert {key: n for key, (n, _) in drawn.items()} == expected
    assert {cause for _, cause in expected} == {"first", "append", "expired"}
    assert ("expired" in {c for k, c in drawn if k == 2}) and ("expired" in {c for k, c in drawn if k == 3})
    image = timeline.grab().toImage()
    for (_, cause), (_, rect) in drawn.items():
        if rect.height() >= 2:
            assert image.pixelColor(rect.center().toPoint()).name() == part_colour(cause).name(), cause


def test_the_legend_names_every_band_and_cause_and_the_tooltip_explains_in_words(qtbot):
    timeline = shown_timeline(qtbot, session_with_gaps(), width=1600)
    words = [w for w, _, _ in timeline.lane.drawn.legend]
    assert words[:3] == ["idle under 5 min", "idle past 5 min", "idle past 1 h"]
    assert {"first write", "append write", "rewrite write", "expired write", "provider miss write"} <= set(words)
    image = timeline.grab().toImage()
    for _, colour, square in timeline.lane.drawn.legend:
        assert image.pixelColor(square.center().toPoint()).name() == colour.name()
    tip = timeline.tip_for(2)
    assert "idle 7 min before it, past the 5-minute cache lifetime" in tip
    assert "expired" in tip and "stored again and paid for again" in tip


def test_a_session_without_times_or_cache_writes_draws_no_lane(qtbot):
    session = session_with_gaps()
    session.trace = [replace(r, at=None, usage=None) for r in session.trace]
    timeline = shown_timeline(qtbot, session)
    assert not timeline.lane.shown() and timeline.lane.drawn.gaps == []
    assert timeline._plot().bottom() == timeline.height() - 22


def test_the_lane_keeps_no_row_or_shape_a_request_once_painted(qtbot):
    """The lane's rows are read from the document's cache report as they are painted, and what it drew is laid out
    again when asked for: at 50,000 messages a row and two shapes kept a request (6.4 MiB) were made as the counted
    document painted, at the window's peak. Python's allocations kept by showing and painting a 300-request lane,
    each request with a gap and a write, stay under 64 bytes a request (310-350 with either kept)."""
    import gc
    import tracemalloc

    from foldscope.core.readout.cost_facts import document_cache

    t = Trace()
    n = 300
    ms = rounds(t, n, chars=200)
    for k in range(n):
        t.request(ms[: 4 + 3 * k], T0 + 60.0 * k, None)
    session = t.session()
    c = [m.count_with_head for m in measure_requests(session)]
    usage = [Usage(cache_write=c[0])] + [Usage(cache_read=c[k - 1], cache_write=c[k] - c[k - 1]) for k in range(1, n)]
    session.trace = [replace(r, usage=u) for r, u in zip(session.trace, usage)]
    document = build_document(session, "constructed")
    document_cache(document)  # as the load makes it before the counted document is shown
    timeline = Timeline()
    qtbot.addWidget(timeline)
    timeline.resize(1600, 260)
    timeline.set_document(build_document(session_with_gaps(), "constructed"))
    timeline.grab()  # a first lane painted before measuring: what any paint makes once (Qt's enums, its signatures)
    gc.collect()
    tracemalloc.start()
    try:
        timeline.set_document(document)
        timeline.grab()
        gc.collect()
        kept, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(timeline.lane.drawn.gaps) == n - 1 and len(timeline.lane.drawn.writes) == n  # every request drawn
    assert kept < 64 * n, f"{kept / n:.0f} bytes a request"


def test_the_lanes_facts_are_read_from_the_reports_rows_without_making_a_lane_row(monkeypatch):
    # Whether the lane draws, whether it is an implicit cache's, and the most any request wrote: read off a cache
    # report's rows as the counted document first paints, not through a lane row a request (each with its causes'
    # dict: 11,384 at 50k on the GUI thread), and the same as its lane rows give, explicit and implicit alike.
    from types import SimpleNamespace

    from foldscope.core.readout import cache_lane

    def row(index, gap, usage, read=None):
        causes = SimpleNamespace(index=index, gap_s=gap, usage=usage, causes={"append": 5, "expired": 0})
        return SimpleNamespace(causes=causes, read=read)

    explicit = [row(0, None, Usage(cache_write=40)), row(1, 30.0, Usage(cache_read=40, cache_write=70)), row(2, 5.0, None)]
    short = SimpleNamespace(short=25, broke={"expired": 25, "append": 0})
    implicit = [row(0, None, Usage(cache_read=0)), row(1, None, Usage(cache_read=10), short), row(2, None, None)]
    nothing = [row(0, None, None), row(1, None, Usage())]
    for rows in (explicit, implicit, nothing):
        made = [cache_lane.lane_row(r) for r in rows]
        facts = cache_lane.lane_facts(made)
        monkeypatch.setattr(cache_lane, "lane_row", lambda r: pytest.fail("a lane row made"))
        assert cache_lane.lane_facts(cache_lane.LaneRows(rows)) == facts
        monkeypatch.undo()
    assert cache_lane.lane_facts([cache_lane.lane_row(r) for r in explicit]) == (True, False, 70)
    assert cache_lane.lane_facts([cache_lane.lane_row(r) for r in implicit]) == (True, True, 25)
    assert cache_lane.lane_facts([cache_lane.lane_row(r) for r in nothing]) == (False, False, 0)


def test_the_lane_paints_its_shapes_from_the_reports_rows_without_making_a_lane_row(qtbot, monkeypatch):
    # The lane's bars and segments are laid out from a cache report's rows as they are (lane_cells), not through a
    # lane row a request (a frozen dataclass and its causes' dict: 11,384 at 50k as the counted document first
    # paints): the same shapes as its lane rows give.
    from foldscope.app.panels import cache_lane as lane_panel
    from foldscope.core.readout import cache_lane
    from foldscope.core.readout.cost_facts import document_cache

    document = build_document(session_with_gaps(), "constructed")
    document_cache(document)  # as the load makes it: the lane reads the report's rows (LaneRows)
    made = list(cache_lane.LaneRows(document.cache.rows))
    monkeypatch.setattr(cache_lane, "lane_row", lambda r: pytest.fail("a lane row made"))
    timeline = Timeline()
    qtbot.addWidget(timeline)
    timeline.set_document(document)
    timeline.resize(1200, 260)
    timeline.grab()
    shapes = timeline.lane.drawn.shapes
    assert isinstance(timeline.lane.rows, cache_lane.LaneRows)
    drawn = list(shapes())
    monkeypatch.undo()
    assert drawn == list(lane_panel._shapes(made, *shapes.args[1:]))
    assert [s[0] for s in drawn].count("gap") == 4 and "write" in [s[0] for s in drawn]

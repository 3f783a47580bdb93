"""The replay chart's header: its title and legend never overlap, and no point reaches into them."""

from __future__ import annotations

import pytest

from foldscope.app.lab.replay_chart import ReplayChart, Series

STRATEGIES = ("recorded", "none", "band", "compaction", "adr")
TITLE = "Share of each request read from the prompt cache, per request"


def chart(qtbot, width: int) -> ReplayChart:
    c = ReplayChart(TITLE, lambda v: f"{v:.0%}")
    qtbot.addWidget(c)
    c.resize(width, 180)
    c.set_series([Series(s, (0, 1, 2), (1.0, 0.5, 1.0)) for s in STRATEGIES], 3, top=1.0)
    return c


@pytest.mark.parametrize("width", [500, 800, 1100, 1400])
def test_the_title_and_the_legend_never_overlap_and_the_plot_starts_below_both(qtbot, width):
    """New user 18: the third chart's long title ran under its legend and the 100 % points."""
    c = chart(qtbot, width)
    title, legend = c.title_rect(), [rect for _, rect in c.legend_rects()]
    assert [s for s, _ in c.legend_rects()] == list(STRATEGIES)
    assert not any(title.intersects(rect) for rect in legend)
    assert all(a.right() < b.left() for a, b in zip(legend, legend[1:]))
    assert all(rect.right() <= width for rect in legend)
    top_point = c.point_of("recorded", 0)  # a share of 100 %: the top of the plot
    # the widest dot at 100 % stays clear of the header, with a few pixels between
    assert top_point.y() - c.dot_radius(0) - c.line_width(0) / 2 >= max(r.bottom() for r in [title, *legend]) + 2


def test_a_wide_chart_keeps_its_legend_beside_the_title_and_a_narrow_one_moves_it_under(qtbot):
    wide, narrow = chart(qtbot, 1400), chart(qtbot, 700)
    assert wide.legend_rects()[0][1].top() == wide.title_rect().top()
    assert narrow.legend_rects()[0][1].top() >= narrow.title_rect().bottom()

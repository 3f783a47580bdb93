"""The timeline's scale fits the requests when the rules stand far above them (issue 45): an Aider run of 5k-token
requests under a 200,000-token ceiling drew bars a pixel or two tall; the rules off the scale are named at its top."""

from __future__ import annotations

import pytest

from foldscope.app.panels.timeline import Timeline
from foldscope.app.panels.timeline_scale import FAR, ROOM, timeline_scale
from foldscope.app.qt import QColor
from foldscope.core.model.policy import Policy
from foldscope.core.readout.opening import build_document
from tests.app.panels.test_timeline_labels import folding_session

BAR = QColor("#5d8fd6")  # the light theme's bar colour (Timeline._draw_bars)


def shown(qtbot, document) -> Timeline:
    timeline = Timeline()
    qtbot.addWidget(timeline)
    timeline.resize(800, 200)
    timeline.set_document(document)
    timeline.show()
    qtbot.waitExposed(timeline)
    timeline.grab()  # painted: the label boxes are the ones drawn
    return timeline


def tallest_bar_pixels(timeline: Timeline) -> int:
    """The pixels of bar colour in the tallest request's bar, counted down a column of the grabbed widget."""
    doc = timeline.document
    slot = max(range(len(doc.requests)), key=lambda k: doc.requests[k].headline)
    rect = timeline._slot_rect(slot, timeline._plot())
    x = int(rect.left() + rect.width() * 0.3)  # inside the bar, clear of the dot at its centre
    image = timeline.grab().toImage()
    return sum(image.pixelColor(x, y) == BAR for y in range(image.height()))


def test_a_small_session_under_a_far_ceiling_fills_the_plot_and_names_the_rules_above_it(qtbot):
    timeline = shown(qtbot, build_document(folding_session(6), "made-in-test.json"))
    doc = timeline.document
    largest = max(r.headline for r in doc.requests)
    assert doc.rules.at("ceiling") > FAR * largest  # the premise: the ceiling stands far above the requests
    assert tallest_bar_pixels(timeline) >= 0.6 * timeline._plot().height()  # under the 200,000 scale: 2 pixels
    labels = {label: box for box, label, _, _ in timeline.label_boxes}
    ceiling = f"ceiling {doc.rules.at('ceiling'):,} ↑"
    assert ceiling in labels and all(f"{name} {doc.rules.at(name):,} ↑" in labels for name in ("target", "line"))
    plot = timeline._plot()
    assert plot.top() <= labels[ceiling].top() and labels[ceiling].bottom() <= plot.top() + 20  # at the plot's top edge


def test_a_session_near_its_ceiling_is_scaled_to_the_ceiling_as_before(qtbot):
    session = folding_session(6)
    first = build_document(session, "made-in-test.json")
    ceiling = 2 * max(r.headline for r in first.requests)  # within FAR of the bars: the rules stay on the scale
    timeline = shown(qtbot, build_document(session, "made-in-test.json", policy=Policy(max_input_tokens=ceiling)))
    rules = timeline.document.rules
    assert rules.at("ceiling") == ceiling
    # The price tier (200,000, its own rule here) stays far above: it alone leaves the scale.
    scale = timeline._scale()
    assert scale.above == ("tier",) and ceiling * ROOM <= scale.top <= ceiling * ROOM * 1.3  # the tier's label band over it
    plot = timeline._plot()
    assert plot.top() < timeline._y(ceiling, plot, scale.top) < plot.bottom()  # the ceiling's line on the plot
    assert [label for _, label, _, _ in timeline.label_boxes if label.endswith("↑")] == [f"price tier {rules.at('tier'):,} ↑"]
    assert any(label.startswith("ceiling") for _, label, _, _ in timeline.label_boxes)


@pytest.mark.parametrize(
    ("largest", "rules", "top", "above"),
    [
        (5_000, {"target": 120_000, "line": 160_000, "ceiling": 200_000}, 5_000 * ROOM, ("target", "line", "ceiling")),
        (5_000, {"target": 12_000, "line": 16_000, "ceiling": 200_000}, 16_000 * ROOM, ("ceiling",)),
        (60_000, {"target": 120_000, "line": 160_000, "ceiling": 200_000}, 200_000 * ROOM, ()),
        (0, {}, 1 * ROOM, ()),
    ],
)
def test_only_the_rules_far_above_the_largest_bar_or_dot_leave_the_scale(largest, rules, top, above):
    scale = timeline_scale(largest, rules)
    assert (scale.top, scale.above) == (pytest.approx(top), above)


def test_the_top_leaves_the_band_of_the_rules_labels_above_the_bars_only_when_a_rule_is_above():
    far = {"ceiling": 200_000}
    assert timeline_scale(5_000, far, band=0.25).top == pytest.approx(5_000 * ROOM / 0.75)
    assert timeline_scale(60_000, far, band=0.25).top == pytest.approx(200_000 * ROOM)

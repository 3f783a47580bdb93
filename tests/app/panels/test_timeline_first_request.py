"""A first request predicted before any report (so without the agent's unseen head) still draws a bar, and its
tooltip says why its prediction falls short of the reported input (issue 45: Gemini CLI's request 0 showed a dot only)."""

from __future__ import annotations

import pytest

from foldscope.app.panels.timeline import Timeline
from foldscope.core.readout.opening import open_document
from tests.paths import corpus_glob


@pytest.fixture
def gemini_timeline(qtbot):
    found = corpus_glob("gemini-cli/agent-sessions-jsonl_v040.jsonl")
    if not found:
        pytest.skip("the Gemini CLI staged sample is not present")
    timeline = Timeline()
    qtbot.addWidget(timeline)
    timeline.resize(700, 200)
    timeline.set_document(open_document(found[0], ":memory:"))
    return timeline


def test_the_first_request_predicted_without_its_unseen_head_draws_a_bar_and_says_why_it_is_short(gemini_timeline):
    first = gemini_timeline.document.requests[0]
    # The sample's shape: predicted from the count alone, far under the reported input that holds the head.
    assert first.predicted_from == "count" and first.unseen_head and first.predicted < first.unseen_head < first.reported_input
    image = gemini_timeline.grab().toImage()
    plot = gemini_timeline._plot()
    rect = gemini_timeline._slot_rect(0, plot)
    x, bottom = int(rect.center().x()), int(plot.bottom())
    assert image.pixelColor(x, bottom - 2) != image.pixelColor(x, bottom - 6)  # a whole pixel of bar, not the plot behind
    tip = gemini_timeline.tip_for(0)
    assert f"could not include the {first.unseen_head:,} tokens" in tip
    assert "No report came before" not in gemini_timeline.tip_for(1)  # anchored on request 0's report

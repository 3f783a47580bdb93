"""A context window smaller than the request on the GUI's screens: the status bar, the request panel and the
Composition say how far over the window the predicted input is, as the ceiling's line does, never `free 0`."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from foldscope.core.formats.demo import demo_path


@pytest.fixture
def small_window():
    from foldscope.app.gui import build_parser
    from foldscope.core.cli.options import policy_choice
    from foldscope.core.formats import load_session
    from foldscope.core.readout.opening import build_document

    args = build_parser().parse_args([str(demo_path()), "--context-window", "1000"])
    return build_document(load_session(demo_path()), str(demo_path()), policy=policy_choice(args))


def test_the_status_bar_and_request_panel_say_how_far_over_a_small_window_the_next_request_is(small_window):
    from foldscope.app.panels.request import RequestPanel
    from foldscope.app.panels.status import status_text

    doc = small_window
    over = doc.now_predicted - 1000
    assert over > 0 and doc.now_free == 0
    said = f"over the 1,000-token context window by {over:,}"
    status = status_text(doc)
    assert said in status and "free 0" not in status
    line = RequestPanel._predicted_line(None, doc, None)  # type: ignore[arg-type]  # the line reads only the document
    assert said in line and "free 0" not in line


def test_the_composition_tab_says_how_far_over_a_small_window_the_request_is():
    from foldscope.app.panels.composition import CompositionPanel
    from foldscope.core.readout.composition import Composition

    c = Composition(None, 30_000, 30_000, 1.0, 0, window=1000, window_source="set by context_window", predicted=30_500)
    assert c.free == 0 and c.over == 29_500
    # The heading reads the composition and, for its approximate mark, the panel's document (none here).
    heading = CompositionPanel._heading(SimpleNamespace(document=None), c)  # type: ignore[arg-type]
    assert "Context window 1,000: the predicted input is over it by 29,500" in heading and "0 free" not in heading

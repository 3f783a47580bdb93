"""The timeline, the window map and the request panel: stepping, clicking and the compiled payload."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from foldscope.app.qt import QPointF, Qt
from foldscope.core.request.compile import compile_request, payload_bytes
from foldscope.core.request.count import Counter
from foldscope.core.request.trace import session_tools
from foldscope.core.request.trace_measure import measure_trace
from tests.app.window_helpers import view_rows


def test_stepping_the_timeline_to_request_k_shows_the_view_the_core_reports_for_k(qtbot, demo_window):
    window = demo_window
    session = window.document.session
    record = session.record
    assert window.timeline.current == len(session.trace)  # starts at now
    for k in (0, 3, len(session.trace) - 1):
        window.timeline.step_to(k)
        assert view_rows(window) == [record.index_of(mid) for mid in session.trace[k].view]
        assert f"at request {k}" in window.view_list.heading.text()
    window.timeline.setFocus()
    qtbot.keyClick(window.timeline, Qt.Key.Key_End)
    assert view_rows(window) == [record.index_of(mid) for mid in session.view]
    qtbot.keyClick(window.timeline, Qt.Key.Key_Left)
    assert window.timeline.current == len(session.trace) - 1


def test_timeline_bars_are_the_estimates_core_trace_reports(demo_window):
    document = demo_window.document
    report = measure_trace(document.session, document.policy)
    assert [r.estimate for r in document.requests] == [row.estimate for row in report.rows]
    assert [r.reported_input for r in document.requests] == [row.reported_input for row in report.rows]


def test_next_fold_jumps_to_the_request_after_a_fold(qtbot, demo_window):
    window = demo_window
    folds = window.timeline.fold_slots()
    assert folds, "the demo session folds once"
    window.timeline.step_to(0)
    window.timeline.setFocus()
    qtbot.keyClick(window.timeline, Qt.Key.Key_N)
    assert window.timeline.current == folds[0]
    qtbot.keyClick(window.timeline, Qt.Key.Key_P)
    assert window.timeline.current == folds[0]  # no earlier fold: stays


def test_clicking_a_window_map_block_selects_it_in_both_lists_and_the_inspector(qtbot, demo_window):
    window = demo_window
    blocks = [(i, rect) for i, rect, in_view_bar in window.window_map.blocks() if in_view_bar and rect.width() > 4]
    index, rect = blocks[len(blocks) // 2]
    qtbot.mouseClick(window.window_map, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert window.inspector.index == index
    assert window.record_list.selected_index() == index
    assert window.view_list.selected_index() == index
    assert window.window_map.block_at(QPointF(rect.center())) == index


def test_the_request_panel_shows_the_compiled_payload_and_its_count(qtbot, demo_window):
    window = demo_window
    window.side_tabs.setCurrentWidget(window.request_panel)
    window.timeline.step_to(2)
    session = window.document.session
    messages = [session.record.get(mid) for mid in session.trace[2].view]
    options = {"record": session.record, "policy": window.document.policy, "tools": session_tools(session)}
    payload = compile_request(messages, **options)
    counted = Counter().count(messages, **options)
    header = window.request_panel.header.text()
    assert "request 2" in header
    assert f"{counted:,} counted" in header
    assert f"{window.document.requests[2].estimate:,} tokens" in header
    assert f"{len(payload_bytes(payload)):,} bytes" in header
    assert '"messages"' in window.request_panel.payload.toPlainText()


def test_the_status_bar_names_the_estimate_against_the_ceiling(demo_window):
    text = demo_window.status_label.full_text()
    assert "Format: lionagi" in text
    assert "ceiling" in text and "estimate" in text


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 2_000), st.floats(1, 120)), max_size=40), st.floats(0, 20))
def test_labels_are_spaced_so_none_covers_the_one_before_and_none_is_left_out_that_would_fit(labels, gap):
    # The timeline's fold labels and request numbers: a session with dozens of compactions drew "compaction" over
    # "compaction", and request numbers were cut to ".152" in a slot a few pixels wide.
    from foldscope.app.panels.timeline_paint import spaced

    lefts, widths = [x for x, _ in labels], [w for _, w in labels]
    chosen = spaced(lefts, widths, gap)
    order = sorted(range(len(lefts)), key=lambda i: lefts[i])
    assert chosen == [i for i in order if i in chosen]  # left to right
    assert (not labels) or chosen[0] == order[0]  # the first is always drawn
    for a, b in zip(chosen, chosen[1:]):
        assert lefts[b] >= lefts[a] + widths[a] + gap
    for i in set(range(len(lefts))) - set(chosen):  # left out: it starts too soon after the last one drawn before
        before = [c for c in chosen if order.index(c) < order.index(i)]
        assert before and lefts[i] < lefts[before[-1]] + widths[before[-1]] + gap

"""The timeline's zoom (issue 45): a long session's bars made wide enough to read, the shown request kept in view,
from the keyboard, Ctrl+wheel and the View menu, and all of the session again in the next one."""

from __future__ import annotations

from foldscope.app.qt import QPoint, QPointF, Qt, QWheelEvent
from foldscope.core.formats.demo import demo_path

LARGE = "pi/pi-mono_large-session.jsonl"  # 453 requests: about 2 pixels a bar at 1366x768


def open_large(qtbot, window, corpus_dev):
    window.resize(1366, 768)
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(corpus_dev / LARGE)
    qtbot.waitUntil(lambda: window.task is None, timeout=60_000)
    return window.timeline


def bar_width(timeline) -> float:
    return timeline._slot_rect(0, timeline._plot()).width()


def in_view(timeline, slot: int) -> bool:
    plot, rect = timeline._plot(), timeline._slot_rect(slot, timeline._plot())
    return plot.left() - 0.01 <= rect.left() and rect.right() <= plot.right() + 0.01


def wheel(timeline, notches: int, modifiers=Qt.KeyboardModifier.NoModifier) -> None:
    at = QPointF(timeline.width() / 2, timeline.height() / 2)
    event = QWheelEvent(
        at,
        timeline.mapToGlobal(at),
        QPoint(),
        QPoint(0, 120 * notches),
        Qt.MouseButton.NoButton,
        modifiers,
        Qt.ScrollPhase.NoScrollPhase,
        False,
    )
    timeline.wheelEvent(event)


def test_plus_zooms_a_long_session_to_readable_bars_with_the_shown_request_in_view_and_a_click_picks_the_bar_under_it(
    qtbot, window, corpus_dev
):
    timeline = open_large(qtbot, window, corpus_dev)
    whole = bar_width(timeline)
    assert whole < 3.5  # the complaint: a bar packed into ~3 px
    timeline.step_to(200)
    timeline.setFocus()
    for _ in range(2):
        qtbot.keyClick(timeline, Qt.Key.Key_Plus)
    assert bar_width(timeline) >= 4 * whole - 0.01 and in_view(timeline, 200)
    assert not in_view(timeline, 0) and not in_view(timeline, timeline.slots() - 1)  # only part of the session shows
    # A click lands on the bar drawn under it, zoomed as drawn.
    rect = timeline._slot_rect(210, timeline._plot())
    qtbot.mouseClick(timeline, Qt.MouseButton.LeftButton, pos=rect.center().toPoint())
    assert timeline.current == 210
    # Stepping past the view's edge scrolls it; the numbers under the plot are those in view.
    timeline.step_to(timeline.slots() - 1)
    assert in_view(timeline, timeline.slots() - 1) and not in_view(timeline, 200)
    qtbot.keyClick(timeline, Qt.Key.Key_0)
    assert bar_width(timeline) == whole and in_view(timeline, 0) and in_view(timeline, timeline.slots() - 1)


def test_ctrl_wheel_zooms_the_wheel_alone_then_scrolls_and_the_view_menu_zooms_from_anywhere(qtbot, window, corpus_dev):
    timeline = open_large(qtbot, window, corpus_dev)
    whole = bar_width(timeline)
    timeline.step_to(100)
    wheel(timeline, 1, Qt.KeyboardModifier.ControlModifier)
    assert bar_width(timeline) == 2 * whole and in_view(timeline, 100)
    first = timeline.zoom.first
    wheel(timeline, -1)  # towards the end of the session
    assert timeline.zoom.first > first and bar_width(timeline) == 2 * whole
    menu = next(a.menu() for a in window.view_menu.actions() if a.text() == "Timeline &zoom")
    actions = {a.text(): a for a in menu.actions()}
    # The heading, zoomed, names the menu's keys: one set, shown alike.
    assert all(f"{a.shortcut().toString()}" in timeline.zoom.words() for a in actions.values())
    actions["Zoom &in"].trigger()
    assert bar_width(timeline) == 4 * whole and in_view(timeline, 100)
    actions["Zoom &out"].trigger()
    actions["&Whole session"].trigger()
    assert bar_width(timeline) == whole


def test_a_new_session_opens_with_all_of_it_in_view(qtbot, window, corpus_dev):
    timeline = open_large(qtbot, window, corpus_dev)
    timeline.zoom_by(1)
    timeline.zoom_by(1)
    assert timeline.zoom.level == 2
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(demo_path())
    assert timeline.zoom.level == 0 and in_view(timeline, 0) and in_view(timeline, timeline.slots() - 1)

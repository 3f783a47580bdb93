"""Following a live session: lines a test appends grow the lists and the timeline in place, without a re-import,
and the selection stays; the status bar names the limits, with a notice when the next request crosses one."""

from __future__ import annotations

import pytest

from foldscope.app import loading as loading_module
from foldscope.app.window import MainWindow
from foldscope.core.model.policy import Policy
from tests.core.live_sessions import append, rounds

pytest.importorskip("watchfiles")


@pytest.fixture
def live_file(tmp_path):
    path = tmp_path / "live.jsonl"
    append(path, rounds(0, 3))
    return path


def _open(qtbot, window, path):
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)


def test_following_a_file_a_test_appends_to_grows_the_lists_and_timeline_without_a_reimport(qtbot, window, live_file, monkeypatch):
    _open(qtbot, window, live_file)
    opened: list[str] = []
    real_open = loading_module.open_document  # what the loading worker opens with (app.loading.load_work)
    monkeypatch.setattr(loading_module, "open_document", lambda *a, **k: opened.append(a[0]) or real_open(*a, **k))
    window.select_message(2)
    records, slots = window.record_model.rowCount(), window.timeline.slots()
    window.following.action.trigger()
    assert window.following.live.active and window.following.action.isChecked()
    lines_before = window.following.live.follower.lines_read
    added = rounds(3, 2)
    with qtbot.waitSignal(window.following.live.grew, timeout=15_000):
        append(live_file, added)
    qtbot.waitUntil(lambda: window.following.live.follower.lines_read == lines_before + len(added), timeout=15_000)
    # What was read is what was added: one parse per new line, no re-import of the file.
    assert window.following.live.follower.lines_read - lines_before == len(added) and opened == []
    assert window.record_model.rowCount() == records + len(added)
    assert window.timeline.slots() == slots + 2
    assert window.inspector.index == 2 and window.record_list.selected_index() == 2
    assert window.status_label.full_text().startswith("Following · next request")


def test_the_next_request_crossing_the_line_is_noticed_by_name(qtbot, settings, tmp_path, live_file):
    window = MainWindow(settings=settings, db=str(tmp_path / "library.db"), policy=Policy(max_input_tokens=8_000))
    qtbot.addWidget(window)
    _open(qtbot, window, live_file)
    window.following.action.trigger()
    assert "of the line 6,400" in window.status_label.full_text() and "of the ceiling 8,000" in window.status_label.full_text()
    with qtbot.waitSignal(window.following.live.limits_crossed, timeout=20_000) as crossing:
        append(live_file, rounds(3, 20))
    assert "line" in crossing.args[0]
    qtbot.waitUntil(lambda: "will cross" in window.statusBar().currentMessage() or "reaches" in window.statusBar().currentMessage())


def test_a_file_that_cannot_be_followed_says_why(qtbot, demo_window):
    window = demo_window
    window.following.action.trigger()
    assert not window.following.live.active and not window.following.action.isChecked()
    assert "following reads" in window.statusBar().currentMessage()


def test_turning_follow_off_stops_the_watcher(qtbot, window, live_file):
    _open(qtbot, window, live_file)
    window.following.action.trigger()
    thread = window.following.live._thread
    assert thread is not None and thread.is_alive()
    window.following.action.trigger()
    assert not window.following.live.active and not thread.is_alive()
    assert not window.status_label.full_text().startswith("Following")


def test_a_bad_line_stops_following_after_showing_the_good_lines_read_with_it(qtbot, window, live_file):
    import json

    _open(qtbot, window, live_file)
    window.following.action.trigger()
    records = window.record_model.rowCount()
    added = rounds(3, 2)
    with qtbot.waitSignal(window.following.live.stopped, timeout=15_000) as stopped:
        # One write: the good lines and a bad one arrive in the same poll.
        with open(live_file, "a", encoding="utf-8") as handle:
            handle.write("".join(json.dumps(line) + "\n" for line in added) + "{not json\n")
    assert "not JSON" in stopped.args[0]
    assert window.record_model.rowCount() == records + len(added)  # the good lines read in that poll are shown
    assert not window.following.live.active

"""The library never in the way: a session opens and shows when the library cannot be used (a bar says where
and why, with a way out); autosave waits out a busy library, says when it fails and tries again; work on a session
that grew since a crash is still offered; a failed save says why; the Library panel removes sessions."""

from __future__ import annotations

import sqlite3
import threading

import pytest

import foldscope.app.save as save_module
from foldscope.app import dialogs
from foldscope.app.settings import WindowSettings
from foldscope.app.window import MainWindow
from foldscope.core.actions.commands import Evict
from foldscope.core.formats.demo import demo_path
from foldscope.core.store.library import Library


def open_in(qtbot, window, path):
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    return window.document


def window_on(qtbot, tmp_path, db, name="w.ini") -> MainWindow:
    window = MainWindow(settings=WindowSettings(tmp_path / name), db=str(db))
    qtbot.addWidget(window)
    return window


# -- a library that cannot be used ---------------------------------------------------------------------


def test_a_session_opens_and_shows_when_the_library_is_not_a_database(qtbot, tmp_path):
    bad = tmp_path / "library.db"
    bad.write_text("not SQLite\n" * 100)
    window = window_on(qtbot, tmp_path, bad)
    window.show()
    doc = open_in(qtbot, window, demo_path())  # the conftest fails the test on any error dialog
    assert doc is not None and doc.library_id is None
    assert window.record_model.rowCount() == len(doc.session.record)
    assert window.library_bar.isVisible()
    text = window.library_bar.label.text()
    assert str(bad) in text and "not a foldscope library" in text and "without search and autosave" in text
    assert window.saver.autosave() is None  # no library to write to, and nothing raised
    assert bad.read_text() == "not SQLite\n" * 100


def test_choosing_another_library_hides_the_bar_and_imports_the_open_session(qtbot, tmp_path, monkeypatch):
    bad = tmp_path / "library.db"
    bad.write_text("not SQLite\n" * 100)
    window = window_on(qtbot, tmp_path, bad)
    window.show()
    doc = open_in(qtbot, window, demo_path())
    other = tmp_path / "other" / "library.db"
    monkeypatch.setattr(dialogs, "choose_library_path", lambda parent, start: str(other))
    with qtbot.waitSignal(window.library_imported, timeout=20_000):
        assert window.library_bar.choose_button.click() is None
    qtbot.waitUntil(lambda: not window.library_panel.is_busy())
    assert not window.library_bar.isVisible() and window.db == window.saver.db == str(other)
    assert doc.library_id is not None
    with Library(other) as library:
        assert [r["id"] for r in library.list_sessions()] == [doc.library_id]


def test_a_fresh_library_sets_the_broken_one_aside_and_never_deletes_it(qtbot, tmp_path, monkeypatch):
    bad = tmp_path / "library.db"
    bad.write_text("not SQLite\n" * 100)
    window = window_on(qtbot, tmp_path, bad)
    window.show()
    open_in(qtbot, window, demo_path())
    monkeypatch.setattr(dialogs, "fresh_library_path", lambda parent, start: str(bad))
    with qtbot.waitSignal(window.library_imported, timeout=20_000):
        window.library_bar.fresh_button.click()
    qtbot.waitUntil(lambda: not window.library_panel.is_busy())
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("library.db.unusable-")]
    assert len(aside) == 1 and aside[0].read_text() == "not SQLite\n" * 100
    with Library(bad) as library:
        assert len(library.list_sessions()) == 1


# -- autosave and the busy library ------------------------------------------------------------------------


def evict_one(window, doc):
    assert window.session_actions.editor.do(Evict([doc.index_of(doc.session.view[-1])]), "evict").success


def test_autosave_waits_for_a_busy_library_instead_of_failing(qtbot, window):
    doc = open_in(qtbot, window, demo_path())
    holder = sqlite3.connect(window.db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process (or search indexing) is writing
    holder.execute("INSERT INTO events (session_id, at, kind, data) VALUES (?, 'x', 'other', '{}')", [doc.library_id])
    released = threading.Timer(0.5, lambda: holder.execute("COMMIT"))
    released.start()
    evict_one(window, doc)
    window.saver.timer.stop()
    with qtbot.waitSignal(window.saver.autosaved, timeout=10_000):
        assert window.saver.autosave() is not None  # written off the GUI thread: it waited for the other writer
    released.join()
    holder.close()


def test_a_failed_autosave_is_said_in_the_status_bar_and_tried_again(qtbot, window, monkeypatch):
    monkeypatch.setattr(save_module, "BUSY_S", 0.1)
    monkeypatch.setattr(save_module, "AUTOSAVE_RETRY_MS", (200, 400))
    doc = open_in(qtbot, window, demo_path())
    holder = sqlite3.connect(window.db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    with qtbot.waitSignal(window.saver.autosave_failed, timeout=10_000) as failed:
        evict_one(window, doc)
    assert "locked for over 0.1 s" in failed.args[0] and window.saver.retry_ms == 200
    assert "Autosave failed" in window.statusBar().currentMessage()
    holder.execute("COMMIT")
    holder.close()
    with qtbot.waitSignal(window.saver.autosaved, timeout=10_000):
        pass  # the retry, with nothing else done by the user
    assert window.saver.retry_ms == 0
    with Library(window.db) as library:
        assert library.latest_working_state(None, doc.library_id)["data"]["view"] == list(doc.session.view)


# -- recovery on a session that grew --------------------------------------------------------------------


def test_work_on_a_session_that_grew_after_a_crash_is_offered_and_applied(qtbot, window, tmp_path, monkeypatch, corpus_dev):
    lines = (corpus_dev / "claude_code" / "tool_heavy.jsonl").read_bytes().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(lines[:-6]))  # an agent still writing
    doc = open_in(qtbot, window, live)
    evicted = doc.session.view[3]
    with qtbot.waitSignal(window.saver.autosaved, timeout=10_000):
        evict_one_id = doc.index_of(evicted)
        assert window.session_actions.editor.do(Evict([evict_one_id]), "evict").success
    old_ids = list(doc.session.record.ids())
    live.write_bytes(b"".join(lines))  # foldscope crashed; the agent wrote on
    asked = []
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, name, when: asked.append(name) or True)
    after = window_on(qtbot, tmp_path, window.db, "after.ini")
    grown = open_in(qtbot, after, live)
    assert asked == ["live.jsonl"]
    ids = grown.session.record.ids()
    assert len(ids) > len(old_ids)
    assert evicted not in grown.session.view  # the work is applied where its messages are still there
    new = [i for i in ids if i not in old_ids]
    assert new and all(i in grown.session.view for i in new)  # what the agent wrote since stays in the view
    assert after.saver.editor.is_modified


def test_a_rewritten_session_is_not_offered_old_work(qtbot, window, tmp_path, monkeypatch, corpus_dev):
    live = tmp_path / "live.jsonl"
    live.write_bytes((corpus_dev / "claude_code" / "tool_heavy.jsonl").read_bytes())
    doc = open_in(qtbot, window, live)
    with qtbot.waitSignal(window.saver.autosaved, timeout=10_000):
        evict_one(window, doc)
    live.write_bytes((corpus_dev / "claude_code" / "short.jsonl").read_bytes())  # another session at that path
    monkeypatch.setattr(dialogs, "ask_recover", lambda *args: pytest.fail("offered work on another session"))
    after = window_on(qtbot, tmp_path, window.db, "after.ini")
    open_in(qtbot, after, live)


# -- saving -----------------------------------------------------------------------------------------------


def test_a_failed_save_of_any_kind_says_why_in_a_dialog(qtbot, window, tmp_path, monkeypatch):
    open_in(qtbot, window, demo_path())
    errors = []
    monkeypatch.setattr(dialogs, "error_dialog", lambda parent, title, text: errors.append((title, text)))

    def too_deep(session, path):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(save_module, "write_session", too_deep)
    target = tmp_path / "out.json"
    assert not window.saver.write(str(target))
    assert errors and errors[0][0] == "Cannot save session" and "nests deeper" in errors[0][1] and str(target) in errors[0][1]
    assert not target.exists()


def test_save_as_on_a_native_file_proposes_a_new_name(qtbot, window, tmp_path, monkeypatch):
    from foldscope.core.formats import load_session
    from foldscope.core.formats.lionagi_write import write_session

    native = tmp_path / "run.foldscope.json"
    write_session(load_session(demo_path()), native)
    open_in(qtbot, window, native)
    proposed = []
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: proposed.append(start) or "")
    window.saver.save_as()
    assert proposed == [str(tmp_path / "run-2.foldscope.json")]


# -- the Library panel ----------------------------------------------------------------------------------


def test_the_library_panel_shows_the_size_and_removes_the_selected_session(qtbot, window, monkeypatch):
    doc = open_in(qtbot, window, demo_path())
    panel = window.library_panel
    with qtbot.waitSignal(panel.sessions_listed, timeout=10_000):
        panel.refresh()
    assert panel.size_label.text().startswith("1 session") and window.db in panel.size_label.full_text()
    panel.session_table.selectRow(0)
    asked = []
    monkeypatch.setattr(dialogs, "confirm_remove", lambda parent, names: asked.append(names) or True)
    with qtbot.waitSignal(panel.sessions_removed, timeout=10_000):
        panel.remove_selected()
    with qtbot.waitSignal(panel.sessions_listed, timeout=10_000):
        pass
    qtbot.waitUntil(lambda: not panel.is_busy())
    assert asked == [["demo_session.json"]] and panel.sessions.rows == []
    assert doc.library_id is None  # autosave no longer writes to a removed session
    with Library(window.db) as library:
        assert library.list_sessions() == [] and library.conn.execute("SELECT COUNT(*) FROM bodies").fetchone() == (0,)


def test_the_library_bar_shows_a_hostile_path_as_plain_text(qtbot, tmp_path):
    from foldscope.app.qt import Qt

    folder = tmp_path / "<a href='https:__example.org'>click<_a>"
    folder.mkdir()
    bad = folder / "library.db"
    bad.write_text("not SQLite\n")
    window = window_on(qtbot, tmp_path, bad)
    window.show()
    open_in(qtbot, window, demo_path())
    label = window.library_bar.label
    assert label.textFormat() == Qt.TextFormat.PlainText and "<a href=" in label.text()
    assert not label.openExternalLinks()


def _session_with_times(tmp_path, times):
    from foldscope.core.formats import load_session
    from foldscope.core.formats.lionagi_write import write_session

    session = load_session(demo_path())
    for message, at in zip(session.record, times):
        message.raw["created_at"] = at
    path = tmp_path / "huge-times.json"
    write_session(session, path)
    return path


def test_a_created_at_no_store_can_hold_opens_with_the_library_and_a_warning(qtbot, tmp_path):
    path = _session_with_times(tmp_path, [2**63, 10**30])
    window = window_on(qtbot, tmp_path, tmp_path / "library.db")
    doc = open_in(qtbot, window, path)  # the conftest fails the test on any error dialog
    assert doc is not None and doc.library_id is not None and doc.library_problem is None
    assert any("is not a time" in w for w in doc.session.warnings)
    stored = (
        sqlite3.connect(tmp_path / "library.db")
        .execute("SELECT created_at FROM messages WHERE session_id = ? ORDER BY idx LIMIT 2", [doc.library_id])
        .fetchall()
    )
    assert stored == [(None,), (None,)]


def test_no_store_failure_of_any_kind_stops_a_session_from_opening(qtbot, tmp_path, monkeypatch):
    def fails(self, rows):
        raise OverflowError("Python int too large to convert to SQLite INTEGER")

    monkeypatch.setattr(Library, "_insert_messages", fails)
    window = window_on(qtbot, tmp_path, tmp_path / "library.db")
    doc = open_in(qtbot, window, demo_path())
    assert doc is not None and doc.library_id is None
    assert "OverflowError" in doc.library_problem


def test_autosave_never_holds_the_gui_thread_while_another_process_writes(qtbot, window):
    import time

    doc = open_in(qtbot, window, demo_path())
    holder = sqlite3.connect(window.db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another process holds the write lock for a second
    released = threading.Timer(1.0, lambda: holder.execute("COMMIT"))
    released.start()
    evict_one(window, doc)
    window.saver.timer.stop()
    start = time.monotonic()
    window.saver.autosave()
    returned = time.monotonic() - start
    with qtbot.waitSignal(window.saver.autosaved, timeout=10_000):
        pass
    released.join()
    holder.close()
    assert returned < 0.5  # the write waited for the lock on a worker, not on the GUI thread


def test_steady_editing_is_autosaved_every_few_seconds(qtbot, window, monkeypatch):
    """An edit every 1.2 s never leaves the quiet 1.5 s a debounce waits for: the oldest unsaved edit still is
    written within AUTOSAVE_MAX_MS. The clock is the test's, so nothing sleeps."""
    clock = [1000.0]
    monkeypatch.setattr(save_module.time, "monotonic", lambda: clock[0])
    doc = open_in(qtbot, window, demo_path())
    saver = window.saver
    waits = []
    for _ in range(5):  # edits at 0, 1.2, 2.4, 3.6 and 4.8 s
        evict_one(window, doc)
        waits.append(saver.timer.interval() if saver.timer.isActive() else None)
        clock[0] += 1.2
    assert waits[0] == save_module.AUTOSAVE_MS
    # the last edit, 4.8 s after the first unsaved one, waits only what is left of AUTOSAVE_MAX_MS
    assert waits[-1] == save_module.AUTOSAVE_MAX_MS - 4800
    with qtbot.waitSignal(saver.autosaved, timeout=10_000):
        pass
    assert saver.pending_since is None

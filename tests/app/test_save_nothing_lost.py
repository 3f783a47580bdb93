"""Nothing lost: crash recovery from autosave on reopening, asking before another file replaces unsaved changes,
and the Folds panel following every applied fold and undo."""

from __future__ import annotations

import pytest

from foldscope.app import dialogs
from foldscope.app.settings import WindowSettings
from foldscope.app.window import MainWindow
from foldscope.core.actions.commands import Clip, Evict
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path


def open_in(qtbot, window, path):
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)
    return window.document


def second_window(qtbot, tmp_path, db) -> MainWindow:
    """Another foldscope on the same library: what starts after a crash."""
    window = MainWindow(settings=WindowSettings(tmp_path / "after-crash.ini"), db=db)
    qtbot.addWidget(window)
    return window


def clip_and_autosave(qtbot, window):
    doc = open_in(qtbot, window, demo_path())
    actions = window.session_actions
    index = max((i for i in doc.view_position if doc.message(i).kind == "action_response"), key=lambda i: doc.chars[i])
    with qtbot.waitSignal(actions.saver.autosaved, timeout=10_000):
        assert actions.editor.do(Clip(index, 1500), f"clip of #{index}").success
    return doc


def test_reopening_after_a_crash_offers_the_autosaved_changes_and_puts_them_back(qtbot, window, tmp_path, monkeypatch):
    crashed = clip_and_autosave(qtbot, window)  # the first window never closes cleanly: a crash
    asked = []
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, name, when: asked.append((name, when)) or True)
    after = second_window(qtbot, tmp_path, window.db)
    doc = open_in(qtbot, after, demo_path())
    assert asked and asked[0][0] == "demo_session.json" and asked[0][1]
    assert list(doc.session.view) == list(crashed.session.view)
    assert [m.id for m in doc.session.record] == [m.id for m in crashed.session.record]
    assert doc.session.manifest == crashed.session.manifest
    assert after.view_model.rowCount() == len(crashed.session.view)  # the panels show the recovered view
    assert after.session_actions.editor.is_modified and after.windowTitle().startswith("*")


def test_declining_the_recovery_keeps_the_source_and_does_not_ask_again(qtbot, window, tmp_path, monkeypatch):
    clip_and_autosave(qtbot, window)
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, name, when: False)
    after = second_window(qtbot, tmp_path, window.db)
    doc = open_in(qtbot, after, demo_path())
    assert len(doc.session.record) == len(load_session(demo_path()).record)  # the clip's copy is not put back
    assert not after.session_actions.editor.is_modified
    monkeypatch.setattr(dialogs, "ask_recover", lambda parent, name, when: pytest.fail("asked again"))
    third = second_window(qtbot, tmp_path, window.db)
    open_in(qtbot, third, demo_path())


def test_saved_changes_are_not_offered_for_recovery(qtbot, window, tmp_path, monkeypatch):
    clip_and_autosave(qtbot, window)
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(tmp_path / "kept.json"))
    assert window.session_actions.saver.save()
    after = second_window(qtbot, tmp_path, window.db)
    open_in(qtbot, after, demo_path())  # the conftest fails any recovery offer


@pytest.mark.parametrize("answer", ["cancel", "discard"])
def test_opening_another_file_with_unsaved_changes_asks_first(qtbot, window, tmp_path, monkeypatch, answer):
    doc = open_in(qtbot, window, demo_path())
    assert window.session_actions.editor.do(Evict([doc.index_of(doc.session.view[-1])]), "evict").success
    asked = []
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, name: asked.append(name) or answer)
    other = "/work/shared/corpus/dev/claude_code/short.jsonl"
    if answer == "cancel":
        assert window.open_path(other) is None
        assert window.document is doc and window.session_actions.editor.is_modified
    else:
        open_in(qtbot, window, other)
        assert window.document.path.endswith("short.jsonl")
    assert asked == ["demo_session.json"]


def test_the_folds_panel_follows_an_applied_fold_and_its_undo(qtbot, window):
    doc = open_in(qtbot, window, demo_path())
    actions = window.session_actions
    rows_before = window.fold_panel.model.rowCount()
    with qtbot.waitSignal(actions.preview.preview_ready, timeout=20_000) as ready:
        actions.preview_fold()
    qtbot.waitUntil(lambda: actions.preview.task is None)
    records = len(ready.args[0].run.records)
    assert records and actions.preview.apply().success
    assert window.fold_panel.model.rowCount() == rows_before + records
    assert len(doc.session.manifest["context_folds"]) == window.fold_panel.model.rowCount() - len(doc.session.events)
    actions.editor.undo()
    assert window.fold_panel.model.rowCount() == rows_before
    actions.editor.redo()
    assert window.fold_panel.model.rowCount() == rows_before + records

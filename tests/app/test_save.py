"""Save and Save As write the native file; reopening gives the same session; closing with unsaved changes asks; autosave."""

from __future__ import annotations

import pytest

import foldscope.app.save as module
from foldscope.app import dialogs
from foldscope.core.actions.commands import Clip, Evict
from foldscope.core.formats import load_session
from foldscope.core.formats.lionagi_write import native_dict


def open_demo(qtbot, window):
    from foldscope.core.formats.demo import demo_path

    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    return window.document


def as_saved(doc):
    """The session as Save writes it: its launch record and Amendment 3's startup fields under the document's policy."""
    from foldscope.core.model.launch import read_launch_policy, to_save

    return to_save(doc.session, doc.policy if doc.policy is not None else read_launch_policy(doc.session))


def same_session(a, b) -> None:
    assert [m.id for m in a.record] == [m.id for m in b.record]
    assert [m.sha256() for m in a.record] == [m.sha256() for m in b.record]
    assert a.view == b.view
    # current_progression is the view as the file holds it; a session in memory keeps it in `view`.
    strip = lambda meta: {k: v for k, v in meta.items() if k != "current_progression"}  # noqa: E731
    assert strip(a.branch_metadata) == strip(b.branch_metadata)
    assert a.manifest == b.manifest


def test_save_then_reopen_gives_the_same_session(qtbot, window, tmp_path, monkeypatch):
    doc = open_demo(qtbot, window)
    actions = window.session_actions
    index = max((i for i in doc.view_position if doc.message(i).kind == "action_response"), key=lambda i: doc.chars[i])
    assert actions.editor.do(Clip(index, 1500), f"clip of #{index}").success
    assert actions.editor.do(Evict([doc.index_of(doc.session.view[-1])]), "evict").success
    assert actions.editor.is_modified and window.windowTitle().startswith("*")
    target = tmp_path / "saved.foldscope.json"
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(target))
    assert actions.save_action.isEnabled()
    actions.save_action.trigger()  # no file of ours yet: Save asks where, as Save As does
    assert target.exists() and not actions.editor.is_modified
    assert not window.windowTitle().startswith("*")
    same_session(load_session(target), as_saved(doc))
    assert native_dict(load_session(target)) == native_dict(as_saved(doc))
    # Save again writes to the same file without asking.
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: pytest.fail("Save asked again"))
    actions.editor.undo()
    assert actions.saver.save()
    same_session(load_session(target), as_saved(doc))


def test_save_as_never_writes_over_the_source(qtbot, window, monkeypatch):
    doc = open_demo(qtbot, window)
    errors = []
    monkeypatch.setattr(dialogs, "error_dialog", lambda parent, title, text: errors.append(text))
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: doc.path)
    assert not window.session_actions.saver.save_as()
    assert errors and "refusing to overwrite" in errors[0]
    assert module.default_save_path("/x/session-1.jsonl") == "/x/session-1.foldscope.json"


@pytest.mark.parametrize("answer,closes", [("cancel", False), ("discard", True), ("save", True)])
def test_closing_with_unsaved_changes_asks(qtbot, window, tmp_path, monkeypatch, answer, closes):
    doc = open_demo(qtbot, window)
    window.show()
    qtbot.waitExposed(window)
    asked = []
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, name: asked.append(name) or answer)
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(tmp_path / "out.json"))
    assert window.session_actions.editor.do(Evict([doc.index_of(doc.session.view[-1])]), "evict").success
    assert window.close() is closes
    assert asked == ["demo_session.json"]
    assert (tmp_path / "out.json").exists() is (answer == "save")


def test_the_windows_own_events_call_no_python_filter_to_ask_about_closing(qtbot, settings, tmp_path, monkeypatch):
    # The close asks in the window's closeEvent: a filter on the window was a call into Python at each of its events,
    # a paint and an update request each frame of the busy bar's animation while a file is read, each taking the
    # interpreter from the load's worker. A filter the saver defined would be called here (it fails installed).
    from foldscope.app.window import MainWindow

    heard = []
    monkeypatch.setattr(module.SaveController, "eventFilter", lambda self, watched, event: heard.append(event) and False, raising=False)
    window = MainWindow(settings=settings, db=str(tmp_path / "library.db"))
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    window.repaint()
    assert heard == []


def test_closing_without_changes_does_not_ask(qtbot, window, monkeypatch):
    open_demo(qtbot, window)
    monkeypatch.setattr(dialogs, "ask_unsaved", lambda parent, name: pytest.fail("asked with nothing unsaved"))
    window.show()
    assert window.close()


def test_autosave_keeps_the_working_state_in_the_library(qtbot, window, monkeypatch):
    doc = open_demo(qtbot, window)
    actions = window.session_actions
    index = max((i for i in doc.view_position if doc.message(i).kind == "action_response"), key=lambda i: doc.chars[i])
    with qtbot.waitSignal(actions.saver.autosaved, timeout=10_000):
        assert actions.editor.do(Clip(index, 1500), f"clip of #{index}").success
    state = module.latest_working_state(window.db, doc.library_id)
    assert state is not None and len(state["added"]) == 1
    # After a crash: the source read again, the working state put back.
    fresh = load_session(doc.path)
    module.recover(fresh, state)
    same_session(fresh, doc.session)
    from foldscope.core.store.library import Library

    with Library(window.db) as library:
        assert library.view_versions(doc.library_id)[-1]["cause"] == f"manual: clip of #{index}"


def test_saving_an_imported_session_keeps_what_the_provider_reported_and_writes_the_startup_fields(
    qtbot, window, tmp_path, monkeypatch, corpus_dev
):
    source = corpus_dev / "claude_code" / "session-9eda1058.jsonl"
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(source)
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    actions = window.session_actions
    assert actions.editor.do(Evict([doc.index_of(doc.session.view[-1])]), "evict").success
    target = tmp_path / "saved.foldscope.json"
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(target))
    assert actions.saver.save_as()
    back, original = load_session(target), load_session(source)
    assert back.model == original.model and back.manifest["source_format"] == "claude_code"
    assert [r.usage for r in back.trace] == [r.usage for r in original.trace]
    assert {"prompt_caching", "tool_result_max_chars", "context_fold"} <= set(back.manifest)
    assert "api_launch" in back.branch_metadata


def test_after_save_as_the_title_names_the_file_written(qtbot, window, tmp_path, monkeypatch):
    """Issue 19: after Save As the title still showed the source file's name."""
    doc = open_demo(qtbot, window)
    assert window.editor.do(Evict([doc.index_of(doc.session.view[-1])]), "evict").success
    target = tmp_path / "kept-as.foldscope.json"
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(target))
    assert window.session_actions.saver.save_as()
    assert window.windowTitle() == "kept-as.foldscope.json — foldscope"


def test_undoing_a_clip_keeps_the_title_modified_and_says_the_record_keeps_the_copy(qtbot, window):
    """Issue 19: undoing a clip left the title "unmodified" while the record held the copy."""
    doc = open_demo(qtbot, window)
    index = max((i for i in doc.view_position if doc.message(i).kind == "action_response"), key=lambda i: doc.chars[i])
    assert window.editor.do(Clip(index, 1500), f"clip of #{index}").success
    copy_index = doc.record_size - 1
    assert window.session_actions.undo() is not None
    assert doc.record_size == copy_index + 1 and not doc.in_view(copy_index)  # the record keeps it, the view does not
    assert window.editor.is_modified and window.windowTitle().startswith("*")
    said = window.statusBar().currentMessage()
    assert "record keeps 1 message" in said and f"#{copy_index}" in said and "no longer shows" in said

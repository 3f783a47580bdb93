"""The fold preview: it changes nothing until applied; apply then undo gives back the exact state before."""

from __future__ import annotations

import copy

import pytest

from app.document import build_document
from core.formats import load_session


@pytest.fixture
def demo(window):
    from core.demo import demo_path

    document = build_document(load_session(demo_path()), str(demo_path()))
    window.set_document(document)
    return document


def state(session):
    """Everything an action may change, deep-copied: the view, branch metadata, manifest (its fold records), scale."""
    return (list(session.view), copy.deepcopy(session.branch_metadata), copy.deepcopy(session.manifest), session.scale)


def preview(qtbot, window):
    actions = window.session_actions
    with qtbot.waitSignal(actions.preview.preview_ready, timeout=20_000) as ready:
        actions.preview_fold()
    qtbot.waitUntil(lambda: actions.preview.task is None)
    return ready.args[0]


def test_preview_changes_nothing_until_applied(qtbot, window, demo):
    before, length = state(demo.session), len(demo.session.record)
    shown = preview(qtbot, window)
    assert state(demo.session) == before and len(demo.session.record) == length
    panel = window.session_actions.preview
    assert panel.passes.rowCount() == len(shown.passes) >= 1
    assert shown.run.estimate_before > shown.run.estimate_after
    assert f"{shown.run.estimate_before:,} → {shown.run.estimate_after:,}" in panel.summary.text()
    text = panel.diff.toPlainText()
    assert "Leaves the active view" in text and "The note's text" in text
    panel.discard()
    assert state(demo.session) == before and not panel.apply_button.isEnabled()


def test_apply_lands_what_the_preview_showed_and_undo_restores_the_exact_state(qtbot, window, demo):
    before = state(demo.session)
    shown = preview(qtbot, window)
    actions = window.session_actions
    changes = actions.preview.apply()
    assert changes.success and changes.folds == len(shown.run.records)
    assert tuple(demo.session.view) == shown.view_after
    assert demo.session.manifest["context_folds"][-len(shown.run.records):] == shown.run.records
    assert actions.undo_action.text().startswith("&Undo fold (tool_io")
    assert window.view_model.rowCount() == len(shown.view_after)
    assert f"{len(shown.view_after):,} messages" in window.view_list.heading.text()
    assert demo.now_size == shown.run.estimate_after
    actions.editor.undo()
    assert state(demo.session) == before
    assert window.view_model.rowCount() == len(before[0])
    assert actions.redo_action.text().startswith("&Redo fold")
    actions.editor.redo()
    assert tuple(demo.session.view) == shown.view_after


def test_a_policy_without_a_ceiling_previews_nothing(qtbot, window, demo):
    actions = window.session_actions
    actions.policy_editor.set_text("max_input_tokens", "none")
    assert actions.preview_fold() is None
    assert "No ceiling" in actions.preview.summary.text()


def test_a_stale_preview_is_refused_after_the_view_changed(qtbot, window, demo, monkeypatch):
    import app.session_actions as module

    shown = preview(qtbot, window)
    told = []
    monkeypatch.setattr(module, "show_message", lambda parent, title, text: told.append(text))
    window.select_message(demo.index_of(demo.session.view[-1]))
    actions = window.session_actions
    assert actions.evict().success
    changes = actions.preview.apply()
    assert not changes.success and "preview the fold again" in changes.message
    assert tuple(demo.session.view) != shown.view_after

"""The fold preview: it changes nothing until applied; apply then undo gives back the exact state before."""

from __future__ import annotations

import copy

import pytest

from foldscope.app import dialogs
from foldscope.core.formats import load_session
from foldscope.core.readout.opening import build_document


@pytest.fixture
def demo(window):
    from foldscope.core.formats.demo import demo_path

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
    assert demo.session.manifest["context_folds"][-len(shown.run.records) :] == shown.run.records
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


def test_a_policy_without_a_ceiling_previews_nothing_and_leaves_nothing_busy(qtbot, window, demo):
    """Issue 19: Preview fold with no ceiling left the busy bar and Cancel in the status bar forever."""
    actions = window.session_actions
    actions.policy_editor.set_text("max_input_tokens", "none")
    assert actions.preview_fold() is None
    assert "No ceiling" in actions.preview.summary.text()
    assert not window.busy.isVisibleTo(window) and not window.busy.busy


def test_undoing_an_applied_fold_no_longer_says_it_is_applied(qtbot, window, demo):
    """Issue 19: the fold preview dock still said "Fold applied" after an undo."""
    preview(qtbot, window)
    actions = window.session_actions
    assert actions.preview.apply().success
    assert "Fold applied" in actions.preview.summary.text()
    assert actions.undo() is not None
    assert "applied" not in actions.preview.summary.text()
    assert "Preview a fold" in actions.preview.summary.text()


def test_a_preview_is_discarded_once_the_view_changed_and_the_core_refuses_it(qtbot, window, demo, monkeypatch):
    from foldscope.core.fold.preview import ApplyPreview

    shown = preview(qtbot, window)
    window.select_message(demo.index_of(demo.session.view[-1]))
    actions = window.session_actions
    assert actions.evict().success
    assert actions.preview.preview is None and not actions.preview.apply_button.isEnabled()
    assert actions.preview.apply() is None
    changes = window.editor.do(ApplyPreview(shown), "fold")
    assert not changes.success and "preview the fold again" in changes.message
    assert tuple(demo.session.view) != shown.view_after


@pytest.mark.parametrize("which", ["demo", "claude_code"])
def test_the_whole_walk_preview_apply_restore_clip_page_undo_and_save(qtbot, window, tmp_path, monkeypatch, which, request):
    """Issue 8's "done when", on the demo session and on a real Claude Code session."""

    from foldscope.core.fold.clip import recovery_text
    from foldscope.core.formats.demo import demo_path

    if which == "demo":
        path = str(demo_path())
    else:
        path = str(request.getfixturevalue("corpus_dev") / "claude_code" / "session-196820da.jsonl")
    document = build_document(load_session(path), path)
    window.set_document(document)
    session, actions = document.session, window.session_actions
    start = state(session)
    if which == "claude_code":  # its auto ceiling (200,000) is far above it: fold under a smaller one,
        # with room above the unseen head (about 32,000 tokens of system prompt and tools)
        actions.policy_editor.set_text("max_input_tokens", "80000")
    shown = preview(qtbot, window)
    assert actions.preview.apply().success and shown.run.target_reached
    folded = [i for i in range(len(start[0])) if not document.in_view(document.index_of(start[0][i]))]
    results = [document.index_of(start[0][i]) for i in folded if document.message(document.index_of(start[0][i])).kind == "action_response"]
    restored = max(results[:-1], key=lambda i: document.chars[i])
    window.select_message(restored)
    assert actions.restore().success and document.in_view(restored)
    clipped = max((i for i in results if not document.in_view(i) and document.chars[i] > 3000), key=lambda i: document.chars[i])
    monkeypatch.setattr(dialogs, "ask_clip_length", lambda parent, doc, i: 1200)
    monkeypatch.setattr(dialogs, "ask_clip_into_view", lambda parent, i: True)  # a folded result: clip it into the view
    window.select_message(clipped)
    assert actions.clip().success
    copy_index = document.record_size - 1
    page = actions.open_pager(copy_index)
    middle = page["text"]
    while actions.pager.next_button.isEnabled():
        middle += actions.pager.next_page()["text"]
    assert middle and recovery_text(document.message(clipped)).endswith(middle)
    assert actions.editor.depth == (4 if which == "claude_code" else 3)  # fold, restore, clip, and a policy edit is a step too
    while actions.editor.can_undo:
        actions.editor.undo()
    assert state(session) == start
    monkeypatch.setattr(dialogs, "save_path_dialog", lambda parent, start: str(tmp_path / "walk.json"))
    assert actions.saver.save()
    assert load_session(tmp_path / "walk.json").view == start[0]


def test_the_preview_of_a_claude_code_session_measures_its_unseen_head(qtbot, window, corpus_dev):
    # The file holds no system prompt or tools; the preview must start from the estimate the
    # status bar shows (head included), not from the visible messages alone.
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    document = build_document(load_session(path), str(path))
    window.set_document(document)
    assert document.unseen_head > 10_000
    assert document.session.unseen_head == document.unseen_head
    shown = preview(qtbot, window)
    assert shown.run.estimate_before == document.now_size


def test_the_preview_under_prompt_caching_never_takes_the_protected_first_round(qtbot, window, demo):
    from foldscope.core.request.first_round import protected_ids

    actions = window.session_actions
    for key, text in (("max_input_tokens", "20000"), ("tool_result_max_chars", "4000"), ("prompt_caching", "true")):
        actions.policy_editor.set_text(key, text)
    policy = actions.policy_editor.policy()
    protected = protected_ids(demo.session, policy, demo.session.view_messages())
    assert protected
    shown = preview(qtbot, window)
    assert protected <= set(shown.view_after)
    assert all(r["stage"] in ("tool_io", "clip", "all", "reset") for r in shown.run.records)


def test_the_preview_folds_the_request_the_timeline_shows_with_the_clis_figures(qtbot, window, corpus_dev, capsys):
    """New user 5: stepped to request 40, the preview showed the fold of now. It previews the request shown, with
    the figures `fold --at-request 40` prints for the same policy, and cannot be applied to the past."""
    import json

    from foldscope.core.cli.main import main

    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    document = build_document(load_session(path), str(path))
    window.set_document(document)
    window.session_actions.policy_editor.set_text("max_input_tokens", "120000")
    window.timeline.step_to(40)
    assert document.shown == 40
    shown = preview(qtbot, window)
    assert main(["fold", str(path), "--ceiling", "120000", "--at-request", "40", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert (shown.run.estimate_before, shown.run.estimate_after) == (cli["estimate_before"], cli["estimate_after"])
    assert [r["stage"] for r in shown.run.records] == [r["stage"] for r in cli["records"]]
    panel = window.session_actions.preview
    assert "Fold preview of request 40" in panel.summary.text() and "--at-request 40" in panel.summary.text()
    assert not panel.apply_button.isEnabled() and panel.apply() is None
    window.timeline.step_to(len(document.requests))  # now: the preview of the next request, which can be applied
    now = preview(qtbot, window)
    assert main(["fold", str(path), "--ceiling", "120000", "--json"]) == 0
    cli_now = json.loads(capsys.readouterr().out)
    assert (now.run.estimate_before, now.run.estimate_after) == (cli_now["estimate_before"], cli_now["estimate_after"])
    assert "Fold preview of the next request (now)" in panel.summary.text() and panel.apply_button.isEnabled()


def test_at_1600_by_1000_the_preview_dock_shows_every_pass_and_room_for_the_diff(qtbot, window, corpus_dev):
    """New user 20: the dock showed one of three passes; the others needed scrolling."""
    path = corpus_dev / "claude_code" / "session-196820da.jsonl"
    window.resize(1600, 1000)
    window.show()
    qtbot.waitExposed(window)
    document = build_document(load_session(path), str(path))
    window.set_document(document)
    window.session_actions.policy_editor.set_text("max_input_tokens", "120000")
    shown = preview(qtbot, window)
    panel = window.session_actions.preview
    rows = len(shown.passes)
    assert rows >= 3
    dock = window.session_actions.preview_dock
    qtbot.waitUntil(lambda: dock.height() >= window.height() // 3 - 40)
    qtbot.waitUntil(lambda: panel.passes.viewport().height() >= rows * panel.passes.verticalHeader().defaultSectionSize())
    assert panel.diff.height() >= 60


def test_a_pass_title_says_its_stage_and_outcome_in_plain_words() -> None:
    from foldscope.app.panels.fold_preview import pass_title

    class Pass:
        record = {"stage": "all", "kept_tail": 6, "outcome": "rolled_back"}

    title = pass_title(1, Pass())  # type: ignore[arg-type]
    assert title == "Pass 1: the all stage, the newest 6 messages kept as they are, rolled back (it did not lower the estimate)"
    assert "tail" not in title and "rolled_back" not in title
    Pass.record = {"stage": "all", "kept_tail": 1, "outcome": "rolled_back"}  # review8: it said "1 messages"
    assert ", the newest 1 message kept as they are," in pass_title(2, Pass())  # type: ignore[arg-type]

"""Manual actions from the window: restore (and its refusal), clip by hand, evict, compact, peek, expand, undo labels."""

from __future__ import annotations

import copy

import pytest

from foldscope.app import dialogs
from foldscope.core.fold.clip import recovery_text
from foldscope.core.formats import load_session
from foldscope.core.readout.opening import build_document


@pytest.fixture
def demo(window):
    from foldscope.core.formats.demo import demo_path

    document = build_document(load_session(demo_path()), str(demo_path()))
    window.set_document(document)
    return document


@pytest.fixture
def told(monkeypatch):
    """Replace the modal dialogs: refusals and messages are recorded, not shown."""
    seen: dict[str, list] = {"message": [], "refusal": [], "peek": []}
    monkeypatch.setattr(dialogs, "show_message", lambda parent, title, text: seen["message"].append(text))
    monkeypatch.setattr(dialogs, "show_peek", lambda parent, title, body: seen["peek"].append(body))
    return seen


def largest_result(document) -> int:
    results = [i for i in document.view_position if document.message(i).kind == "action_response"]
    return max(results, key=lambda i: document.chars[i])


def clip(window, monkeypatch, index: int, keep: int):
    monkeypatch.setattr(dialogs, "ask_clip_length", lambda parent, doc, i: keep)
    window.select_message(index)
    return window.session_actions.clip()


def test_a_manual_clip_makes_one_copy_whose_pages_join_to_the_original(qtbot, window, demo, monkeypatch, told):
    index = largest_result(demo)
    original = demo.message(index)
    length = demo.record_size
    changes = clip(window, monkeypatch, index, 1500)
    assert changes.success and len(changes.added) == 1
    assert demo.record_size == length + 1
    copy_index = length
    made = demo.message(copy_index)
    assert made.clipped_from == original.id and made.is_clipped_copy
    assert demo.in_view(copy_index) and not demo.in_view(index)
    assert window.session_actions.undo_action.text() == f"&Undo clip of #{index} to 1,500 characters"
    assert len(demo.tokens) == demo.record_size  # the window counted the copy
    pager = window.session_actions.pager
    first = window.session_actions.open_pager(copy_index)
    assert first["index"] == index and first["offset"] > 0  # it opens at the omitted middle
    pager.limit.setValue(700)
    page = pager.read(0)
    text = page["text"]
    while page.get("next_offset") is not None:
        page = pager.next_page()
        text += page["text"]
    assert text == recovery_text(original)


def test_a_refused_restore_shows_the_reason_and_offers_read_result(qtbot, window, demo, monkeypatch, told):
    index = largest_result(demo)
    clip(window, monkeypatch, index, 1500)
    actions = window.session_actions
    # A ceiling just above the view as it stands: the original whole would not fit under it.
    actions.policy_editor.set_text("max_input_tokens", str(demo.now_size + 50))
    assert actions.policy_editor.policy() is not None
    refusals = []
    monkeypatch.setattr(dialogs, "show_refusal", lambda parent, text: refusals.append(text) or True)
    view = list(demo.session.view)
    changes = actions.restore()
    assert not changes.success
    assert len(refusals) == 1 and "restore refused" in refusals[0] and f"read_result(index={index}" in refusals[0]
    assert demo.session.view == view
    assert actions.pager.index == index and actions.pager_dock.isVisibleTo(window)
    assert actions.pager.result["success"]


def test_restore_after_a_clip_puts_the_original_back_with_its_label(qtbot, window, demo, monkeypatch, told):
    index = largest_result(demo)
    clip(window, monkeypatch, index, 1500)
    window.select_message(index)
    changes = window.session_actions.restore()
    assert changes.success and demo.in_view(index)
    assert window.session_actions.undo_action.text() == f"&Undo restore of #{index}"


def test_every_action_undoes_back_to_the_start(qtbot, window, demo, monkeypatch, told):
    session = demo.session
    start = (list(session.view), copy.deepcopy(session.branch_metadata), copy.deepcopy(session.manifest))
    actions = window.session_actions
    index = largest_result(demo)
    clip(window, monkeypatch, index, 1200)
    last = demo.index_of(session.view[-1])
    window.select_message(last)
    assert actions.evict().success
    assert actions.undo_action.text() == f"&Undo evict of #{last}"
    monkeypatch.setattr(dialogs, "ask_keep_last", lambda parent: 2)
    assert actions.evict_old().success
    first, end = demo.view_index(3), demo.view_index(8)
    monkeypatch.setattr(dialogs, "ask_span", lambda parent, a, b: (first, end))
    window.view_list.table.clearSelection()
    assert actions.compact().success
    note = demo.record_size - 1
    window.select_message(note)
    assert actions.peek()["messages"] and told["peek"]
    assert actions.expand().success
    assert actions.editor.depth == 5 and actions.editor.is_modified
    while actions.editor.can_undo:
        actions.editor.undo()
    assert (list(session.view), session.branch_metadata, session.manifest) == start
    assert window.view_model.rowCount() == len(start[0])
    # The record keeps what the undone actions appended (the copy, the note): still unsaved (issue 19).
    assert [demo.message(i).kind for i in actions.editor.kept_out_of_view()] == ["action_response", "note"]
    assert actions.editor.is_modified and not actions.undo_action.isEnabled()


def test_compact_takes_the_span_selected_in_the_active_view(qtbot, window, demo, told):
    from foldscope.app.qt import QItemSelectionModel

    table = window.view_list.table
    selection = table.selectionModel()
    for row in (4, 9):
        selection.select(window.view_model.index(row, 0), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    first, last = demo.view_index(4), demo.view_index(9)
    changes = window.session_actions.compact()
    assert changes.success
    assert window.session_actions.undo_action.text() == f"&Undo compact of #{first}–#{last}"


def test_actions_are_on_the_menus_toolbar_and_context_menu_with_keys(qtbot, window, demo):
    actions = window.session_actions
    menu_texts = [a.text() for a in actions.actions_menu.actions()]
    for text in (
        "&Preview fold",
        "&Restore",
        "&Clip to length…",
        "&Evict",
        "Co&mpact span…",
        "Pee&k note",
        "E&xpand note",
        "Read result (&pager)",
    ):
        assert text in menu_texts
    assert actions.evict_action.shortcut().toString() == "Del"
    assert actions.undo_action.shortcut().toString() == "Ctrl+Z"
    menu = actions.context_menu(window.view_list.table)
    assert actions.restore_action in menu.actions() and actions.read_action in menu.actions()
    menu.deleteLater()
    edit = next(a.menu() for a in window.menuBar().actions() if a.text() == "&Edit")
    assert actions.undo_action in edit.actions()


def test_the_edited_policy_is_drawn_as_the_rules(qtbot, window, demo):
    window.session_actions.policy_editor.set_text("max_input_tokens", "40000")
    window.session_actions.policy_editor.set_text("context_fold_at", "0.9")
    assert demo.rules.ceiling == 40000 and demo.rules.line == 0.9
    assert "40,000-token ceiling" in window.status_label.full_text()


def test_a_window_typed_in_the_policy_editor_is_the_one_every_panel_shows_and_names(qtbot, window, tmp_path):
    """The issue's session (claude-opus-4-6, compacted at 170,251 and 167,117): Claude Code's 200,000, named,
    until the policy editor sets another; then the status bar and the Composition tab read that one."""
    import html

    from tests.core.readout.window_files import claude_code_file

    path = claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251, 167_117))
    document = build_document(load_session(path), str(path))
    window.set_document(document)
    assert "of the 200,000-token context window" in window.status_label.full_text()
    tip = html.unescape(window.status_label.toolTip())  # the tooltip is escaped rich text (app.window.plain_tip)
    assert "Context window: 200,000 tokens, Claude Code's rule for claude-opus-4-6" in tip
    window.composition_panel.refresh(force=True)
    heading = window.composition_panel.heading.text()
    assert "Context window 200,000: " in heading and "— Claude Code&#x27;s rule for claude-opus-4-6" in heading
    window.request_panel.set_request(document, None)
    window.request_panel.refresh(force=True)
    assert "of the 200,000-token context window (Claude Code&#x27;s rule for claude-opus-4-6" in window.request_panel.header.text()
    window.session_actions.policy_editor.set_text("context_window", "150000")
    assert document.context_window == 150_000
    free = 150_000 - document.now_predicted
    assert f"free {free:,} of the 150,000-token context window" in window.status_label.full_text()
    assert "Context window: 150,000 tokens, set by context_window in the policy from the policy editor" in window.status_label.toolTip()
    window.composition_panel.refresh(force=True)
    heading = window.composition_panel.heading.text()
    assert "Context window 150,000: " in heading and "— set by context_window in the policy from the policy editor" in heading


FOLDED_RESULT, ITS_CALL = 4, 3  # in the demo, a tool result and its call that a fold took out of the view


def test_adr_0130_d4_ctrl_shift_r_on_a_folded_result_brings_its_call_back_with_it(qtbot, window, demo, told):
    assert not demo.in_view(FOLDED_RESULT) and not demo.in_view(ITS_CALL)
    window.select_message(FOLDED_RESULT)
    window.session_actions.restore_action.trigger()
    view = demo.session.view
    assert demo.in_view(FOLDED_RESULT) and demo.in_view(ITS_CALL)
    assert view.index(demo.message(ITS_CALL).id) < view.index(demo.message(FOLDED_RESULT).id)


def test_clipping_a_result_out_of_the_view_asks_first_and_no_changes_nothing(qtbot, window, demo, monkeypatch, told):
    asked = []
    monkeypatch.setattr(dialogs, "ask_clip_into_view", lambda parent, index: asked.append(index) or False)
    monkeypatch.setattr(dialogs, "ask_clip_length", lambda *args: pytest.fail("asked for a length after No"))
    view, length = list(demo.session.view), demo.record_size
    window.select_message(FOLDED_RESULT)
    assert window.session_actions.clip() is None
    assert asked == [FOLDED_RESULT] and demo.session.view == view and demo.record_size == length
    assert not window.session_actions.editor.can_undo


def test_clipping_a_result_out_of_the_view_after_yes_brings_its_copy_and_call_in(qtbot, window, demo, monkeypatch, told):
    monkeypatch.setattr(dialogs, "ask_clip_into_view", lambda parent, index: True)
    changes = clip(window, monkeypatch, FOLDED_RESULT, 1500)
    assert changes.success
    made = demo.session.record.get(changes.added[0])
    view = demo.session.view
    assert made.id in view and demo.in_view(ITS_CALL)
    assert view.index(demo.message(ITS_CALL).id) < view.index(made.id)


def test_clipping_a_result_in_the_view_does_not_ask(qtbot, window, demo, monkeypatch, told):
    monkeypatch.setattr(dialogs, "ask_clip_into_view", lambda *args: pytest.fail("asked about a result in the view"))
    assert clip(window, monkeypatch, largest_result(demo), 1500).success


def test_a_policy_edit_is_undone_with_ctrl_z_and_the_fields_and_rules_follow(qtbot, window, demo):
    actions = window.session_actions
    opening = (demo.policy, demo.rules, demo.now_size)
    assert not actions.undo_action.isEnabled()  # showing the policy in force at opening is no step
    with qtbot.waitSignal(actions.policy_applied, timeout=10_000):
        actions.policy_editor.set_text("max_input_tokens", "40000")
    assert demo.rules.ceiling == 40_000 and window.editor.is_modified
    assert actions.undo_action.text() == "&Undo policy edit of max_input_tokens"
    revision = demo.revision
    with qtbot.waitSignal(actions.policy_applied, timeout=10_000):
        actions.undo_action.trigger()
    assert (demo.policy, demo.rules, demo.now_size) == opening and demo.revision > revision
    assert actions.policy_editor.texts()["max_input_tokens"] == "100000" and not window.editor.is_modified
    with qtbot.waitSignal(actions.policy_applied, timeout=10_000):
        actions.redo_action.trigger()
    assert demo.rules.ceiling == 40_000 and actions.policy_editor.texts()["max_input_tokens"] == "40000"

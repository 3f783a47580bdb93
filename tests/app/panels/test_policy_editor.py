"""The policy editor: every value Amendment 3 refuses shows its error beside its field; the resolved ceiling; YAML profiles."""

from __future__ import annotations

import pytest

from foldscope.app import dialogs
from foldscope.app.panels.policy_editor import PolicyEditor
from foldscope.core.model.policy import Policy


@pytest.fixture
def editor(qtbot):
    widget = PolicyEditor()
    qtbot.addWidget(widget)
    return widget


# Amendment 3's list of refused values, each as typed in the editor (read as a YAML scalar), and the key it names.
REFUSED = [
    ("explicit null", "prompt_caching", "null", "must not be null"),
    ("explicit null ceiling", "max_input_tokens", "~", "must not be null"),
    ("a boolean used as a number", "tool_result_max_chars", "true", "not a boolean"),
    ("a boolean as a fraction", "context_fold_at", "false", "not a boolean"),
    ("a boolean as the ceiling", "max_input_tokens", "true", "not a boolean"),
    ("a fractional result bound", "tool_result_max_chars", "2048.5", "must be an integer"),
    ("a result bound under 1,024", "tool_result_max_chars", "1000", "at least 1024"),
    ("a numeric string", "max_input_tokens", '"50000"', "not a string"),
    ("a numeric string fraction", "context_fold_target", "'0.5'", "not a string"),
    ("a non-finite fraction", "context_fold_at", ".inf", "finite number"),
    ("a NaN fraction", "context_fold_target", ".nan", "finite number"),
    ("a fraction over 1", "context_fold_at", "1.5", "in (0, 1]"),
    ("an invalid pair", "context_fold_target", "0.9", "0 < target < line"),
    ("an invalid pair from the line", "context_fold_at", "0.5", "0 < target < line"),
    ("a non-boolean cache value", "prompt_caching", '"yes"', "must be true or false"),
    ("a quoted true", "prompt_caching", "'true'", "must be true or false"),
    ("a zero ceiling", "max_input_tokens", "0", "positive integer"),
    ("a negative ceiling", "max_input_tokens", "-5", "positive integer"),
]


@pytest.mark.parametrize("what,key,text,problem", REFUSED, ids=[r[0] for r in REFUSED])
def test_each_refused_value_shows_its_error_beside_its_field(editor, what, key, text, problem):
    editor.set_text(key, text)
    shown_at = "context_fold_target" if "pair" in what else key  # the pair is judged, and shown, at the target
    assert problem in editor.error_for(shown_at)
    assert editor.policy() is None
    assert not editor.save_button.isEnabled()
    assert "Fix the marked fields" in editor.resolved.text()
    others = [k for k in editor.errors if k != shown_at]
    assert all(editor.error_for(k) == "" for k in others)


@pytest.mark.parametrize("key,text,value", [("max_input_tokens", "100,000", 100_000), ("context_window", "1 000 000", 1_000_000)])
def test_a_number_typed_with_its_thousands_grouped_as_the_screens_show_it_is_that_number(editor, key, text, value):
    """New user 27: "100,000", copied from the timeline's ceiling, was refused as "not a string ('100,000')", though
    `--ceiling 100,000` reads it on the command line."""
    editor.set_text(key, text)
    assert editor.error_for(key) == ""
    assert getattr(editor.policy(), key) == value


def test_a_valid_policy_shows_the_resolved_ceiling_and_its_source(editor, qtbot):
    with qtbot.waitSignal(editor.policy_changed) as changed:
        editor.set_text("max_input_tokens", "50000")
    assert changed.args[0].max_input_tokens == 50000
    # a typed value is not a profile's (new user 28): the line names the editor, once
    assert "50,000 tokens — max_input_tokens is 50,000 in the policy editor" in editor.resolved.text()
    assert "profile" not in editor.resolved.text()
    editor.set_text("max_input_tokens", "auto")
    editor.set_text("model", "claude-haiku-5-5")
    assert "100,000 tokens — auto: the first price tier of claude-haiku-5-5" in editor.resolved.text()
    editor.set_text("max_input_tokens", "none")
    assert "no ceiling" in editor.resolved.text()
    editor.set_text("prompt_caching", "yes")  # unquoted yes is YAML's true: Amendment 3 leaves the loader alone
    assert editor.policy().prompt_caching is True


def test_a_profile_saves_and_loads_back(editor, tmp_path, monkeypatch):
    path = tmp_path / "profile.yaml"
    for key, text in (
        ("max_input_tokens", "90000"),
        ("context_fold_at", "0.9"),
        ("tool_result_max_chars", "20000"),
        ("prompt_caching", "true"),
    ):
        editor.set_text(key, text)
    monkeypatch.setattr(dialogs, "profile_dialog", lambda parent, saving: str(path))
    editor.save_dialog()
    assert Policy.from_yaml(path).as_record() == editor.policy().as_record()
    editor.set_policy(Policy())
    assert editor.policy().max_input_tokens is None
    editor.load_dialog()
    assert editor.policy().as_record() == Policy.from_yaml(path).as_record()
    assert editor.texts()["context_fold_at"] == "0.9"


def test_a_bad_profile_is_refused_naming_the_file_and_key(editor, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("max_input_tokens: 100000\ncontext_fold_at: '0.9'\n")
    line = editor.load_profile(path)
    assert str(path) in line and "context_fold_at" in line
    assert "context_fold_at" in editor.resolved.text()


def test_the_window_field_sets_the_context_window_and_refuses_what_is_not_a_token_count(editor, qtbot):
    with qtbot.waitSignal(editor.policy_changed) as changed:
        editor.set_text("context_window", "150000")
    assert changed.args[0].context_window == 150_000
    for text, problem in (
        ("0", "positive whole number"),
        ("true", "not a boolean"),
        ("'150000'", "not a string"),
        ("150000.5", "not the number 150000.5"),
    ):
        editor.set_text("context_window", text)
        assert problem in editor.error_for("context_window"), text
        assert editor.policy() is None
    editor.set_text("context_window", "")
    assert editor.policy() is not None and editor.policy().context_window is None


def test_the_window_saves_in_a_profile_and_loads_back(editor, tmp_path, monkeypatch):
    path = tmp_path / "window.yaml"
    editor.set_text("context_window", "300000")
    monkeypatch.setattr(dialogs, "profile_dialog", lambda parent, saving: str(path))
    editor.save_dialog()
    assert Policy.from_yaml(path).context_window == 300_000
    editor.set_policy(Policy())
    assert editor.texts()["context_window"] == ""
    editor.load_dialog()
    assert editor.texts()["context_window"] == "300000" and editor.policy().context_window == 300_000


def test_the_editor_shows_the_window_the_policy_resolves_for_the_open_session(editor, tmp_path):
    from foldscope.core.formats import load_session
    from tests.core.readout.window_files import claude_code_file

    session = load_session(claude_code_file(tmp_path / "s.jsonl", "claude-opus-4-6", (170_251, 167_117)))
    editor.set_session(session.model, None, session)
    assert "Context window:</b> 200,000 tokens — Claude Code&#x27;s rule for claude-opus-4-6" in editor.resolved.text()
    editor.set_text("context_window", "150000")
    assert "Context window:</b> 150,000 tokens — set by context_window in the policy from the policy editor" in editor.resolved.text()

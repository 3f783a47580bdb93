"""The policy's keys are declared once (core.model.policy.POLICY_KEYS): the policy editor shows a row per key with the
table's label, the GUI takes each key's flag, and docs/cli.md's section on them is what tools/policy_docs.py writes."""

from __future__ import annotations

import importlib.util

import pytest

from foldscope.app.panels.policy_editor import PolicyEditor, placeholder
from foldscope.app.qt import QGridLayout, QLabel
from foldscope.core.cli.options import flag_help
from foldscope.core.model.policy import KEYS, POLICY_KEYS
from tests.paths import ROOT


@pytest.fixture
def editor(qtbot):
    widget = PolicyEditor()
    qtbot.addWidget(widget)
    return widget


def rows(editor: PolicyEditor) -> list[tuple[str, str]]:
    """(label, key) for each key's rows of the editor's grid, top to bottom (its label, its field under it, its error
    under that)."""
    grid = editor.layout().itemAt(0).layout()
    assert isinstance(grid, QGridLayout)
    found = []
    for row in range(0, grid.rowCount(), 3):
        label = grid.itemAtPosition(row, 0).widget()
        assert isinstance(label, QLabel)
        field = grid.itemAtPosition(row + 1, 0).widget()  # the line edit, or the model's combo box that holds one
        key = next(k for k, edit in editor.edits.items() if field in (edit, edit.parent()))
        found.append((label.text(), key))
    return found


def test_the_editor_has_a_row_per_key_in_the_tables_order_with_its_label(editor):
    assert rows(editor) == [(f"{key.label}:", key.name) for key in POLICY_KEYS]


@pytest.mark.parametrize("key", POLICY_KEYS, ids=KEYS)
def test_each_row_shows_the_tables_placeholder_and_help(editor, key):
    edit = editor.edits[key.name]
    assert edit.placeholderText() == placeholder(key) == (key.placeholder or key.unset_said)
    assert edit.toolTip() == f"{key.name}: {key.help}; unset is {key.unset_said}"
    assert edit.accessibleName() == f"{key.label} ({key.name})"


def test_the_gui_takes_each_keys_flag_as_the_commands_do():
    from foldscope.app.gui import build_parser

    actions = {a.dest: a for a in build_parser()._actions}
    for key in POLICY_KEYS:
        assert key.flag in actions[key.dest].option_strings and actions[key.dest].help == flag_help(key)
        assert actions[key.dest].default is None


def test_the_cli_pages_policy_section_is_what_the_tool_writes_from_the_table():
    spec = importlib.util.spec_from_file_location("policy_docs", ROOT / "tools" / "policy_docs.py")
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == tool.written(page), "docs/cli.md's policy flags differ from POLICY_KEYS: run tools/policy_docs.py"
    assert all(f"`{key.name}`" in tool.section() and key.label in tool.section() for key in POLICY_KEYS)


def test_the_caching_field_left_empty_says_as_recorded_as_the_lab_and_the_screens_do(editor):
    """Empty, prompt_caching is unset: caching as recorded (core.model.caching), which the replay lab, the window map
    and the status bar say; its placeholder said 'as the endpoint', a state no screen names."""
    from foldscope.core.model.caching import AS_RECORDED, AS_RECORDED_WORDS

    shown = editor.edits["prompt_caching"].placeholderText()
    assert shown == AS_RECORDED and AS_RECORDED_WORDS.endswith(shown)

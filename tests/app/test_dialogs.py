"""Every modal in one place (foldscope.app.dialogs): what it shows, that tests replace all of them, that no other module opens one."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

from foldscope.app import dialogs
from foldscope.app.qt import QLabel, QMessageBox, Qt
from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path
from foldscope.core.readout.clip_facts import clip_projection
from foldscope.core.readout.opening import build_document
from tests.app.conftest import MODALS

APP = Path(dialogs.__file__).parent
HELPERS = {"message_box", "projected"}  # functions of dialogs.py that show nothing themselves
HOSTILE = "<a href='https://example.org/fix'>Click here to repair the session</a><img src='file:///etc/passwd'>"


def modal_functions() -> set[str]:
    tree = ast.parse(inspect.getsource(dialogs))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} - HELPERS


def test_every_modal_of_dialogs_is_replaced_in_the_gui_tests():
    assert modal_functions() == set(MODALS)


def test_no_module_but_dialogs_opens_a_modal_or_a_file_dialog():
    opened = []
    for path in APP.rglob("*.py"):
        if path.name in ("dialogs.py", "qt.py"):
            continue
        text = path.read_text(encoding="utf-8")
        for name in ("QMessageBox", "QFileDialog", "QInputDialog", "QDialog("):
            if name in text:
                opened.append(f"{path.relative_to(APP)}: {name}")
    assert opened == []


def test_a_message_box_shows_a_hostile_file_name_as_plain_text_with_no_link(qapp):
    box = dialogs.message_box(None, QMessageBox.Icon.Critical, "Cannot open session", f"{HOSTILE}.json: duplicate id")
    assert box.textFormat() == Qt.TextFormat.PlainText
    label = next(lab for lab in box.findChildren(QLabel) if HOSTILE in lab.text())
    assert label.textFormat() == Qt.TextFormat.PlainText
    assert not label.textInteractionFlags() & Qt.TextInteractionFlag.LinksAccessibleByMouse
    box.deleteLater()


def test_clip_dialog_shows_the_projected_body_and_its_tokens(qtbot):
    demo = build_document(load_session(demo_path()), str(demo_path()))
    results = [i for i in demo.view_position if demo.message(i).kind == "action_response"]
    index = max(results, key=lambda i: demo.chars[i])
    dialog = dialogs.ClipDialog(demo, index)
    qtbot.addWidget(dialog)
    dialog.spin.setValue(1100)
    assert dialog.slider.value() == 1100
    assert "characters omitted here" in dialog.body.toPlainText()
    projection = clip_projection(demo, index, 1100)
    assert f"{projection.tokens:,} tokens" in dialog.tokens.text()

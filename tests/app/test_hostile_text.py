"""Text from a session file is data: no label, dialog, tooltip or message box renders it as rich text or a link.

Issue 16: a lionagi file whose duplicate message id was an HTML link showed a clickable link in the error
dialog; file names in dialogs and library tooltips, and message ids in list tooltips, rendered as HTML (an
`<img src=file:...>` id rendered). The hostile session here carries links and images in its ids, texts,
kinds' function names and file name, and the walk reads every widget that shows them.
"""

from __future__ import annotations

import dataclasses
import json

from foldscope.app import dialogs
from foldscope.app.qt import (
    QAbstractItemView,
    QAction,
    QApplication,
    QLabel,
    QMessageBox,
    Qt,
    QTextBrowser,
    QTextDocument,
    QWidget,
    might_be_rich_text,
)
from foldscope.core.formats.lionagi_write import write_session
from foldscope.core.model.session import FullRecord, Session
from tests.app.conftest import make_session

LINK = "<a href='https://example.org/fix'>Click here to repair the session</a>"
IMAGE = "<img src='file:///etc/hostname'>"
HOSTILE = LINK + IMAGE
NAME = "<a href='https:example.org'><img src='x.png'>session.json"  # a file name holds no slash


def hostile_session() -> Session:
    """The session every GUI test uses, with HTML in every id, text and function name a file controls."""
    base = make_session()
    ids = {m.id: f"{m.id}{HOSTILE}" for m in base.record}

    def poisoned(value):
        if isinstance(value, str):
            return ids.get(value, value + HOSTILE if value else value)
        if isinstance(value, dict):
            return {k: poisoned(v) for k, v in value.items()}
        if isinstance(value, list):
            return [poisoned(v) for v in value]
        return value

    messages = [
        dataclasses.replace(m, id=ids[m.id], content=poisoned(dict(m.content)), metadata=poisoned(dict(m.metadata)), provenance=None)
        for m in base.record
    ]
    return Session(record=FullRecord(messages), view=[ids[v] for v in base.view], format="lionagi", source=NAME)


def rich_problems(text: str, where: str) -> list[str]:
    """What a string would render as a link or an image, if Qt took it for rich text."""
    if not text or not might_be_rich_text(text):
        return []
    return document_problems(text, where)


def document_problems(html: str, where: str) -> list[str]:
    doc = QTextDocument()
    doc.setHtml(html)
    return fragment_problems(doc, where)


def fragment_problems(doc: QTextDocument, where: str) -> list[str]:
    found = []
    block = doc.begin()
    while block.isValid():
        it = block.begin()
        while not it.atEnd():
            fragment = it.fragment()
            fmt = fragment.charFormat()
            if fmt.isAnchor() and "example.org" in fmt.anchorHref():
                found.append(f"{where}: a link to {fmt.anchorHref()}")
            if fmt.isImageFormat() and fmt.toImageFormat().name() in ("file:///etc/hostname", "x.png"):
                found.append(f"{where}: an image {fmt.toImageFormat().name()}")
            it += 1
        block = block.next()
    return found


def label_problems(label: QLabel, where: str) -> list[str]:
    text = label.text()
    if label.textFormat() == Qt.TextFormat.PlainText:
        return []
    if label.textFormat() == Qt.TextFormat.RichText:
        return document_problems(text, where)
    return rich_problems(text, where)


def widget_problems(root: QWidget, where: str) -> list[str]:
    found = []
    for label in root.findChildren(QLabel):
        found += label_problems(label, f"{where}: label {label.objectName() or label.text()[:40]!r}")
    for browser in root.findChildren(QTextBrowser):
        found += fragment_problems(browser.document(), f"{where}: {browser.accessibleName() or 'browser'}")
    for widget in [root, *root.findChildren(QWidget)]:
        found += rich_problems(widget.toolTip(), f"{where}: tooltip of {type(widget).__name__}")
    for action in root.findChildren(QAction):
        found += rich_problems(action.toolTip(), f"{where}: tooltip of action {action.text()!r}")
    for view in root.findChildren(QAbstractItemView):
        model = view.model()
        if model is None:
            continue
        for row in range(model.rowCount()):
            for column in range(model.columnCount()):
                tip = model.index(row, column).data(Qt.ItemDataRole.ToolTipRole)
                found += rich_problems(tip if isinstance(tip, str) else "", f"{where}: {view.accessibleName()} tooltip")
    return found


def open_hostile(qtbot, window, tmp_path) -> None:
    """The hostile session, written under a hostile file name and opened in the window."""
    path = tmp_path / NAME
    write_session(hostile_session(), path)
    window.show()
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)


def test_a_hostile_session_renders_no_link_or_image_anywhere_in_the_window(qtbot, window, tmp_path):
    open_hostile(qtbot, window, tmp_path)
    doc = window.document
    assert LINK in doc.message(0).id  # the hostile text reached the window
    panel = window.library_panel
    with qtbot.waitSignal(panel.sessions_listed, timeout=20_000):
        window.side_tabs.setCurrentWidget(panel)
    with qtbot.waitSignal(panel.search_finished, timeout=20_000):
        panel.search("repair")
    qtbot.waitUntil(lambda: not panel.is_busy())
    assert panel.sessions.rowCount() and panel.hits.rowCount()
    found = widget_problems(window, "library")
    window.side_tabs.setCurrentWidget(window.request_panel)
    for slot in range(window.timeline.slots()):
        window.timeline.step_to(slot)
        found += widget_problems(window, f"request {slot}")
    for index in range(doc.record_size):
        window.select_message(index, reveal=False)
        found += widget_problems(window, f"#{index}")
    actions = window.session_actions
    actions.open_pager(doc.record_size - 2)  # the clipped copy
    found += widget_problems(window, "pager")
    for dock in (actions.policy_dock, actions.preview_dock):
        dock.show()
    found += widget_problems(window, "docks")
    assert found == []


def test_a_duplicate_id_holding_a_link_shows_as_plain_text_in_the_error_dialog(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / NAME
    write_session(hostile_session(), path)
    data = json.loads(path.read_text(encoding="utf-8"))
    collections = data["branch"]["messages"]["collections"]
    collections.append(dict(collections[0]))  # the first message's hostile id, twice
    path.write_text(json.dumps(data), encoding="utf-8")
    boxes: list[QMessageBox] = []

    def shown(parent, title, text):  # the real box, built and read instead of run
        boxes.append(dialogs.message_box(parent, QMessageBox.Icon.Critical, title, text))

    monkeypatch.setattr(dialogs, "error_dialog", shown)
    with qtbot.waitSignal(window.load_failed, timeout=20_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None and bool(boxes))
    box = boxes[0]
    assert LINK in box.text() and "duplicate message id" in box.text()
    assert box.textFormat() == Qt.TextFormat.PlainText
    assert widget_problems(box, "error dialog") == []
    label = next(lab for lab in box.findChildren(QLabel) if LINK in lab.text())
    assert not label.openExternalLinks() or label.textFormat() == Qt.TextFormat.PlainText
    box.deleteLater()
    QApplication.processEvents()


def model_problems(root: QWidget, where: str) -> list[str]:
    """Every item model under root (shown or not, proxies included): each cell's tooltip renders no link or image."""
    from foldscope.app.qt import QAbstractItemModel

    found = []
    for model in root.findChildren(QAbstractItemModel):
        for row in range(min(model.rowCount(), 400)):
            for column in range(model.columnCount()):
                tip = model.index(row, column).data(Qt.ItemDataRole.ToolTipRole)
                found += rich_problems(tip if isinstance(tip, str) else "", f"{where}: {type(model).__name__} tooltip")
    return found


def test_no_model_of_any_panel_renders_a_hostile_session_as_rich_text(qtbot, window, tmp_path):
    open_hostile(qtbot, window, tmp_path)
    tabs = window.side_tabs
    found = []
    for i in range(tabs.count()):  # each panel fills its models when it is shown
        tabs.setCurrentIndex(i)
        QApplication.processEvents()
        found += model_problems(window, f"tab {tabs.tabText(i)!r}")
        found += widget_problems(tabs.widget(i), f"tab {tabs.tabText(i)!r}")
    assert tabs.count() >= 5 and found == []

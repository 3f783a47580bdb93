"""The inspector shows a huge message's first part, plain and cut, with a note, and never hangs laying it out."""

from __future__ import annotations

import faulthandler
import random
import string

import pytest

from foldscope.app.panels.inspector import Inspector
from foldscope.app.panels.long_text import LINE_CUT, SHOWN_LIMIT, is_long, note, shown_part
from foldscope.app.qt import QGuiApplication, Qt
from foldscope.core.model.session import FullRecord, Message, Session
from foldscope.core.readout.opening import build_document

FIVE_MB = 5_000_000


def one_line(size: int) -> str:
    """Random lowercase without a break: the worst case for Qt's layout of a line."""
    return "".join(random.Random(5).choices(string.ascii_lowercase, k=size))


def document_with(text: str):
    messages = [
        Message("task", "instruction", 1.0, {"instruction": "Here is the file."}),
        Message("big", "instruction", 2.0, {"instruction": text}),
        Message("a", "assistant", 3.0, {"assistant_response": "Read it."}),
    ]
    session = Session(record=FullRecord(messages), view=["task", "big", "a"], format="lionagi", source="made-in-test.json")
    return build_document(session, "made-in-test.json")


@pytest.fixture
def inspector(qtbot):
    widget = Inspector()
    qtbot.addWidget(widget)
    widget.resize(700, 600)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def never_hangs():
    """The test ends within a minute, or the run stops there with every thread's stack: Qt's layout holds the
    interpreter, so pytest-timeout (signal or thread) cannot stop it, and faulthandler's own watchdog can."""
    faulthandler.dump_traceback_later(60, exit=True)
    yield
    faulthandler.cancel_dump_traceback_later()


@pytest.fixture(scope="module")
def huge() -> str:
    return one_line(FIVE_MB)


def test_a_5mb_one_line_message_shows_its_first_part_cut_into_short_lines(inspector, huge, never_hangs):
    document = document_with(huge)
    inspector.set_document(document)
    inspector.show_message(1)
    inspector.repaint()  # lay out what is shown, as the screen would
    shown = inspector.content.toPlainText()
    lines = shown.split("\n")
    # Compared as booleans: pytest's diff of two 200 k-character strings would itself take minutes.
    shows_the_first_part = "".join(lines) == huge[:SHOWN_LIMIT]
    assert shows_the_first_part
    assert max(map(len, lines)) == LINE_CUT
    assert inspector.long_bar.isVisibleTo(inspector)
    line = inspector.long_note.text()
    assert f"first {SHOWN_LIMIT:,} of {FIVE_MB:,} characters" in line
    assert f"{FIVE_MB - SHOWN_LIMIT:,} are not shown" in line
    assert "Copy whole text" in line and "Save whole text" in line
    # The panel says the core's count, the one on every screen.
    assert document.chars[1] == FIVE_MB
    assert f"{FIVE_MB:,} characters" in inspector.header.text()


def test_the_whole_text_of_a_cut_message_is_reachable_by_copy_and_save(inspector, huge, tmp_path, qtbot, monkeypatch, never_hangs):
    inspector.set_document(document_with(huge))
    inspector.show_message(1)
    QGuiApplication.clipboard().clear()
    qtbot.mouseClick(inspector.copy_button, Qt.MouseButton.LeftButton)
    copied_whole = QGuiApplication.clipboard().text() == huge
    assert copied_whole
    target = tmp_path / "whole.txt"
    monkeypatch.setattr("foldscope.app.dialogs.text_path_dialog", lambda parent, start: str(target))
    inspector.save_button.click()
    saved_whole = target.read_text(encoding="utf-8") == huge
    assert saved_whole


def test_a_save_that_fails_says_so_on_the_note_line(inspector, tmp_path):
    inspector.set_document(document_with(one_line(SHOWN_LIMIT + 1)))
    inspector.show_message(1)
    assert not inspector.save_whole_text(str(tmp_path / "no-such-folder" / "x.txt"))
    assert "Could not save the whole text" in inspector.long_note.text()


def test_a_short_message_is_highlighted_as_before_without_a_note(inspector):
    inspector.set_document(document_with(one_line(SHOWN_LIMIT + 1)))
    inspector.show_message(1)
    assert inspector.long_bar.isVisibleTo(inspector)
    inspector.show_message(0)
    assert not inspector.long_bar.isVisibleTo(inspector)
    assert inspector.whole_text == ""
    assert "Here is the file." in inspector.content.toPlainText()
    assert "<pre" in inspector.content.toHtml() or "white-space" in inspector.content.toHtml()


def test_a_text_is_long_when_too_long_in_all_or_in_one_line():
    assert not is_long("word " * 1000)
    assert not is_long("a" * 20_000)
    assert is_long("a" * 20_001)  # one line past the layout's comfort
    assert not is_long(("a" * 1000 + "\n") * 150)  # 150 k characters in short lines: highlighted as before
    assert is_long(("a" * 1000 + "\n") * 250)  # past the shown limit


def test_a_long_line_under_the_limit_is_shown_whole_and_says_so():
    text = "x" * 30_000 + "\nend"
    shown = shown_part(text)
    assert shown.chars == len(text) and shown.broken == 1
    assert shown.text.replace("\n", "") == text.replace("\n", "")
    line = note(shown, len(text))
    assert "Showing all 30,004 characters" in line and "broken for display" in line


def test_the_request_panel_shows_a_payload_with_a_5mb_line_cut_and_says_so(qtbot, huge, never_hangs):
    from foldscope.app.panels.request import RequestPanel

    panel = RequestPanel()
    qtbot.addWidget(panel)
    panel.resize(700, 600)
    panel.set_request(document_with(huge), None)
    panel.show()
    qtbot.waitExposed(panel)
    panel.refresh(force=True)
    shown = panel.payload.toPlainText()
    assert max(map(len, shown.split("\n"))) <= LINE_CUT
    shows_the_start = huge[:100_000] in shown.replace("\n", "")
    assert shows_the_start
    assert len(shown) < 300_000
    assert "are not shown" in panel.header.text() and "Copy whole text" in panel.header.text()


def test_a_payload_long_by_nature_is_highlighted_whole_and_only_a_huge_line_cuts_it():
    """A 60 k token request's payload is about 240 k characters in short lines: the request panel lays it out whole,
    highlighted with its cache marks (cutting it at the inspector's 200 k hid a real session's payload behind a note
    and left the panel 7 lines at 1366x768); a line of one huge message, or a payload past 2 M, is cut."""
    from foldscope.app.panels.long_text import PAYLOAD_LIMIT, PAYLOAD_LINE, is_long

    assert not is_long('  "text": "a line of a real payload",\n' * 8_000, PAYLOAD_LIMIT, PAYLOAD_LINE)
    assert is_long('"' + "x" * (PAYLOAD_LINE + 1) + '"', PAYLOAD_LIMIT, PAYLOAD_LINE)
    assert is_long("short line\n" * (PAYLOAD_LIMIT // 10), PAYLOAD_LIMIT, PAYLOAD_LINE)


def test_the_same_message_shown_again_from_a_new_document_is_hashed_once(inspector, monkeypatch):
    """A load shows the file's first message in its first part's document, then in the whole record's: the same
    Message, whose SHA-256 (a 50 MB message's took 0.14 s of the GUI thread) is worked out once; another message at
    that place is hashed anew, and a document without it lets the inspector hold it no longer."""
    hashed = []
    real = Message.sha256
    monkeypatch.setattr(Message, "sha256", lambda self: hashed.append(self.id) or real(self))
    session = document_with("the text").session
    inspector.tabs.setCurrentWidget(inspector.metadata)  # the hash is worked out for the Metadata tab, in front here
    inspector.set_document(build_document(session, "made-in-test.json"))
    inspector.show_message(1)
    first = inspector.metadata.toPlainText()
    inspector.set_document(build_document(session, "made-in-test.json"))  # the whole record's: the same messages
    inspector.show_message(1)
    assert hashed == ["big"]
    assert inspector.metadata.toPlainText() == first and real(session.record[1]) in first
    inspector.set_document(document_with("the text"))  # an equal message, another object: hashed again
    inspector.show_message(1)
    assert hashed == ["big", "big"]
    inspector.set_document(None)
    assert inspector._digest is None


def test_a_messages_hash_waits_for_the_metadata_tab_to_be_shown(inspector, monkeypatch):
    """The Metadata tab says the shown message's SHA-256, which hashes its whole content (0.14-0.21 s of the GUI thread
    for a 50 MB message): written when that tab is in front, at once or once it is chosen; a load that shows the
    Content tab hashes nothing."""
    hashed = []
    real = Message.sha256
    monkeypatch.setattr(Message, "sha256", lambda self: hashed.append(self.id) or real(self))
    document = document_with("the text")
    inspector.set_document(document)
    inspector.show_message(1)
    assert inspector.tabs.currentWidget() is inspector.content
    assert hashed == [] and inspector.metadata.toPlainText() == ""
    inspector.tabs.setCurrentWidget(inspector.metadata)
    assert hashed == ["big"] and real(document.message(1)) in inspector.metadata.toPlainText()
    inspector.show_message(0)  # another message while the tab is in front: at once
    assert hashed == ["big", document.message(0).id] and real(document.message(0)) in inspector.metadata.toPlainText()
    inspector.tabs.setCurrentWidget(inspector.content)
    inspector.show_message(1)
    inspector.tabs.setCurrentWidget(inspector.metadata)
    assert hashed == ["big", document.message(0).id, "big"]  # its hash kept no longer than the message stood shown

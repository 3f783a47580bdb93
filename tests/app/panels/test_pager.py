"""The read_result pager: offset, limit, next and previous page, copy text, the result bound, and no change to the session."""

from __future__ import annotations

import copy

from foldscope.app.panels.pager import Pager
from foldscope.app.qt import QGuiApplication
from foldscope.core.fold.clip import recovery_text


def test_pages_run_read_result_and_join_to_the_original(qtbot, document):
    pager = Pager()
    qtbot.addWidget(pager)
    pager.set_document(document)
    index = document.index_of("res0")
    metadata = copy.deepcopy(document.session.branch_metadata)
    pager.limit.setValue(300)
    first = pager.open_index(index)
    assert first["success"] and first["offset"] == 0 and first["limit"] == 300
    assert pager.text.toPlainText() == first["text"]
    assert "next offset 300" in pager.status.text()
    assert not pager.previous_button.isEnabled() and pager.next_button.isEnabled()
    text = first["text"]
    while pager.next_button.isEnabled():
        text += pager.next_page()["text"]
    assert text == recovery_text(document.message(index))
    assert "the end of the original" in pager.status.text()
    last = pager.result["offset"]
    back = pager.previous_page()
    assert back["offset"] == last - 300 and len(back["text"]) == 300
    assert document.session.branch_metadata == metadata  # the pager only looks


def test_copy_text_puts_the_page_on_the_clipboard(qtbot, document):
    pager = Pager()
    qtbot.addWidget(pager)
    pager.set_document(document)
    pager.open_index(document.index_of("res1"))
    pager.copy_text()
    assert QGuiApplication.clipboard().text() == pager.text.toPlainText() != ""


def test_the_result_bound_limits_a_page_and_an_offset_past_the_end_is_refused(qtbot, document):
    pager = Pager()
    qtbot.addWidget(pager)
    pager.set_document(document)
    pager.max_chars = 500  # tool_result_max_chars: a page is at most min(limit, N, 16000) characters
    pager.limit.setValue(5000)
    page = pager.open_index(document.index_of("res2"))
    assert page["limit"] == 500 and len(page["text"]) == 500 and page["next_offset"] == 500
    refused = pager.read(10**7)
    assert not refused["success"] and "outside" in pager.status.text()
    assert not pager.next_button.isEnabled()


def test_a_clipped_copy_opens_at_the_range_its_marker_names(qtbot, window, document):
    from foldscope.core.actions.commands import Clip

    window.set_document(document)
    actions = window.session_actions
    index = document.index_of("res1")
    # res1 is out of the view in this document: its copy joins the view as the user asked (into_view)
    assert actions.editor.do(Clip(index, 200, into_view=True), f"clip of #{index}").success
    copy_index = document.record_size - 1
    from foldscope.app.panels.pager import omitted_ranges

    ((start, end),) = omitted_ranges(document, copy_index)
    page = actions.open_pager(copy_index)
    assert page["offset"] == start and page["index"] == index
    assert f"{start:,}–{end:,}" in actions.pager.title.text()

"""The inspector at a step to another request: the header and a note's members follow, the content is not set again."""

from __future__ import annotations

from foldscope.core.model.commands import Changes


def test_a_step_redraws_the_header_and_keeps_the_content_and_its_selection(window, document):
    window.set_document(document)
    index = document.view_index(document.view_size - 1)  # the clipped copy, in the view now
    window.select_message(index)
    inspector = window.inspector
    assert "in the active view" in inspector.header.text()
    inspector.tabs.setCurrentWidget(inspector.metadata)  # written once its tab is in front
    inspector.content.selectAll()
    inspector.metadata.selectAll()
    document.show_view([mid for mid in document.view if mid != document.message(index).id], at_request=True, request=0)
    inspector.follower.changed(Changes(shown=True))
    assert "out of the active view" in inspector.header.text()
    # The same message: its text is not laid out again, so what the user selected in it stays selected.
    assert inspector.content.textCursor().hasSelection() and inspector.metadata.textCursor().hasSelection()
    inspector.follower.changed(Changes(view=True))  # a change of the session: the message drawn again whole
    assert not inspector.content.textCursor().hasSelection()


def test_a_step_redraws_a_notes_members_read_from_the_view_shown(window, document):
    window.set_document(document)
    note = document.index_of("note")
    window.select_message(note)
    inspector = window.inspector
    members = inspector.tabs.tabText(inspector.members_tab)
    assert "#8 " not in inspector.members.toPlainText()
    # Message 8 out of the view shown: it lies between the note's first replaced message and the note, so the
    # record reads it as folded into the note (core.readout.note_members), one member more.
    document.show_view([mid for mid in document.view if mid != document.message(8).id], at_request=True, request=0)
    inspector.follower.changed(Changes(shown=True))
    assert inspector.tabs.tabText(inspector.members_tab) != members
    assert "#8 " in inspector.members.toPlainText()
    # Another step that leaves the members as they were (message 0 lies before the note's first): not set again.
    inspector.members.selectAll()
    kept = {document.message(0).id, document.message(8).id}
    document.show_view([mid for mid in document.view if mid not in kept], at_request=True, request=1)
    inspector.follower.changed(Changes(shown=True))
    assert inspector.members.textCursor().hasSelection()

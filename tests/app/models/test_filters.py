"""The kind and text filters over the lists (MessageFilter): Qt's proxy contract and the rows each keeps."""

from __future__ import annotations

from foldscope.app.models.filters import MessageFilter
from foldscope.app.models.messages import IndexRole


def test_kind_and_text_filters_narrow_a_list_and_keep_the_selection_honest(qtmodeltester, window, document):
    window.set_document(document)
    view = window.view_list
    assert isinstance(view.filter, MessageFilter)
    qtmodeltester.check(view.filter)
    view.kind_filter.setCurrentIndex(view.kind_filter.findData("action_request"))
    shown = [view.filter.index(r, 0).data(IndexRole) for r in range(view.filter.rowCount())]
    assert shown and all(document.message(i).kind == "action_request" for i in shown)
    assert view.shown.text() == f"{len(shown)} of {document.view_size} shown"
    view.kind_filter.setCurrentIndex(0)
    view.text_filter.setText("MOD2.PY")  # case does not matter; the whole text is searched
    shown = [view.filter.index(r, 0).data(IndexRole) for r in range(view.filter.rowCount())]
    assert shown and all("mod2.py" in document.message(i).text for i in shown)
    window.select_message(0)  # the system message is filtered out of the view list
    assert view.selected_index() is None and window.record_list.selected_index() == 0


def test_a_list_with_no_filter_chosen_keeps_every_row_without_asking_python_row_by_row(window, document, monkeypatch):
    """A step resets the view list: with no filter chosen Qt keeps every row itself (an empty pattern), so a
    25,000-message view costs no call into Python a row; a chosen filter asks each row and keeps only its rows."""
    window.set_document(document)
    view = window.view_list
    asked: list[int] = []
    original = view.filter.accepts
    monkeypatch.setattr(view.model, "accepts", lambda row: asked.append(row) or original(row))
    window.view_model.set_document(document)
    assert view.filter.rowCount() == document.view_size and asked == []
    view.kind_filter.setCurrentIndex(view.kind_filter.findData("action_request"))
    assert sorted(set(asked)) == list(range(document.view_size))
    kept = [document.view_index(r) for r in range(document.view_size) if document.message(document.view_index(r)).kind == "action_request"]
    assert [view.filter.index(r, 0).data(IndexRole) for r in range(view.filter.rowCount())] == kept


def said(value):
    """A cell's value as compared: a brush by its colour, a font by its boldness."""
    if hasattr(value, "color"):
        return value.color().name()
    if hasattr(value, "bold"):
        return value.bold()
    return value


def test_with_no_filter_chosen_every_cell_reads_as_the_models_in_every_role(window, document):
    """With no filter chosen the list asks the model for a cell by its own row (MessageFilter.data): after a filter is
    chosen and cleared, and after rows are appended, each row still says what the model's row says."""
    from foldscope.app.models.messages import ANSWERED_ROLES, COLUMNS
    from foldscope.core.actions.commands import Clip, Evict

    window.set_document(document)

    def assert_rows_read_as_the_models():
        for lst in (window.record_list, window.view_list):
            assert lst.filter.rowCount() == lst.model.rowCount() > 0
            for row in range(lst.model.rowCount()):
                for column in range(len(COLUMNS)):
                    for role in (*ANSWERED_ROLES, 1, 10):
                        shown, model = lst.filter.index(row, column).data(role), lst.model.index(row, column).data(role)
                        assert said(shown) == said(model), (row, column, role)

    assert_rows_read_as_the_models()
    for lst in (window.record_list, window.view_list):
        lst.text_filter.setText("mod2")
        assert lst.filter.active and lst.filter.rowCount() < lst.model.rowCount()
        lst.text_filter.setText("")
    assert_rows_read_as_the_models()
    window.session_actions.run(Evict([document.view_index(document.view_size - 1)]), "evict", "Evict")
    assert_rows_read_as_the_models()
    record = document.record_size
    assert window.editor.do(Clip(document.view_index(5), 20), "clip").success  # a copy appended to the record
    assert document.record_size == record + 1
    assert_rows_read_as_the_models()

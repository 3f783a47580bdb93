"""The full record and active view models: Qt's model contract and what each row says."""

from __future__ import annotations

from foldscope.app.models.messages import INDEX, KIND, PREVIEW, TOKENS, IndexRole, RecordModel, ViewModel, preview
from foldscope.app.qt import Qt
from foldscope.app.theme import muted_colour
from foldscope.core.request.tokens import count_text


def test_record_model_passes_the_model_tester_and_shows_every_message(qtmodeltester, document):
    model = RecordModel()
    model.set_document(document)
    qtmodeltester.check(model)
    assert model.rowCount() == len(document.session.record) == 16
    assert model.index(0, KIND).data() == "system"
    assert model.index(3, KIND).data() == "call reader"
    assert model.index(14, KIND).data() == "clipped copy"
    # a message's size is its part of the full record compiled as one request (core.readout.message_sizes)
    assert model.index(4, TOKENS).data() == f"{document.tokens[4]:,}" and document.tokens[4] >= count_text(document.message(4).text)


def test_view_model_passes_the_model_tester_and_maps_rows_to_record_indexes(qtmodeltester, document):
    model = ViewModel()
    model.set_document(document)
    qtmodeltester.check(model)
    assert model.rowCount() == len(document.session.view) == 9
    assert [model.index(r, INDEX).data(IndexRole) for r in range(3)] == [0, 1, 15]
    assert model.index(2, INDEX).data() == "15"
    assert model.row_of(15) == 2
    assert model.row_of(4) is None


def test_rows_out_of_the_view_are_greyed_with_their_reason(document):
    model = RecordModel()
    model.set_document(document)
    out = model.index(4, PREVIEW)
    assert out.data(Qt.ItemDataRole.ForegroundRole).color() == muted_colour()
    assert out.data().startswith("[folded into note #15]")
    assert model.index(13, PREVIEW).data().startswith("[clipped: copy #14")
    assert "in the active view" in model.index(15, PREVIEW).data(Qt.ItemDataRole.ToolTipRole)
    assert model.index(15, PREVIEW).data(Qt.ItemDataRole.ForegroundRole) is None


def test_an_empty_model_has_no_rows(qtmodeltester):
    model = RecordModel()
    qtmodeltester.check(model)
    assert model.rowCount() == 0


def test_the_rows_colours_follow_the_theme_the_window_switches_to(window, document):
    from foldscope.app.theme import apply_theme, colour_for_key, gui_app, is_dark

    window.set_document(document)
    model = window.record_model
    out, kind = model.index(4, PREVIEW), model.index(0, KIND)
    light = out.data(Qt.ItemDataRole.ForegroundRole).color(), kind.data(Qt.ItemDataRole.ForegroundRole).color()
    try:
        window.themes.set_theme("dark", remember=False)
        assert is_dark()
        dark = out.data(Qt.ItemDataRole.ForegroundRole).color(), kind.data(Qt.ItemDataRole.ForegroundRole).color()
        assert dark == (muted_colour(), colour_for_key("system")) and dark != light
    finally:
        apply_theme(gui_app(), "light")


def test_a_document_set_again_shows_its_own_previews(document):
    from foldscope.core.readout.opening import build_document
    from tests.app.conftest import make_session

    model = ViewModel()
    model.set_document(document)
    copy = document.view_position[14]  # the clipped copy, in the view
    assert model.index(copy, PREVIEW).data() == preview(document, 14)
    other = build_document(make_session(rounds=6), "made-in-test.json")  # another record: index 14 is a result there
    model.set_document(other)
    row = other.view_position[14]
    assert model.index(row, PREVIEW).data() == preview(other, 14) != preview(document, 14)

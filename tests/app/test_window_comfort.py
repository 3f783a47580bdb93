"""The library panel and search across sessions, keyboard access, and window state kept between runs."""

from __future__ import annotations

from pathlib import Path

from foldscope.app.qt import QAction, Qt
from foldscope.app.settings import WindowSettings
from foldscope.app.window import MainWindow


def open_and_wait(qtbot, window, path) -> None:
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None)


def lionagi_sample(corpus_dev) -> Path:
    return corpus_dev / "lionagi" / "branch_v0.36.0_after_context_fold.synthetic.json"


def test_the_library_lists_every_imported_session(qtbot, qtmodeltester, window, corpus_dev):
    from foldscope.core.formats.demo import demo_path

    open_and_wait(qtbot, window, demo_path())
    open_and_wait(qtbot, window, lionagi_sample(corpus_dev))
    panel = window.library_panel
    with qtbot.waitSignal(panel.sessions_listed, timeout=10_000):
        window.side_tabs.setCurrentWidget(panel)
    qtbot.waitUntil(lambda: not panel.is_busy())
    qtmodeltester.check(panel.sessions)
    names = [panel.sessions.index(r, 0).data() for r in range(panel.sessions.rowCount())]
    assert names == [Path(demo_path()).name, lionagi_sample(corpus_dev).name]
    demo_row = panel.sessions.rows[0]
    assert panel.sessions.index(0, 1).data() == "lionagi"
    assert panel.sessions.index(0, 3).data() == f"{demo_row['messages']:,}"


def test_a_search_hit_opens_the_right_session_at_the_message(qtbot, qtmodeltester, window, corpus_dev):
    from foldscope.core.formats.demo import demo_path

    open_and_wait(qtbot, window, demo_path())
    open_and_wait(qtbot, window, lionagi_sample(corpus_dev))  # the demo is no longer the open session
    panel = window.library_panel
    window.side_tabs.setCurrentWidget(panel)
    panel.search_box.setText("record_parser")
    with qtbot.waitSignal(panel.search_finished, timeout=10_000):
        qtbot.keyClick(panel.search_box, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: not panel.is_busy())
    qtmodeltester.check(panel.hits)
    assert panel.hits.rowCount() > 0
    demo_id = next(r["id"] for r in panel.sessions.rows if Path(r["source"]).name == Path(demo_path()).name)
    assert {h[0] for h in panel.hits.rows} == {demo_id}  # only the demo mentions it
    session_id, index, snippet = panel.hits.rows[0]
    assert "[record_parser]" in snippet
    panel.hit_table.setFocus()
    panel.hit_table.setCurrentIndex(panel.hits.index(0, 0))
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        qtbot.keyClick(panel.hit_table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.task is None and not panel.is_busy())
    assert Path(window.document.path).name == Path(demo_path()).name
    assert window.inspector.index == index
    assert window.record_list.selected_index() == index
    assert "record_parser" in window.document.message(index).text


def test_every_panel_has_a_key(qtbot, window, document):
    window.set_document(document)
    window.show()
    qtbot.waitExposed(window)
    actions = {a.text().replace("&", ""): a for a in window.findChildren(QAction)}
    for text, widget in (
        ("Folds", window.fold_panel.table),
        ("Full record", window.record_list.table),
        ("Window map", window.window_map),
    ):
        actions[text].trigger()
        assert window.focusWidget() is widget, text
    actions["Filter the list…"].trigger()
    assert window.focusWidget() is window.view_list.text_filter
    actions["Search all sessions…"].trigger()
    qtbot.waitUntil(lambda: not window.library_panel.is_busy())
    assert window.side_tabs.currentWidget() is window.library_panel
    assert window.focusWidget() is window.library_panel.search_box
    assert {a.shortcut().toString() for a in actions.values()} >= {"Ctrl+6", "Ctrl+L", "Ctrl+F", "Ctrl+Shift+F"}


def test_window_and_splitter_state_are_remembered(qtbot, tmp_path):
    settings = WindowSettings(tmp_path / "state.ini")
    first = MainWindow(settings=settings, db=str(tmp_path / "lib.db"))
    qtbot.addWidget(first)
    first.resize(760, 700)  # inside the offscreen screen, which restoreGeometry clamps to
    first.show()
    qtbot.waitExposed(first)
    first.folds_splitter.setSizes([200, 160])
    first.lists_splitter.setSizes([150, 250])
    sizes = (first.folds_splitter.sizes(), first.lists_splitter.sizes())
    size = first.size()
    first.close()
    second = MainWindow(settings=WindowSettings(tmp_path / "state.ini"), db=str(tmp_path / "lib.db"))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert second.size() == size
    assert (second.folds_splitter.sizes(), second.lists_splitter.sizes()) == sizes

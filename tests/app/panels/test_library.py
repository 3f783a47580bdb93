"""The library panel's tables (RowsModel): Qt's model contract and what each row says."""

from __future__ import annotations

from pathlib import Path

from foldscope.app.panels.library import RowsModel
from foldscope.core.formats.demo import demo_path


def test_the_session_table_passes_the_model_tester_and_names_each_session(qtbot, qtmodeltester, demo_window):
    panel = demo_window.library_panel
    with qtbot.waitSignal(panel.sessions_listed, timeout=20_000):
        panel.refresh()
    qtbot.waitUntil(lambda: not panel.is_busy())
    model = panel.sessions
    assert isinstance(model, RowsModel)
    qtmodeltester.check(model)
    assert model.rowCount() == 1
    assert model.index(0, 0).data() == Path(demo_path()).name
    assert model.index(0, 3).data() == f"{demo_window.document.record_size:,}"


def test_the_hit_table_passes_the_model_tester_and_shows_the_match(qtbot, qtmodeltester, demo_window):
    panel = demo_window.library_panel
    with qtbot.waitSignal(panel.search_finished, timeout=20_000):
        panel.search("config")
    qtbot.waitUntil(lambda: not panel.is_busy())
    qtmodeltester.check(panel.hits)
    assert panel.hits.rowCount() > 0
    assert all("config" in panel.hits.index(r, 2).data().casefold() for r in range(panel.hits.rowCount()))


def test_at_1366_the_library_shows_8_sessions_and_the_hits_table_once_there_is_a_search(qtbot, demo_window, corpus_dev):
    """Issue 45: at 1366x768 an empty hits table under the sessions left them 2 rows."""
    from foldscope.core.formats import load_session
    from foldscope.core.store.library import Library

    window = demo_window
    files = sorted((corpus_dev / "claude_code").glob("*.jsonl"))[:9]
    with Library(window.db) as library:
        for path in files:
            library.import_session(load_session(path))
    from foldscope.app.qt import QSize

    window.sizing.lay_out(QSize(1366, 768))  # as a first start on a laptop's screen
    window.show()
    panel = window.library_panel
    window.side_tabs.setCurrentWidget(panel)
    panel.refresh()
    table = panel.session_table
    qtbot.waitUntil(lambda: panel.sessions.rowCount() == len(files) + 1 and table.viewport().height() > 0)  # and the demo
    assert not panel.hit_table.isVisible()
    assert table.viewport().height() / table.verticalHeader().defaultSectionSize() >= 8
    with qtbot.waitSignal(panel.search_finished, timeout=20_000):
        panel.search("the")
    assert panel.hit_table.isVisible() and panel.hits.rowCount()

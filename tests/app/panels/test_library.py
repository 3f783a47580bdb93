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


def test_the_session_table_names_each_format_by_its_agent_and_marks_approximate_usage(qtbot):
    """review11: the library tab's Format column gave reader names ("copilot_cli", "claude_code"), where the status
    bar and `sessions` name the agent, and an Aider history's rounded peak unmarked, where inspect writes ~6,300."""
    from foldscope.app.panels.library import LibraryPanel

    panel = LibraryPanel(None)
    qtbot.addWidget(panel)
    row = {"source": "/s/a.jsonl", "source_bytes": 1000, "messages": 8, "requests": 2, "peak_reported_input": 6300}
    panel.sessions.set_rows([{**row, "format": "copilot_cli"}, {**row, "format": "aider"}, {**row, "format": "claude_code"}])
    shown = [(panel.sessions.index(r, 1).data(), panel.sessions.index(r, 5).data()) for r in range(3)]
    assert shown == [("GitHub Copilot CLI", "6,300"), ("Aider", "~6,300"), ("Claude Code", "6,300")]

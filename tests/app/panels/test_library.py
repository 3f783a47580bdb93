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

"""At 1366x768, the smallest screen the README promises, the window shows what it shows at 1600x1000, legibly."""

from __future__ import annotations

import pytest

from foldscope.app.panels.cost import WRITE_CAUSES
from foldscope.app.qt import QApplication, QSize, Qt
from foldscope.core.readout.cache_lane import BANDS


def at_1366x768(qtbot, window, policy: bool) -> None:
    """The window laid out as a first start on a 1366x768 screen lays it out, the Policy dock open or not."""
    window.sizing.lay_out(QSize(1366, 768))
    if policy:
        window.session_actions.policy_dock.show()
    qtbot.waitUntil(lambda: window.size().toTuple() == (1366, 768))
    QApplication.processEvents()  # the layout settles the dock in posted events
    assert window.size().toTuple() == (1366, 768)  # nothing pushed the window past the screen


@pytest.mark.parametrize("policy", [False, True], ids=["no dock", "policy dock"])
def test_at_1366x768_every_side_tab_title_is_shown_whole(qtbot, demo_window, policy):
    """A new user saw "Ins…" and "L…" with the Policy dock open: a tab whose title cannot be read is one nobody finds."""
    window = demo_window
    at_1366x768(qtbot, window, policy)
    bar = window.side_tabs.tabBar()
    metrics = bar.fontMetrics()
    for i in range(bar.count()):
        title = bar.tabText(i).replace("&", "")
        assert bar.tabRect(i).width() >= metrics.horizontalAdvance(title) + 8, title  # its text and a little margin
        assert bar.tabRect(i).right() <= bar.width(), title  # and inside the bar, not cut off at its end


@pytest.mark.parametrize("policy", [False, True], ids=["no dock", "policy dock"])
def test_at_1366x768_the_cache_lane_shows_its_legend_whole_or_says_where_the_rest_is(qtbot, window, corpus_dev, policy):
    """At 1366x768 the lane's coloured bars had no legend: a new user could not tell a rewrite from an expiry."""
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(corpus_dev / "claude_code" / "session-196820da.jsonl")
    qtbot.waitUntil(lambda: window.task is None)
    at_1366x768(qtbot, window, policy)
    timeline = window.timeline
    assert timeline.lane.shown()
    timeline.grab()  # paints it
    drawn = timeline.lane.drawn
    words = [w for w, _, _ in drawn.legend]
    assert words[:3] == ["idle under 5 min", "idle past 5 min", "idle past 1 h"]
    assert "rewrite write" in words and "expired write" in words  # the causes a user asks about first
    assert drawn.left_off == 0 or drawn.left_off + len(words) == len(BANDS) + len(
        WRITE_CAUSES
    )  # every item, or the line says more are a hover away
    assert timeline._plot().height() >= 40  # and the plot above it can still be read


def composition_rows(window) -> float:
    table = window.composition_panel.category_table
    return table.viewport().height() / table.verticalHeader().defaultSectionSize()


@pytest.mark.parametrize("policy, rows", [(False, 7), (True, 5)], ids=["no dock", "policy dock"])
def test_at_1366x768_a_session_with_folds_leaves_composition_its_rows_and_its_tabs_whole(qtbot, window, policy, rows):
    """With folds at 1366x768 the Composition table had 5.85 rows (3.75 with the Policy dock): the Folds dock sized
    itself by its note's sizeHint (four lines for the one drawn), and "Show largest N" pushed the table's own tabs
    behind scroll arrows."""
    from foldscope.app.gui import settle, show_tab
    from foldscope.core.formats.demo import demo_path

    window.sizing.lay_out(QSize(1366, 768))  # as a first start on the screen, before the session is read
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(demo_path())
    qtbot.waitUntil(lambda: window.task is None)
    assert window.document.folds  # the demo records a fold: the Folds dock shows its row
    show_tab(window, "composition")
    at_1366x768(qtbot, window, policy)
    settle(QApplication.instance())
    assert window.fold_panel.table.viewport().height() >= window.fold_panel.table.verticalHeader().defaultSectionSize()
    assert composition_rows(window) >= rows
    bar = window.composition_panel.tabs.tabBar()
    for i in range(bar.count()):
        title = bar.tabText(i)
        assert bar.tabRect(i).width() >= bar.fontMetrics().horizontalAdvance(title) + 8, title
        assert bar.tabRect(i).right() <= bar.width(), title


def test_at_1366x768_the_policy_dock_opens_at_its_least_width_and_leaves_the_lists_every_column(qtbot, window, corpus_dev):
    """The dock opened at its sentence's width and took it from the lists: a pi session's Tokens column was cut."""
    window.sizing.lay_out(QSize(1366, 768))
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(corpus_dev / "pi" / "earendil-works-pi_prompt-cache-replay-session.jsonl")
    qtbot.waitUntil(lambda: window.task is None)
    dock = window.session_actions.policy_dock
    dock.show()  # as the user opens it, the window as it was laid out (not laid out again)
    qtbot.waitUntil(dock.isVisible)
    QApplication.processEvents()  # the layout settles the dock in posted events
    assert window.size().toTuple() == (1366, 768)
    # A dock opens at its sizeHint where the layout lets it (the screenshot run's first layout did: 183 pixels for
    # a least width of 151, the lists cut to 392): the hint is the least width, so it opens there however laid out.
    assert dock.sizeHint().width() == dock.minimumSizeHint().width()
    assert dock.width() <= dock.minimumSizeHint().width() + 8  # a splitter handle's slack, no more
    for messages in (window.record_list, window.view_list):
        header = messages.table.horizontalHeader()
        last = header.logicalIndex(header.count() - 1)
        assert header.sectionViewportPosition(last) + header.sectionSize(last) <= messages.table.viewport().width(), messages.title


CODEX_MCP = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"  # MCP tools' long names


def test_at_1366x768_a_long_category_name_leaves_the_composition_tables_figures_in_sight(qtbot, window, corpus_dev):
    """A Codex session's "results: mcp__cloud-associates__execute_workflow" pushed Tokens out of the table's sight."""
    from foldscope.app.gui import settle, show_tab

    window.sizing.lay_out(QSize(1366, 768))
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=30_000):
        window.open_path(corpus_dev / CODEX_MCP)
    qtbot.waitUntil(lambda: window.task is None)
    show_tab(window, "composition")
    at_1366x768(qtbot, window, policy=True)
    settle(QApplication.instance())
    table = window.composition_panel.category_table
    names = [table.model().index(row, 0).data() for row in range(table.model().rowCount())]
    assert any("mcp__" in name for name in names)  # the long names are there to push
    header = table.horizontalHeader()
    for column in (1, 2):  # Tokens and Share
        assert header.sectionViewportPosition(column) + header.sectionSize(column) <= table.viewport().width(), column
    cut = next(row for row, name in enumerate(names) if "mcp__" in name)
    assert names[cut] in table.model().index(cut, 0).data(Qt.ItemDataRole.ToolTipRole)  # read whole on hover

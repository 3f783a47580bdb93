"""At 1366x768, the smallest screen the README promises, the window shows what it shows at 1600x1000, legibly."""

from __future__ import annotations

import pytest

from foldscope.app.panels.cost import WRITE_CAUSES
from foldscope.app.panels.window_map_blocks import LEGEND_FROM
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


CODEX_MCP = "codex/rollout-2026-02-23T20-34-25-019c8bfe-ec25-79e0-97d7-bda6a9c575ff.jsonl"  # MCP tools' long names
TWO_LINE_NOTE = "claude_code/extracted-dd381a75.jsonl"  # five folds, and a Folds note two lines long at 1366
LIONAGI_FOLDS = "lionagi/branch_v0.36.0_after_context_fold.synthetic.json"  # four folds


def open_laid_out(qtbot, window, path, size=(1366, 768)) -> None:
    """`path` opened in a window laid out at `size` first, as a first start on that screen (and --screenshot) does."""
    window.sizing.lay_out(QSize(*size))
    window.show()
    qtbot.waitExposed(window)
    with qtbot.waitSignal(window.document_loaded, timeout=60_000):
        window.open_path(path)
    qtbot.waitUntil(lambda: window.task is None, timeout=60_000)


@pytest.mark.parametrize(
    "name, implicit", [(TWO_LINE_NOTE, False), (CODEX_MCP, True), (LIONAGI_FOLDS, False)], ids=["claude", "codex", "lionagi"]
)
@pytest.mark.parametrize("policy", [False, True], ids=["no dock", "policy dock"])
def test_at_1366x768_the_cache_lane_and_the_map_keep_their_legends_beside_a_tall_folds_dock(
    qtbot, window, corpus_dev, name, implicit, policy
):
    """At 1366x768 the lane's coloured bars had no legend: a new user could not tell a rewrite from an expiry. Five
    folds and a two-line Folds note took the timeline under the lean lane's 120 pixels (105) and the map's legend."""
    from foldscope.app.gui import settle

    open_laid_out(qtbot, window, corpus_dev / name)
    at_1366x768(qtbot, window, policy)
    settle(QApplication.instance())
    timeline = window.timeline
    assert timeline.lane.shown()
    timeline.grab()  # paints it
    drawn = timeline.lane.drawn
    words = [w for w, _, _ in drawn.legend]
    assert words[:3] == ["idle under 5 min", "idle past 5 min", "idle past 1 h"]
    assert any("rewrite" in w for w in words) and any("expired" in w for w in words)  # the causes a user asks first
    items = len(BANDS) + len(WRITE_CAUSES) - (2 if implicit else 0)  # an implicit cache's lane names no first/append
    assert drawn.left_off == 0 or drawn.left_off + len(words) == items  # every item, or the line says more are a hover away
    assert timeline._plot().height() >= 40  # and the plot above it can still be read
    assert window.window_map.height() >= LEGEND_FROM  # the map keeps its legend row too
    folds = window.fold_panel.table
    if window.document.folds:  # and the Folds dock still shows a row, scrolling to the rest
        assert folds.viewport().height() >= folds.verticalHeader().defaultSectionSize()


def test_at_1600x1000_the_folds_dock_still_shows_five_folds_whole(qtbot, window, corpus_dev):
    """The room the timeline keeps at 1366x768 costs no fold row where the window has the height."""
    from foldscope.app.gui import settle

    open_laid_out(qtbot, window, corpus_dev / TWO_LINE_NOTE, size=(1600, 1000))
    settle(QApplication.instance())
    folds = window.fold_panel.table
    assert folds.model().rowCount() >= 5
    assert folds.viewport().height() >= 5 * folds.verticalHeader().defaultSectionSize()
    assert window.timeline.lane.shown()


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

"""The library panel and search across sessions, keyboard access, window state kept between runs, a laptop screen."""

from __future__ import annotations

from pathlib import Path

import pytest

from foldscope.app.qt import QAction, QApplication, QLineEdit, Qt
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
    first.panes.splitters["splitter/top"].setSizes([200, 160, 300])
    first.panes.splitters["splitter/lists"].setSizes([150, 250])
    sizes = (first.panes.splitters["splitter/top"].sizes(), first.panes.splitters["splitter/lists"].sizes())
    size = first.size()
    first.close()
    second = MainWindow(settings=WindowSettings(tmp_path / "state.ini"), db=str(tmp_path / "lib.db"))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    assert second.size() == size
    assert (second.panes.splitters["splitter/top"].sizes(), second.panes.splitters["splitter/lists"].sizes()) == sizes


def test_docks_remember_their_place_and_reset_layout_puts_them_back(qtbot, tmp_path):
    settings = WindowSettings(tmp_path / "docks.ini")
    first = MainWindow(settings=settings, db=str(tmp_path / "lib.db"))
    qtbot.addWidget(first)
    first.show()
    qtbot.waitExposed(first)
    policy = first.session_actions.policy_dock
    assert first.dockWidgetArea(policy) == Qt.DockWidgetArea.RightDockWidgetArea
    first.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, policy)
    policy.show()
    first.close()
    second = MainWindow(settings=WindowSettings(tmp_path / "docks.ini"), db=str(tmp_path / "lib.db"))
    qtbot.addWidget(second)
    second.show()
    qtbot.waitExposed(second)
    policy = second.session_actions.policy_dock
    assert second.dockWidgetArea(policy) == Qt.DockWidgetArea.LeftDockWidgetArea and policy.isVisible()
    reset = next(a for a in second.findChildren(QAction) if a.text() == "Reset &layout")
    reset.trigger()
    assert second.dockWidgetArea(policy) == Qt.DockWidgetArea.RightDockWidgetArea and not policy.isVisible()
    assert second.panes.folds_dock.isVisible()


def open_dock(qtbot, window, dock: str) -> None:
    actions = window.session_actions
    if dock == "pager":
        actions.open_pager(window.inspector.index or 0)
    elif dock == "fold preview":
        with qtbot.waitSignal(actions.preview.preview_ready, timeout=30_000):
            actions.preview_fold()
        qtbot.waitUntil(lambda: actions.preview.task is None)
    else:
        actions.policy_dock.show()


@pytest.mark.parametrize("dock", ["none", "pager", "fold preview", "policy editor"])
def test_at_1366x768_with_a_dock_open_both_lists_keep_8_rows_and_whole_columns(qtbot, demo_window, dock):
    """Issue 19: at 1366x768 with a dock open the lists shrank to 2 rows and the Preview column read "evie"."""
    window = demo_window
    window.resize(1366, 768)
    window.select_message(window.document.view_index(3))
    if dock != "none":
        open_dock(qtbot, window, dock)
    qtbot.waitUntil(lambda: window.size().toTuple() == (1366, 768))
    QApplication.processEvents()  # the layout settles the dock in posted events
    assert window.size().toTuple() == (1366, 768)  # nothing pushed the window past the screen
    for messages in (window.record_list, window.view_list):
        table = messages.table
        rows = table.viewport().height() / table.verticalHeader().defaultSectionSize()
        assert rows >= 8, (messages.title, rows)
        header = table.horizontalHeader()
        for column in range(header.count()):
            title = window.record_model.headerData(column, Qt.Orientation.Horizontal)
            assert header.sectionSize(column) >= header.sectionSizeFromContents(column).width(), (messages.title, title)
    for edit in window.findChildren(QLineEdit):
        if edit.isVisible() and edit.placeholderText() and not edit.text():
            room = edit.width() - 12  # the frame and text margins
            assert edit.fontMetrics().horizontalAdvance(edit.placeholderText()) <= room, edit.placeholderText()


def test_no_two_actions_of_the_window_share_a_shortcut(window):
    """Issue 19: Ctrl+Shift+F was bound to both Preview fold and Search all sessions, and neither worked."""
    seen: dict[str, str] = {}
    for action in window.findChildren(QAction):
        for key in action.shortcuts():
            text = key.toString()
            assert text not in seen, f"{text}: {seen.get(text)} and {action.text()}"
            seen[text] = action.text()
    assert "Ctrl+Shift+F" in seen and "Ctrl+Shift+O" in seen


def test_view_theme_switches_light_and_dark_and_is_remembered(qtbot, window, settings):
    from foldscope.app.theme import apply_theme, is_dark

    themes = {a.text(): a for a in window.themes.menu.actions()}
    assert set(themes) == {"System", "Light", "Dark"} and themes["System"].isChecked()
    try:
        themes["Dark"].trigger()
        assert is_dark() and themes["Dark"].isChecked() and settings.theme() == "dark"
        themes["Light"].trigger()
        assert not is_dark() and settings.theme() == "light"
    finally:
        apply_theme(QApplication.instance(), "light")


def test_a_screenshot_run_writes_no_settings(qtbot, tmp_path):
    """Issue 19: --screenshot wrote its offscreen geometry and recent files into the user's settings."""
    from foldscope.app.gui import run_gui
    from foldscope.app.qt import QSettings
    from foldscope.core.formats.demo import demo_path

    user = tmp_path / "config"
    for scope in (QSettings.Scope.UserScope, QSettings.Scope.SystemScope):
        QSettings.setPath(QSettings.Format.NativeFormat, scope, str(user))
        QSettings.setPath(QSettings.Format.IniFormat, scope, str(user))
    png = tmp_path / "shot.png"
    try:
        assert (
            run_gui(
                [str(demo_path()), "--screenshot", str(png), "--size", "1366x768", "--db", str(tmp_path / "lib.db"), "--theme", "light"]
            )
            == 0
        )
    finally:
        QApplication.instance().setOrganizationName("")
        QApplication.instance().setApplicationName("")
    assert png.is_file()
    assert not user.exists() or not any(user.rglob("*")), list(user.rglob("*"))
    assert WindowSettings().recent_files() == []  # the default settings file (under the redirected path) holds nothing


@pytest.mark.parametrize("line", ["recent_files=@ByteArray(/tmp/a.jsonl)", "recent_files=@Variant(\\0\\0\\0\\x2\\0\\0\\0\\x3)"])
def test_a_settings_file_whose_recent_files_is_no_list_gives_no_recent_files(tmp_path, line):
    """A hand-edited or foreign settings.ini: a value of another type used to give a recent file per character."""
    path = tmp_path / "settings.ini"
    path.write_text(f"[General]\n{line}\n")
    assert WindowSettings(path).recent_files() == []


def test_recent_files_read_back_one_file_or_many(tmp_path):
    path = tmp_path / "settings.ini"
    WindowSettings(path).add_recent_file(str(tmp_path / "a.jsonl"))
    assert WindowSettings(path).recent_files() == [str((tmp_path / "a.jsonl").resolve())]  # INI: a bare string
    WindowSettings(path).add_recent_file(str(tmp_path / "b.jsonl"))
    assert WindowSettings(path).recent_files() == [str((tmp_path / p).resolve()) for p in ("b.jsonl", "a.jsonl")]


def test_every_side_tab_has_a_view_menu_key_that_brings_it_to_the_front_from_any_other(qtbot, window, document):
    """New user 27: the Cost tab had no View menu item or key, and Inspector (Ctrl+3) gave the keyboard to the
    inspector's own tabs without bringing its side tab to the front when another was there."""
    window.set_document(document)
    window.show()
    qtbot.waitExposed(window)
    view = next(a.menu() for a in window.menuBar().actions() if a.text().replace("&", "") == "View")
    keyed = [a for a in view.actions() if not a.isSeparator() and a.menu() is None and not a.shortcut().isEmpty()]
    tabs = window.side_tabs
    for i in range(tabs.count()):
        target, other = tabs.widget(i), tabs.widget((i + 1) % tabs.count())
        bringing = []
        for action in keyed:
            tabs.setCurrentWidget(other)
            action.trigger()
            if tabs.currentWidget() is target:
                bringing.append(action.shortcut().toString())
        assert bringing, tabs.tabText(i)

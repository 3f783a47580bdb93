"""What the readers bring to the window: an Inspect AI log's sample chosen, reader warnings shown, agent
sessions on this machine listed, a subagent opened from the call that started it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldscope.app import dialogs
from tests.core.formats.test_claude_code_children import _session_with_subagents
from tests.paths import CORPUS_DEV, corpus_glob

CHOOSE_SAMPLE = dialogs.choose_sample  # taken at import, before the autouse fixture puts a stand-in in its place


def _open(qtbot, window, path, **kwargs) -> None:
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(path, **kwargs)
    qtbot.waitUntil(lambda: window.task is None)


def _log(name: str) -> Path:
    found = corpus_glob(f"inspect/{name}")
    if not found:
        pytest.skip("no Inspect AI logs in the corpus")
    return found[0]


def test_file_open_accepts_eval_logs():
    assert "*.eval" in dialogs.SESSION_FILTER


@pytest.mark.parametrize(
    "name",
    ["opencode.db", ".aider.chat.history.md", "rollout-2026-02-23T12-40-23-x.jsonl", "api_conversation_history.json", "x.eval"],
)
def test_file_opens_first_filter_shows_each_readers_file(name):
    """New user 27: File > Open's filter hid OpenCode's database and Aider's history, both read since issue 42."""
    from fnmatch import fnmatch

    first = dialogs.SESSION_FILTER.split(";;")[0]
    patterns = first[first.index("(") + 1 : first.index(")")].split()
    assert any(fnmatch(name, p) for p in patterns)


def test_opening_a_log_of_several_samples_asks_which_and_opens_that_one(qtbot, window, monkeypatch):
    path = _log("2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval")
    asked = []
    monkeypatch.setattr(dialogs, "choose_sample", lambda parent, p, samples: asked.append(len(samples)) or "3:1")
    _open(qtbot, window, path)
    assert asked == [10]
    assert window.document.session.extras["inspect"]["sample"] == "3"


def test_cancelling_the_sample_choice_opens_nothing(qtbot, window, monkeypatch):
    path = _log("2025-05-12T20-28-13-04-00_popularity.json")
    monkeypatch.setattr(dialogs, "choose_sample", lambda parent, p, samples: None)
    assert window.open_path(path) is None and window.document is None


def test_reader_warnings_show_in_a_bar_with_their_count_expandable_and_dismissible(qtbot, window, tmp_path, corpus_dev):
    data = (CORPUS_DEV / "claude_code" / "short.jsonl").read_bytes().rstrip(b"\n")
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(data[:-40])
    window.show()
    _open(qtbot, window, cut)
    bar = window.warnings_bar
    assert bar.isVisible() and bar.label.text().startswith("Reading the file gave 1 warning: ")
    assert not bar.details.isVisible()
    bar.toggle.click()
    assert bar.details.isVisible() and "truncated last line skipped" in bar.details.toPlainText()
    bar.close_button.click()
    assert not bar.isVisible()
    _open(qtbot, window, CORPUS_DEV / "claude_code" / "short.jsonl")
    assert not window.warnings_bar.isVisible()


def test_the_agent_sessions_dialog_lists_searches_and_opens_one(qtbot, window, monkeypatch, corpus_dev):
    rows = [
        {
            "agent": "codex",
            "path": str(CORPUS_DEV / "codex" / "x.jsonl"),
            "project": "/work/alpha",
            "start": 1.7e9,
            "size": 2000,
            "requests": 5,
            "model": "gpt-5",
            "cost_usd": 0.5,
            "problem": None,
            "modified": 1.7e9,
        },
        {
            "agent": "claude_code",
            "path": str(CORPUS_DEV / "claude_code" / "short.jsonl"),
            "project": "/work/beta",
            "start": 1.6e9,
            "size": 1000,
            "requests": 3,
            "model": "claude-x",
            "cost_usd": None,
            "problem": None,
            "modified": 1.6e9,
        },
    ]
    dialog = dialogs.AgentSessionsDialog(rows)
    qtbot.addWidget(dialog)
    assert dialog.chosen_path() == rows[0]["path"]
    dialog.search.setText("beta")
    assert dialog.visible_rows() == [rows[1]] and dialog.chosen_path() == rows[1]["path"]
    from foldscope.core.formats import discover

    monkeypatch.setattr(discover, "find_sessions", lambda: [])
    monkeypatch.setattr(dialogs, "ask_agent_session", lambda parent, found=None, run=None: rows[1]["path"])
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.opening.open_agent_session()
    qtbot.waitUntil(lambda: window.task is None)
    assert window.document.path == rows[1]["path"]


def test_the_agent_sessions_dialog_lists_newest_start_first_as_the_sessions_command_does(qtbot):
    # Found by review8: sorted by the file's time, the rows' Start column read out of order (a session resumed
    # later sorted above one started later), where `foldscope sessions` lists newest start first.
    def row(name: str, start: float | None, modified: float) -> dict:
        return {
            "agent": "codex", "path": f"/s/{name}.jsonl", "project": "/p", "start": start, "size": 1000,
            "requests": 1, "model": None, "cost_usd": None, "problem": None, "modified": modified,
        }  # fmt: skip

    rows = [row("resumed", 1.6e9, 1.9e9), row("newest", 1.8e9, 1.8e9), row("unread", None, 1.7e9)]
    dialog = dialogs.AgentSessionsDialog(rows)
    qtbot.addWidget(dialog)
    assert [r["path"] for r in dialog.visible_rows()] == ["/s/newest.jsonl", "/s/unread.jsonl", "/s/resumed.jsonl"]
    assert dialog.chosen_path() == "/s/newest.jsonl"


def test_a_subagent_opens_from_the_call_that_started_it(qtbot, window, tmp_path):
    path = _session_with_subagents(tmp_path)
    _open(qtbot, window, path)
    session = window.document.session
    child = next(c for c in session.children if c.extras["child_kind"] == "subagent")
    window.select_message(session.record.index_of(child.extras["parent_call"]))
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.subagents.open_selected()
    qtbot.waitUntil(lambda: window.task is None)
    assert Path(window.document.path) == Path(child.source)
    assert json.loads(json.dumps(window.document.session.extras.get("agent_id_in_file"))) == "a1b2c3"


def test_the_agent_sessions_dialog_reads_the_machine_in_the_worker_and_is_usable_meanwhile(qtbot):
    import threading

    from foldscope.app.worker import pool, run_task
    from foldscope.core.formats.discover import Found

    found = [Found("codex", f"/home/u/.codex/sessions/r{i}.jsonl", f"/work/p{i}", 1.7e9 + i, 1000, 1.7e9 + i, 3, "gpt-5") for i in range(3)]
    release, reading = threading.Event(), threading.Event()

    def find(each):
        for done, f in enumerate(found, 1):
            each(done, len(found), f)
            if done == 2:  # hold the scan open after two sessions: the dialog must be usable now
                reading.set()
                release.wait(20)
        return found

    dialog = dialogs.AgentSessionsDialog()
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.start_scan(run_task, find)
    qtbot.waitUntil(lambda: len(dialog.rows) == 2, timeout=20_000)
    assert reading.is_set() and dialog.task is not None and dialog.progress.isVisible()
    assert "so far" in dialog.heading.text()
    dialog.search.setText("p0")  # searchable and choosable while the scan goes on
    assert dialog.chosen_path() == found[0].path
    with qtbot.waitSignal(dialog.scan_finished, timeout=20_000):
        release.set()
    qtbot.waitUntil(lambda: pool().activeThreadCount() == 0)  # `ended` comes just before the pool is idle
    assert [r["path"] for r in dialog.rows] == [f.path for f in reversed(found)]  # newest first
    assert dialog.chosen_path() == found[0].path and not dialog.progress.isVisible()
    assert "3 sessions found" in dialog.heading.text()


def test_closing_the_agent_sessions_dialog_cancels_its_scan(qtbot):
    import threading

    from foldscope.app.worker import pool, run_task
    from foldscope.core.formats.discover import Found

    release, calls = threading.Event(), []

    def find(each):
        for i in range(50):
            calls.append(i)
            each(i + 1, 50, Found("pi", f"/s{i}.jsonl", "p", None, 1, float(i)))
            release.wait(20)
        return []

    dialog = dialogs.AgentSessionsDialog()
    qtbot.addWidget(dialog)
    dialog.start_scan(run_task, find)
    qtbot.waitUntil(lambda: len(calls) == 1, timeout=20_000)
    with qtbot.waitSignal(dialog.scan_finished, timeout=20_000):
        dialog.reject()
        release.set()
    qtbot.waitUntil(lambda: pool().activeThreadCount() == 0)
    assert len(calls) < 50  # the report after the close raised Cancelled in the worker


def test_a_subagent_opens_from_its_call_row_with_enter_or_the_context_menu(qtbot, window, tmp_path):
    from foldscope.app.qt import Qt

    path = _session_with_subagents(tmp_path)
    _open(qtbot, window, path)
    session = window.document.session
    child = next(c for c in session.children if c.extras["child_kind"] == "subagent")
    call = session.record.index_of(child.extras["parent_call"])
    other = next(i for i, m in enumerate(session.record) if i != call and window.subagents.child_started_by(i) is None)
    window.select_message(other)
    menu = window.session_actions.context_menu(window.view_list.table)
    assert window.subagents.open_action in menu.actions() and not window.subagents.open_action.isEnabled()
    window.select_message(call)
    assert window.subagents.open_action.isEnabled()
    from foldscope.app.models.messages import KIND
    from foldscope.core.readout.document import kind_label

    assert kind_label(window.document, call).endswith("→ subagent")  # the row says what Enter opens
    assert not kind_label(window.document, other).endswith("→ subagent")
    row = window.record_model.row_of(call)
    assert window.record_model.index(row, KIND).data().endswith("→ subagent")
    table = window.record_list.table  # the full record: the call is there whatever the view holds now
    table.setFocus()
    assert table.currentIndex().isValid()
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        qtbot.keyClick(table, Qt.Key.Key_Return)
    qtbot.waitUntil(lambda: window.task is None)
    assert Path(window.document.path) == Path(child.source)


def test_enter_on_a_row_that_started_no_subagent_opens_nothing(qtbot, window, tmp_path):
    from foldscope.app.qt import Qt

    _open(qtbot, window, _session_with_subagents(tmp_path))
    session = window.document.session
    other = next(i for i, m in enumerate(session.record) if window.subagents.child_started_by(i) is None)
    window.select_message(other)
    qtbot.keyClick(window.record_list.table, Qt.Key.Key_Return)
    assert window.task is None and Path(window.document.path) == tmp_path / "s1.jsonl"


def test_a_double_click_on_the_call_row_opens_its_subagent(qtbot, window, tmp_path):
    from foldscope.app.qt import Qt

    _open(qtbot, window, _session_with_subagents(tmp_path))
    session = window.document.session
    child = next(c for c in session.children if c.extras["child_kind"] == "subagent")
    call = session.record.index_of(child.extras["parent_call"])
    window.show()
    window.select_message(call)
    table = window.record_list.table
    table.scrollTo(table.currentIndex())
    rect = table.visualRect(table.currentIndex())
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        # A double-click as the platform delivers it: a press and release, then the double-click event.
        qtbot.mouseClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
        qtbot.mouseDClick(table.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    qtbot.waitUntil(lambda: window.task is None)
    assert Path(window.document.path) == Path(child.source)


def test_the_sample_choice_lists_each_sample_with_its_counts_agreeing_their_nouns(qtbot, monkeypatch):
    """review8: an Inspect AI log's samples, each of one request, were offered as "1:1  (1 requests, 3 messages)"."""
    from foldscope.app.loader import inspect_samples

    path = _log("2025-02-11T15-17-00-05-00_popularity_dPiJifoWeEQBrfWsAopzWr.eval")
    offered = []
    monkeypatch.setattr(
        dialogs.QInputDialog, "getItem", lambda parent, title, label, items, *rest: offered.extend(items) or (items[2], True)
    )
    assert CHOOSE_SAMPLE(None, path, inspect_samples(path)) == "3:1"
    assert offered[0] == "1:1  (1 request, 3 messages)" and not any("1 requests" in item for item in offered)


def test_the_agent_sessions_dialog_chooses_the_newest_session_when_the_user_chose_none(qtbot):
    """review8: the first session the scan read was chosen, and stayed chosen as newer ones were listed above it, so
    Open (Enter) with nothing clicked opened the oldest of the machine's sessions; one the user clicks stays chosen."""
    import threading

    from foldscope.app.worker import pool, run_task
    from foldscope.core.formats.discover import Found

    found = [Found("codex", f"/home/u/.codex/sessions/r{i}.jsonl", f"/work/p{i}", 1.7e9 + i, 1000, 1.7e9 + i, 3, "gpt-5") for i in range(3)]
    release = threading.Event()

    def find(each):
        for done, f in enumerate(found, 1):  # the oldest read first
            each(done, len(found), f)
            if done == 1:  # the dialog lists it (and chooses it) before the newer ones are read
                release.wait(20)
        return found

    dialog = dialogs.AgentSessionsDialog()
    qtbot.addWidget(dialog)
    dialog.start_scan(run_task, find)
    qtbot.waitUntil(lambda: len(dialog.rows) == 1, timeout=20_000)
    assert dialog.chosen_path() == found[0].path
    with qtbot.waitSignal(dialog.scan_finished, timeout=20_000):
        release.set()
    qtbot.waitUntil(lambda: pool().activeThreadCount() == 0)
    assert dialog.chosen_path() == found[-1].path  # the newest, on top
    dialog.table.selectRow(2)  # the user's own choice: the oldest
    dialog.set_rows([f.as_dict() for f in found])
    assert dialog.chosen_path() == found[0].path


def test_the_agent_sessions_dialog_gives_a_small_bill_its_digits_and_an_approximate_one_its_mark():
    """review8: the dialog showed a $0.0016 session as "$0.00" (`sessions` prints $0.0016) and an Aider history's
    rounded cost unmarked (`sessions` prints ~)."""
    row = {"agent": "pi", "project": "/p", "problem": None, "start": 1.7e9, "size": 2000, "requests": 1, "model": "m", "path": "/s"}
    assert dialogs.AgentSessionsDialog.cells({**row, "cost_usd": 0.0016})[-1] == "$0.0016"
    assert dialogs.AgentSessionsDialog.cells({**row, "cost_usd": 30.33})[-1] == "$30.33"
    assert dialogs.AgentSessionsDialog.cells({**row, "cost_usd": None})[-1] == "-"
    aider = {**row, "agent": "aider", "cost_usd": 0.0136, "usage_precision": "approximate"}
    assert dialogs.AgentSessionsDialog.cells(aider)[-1] == "~$0.0136"


def test_the_agent_sessions_dialog_gives_each_start_in_utc_as_the_sessions_command_does(qtbot, monkeypatch):
    # Found by review8, fixed in review9: the dialog wrote a session's start in local time, unnamed, where
    # `foldscope sessions` prints it in UTC, so one session read hours apart on the two.
    import time

    from foldscope.core.cli import sessions

    monkeypatch.setenv("TZ", "America/New_York")
    time.tzset()
    try:
        start = 1.8e9  # 2027-01-15 08:00 UTC, 03:00 in New York
        row = {
            "agent": "codex", "path": "/s/a.jsonl", "project": "/p", "start": start, "size": 1000,
            "requests": 1, "model": None, "cost_usd": None, "problem": None, "modified": start,
        }  # fmt: skip
        dialog = dialogs.AgentSessionsDialog([row])
        qtbot.addWidget(dialog)
        column = dialogs.AGENT_COLUMNS.index("Start (UTC)")
        assert dialog.table.horizontalHeaderItem(column).text() == "Start (UTC)"
        assert dialog.table.item(0, column).text() == sessions._when(start) == "2027-01-15 08:00"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_the_agent_sessions_dialog_names_every_agent_it_looks_for_when_it_finds_none(qtbot):
    # Its heading named nine agents, without GitHub Copilot CLI and Aider, whose sessions it also looks for.
    from foldscope.core.formats.registry import agents

    dialog = dialogs.AgentSessionsDialog([])
    qtbot.addWidget(dialog)
    heading = dialog.heading.text()
    assert heading.startswith("No agent sessions found")
    assert all(spec.title in heading for spec in agents()), heading


def test_the_agent_sessions_dialog_names_each_session_by_its_title_as_sessions_does_and_finds_it_by_it(qtbot):
    """review11: `foldscope sessions` gives each session its title (the agent's own, else the first prompt in
    quotes), but the dialog showed none and its search did not read it: two sessions of one project told apart only
    by their size. The title is a column of its own, plain and on one line, taking the width the figures leave."""
    from foldscope.app.qt import QApplication

    def row(name: str, title: str, source: str, start: float) -> dict:
        return {
            "agent": "claude_code", "path": f"/s/{name}.jsonl", "project": "/Users/user/repo", "start": start,
            "size": 1000, "requests": 1, "model": "claude-sonnet-4-5-20250929", "cost_usd": 7.29, "problem": None,
            "modified": start, "title": title, "title_source": source,
        }  # fmt: skip

    long = "ultrathink there is logic that tracks files in claude folder for sso conversations and the rest"
    rows = [row("a", long, "first prompt", 1.8e9), row("b", "Cleared\x1b]0;x\x07 conversation\nhistory", "agent", 1.7e9)]
    dialog = dialogs.AgentSessionsDialog(rows)
    qtbot.addWidget(dialog)
    column = dialogs.AGENT_COLUMNS.index("Title")
    shown = dialog.table.item(0, column).text()
    assert shown.startswith('"ultrathink there is logic') and shown.endswith("…") and len(shown) == dialogs.TITLE_SHOWN
    assert dialog.table.item(1, column).text() == "Cleared]0;x conversation history"  # no control character
    dialog.search.setText("sso conversations")  # past the cell's cut: the search reads the whole title
    assert [r["path"] for r in dialog.visible_rows()] == ["/s/a.jsonl"]
    dialog.search.setText("")
    # the agent by its name, as the status bar and the library tab give it; its --agent name still finds it
    assert dialog.table.item(0, dialogs.AGENT_COLUMNS.index("Agent")).text() == "Claude Code"
    dialog.search.setText("claude_code")
    assert len(dialog.visible_rows()) == 2
    dialog.search.setText("")
    dialog.resize(1000, 520)
    dialog.show()
    qtbot.waitExposed(dialog)
    QApplication.processEvents()
    header = dialog.table.horizontalHeader()
    last = header.count() - 1
    assert header.sectionViewportPosition(last) + header.sectionSize(last) <= dialog.table.viewport().width()  # the cost in sight

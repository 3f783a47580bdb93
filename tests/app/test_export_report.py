"""File > Export Report writes the same self-contained page as `foldscope report`, off the GUI thread."""

from __future__ import annotations

from foldscope.app import dialogs
from foldscope.core.readout.report import CSP


def test_export_report_writes_the_page_where_the_dialog_says(qtbot, demo_window, tmp_path, monkeypatch):
    out = tmp_path / "shared.html"
    monkeypatch.setattr(dialogs, "report_path_dialog", lambda parent, start: str(out))
    demo_window.report.action.trigger()
    # The message comes with the task's success, on the GUI thread, once the page is written.
    qtbot.waitUntil(lambda: "Report written to" in demo_window.statusBar().currentMessage(), timeout=60_000)
    page = out.read_text(encoding="utf-8")
    assert CSP in page and "What is eating the context" in page


def test_a_cancelled_dialog_writes_nothing(qtbot, demo_window, monkeypatch):
    monkeypatch.setattr(dialogs, "report_path_dialog", lambda parent, start: "")
    assert demo_window.report.export() is None and demo_window.report.task is None


def test_export_report_makes_its_work_in_line_never_in_a_fork(qtbot, demo_window, tmp_path, monkeypatch):
    """The page is written on a worker of Qt's pool, with the GUI's threads running, which Python's threading does
    not count: no child is forked there (core.forensics.literals_ahead), the page is made in-line."""
    import os

    forks: list[int] = []
    monkeypatch.setattr(os, "fork", lambda: forks.append(1) or -1)  # counted, and a failed fork if ever reached
    out = tmp_path / "in-line.html"
    monkeypatch.setattr(dialogs, "report_path_dialog", lambda parent, start: str(out))
    demo_window.report.action.trigger()
    qtbot.waitUntil(lambda: "Report written to" in demo_window.statusBar().currentMessage(), timeout=60_000)
    assert "What is eating the context" in out.read_text(encoding="utf-8")
    assert forks == []

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

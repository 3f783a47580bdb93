"""An Aider history in the window: the run chosen as an Inspect AI log's sample, its usage said to be approximate."""

from __future__ import annotations

from foldscope.app import dialogs
from foldscope.app.panels.status import status_text
from foldscope.core.readout.usage_precision import NOTE_START
from tests.core.formats.test_aider import _history


def test_opening_an_aider_history_asks_which_run_and_says_its_figures_are_approximate(qtbot, window, monkeypatch, tmp_path):
    path = _history(tmp_path)
    asked = []
    monkeypatch.setattr(dialogs, "choose_sample", lambda parent, p, samples: asked.append([s["name"] for s in samples]) or "1")
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.task is None)
    assert asked == [["1", "2"]]
    session = window.document.session
    assert (session.format, session.extras["sample"], len(session.trace)) == ("aider", "1", 3)
    bar = window.warnings_bar
    assert bar.label.text().startswith(NOTE_START) and any(w.startswith("composition: Aider's history") for w in bar.warnings)
    assert "reported input, approximate (~)" in window.timeline.legend()


def test_an_aider_history_s_predicted_and_reported_input_are_marked_approximate_in_the_status_bar_and_request_panel(
    qtbot, window, monkeypatch, tmp_path
):
    """review8: `inspect` printed "predicted ~10,685" for an Aider history, the window's status bar "predicted 10,685"
    and the request panel its predicted and reported input unmarked: a figure made from rounded usage is marked on every
    screen."""
    monkeypatch.setattr(dialogs, "choose_sample", lambda parent, p, samples: "1")
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(str(_history(tmp_path)))
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    assert f"predicted ~{doc.now_predicted:,} tokens" in status_text(doc)
    panel = window.request_panel
    assert f"Predicted input <b>~{doc.now_predicted:,} tokens</b>" in panel._predicted_line(doc, None)
    first = doc.requests[0]
    said = panel._predicted_line(doc, 0)
    assert f"<b>~{first.predicted:,} tokens</b>" in said and f"reported ~{first.reported_input:,}" in said
    composition = window.composition_panel
    composition.show()  # composes only while visible
    composition.refresh(force=True)
    assert f", predicted input ~{doc.now_predicted:,}" in composition.heading.text()


def test_a_copilot_session_s_estimated_usage_is_marked_in_the_status_bar_request_panel_composition_and_report(qtbot, window, tmp_path):
    """review9: the README says a Copilot CLI session's usage (its shutdown totals shared out) is foldscope's
    estimate, "marked ~ and named on every screen"; `requests` marked it, the window's status bar, request panel and
    composition and the report's summary gave it and what is made from it unmarked."""
    from tests.core.formats.test_copilot_cli import _home_session

    path = _home_session(tmp_path / "home")
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.task is None)
    doc = window.document
    assert f"predicted ~{doc.now_predicted:,} tokens" in status_text(doc)
    first = doc.requests[0]
    said = window.request_panel._predicted_line(doc, 0)
    assert f"<b>~{first.predicted:,} tokens</b>" in said and f"reported ~{first.reported_input:,}" in said
    composition = window.composition_panel
    composition.show()
    composition.refresh(force=True)
    assert f", predicted input ~{doc.now_predicted:,}" in composition.heading.text()
    from foldscope.core.cli.main import main

    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 0
    assert "Peak reported input</dt><dd>~" in (tmp_path / "r.html").read_text()

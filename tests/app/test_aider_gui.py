"""An Aider history in the window: the run chosen as an Inspect AI log's sample, its usage said to be approximate."""

from __future__ import annotations

from foldscope.app import dialogs
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

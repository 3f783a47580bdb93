"""An OpenCode database in the window: the session chosen in the same dialog as an Inspect AI log's sample."""

from __future__ import annotations

from foldscope.app import dialogs
from tests.core.formats.test_opencode import write_db


def test_opening_an_opencode_database_asks_which_session_and_opens_that_one(qtbot, window, monkeypatch, tmp_path):
    path = write_db(tmp_path / "opencode.db")
    asked = []
    monkeypatch.setattr(
        dialogs, "choose_sample", lambda parent, p, samples: asked.append([(s["name"], s["title"]) for s in samples]) or "ses_B"
    )
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(str(path))
    qtbot.waitUntil(lambda: window.task is None)
    assert asked == [[("ses_A", "Title ses_A"), ("ses_B", "Title ses_B")]]
    session = window.document.session
    assert session.extras["sample"] == "ses_B" and len(session.trace) == 1 and session.format == "opencode"

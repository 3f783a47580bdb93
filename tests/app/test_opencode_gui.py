"""An OpenCode database in the window: a subagent's session opens with its parent, never as a session to choose."""

from __future__ import annotations

import sqlite3

from foldscope.app import dialogs
from tests.core.formats.test_opencode import SESSION_A, SESSION_B, write_db


def test_opening_a_database_of_one_session_and_its_subagent_s_opens_the_parent_with_the_subagent_in_it(
    qtbot, window, monkeypatch, tmp_path
):
    """The window asked which of "ses_A" and "ses_C" to open, ses_C a subagent's session: `sessions` lists ses_A alone,
    with ses_C's requests in it. The window now opens ses_A without asking, ses_C one of its children."""
    db = write_db(tmp_path / "opencode.db", {"ses_A": SESSION_A, "ses_C": SESSION_B})
    with sqlite3.connect(db) as rw:
        rw.execute("UPDATE session SET parent_id = 'ses_A' WHERE id = 'ses_C'")
    rw.close()
    asked = []
    monkeypatch.setattr(dialogs, "choose_sample", lambda parent, p, samples: asked.append([s["name"] for s in samples]) or None)
    with qtbot.waitSignal(window.document_loaded, timeout=20_000):
        window.open_path(str(db))
    qtbot.waitUntil(lambda: window.task is None)
    session = window.document.session
    assert asked == [] and session.extras["sample"] == "ses_A"
    assert [c.extras["agent_id"] for c in session.children] == ["ses_C"]

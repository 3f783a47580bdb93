"""The window's store imports the session before it pickles the snapshot, so a huge text the import writes is named in
the snapshot by that write's own pass over its UTF-8 (its size and SHA-256), never encoded and hashed again
(core.readout.opening._keep_in_library, as inspect --db's keep)."""

from __future__ import annotations

import pytest

from foldscope.core.readout.opening import open_document, reopen_from_library
from foldscope.core.store import snapshot_stream
from foldscope.core.store.library import Library
from tests.core.store.test_huge_bodies import claude_file
from tests.core.store.test_snapshot_held import small_huge  # noqa: F401  # the fixture: texts of 40 characters are huge


def test_the_window_s_store_names_a_huge_text_from_its_import_never_hashing_it_again(tmp_path, small_huge, monkeypatch):  # noqa: F811
    source, db = str(claude_file(tmp_path / "s.jsonl")), str(tmp_path / "library.db")
    monkeypatch.setattr(snapshot_stream, "held_name", lambda text: pytest.fail("a held text hashed again"))
    opened = open_document(source, db)
    assert opened.library_problem is None and opened.library_id is not None
    monkeypatch.undo()
    with Library(db) as library:
        assert library.conn.execute("SELECT COUNT(*) FROM body_bytes").fetchone()[0] >= 4
    reopened = reopen_from_library(db, source, None)  # the snapshot kept, and its names hold
    assert reopened is not None
    library_id, session, _memo, sizes = reopened
    assert library_id == opened.library_id and sizes == opened.tokens
    assert [m.text for m in session.record] == [m.text for m in opened.session.record]

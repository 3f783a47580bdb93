"""A message's own huge text in a library's snapshot (snapshot_stream.HELD): named as its body holds it, not written
again, and rebuilt exactly from the body; a body that is not that text leaves the snapshot unused."""

from __future__ import annotations

import zlib

import pytest

from foldscope.core.formats import load_session
from foldscope.core.store import body_bytes, snapshot, snapshot_stream
from foldscope.core.store.library import Library
from tests.core.store.test_huge_bodies import claude_file
from tests.core.store.test_snapshot import plain, reopened


@pytest.fixture
def small_huge(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts of 40 characters or more are huge texts and huge bodies, written and read 7 at a time."""
    monkeypatch.setattr(snapshot_stream, "HUGE_TEXT", 40)
    monkeypatch.setattr(snapshot_stream, "PART", 7)
    monkeypatch.setattr(body_bytes, "HUGE_BODY", 40)
    monkeypatch.setattr(body_bytes, "PART_BYTES", 7)


def _message_texts(session) -> list[str]:
    return [m.text for m in session.record if len(m.text) >= 40]


def test_a_message_s_huge_text_is_named_in_its_library_s_snapshot_not_written_and_rebuilt_exactly(tmp_path, small_huge):
    path = claude_file(tmp_path / "s.jsonl")
    session = load_session(path)
    texts = _message_texts(session)
    assert len(texts) >= 4 and any(not t.isascii() for t in texts)  # the rule is exercised, ASCII and not
    _, rebuilt, _ = reopened(session, path, tmp_path)
    assert plain(rebuilt) == plain(session)
    with Library(tmp_path / "library.db") as library:
        stream = zlib.decompress(library.conn.execute("SELECT session FROM snapshots").fetchone()[0])
    assert stream.count(snapshot_stream.HELD.encode()) == len(texts)
    assert not any(text.encode("utf-8") in stream for text in texts)  # named, not written again


def test_a_snapshot_naming_held_texts_is_refused_without_its_library(tmp_path, small_huge):
    session = load_session(claude_file(tmp_path / "s.jsonl"))
    with pytest.raises(snapshot.SnapshotError):
        snapshot.load_session(snapshot.dump_session(session, held=True))
    rebuilt = snapshot.load_session(snapshot.dump_session(session))  # written whole, loaded without a library
    assert plain(rebuilt) == plain(session)


@pytest.mark.parametrize("change", ["same size", "shorter"])
def test_a_held_text_whose_body_is_not_that_text_leaves_the_snapshot_unused(tmp_path, small_huge, change):
    path = claude_file(tmp_path / "s.jsonl")
    session = load_session(path)
    held = next(m for m in session.record if len(m.text) >= 40 and not m.text.isascii())
    reopened(session, path, tmp_path)
    with Library(tmp_path / "library.db") as library:
        body, text = library.conn.execute(
            "SELECT x.body, x.text FROM messages m JOIN body_bytes x ON x.body = m.body WHERE m.message_id = ?", [held.id]
        ).fetchone()
        changed = text.decode()[::-1].encode() if change == "same size" else text[:-1]  # valid UTF-8, another text
        assert changed != text
        library.conn.execute("UPDATE body_bytes SET text = ? WHERE body = ?", [changed, body])
        assert library.stored_session(path) is None  # the file is read again, never a text the snapshot did not name


@pytest.mark.parametrize("whole", ["the same text", "another text"])
def test_a_held_text_whose_body_is_stored_whole_in_its_row_is_read_from_there(tmp_path, small_huge, monkeypatch, whole):
    """A library made before migration 008 keeps a huge body whole in its row of bodies (008 moved none), as does every
    later session whose body is that one: the snapshot naming its text reopens from that row, never again and again from
    the file; a row that holds another text leaves it unused."""
    path = claude_file(tmp_path / "s.jsonl")
    session = load_session(path)
    with monkeypatch.context() as before_008:
        before_008.setattr(body_bytes, "HUGE_BODY", 10**12)  # every body imported whole into its row
        with Library(tmp_path / "library.db") as library:
            session_id = library.import_session(session)
            assert library.conn.execute("SELECT COUNT(*) FROM body_bytes").fetchone()[0] == 0
    held = next(m for m in session.record if len(m.text) >= 40 and not m.text.isascii())
    with Library(tmp_path / "library.db") as library:
        library.keep_snapshot(session_id, session, path)
        if whole == "another text":
            sql = "UPDATE bodies SET text = ? WHERE id = (SELECT body FROM messages WHERE message_id = ?)"
            library.conn.execute(sql, [held.text[::-1], held.id])
        found = library.stored_session(path)
    if whole == "another text":
        assert found is None
    else:
        assert found is not None
        assert plain(found[1]) == plain(session)

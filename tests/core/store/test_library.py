"""The library: atomic, de-duplicated imports, migrations, search, view versions."""

import sqlite3
from pathlib import Path

import pytest
import sqlite_utils

from foldscope.core.formats import load_session
from foldscope.core.formats.demo import demo_path, generate
from foldscope.core.store.library import Library
from foldscope.core.store.library_file import default_path
from foldscope.core.store.migrations import MIGRATIONS, migrate

TABLES = ("sessions", "messages", "view_versions", "events")


def counts(library: Library) -> dict[str, int]:
    return {table: library.db[table].count for table in TABLES}


def test_import_stores_every_message_with_its_original_and_sha(tmp_path):
    session = load_session(demo_path())
    with Library(tmp_path / "lib.db") as library:
        session_id = library.import_session(session)
        rows = library.messages(session_id)
        assert [r["message_id"] for r in rows] == session.record.ids()
        assert rows[0]["kind"] == "system" and rows[0]["text"] == session.record[0].text
        row = library.session_row(session_id)
        assert row["messages"] == len(session.record) and row["requests"] == len(session.trace)
        assert row["source_bytes"] == demo_path().stat().st_size
        assert row["peak_reported_input"] == max(r.usage.reported_input for r in session.trace)
        assert library.view_versions(session_id) == [
            {**library.view_versions(session_id)[0], "version": 1, "ids": session.view, "cause": "import"}
        ]


def test_importing_the_same_file_twice_gives_one_session(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        first = library.import_session(load_session(demo_path()))
        second = library.import_session(load_session(demo_path()))
        assert first == second
        assert counts(library)["sessions"] == 1
        assert counts(library)["messages"] == len(load_session(demo_path()).record)


def test_a_failure_midway_leaves_no_rows(tmp_path, monkeypatch):
    library = Library(tmp_path / "lib.db")
    before = counts(library)
    real_insert = library._insert_messages

    def half_then_fail(rows):
        rows = list(rows)
        real_insert(rows[: len(rows) // 2])  # some rows really reach the database
        assert library.db["messages"].count > 0
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(library, "_insert_messages", half_then_fail)
    with pytest.raises(RuntimeError):
        library.import_session(generate(seed=3, rounds=4, listing_chars=500))
    assert counts(library) == before
    assert library.db.execute("SELECT count(*) FROM bodies").fetchone()[0] == 0
    assert library.db.execute("SELECT count(*) FROM bodies_fts").fetchone()[0] == 0
    library.close()
    # A fresh connection sees the same empty library (nothing was committed).
    with Library(tmp_path / "lib.db") as again:
        assert counts(again) == before


def test_migrations_run_on_an_empty_database_and_are_recorded(tmp_path):
    db = sqlite_utils.Database(tmp_path / "lib.db")
    assert migrate(db) == [name for name, _ in MIGRATIONS]
    assert [r["name"] for r in db["migrations"].rows] == [name for name, _ in MIGRATIONS]
    assert migrate(db) == []  # already up to date
    assert set(TABLES) <= set(db.table_names())


def test_migrations_bring_an_existing_older_database_up_to_date(tmp_path):
    path = tmp_path / "lib.db"
    old = sqlite_utils.Database(path)
    migrate(old, MIGRATIONS[:1])  # a library written before full-text search existed
    old["sessions"].insert({"id": 1, "source": "x", "format": "lionagi", "source_sha256": "abc"})
    old["messages"].insert({"session_id": 1, "idx": 0, "message_id": "m", "kind": "assistant", "text": "an elephant in the config loader"})
    old.close()
    with Library(path) as library:
        assert [r["name"] for r in library.db["migrations"].rows] == [name for name, _ in MIGRATIONS]
        assert library.search("elephant") == [(1, 0, "an [elephant] in the config loader")]


def test_search_finds_words_and_tolerates_punctuation(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        session_id = library.import_session(load_session(demo_path()))
        hits = library.search("FOLDSCOPE_HOME")
        assert hits and all(hit[0] == session_id for hit in hits)
        assert {hit[1] for hit in hits} == {1, 71}  # the task and the final answer name it
        assert "[" in hits[0][2]
        # Quoted, not parsed as FTS syntax: a punctuation-only word adds nothing to the match.
        assert library.search('resolve_profile "(') == library.search("resolve_profile") != []
        assert library.search("   ") == []


def test_sessions_are_indexed_for_search_once_after_import(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        library.import_session(generate(seed=1, rounds=3, listing_chars=100))
        bodies = library.db["bodies"].count
        assert library.index_for_search() == bodies > 0
        assert library.index_for_search() == 0
        indexed = library.db.execute("SELECT count(*) FROM bodies_fts").fetchone()[0]
        assert indexed == bodies
        library.search("FOLDSCOPE_HOME")
        assert library.db.execute("SELECT count(*) FROM bodies_fts").fetchone()[0] == indexed


def test_list_sessions_and_events(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        a = library.import_session(generate(seed=1, rounds=3, listing_chars=100))
        b = library.import_session(generate(seed=2, rounds=3, listing_chars=100))
        assert [row["id"] for row in library.list_sessions()] == [a, b]
        library.add_event(a, "restore", {"index": 4})
        assert library.add_view_version(a, ["x"], "manual: restore") == 2
        assert library.events(a)[0]["data"] == {"index": 4}


def test_the_library_path_comes_from_the_environment_then_the_data_folder(tmp_path, monkeypatch):
    import platformdirs

    assert default_path() == Path(tmp_path / "library.db")  # tests/conftest.py sets FOLDSCOPE_DB
    monkeypatch.delenv("FOLDSCOPE_DB")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_path() == Path(platformdirs.user_data_dir("foldscope", appauthor=False)) / "library.db"
    assert default_path() == tmp_path / "data" / "foldscope" / "library.db"  # Linux: the XDG data folder
    with Library() as library:
        assert library.path == tmp_path / "data" / "foldscope" / "library.db"
    assert library.path.exists()


def test_memory_library_for_tests():
    with Library(":memory:") as library:
        assert library.import_session(generate(seed=5, rounds=3, listing_chars=100)) == 1


def test_database_is_a_real_sqlite_file(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        library.import_session(generate(seed=5, rounds=3, listing_chars=100))
    with sqlite3.connect(tmp_path / "lib.db") as conn:
        assert conn.execute("SELECT count(*) FROM sessions").fetchone() == (1,)


def test_line_based_originals_are_the_source_lines_as_the_file_holds_them(tmp_path, corpus_dev):
    import hashlib

    path = corpus_dev / "claude_code" / "tool_heavy.jsonl"
    lines = path.read_bytes().split(b"\n")
    session = load_session(path)
    with Library(tmp_path / "lib.db") as library:
        rows = library.messages(library.import_session(session))
    source = session.extras["source_lines"]
    for message, row in zip(session.record, rows):
        expected = b"\n".join(lines[n - 1].rstrip(b"\r") for n in source.lines_of(message))
        assert row["original"] == expected and expected
        assert row["sha256"] == hashlib.sha256(expected).hexdigest()
    assert any(len(source.lines_of(m)) > 1 for m in session.record)  # responses split over lines


def test_a_source_changed_after_reading_is_refused_and_nothing_is_stored(tmp_path, corpus_dev):
    import os

    from foldscope.core.model.session import ReadError

    copy = tmp_path / "session.jsonl"
    copy.write_bytes((corpus_dev / "claude_code" / "short.jsonl").read_bytes())
    session = load_session(copy)
    with open(copy, "ab") as handle:
        handle.write(b"\n")
    os.utime(copy, ns=(1, 1))
    with Library(tmp_path / "lib.db") as library:
        with pytest.raises(ReadError, match="changed after it was read"):
            library.import_session(session)
        assert counts(library)["sessions"] == 0


# -- each message names its body by the body's id (migration 006) --------------------------------------------------


def test_new_bodies_take_the_next_ids_in_record_order_so_the_body_index_grows_at_its_end(tmp_path):
    with Library(tmp_path / "lib.db") as library:
        library.import_session(load_session(demo_path()))
        held = library.conn.execute("SELECT MAX(id) FROM bodies").fetchone()[0]
        session_id = library.import_session(generate(seed=11, rounds=5))
        bodies = [row[0] for row in library.conn.execute("SELECT body FROM messages WHERE session_id = ? ORDER BY idx", [session_id])]
        new = [body for body in dict.fromkeys(bodies) if body > held]
        assert new and new == sorted(new)  # in the order the record first names them, after every id held before
        keys = library.message_hashes(session_id)
        assert len(set(keys)) == len(set(bodies))  # one body a key, one key a body


def test_a_body_named_twice_in_one_import_is_stored_once_and_both_messages_name_it(tmp_path):
    from foldscope.core.model.session import FullRecord, Message, Session

    raw = {"role": "user", "content": "the same words"}
    twins = [Message(f"m{i}", "instruction", None, {"instruction": "the same words"}, raw=raw) for i in range(3)]
    other = Message("m3", "instruction", None, {"instruction": "other words"}, raw={"content": "other words"})
    session = Session(FullRecord([*twins, other]), [m.id for m in (*twins, other)])
    with Library(tmp_path / "lib.db") as library:
        session_id = library.import_session(session)
        bodies = [row[0] for row in library.conn.execute("SELECT body FROM messages WHERE session_id = ? ORDER BY idx", [session_id])]
        assert bodies[0] == bodies[1] == bodies[2] != bodies[3]
        assert library.conn.execute("SELECT COUNT(*) FROM bodies").fetchone()[0] == 2
        assert [r["text"] for r in library.messages(session_id)] == ["the same words"] * 3 + ["other words"]


def test_a_version_5_library_migrates_to_body_ids_keeping_every_message_and_its_body(tmp_path, corpus_dev):
    from tests.core.store.older import as_version_5, messages_by_key

    path = corpus_dev / "claude_code" / "tool_heavy.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    live = tmp_path / "live.jsonl"
    live.write_bytes(b"".join(lines[: len(lines) // 2]))
    db = tmp_path / "lib.db"
    with Library(db) as library:
        first = library.import_session(load_session(live))
        expected = library.messages(first)
    as_version_5(db)
    old = sqlite3.connect(db)
    assert old.execute("PRAGMA user_version").fetchone()[0] == 5
    messages = messages_by_key(old)
    bodies = old.execute("SELECT * FROM bodies ORDER BY id").fetchall()
    old.close()
    with Library(db) as library:
        assert library.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
        assert messages_by_key(library.conn) == messages
        assert library.conn.execute("SELECT * FROM bodies ORDER BY id").fetchall() == bodies
        assert library.messages(first) == expected
        indexes = {
            row[0]
            for row in library.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'messages' AND sql IS NOT NULL"
            )
        }
        assert indexes == {"idx_messages_body"}  # the index by message id, which no query read, is gone
        # The grown file, imported after the migration, stores only its new bodies beside the migrated ones.
        live.write_bytes(b"".join(lines))
        second = library.import_session(load_session(live))
        shared = set(library.message_hashes(first)) & set(library.message_hashes(second))
        assert len(shared) >= len(set(library.message_hashes(first))) - 1  # all but a grown last message
        assert library.conn.execute("SELECT COUNT(*) FROM bodies").fetchone()[0] == len(
            set(library.message_hashes(first)) | set(library.message_hashes(second))
        )
        assert library.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert library.conn.execute("PRAGMA foreign_key_check").fetchall() == []

"""The library's migrations, written as plain SQL, make the schema sqlite-utils made from the same tables."""

import sqlite3

import sqlite_utils

from foldscope.core.store.migrations import MIGRATIONS, migrate


def _reference(db: sqlite_utils.Database) -> None:
    """The migrations as they were written with sqlite-utils before they became plain SQL."""
    db["migrations"].create({"name": str, "applied_at": str}, pk="name")
    db["sessions"].create(
        {
            "id": int,
            "source": str,
            "format": str,
            "source_sha256": str,
            "source_bytes": int,
            "model": str,
            "messages": int,
            "view_messages": int,
            "record_chars": int,
            "requests": int,
            "peak_reported_input": int,
            "warnings": str,
            "imported_at": str,
        },
        pk="id",
    )
    db["sessions"].create_index(["source_sha256"], unique=True)
    db["messages"].create(
        {
            "session_id": int,
            "idx": int,
            "message_id": str,
            "kind": str,
            "created_at": float,
            "original": str,
            "sha256": str,
            "chars": int,
            "text": str,
        },
        pk=("session_id", "idx"),
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db["messages"].create_index(["session_id", "message_id"])
    db["view_versions"].create(
        {"session_id": int, "version": int, "ids": str, "cause": str, "created_at": str},
        pk=("session_id", "version"),
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db["events"].create(
        {"id": int, "session_id": int, "at": str, "kind": str, "data": str},
        pk="id",
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db["messages"].enable_fts(["text"], fts_version="FTS5", create_triggers=False)
    db["sessions"].add_column("search_indexed", int, not_null_default=0)


def _schema(conn: sqlite3.Connection) -> list[tuple]:
    return sorted(conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall())


def test_plain_sql_migrations_match_the_sqlite_utils_schema(tmp_path):
    # The first three migrations were written with sqlite-utils; the bodies migration (004) was plain SQL from
    # the start (a UNIQUE column and a partial index sqlite-utils does not make), proven by tests/core/store.
    reference = sqlite_utils.Database(tmp_path / "reference.db")
    _reference(reference)
    conn = sqlite3.connect(tmp_path / "library.db")
    migrate(conn, MIGRATIONS[:3])
    assert _schema(conn) == _schema(reference.conn)


def test_migrations_run_on_a_sqlite_utils_database_as_on_a_connection(tmp_path):
    db = sqlite_utils.Database(tmp_path / "utils.db")
    assert migrate(db) == [name for name, _ in MIGRATIONS]
    conn = sqlite3.connect(tmp_path / "plain.db")
    assert migrate(conn) == [name for name, _ in MIGRATIONS]
    assert _schema(db.conn) == _schema(conn)


def test_creating_a_library_and_importing_do_not_import_sqlite_utils(tmp_path):
    import subprocess
    import sys

    from foldscope.core.formats.demo import demo_path

    code = (
        "import sys; from foldscope.core.store.library import Library; from foldscope.core.formats import load_session;"
        f"lib = Library({str(tmp_path / 'fresh.db')!r}); lib.import_session(load_session({str(demo_path())!r}));"
        "lib.close(); print('sqlite_utils' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"

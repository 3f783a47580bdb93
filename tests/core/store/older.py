"""Libraries as older foldscopes wrote them, made from one this foldscope wrote: what a migration must bring up to date."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def as_version_7(db: str | Path) -> None:
    """Rewrite a current library holding no huge body as foldscope wrote it before migration 008: no body_bytes; the
    migration recorded as not run, the version 7."""
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM body_bytes").fetchone()[0] == 0, "a version 7 library holds no huge body apart"
        conn.execute('DROP TABLE "body_bytes"')
        conn.execute("DELETE FROM migrations WHERE name = '008_body_bytes'")
        conn.execute("PRAGMA user_version = 7")


def as_version_6(db: str | Path) -> None:
    """Rewrite a current library as foldscope wrote it before migration 007: the snapshots table with the pickled
    session in the middle of its row, holding the rows it held; the migration recorded as not run, the version 6."""
    as_version_7(db)
    with sqlite3.connect(db) as conn:
        conn.execute('ALTER TABLE "snapshots" RENAME TO "snapshots_007"')
        conn.execute('DROP INDEX "idx_snapshots_session_id"')
        conn.execute(
            'CREATE TABLE "snapshots" (\n   "source" TEXT NOT NULL,\n   "sample" TEXT NOT NULL DEFAULT \'\',\n'
            '   "session_id" INTEGER NOT NULL REFERENCES "sessions"("id"),\n   "reader" TEXT NOT NULL,\n'
            '   "inputs" TEXT NOT NULL,\n   "session" BLOB NOT NULL,\n   "counter" TEXT,\n   "memo" BLOB,\n'
            '   "created_at" TEXT,\n   PRIMARY KEY ("source", "sample")\n)'
        )
        conn.execute('CREATE INDEX "idx_snapshots_session_id"\n    ON "snapshots" ("session_id")')
        columns = "source, sample, session_id, reader, inputs, session, counter, memo, created_at"
        conn.execute(f"INSERT INTO snapshots ({columns}) SELECT {columns} FROM snapshots_007")
        conn.execute('DROP TABLE "snapshots_007"')
        conn.execute("DELETE FROM migrations WHERE name = '007_snapshot_last'")
        conn.execute("PRAGMA user_version = 6")


def as_version_5(db: str | Path) -> None:
    """Rewrite a current library as foldscope wrote it before migration 006: each message names its body by the body's
    key (SHA-256 hex), indexed, beside an index by message id; the migration recorded as not run, the version 5."""
    as_version_6(db)
    with sqlite3.connect(db) as conn:
        conn.execute(
            'CREATE TABLE "messages_by_key" (\n   "session_id" INTEGER REFERENCES "sessions"("id"),\n   "idx" INTEGER,\n'
            '   "message_id" TEXT,\n   "kind" TEXT,\n   "created_at" REAL,\n   "sha256" TEXT,\n'
            '   "body" TEXT REFERENCES "bodies"("key"),\n   PRIMARY KEY ("session_id", "idx")\n)'
        )
        conn.execute(
            "INSERT INTO messages_by_key SELECT m.session_id, m.idx, m.message_id, m.kind, m.created_at,"
            " m.sha256, b.key FROM messages m JOIN bodies b ON b.id = m.body ORDER BY m.rowid"
        )
        conn.execute('DROP TABLE "messages"')
        conn.execute('ALTER TABLE "messages_by_key" RENAME TO "messages"')
        conn.execute('CREATE INDEX "idx_messages_session_id_message_id"\n    ON "messages" ("session_id", "message_id")')
        conn.execute('CREATE INDEX "idx_messages_body"\n    ON "messages" ("body")')
        conn.execute("DELETE FROM migrations WHERE name = '006_body_ids'")
        conn.execute("PRAGMA user_version = 5")
    # VACUUM rewrites the file, so the tables appear in sqlite_master as a fresh version-5 library lists them.
    conn = sqlite3.connect(db)
    conn.execute("VACUUM")
    conn.close()


def as_version_4(db: str | Path) -> None:
    """As as_version_5, and before migration 005 as well: no snapshots."""
    as_version_5(db)
    with sqlite3.connect(db) as conn:
        conn.execute("DROP TABLE snapshots")
        conn.execute("DELETE FROM migrations WHERE name = '005_snapshots'")
        conn.execute("PRAGMA user_version = 4")


def messages_by_key(conn: sqlite3.Connection) -> list[tuple]:
    """Every message row with its body's key, in either layout (a body named by key, or by id)."""
    by_id = any(row[1] == "body" and row[2] == "INTEGER" for row in conn.execute("PRAGMA table_info(messages)"))
    join = "b.id = m.body" if by_id else "b.key = m.body"
    return conn.execute(
        "SELECT m.session_id, m.idx, m.message_id, m.kind, m.created_at, m.sha256, b.key"
        f" FROM messages m JOIN bodies b ON {join} ORDER BY 1, 2"
    ).fetchall()

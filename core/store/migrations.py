"""The library's schema: its migrations as a list of named steps, run once each, and the schema version they make."""

from __future__ import annotations

import contextlib
import hashlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from foldscope.core.model.session import LibraryError


# Ordered, named migrations. Each runs once, in its own transaction, and is recorded in
# `migrations`; a library written by an older foldscope gets only the ones it lacks. Each step is
# plain SQL through `db.execute` (a sqlite3.Connection; a sqlite_utils.Database works too), written
# as sqlite-utils wrote these tables (tests/core/test_store_schema.py holds the two to one schema),
# so that creating or opening a library never imports sqlite-utils (start-up time is a target).
def _m001_tables(db: Any) -> None:
    db.execute(
        'CREATE TABLE "sessions" (\n   "id" INTEGER PRIMARY KEY,\n   "source" TEXT,\n   "format" TEXT,\n'
        '   "source_sha256" TEXT,\n   "source_bytes" INTEGER,\n   "model" TEXT,\n   "messages" INTEGER,\n'
        '   "view_messages" INTEGER,\n   "record_chars" INTEGER,\n   "requests" INTEGER,\n'
        '   "peak_reported_input" INTEGER,\n   "warnings" TEXT,\n   "imported_at" TEXT\n)'
    )
    db.execute('CREATE UNIQUE INDEX "idx_sessions_source_sha256"\n    ON "sessions" ("source_sha256")')
    db.execute(
        'CREATE TABLE "messages" (\n   "session_id" INTEGER REFERENCES "sessions"("id"),\n   "idx" INTEGER,\n'
        '   "message_id" TEXT,\n   "kind" TEXT,\n   "created_at" REAL,\n   "original" TEXT,\n   "sha256" TEXT,\n'
        '   "chars" INTEGER,\n   "text" TEXT,\n   PRIMARY KEY ("session_id", "idx")\n)'
    )
    db.execute('CREATE INDEX "idx_messages_session_id_message_id"\n    ON "messages" ("session_id", "message_id")')
    db.execute(
        'CREATE TABLE "view_versions" (\n   "session_id" INTEGER REFERENCES "sessions"("id"),\n'
        '   "version" INTEGER,\n   "ids" TEXT,\n   "cause" TEXT,\n   "created_at" TEXT,\n'
        '   PRIMARY KEY ("session_id", "version")\n)'
    )
    db.execute(
        'CREATE TABLE "events" (\n   "id" INTEGER PRIMARY KEY,\n   "session_id" INTEGER REFERENCES "sessions"("id"),\n'
        '   "at" TEXT,\n   "kind" TEXT,\n   "data" TEXT\n)'
    )


def _m002_message_search(db: Any) -> None:
    # Without triggers: an import fills the index for its own rows in one statement, far cheaper
    # than a trigger per row (import speed is a target).
    db.execute('CREATE VIRTUAL TABLE "messages_fts" USING FTS5 (\n    "text",\n    content="messages"\n)')
    db.execute('INSERT INTO "messages_fts" (rowid, "text")\n    SELECT rowid, "text" FROM "messages"')


def _m003_search_indexed(db: Any) -> None:
    # Sessions are indexed for search after their import, not inside it: tokenizing every
    # message text cost more than parsing the file, and import speed is a target.
    db.execute('ALTER TABLE "sessions" ADD COLUMN "search_indexed" INTEGER NOT NULL DEFAULT 0;')
    db.execute("UPDATE sessions SET search_indexed = 1")  # migration 002 indexed what was there


def _m004_message_bodies(db: Any) -> None:
    # Each message's content is stored once, as a body keyed by the SHA-256 of its original bytes and
    # its text (one line of a file can give several messages), shared by every version of a session (and
    # every session) that holds it: re-opening a grown file stores only its new messages. A body also keeps
    # the message's token count and the tokenizer that counted it, so a reopened session is not counted again.
    db.execute(
        'CREATE TABLE "bodies" (\n   "id" INTEGER PRIMARY KEY,\n   "key" TEXT NOT NULL UNIQUE,\n   "original" BLOB,\n'
        '   "chars" INTEGER,\n   "text" TEXT,\n   "tokens" INTEGER,\n   "tokenizer" TEXT,\n'
        '   "search_indexed" INTEGER NOT NULL DEFAULT 0\n)'
    )
    sha = "COALESCE(sha256, foldscope_sha256(original, text))"  # rows stored before every row had its SHA-256
    key = f"foldscope_body_key({sha}, text)"
    db.execute(
        f"INSERT OR IGNORE INTO bodies (key, original, chars, text) SELECT {key}, original, chars, text FROM messages ORDER BY rowid"
    )
    db.execute(
        'CREATE TABLE "session_messages" (\n   "session_id" INTEGER REFERENCES "sessions"("id"),\n   "idx" INTEGER,\n'
        '   "message_id" TEXT,\n   "kind" TEXT,\n   "created_at" REAL,\n   "sha256" TEXT,\n'
        '   "body" TEXT REFERENCES "bodies"("key"),\n   PRIMARY KEY ("session_id", "idx")\n)'
    )
    db.execute(
        f"INSERT INTO session_messages (session_id, idx, message_id, kind, created_at, sha256, body)"
        f" SELECT session_id, idx, message_id, kind, created_at, {sha}, {key} FROM messages"
    )
    db.execute('DROP TABLE "messages_fts"')
    db.execute('DROP TABLE "messages"')
    db.execute('ALTER TABLE "session_messages" RENAME TO "messages"')
    db.execute('CREATE INDEX "idx_messages_session_id_message_id"\n    ON "messages" ("session_id", "message_id")')
    db.execute('CREATE INDEX "idx_messages_body"\n    ON "messages" ("body")')
    db.execute('CREATE INDEX "idx_bodies_unindexed"\n    ON "bodies" ("id") WHERE "search_indexed" = 0')
    db.execute('CREATE VIRTUAL TABLE "bodies_fts" USING FTS5 (\n    "text",\n    content="bodies"\n)')
    db.execute('INSERT INTO "bodies_fts" (rowid, "text") SELECT id, "text" FROM "bodies"')
    db.execute('UPDATE "bodies" SET "search_indexed" = 1')


def _m005_snapshots(db: Any) -> None:
    # What a session needs to be rebuilt without reading its file again: the reader's whole output (pickled) and
    # the counter's memo, one row per source path (and Inspect AI sample), replaced when the file is read again.
    # Derived data only: a library without them (written before this migration) loses nothing, it reads the file.
    db.execute(
        'CREATE TABLE "snapshots" (\n   "source" TEXT NOT NULL,\n   "sample" TEXT NOT NULL DEFAULT \'\',\n'
        '   "session_id" INTEGER NOT NULL REFERENCES "sessions"("id"),\n   "reader" TEXT NOT NULL,\n'
        '   "inputs" TEXT NOT NULL,\n   "session" BLOB NOT NULL,\n   "counter" TEXT,\n   "memo" BLOB,\n'
        '   "created_at" TEXT,\n   PRIMARY KEY ("source", "sample")\n)'
    )
    db.execute('CREATE INDEX "idx_snapshots_session_id"\n    ON "snapshots" ("session_id")')


def _m006_body_ids(db: Any) -> None:
    # A message names its body by the body's id, not its 64-character key. New bodies take ids in the order they are
    # stored, so the messages' body index grows at its end as a session is imported; keyed by SHA-256 hex, each of
    # its inserts landed on a random page, and an import grew faster than its file (docs/performance.md).
    # The index by message id goes: no query reads it, and its inserts were as random (Claude Code's ids are UUIDs).
    db.execute(
        'CREATE TABLE "messages_by_id" (\n   "session_id" INTEGER REFERENCES "sessions"("id"),\n   "idx" INTEGER,\n'
        '   "message_id" TEXT,\n   "kind" TEXT,\n   "created_at" REAL,\n   "sha256" TEXT,\n'
        '   "body" INTEGER REFERENCES "bodies"("id"),\n   PRIMARY KEY ("session_id", "idx")\n)'
    )
    db.execute(
        "INSERT INTO messages_by_id (session_id, idx, message_id, kind, created_at, sha256, body)"
        " SELECT m.session_id, m.idx, m.message_id, m.kind, m.created_at, m.sha256, b.id"
        " FROM messages m LEFT JOIN bodies b ON b.key = m.body ORDER BY m.rowid"
    )
    db.execute('DROP TABLE "messages"')
    db.execute('ALTER TABLE "messages_by_id" RENAME TO "messages"')
    db.execute('CREATE INDEX "idx_messages_body"\n    ON "messages" ("body")')


def _m007_snapshot_last(db: Any) -> None:
    # The pickled session moves to the end of its row: a zero-filled blob that ends a row is written without being
    # made in memory, then filled a block at a time (Library.keep_snapshot); in the middle of the row SQLite made the
    # row whole, twice the snapshot's size held at once (80 MB at 50,000 messages). Snapshots are derived data, and
    # every one kept before is in the older pickle layout (snapshot.SNAPSHOT_FORMAT 1), so none is copied: each
    # file is read once more.
    db.execute('DROP TABLE "snapshots"')
    db.execute(
        'CREATE TABLE "snapshots" (\n   "source" TEXT NOT NULL,\n   "sample" TEXT NOT NULL DEFAULT \'\',\n'
        '   "session_id" INTEGER NOT NULL REFERENCES "sessions"("id"),\n   "reader" TEXT NOT NULL,\n'
        '   "inputs" TEXT NOT NULL,\n   "counter" TEXT,\n   "memo" BLOB,\n   "created_at" TEXT,\n'
        '   "session" BLOB NOT NULL,\n   PRIMARY KEY ("source", "sample")\n)'
    )
    db.execute('CREATE INDEX "idx_snapshots_session_id"\n    ON "snapshots" ("session_id")')


def _m008_body_bytes(db: Any) -> None:
    # A huge body's original and text (source_bytes.HUGE_BODY) are kept in a row of their own, the two blobs ending
    # it, its row in bodies holding neither: a zero-filled blob that ends a row is written without being made in
    # memory, then filled a part at a time (Library._write_huge). In bodies, bound whole in the middle of the row,
    # SQLite held the bound line and text and the row made from them at once: four times a huge message. The text is
    # its UTF-8, read as text (CAST). No body is moved: one stored before stays as it was.
    db.execute(
        'CREATE TABLE "body_bytes" (\n   "body" INTEGER PRIMARY KEY REFERENCES "bodies"("id"),\n'
        '   "original" BLOB NOT NULL,\n   "text" BLOB NOT NULL\n)'
    )


MIGRATIONS: list[tuple[str, Callable[[Any], None]]] = [
    ("001_tables", _m001_tables),
    ("002_message_search", _m002_message_search),
    ("003_search_indexed", _m003_search_indexed),
    ("004_message_bodies", _m004_message_bodies),
    ("005_snapshots", _m005_snapshots),
    ("006_body_ids", _m006_body_ids),
    ("007_snapshot_last", _m007_snapshot_last),
    ("008_body_bytes", _m008_body_bytes),
]


# The library's schema version, kept in SQLite's user_version: one per migration. A library whose
# version is higher (or that lists a migration this foldscope does not know) was made by a newer
# foldscope and is refused, never written.
SCHEMA_VERSION = len(MIGRATIONS)


CREATE_MIGRATIONS = 'CREATE TABLE "migrations" (\n   "name" TEXT PRIMARY KEY,\n   "applied_at" TEXT\n)'


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def _has_migrations_table(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone() is not None


def refuse_newer(conn: sqlite3.Connection, done: set[str] | None = None) -> None:
    version = schema_version(conn)
    unknown = sorted((done or set()) - {name for name, _ in MIGRATIONS})
    if version > SCHEMA_VERSION or unknown:
        shown = max(version, SCHEMA_VERSION + len(unknown))
        raise LibraryError(
            None, f"made by a newer foldscope: version {shown} (this foldscope reads up to version {SCHEMA_VERSION}); it is left as it is"
        )


def migrate(db: Any, migrations: Iterable[tuple[str, Callable]] = MIGRATIONS) -> list[str]:
    """Run the migrations this database (a sqlite3.Connection or a sqlite_utils.Database) has not had yet;
    returns their names. All of them run in one transaction under SQLite's write lock (BEGIN IMMEDIATE), and
    what is missing is decided after the lock is taken: processes opening a new library at once wait for
    each other, and the later ones find nothing left to do. A library from a newer foldscope raises LibraryError."""
    conn = db if isinstance(db, sqlite3.Connection) else db.conn
    migrations = list(migrations)
    refuse_newer(conn)
    if _has_migrations_table(conn):
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        refuse_newer(conn, done)
        if all(name in done for name, _ in migrations):
            return []
    conn.create_function("foldscope_sha256", 2, _legacy_sha256, deterministic=True)
    conn.create_function("foldscope_body_key", 2, lambda sha, text: body_key(sha, text or ""), deterministic=True)
    applied: list[str] = []
    with atomic(conn):
        refuse_newer(conn)  # another process may have migrated while this one waited for the lock
        if not _has_migrations_table(conn):
            conn.execute(CREATE_MIGRATIONS)
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        refuse_newer(conn, done)
        for name, step in migrations:
            if name in done:
                continue
            step(conn)
            conn.execute('INSERT INTO "migrations" ("name", "applied_at") VALUES (?, ?)', [name, now()])
            applied.append(name)
            done.add(name)
        known = [name for name, _ in MIGRATIONS]
        version = SCHEMA_VERSION if all(name in done for name in known) else sum(1 for name in known if name in done)
        conn.execute(f"PRAGMA user_version = {int(version)}")
    return applied


# A text is hashed this many characters at a time: UTF-8 (with surrogatepass) encodes each code point alone, so the
# pieces' bytes are the whole text's; whole, one huge message's text was held again as bytes and once more joined.
KEY_CHUNK = 1 << 20


def body_key(original_sha256: str, text: str) -> str:
    """A body's key: the SHA-256 of the original bytes' SHA-256 and the message's text."""
    return body_key_and_size(original_sha256, text)[0]


def body_key_and_size(original_sha256: str, text: str) -> tuple[str, int]:
    """body_key, and the length of the text's UTF-8 it hashed: a huge body's text is written as UTF-8 into a blob of that
    size (core.store.body_bytes), whose size was one more pass encoding the text (0.03 s of a 50 MB CJK message)."""
    digest, size = hashlib.sha256(original_sha256.encode("ascii") + b"\0"), 0
    for start in range(0, len(text), KEY_CHUNK):
        part = text[start : start + KEY_CHUNK].encode("utf-8", "surrogatepass")
        size += len(part)
        digest.update(part)
    return digest.hexdigest(), size


def _legacy_sha256(original: Any, text: Any) -> str:
    data = original if isinstance(original, bytes) else str(original if original is not None else text or "").encode()
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def atomic(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction (a savepoint inside an open one). BEGIN IMMEDIATE takes the write lock at
    the start, so a busy library is waited for (the busy timeout) instead of failing at the first write
    with "database is locked", as a transaction that read first would."""
    if conn.in_transaction:
        conn.execute("SAVEPOINT foldscope_atomic")
        try:
            yield
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK TO SAVEPOINT foldscope_atomic")
                conn.execute("RELEASE SAVEPOINT foldscope_atomic")
            raise
        conn.execute("RELEASE SAVEPOINT foldscope_atomic")
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

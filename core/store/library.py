"""The library: a SQLite store of imported sessions, their messages, view versions and events."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import mmap
import os
import re
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import sqlite_utils  # imported when Library.db is first used, never to create, open or import (start-up time)

    from foldscope.core.formats.stream import SourceLines

from foldscope.core.formats.lionagi_write import message_dict, native_dict
from foldscope.core.formats.registry import format_named
from foldscope.core.model.folders import PRIVATE_FILE, data_folder, fsync_folder, make_private_folder
from foldscope.core.model.session import LibraryError, Message, ReadError, Session, storable_time

WAL_AUTOCHECKPOINT = 1000  # SQLite's default, in pages
# Messages stored a batch at a time: only one batch's message rows are held (a whole record's rows, about 350
# bytes a message, were most of an import's peak memory on a file of many tiny lines; 10,000 a batch still held
# 3.5 MB at the peak of a 10k-message import, a fifth of it; a thousand hold 0.5 MB).
IMPORT_BATCH = 1_000
# The mapped source file's pages are let go each time this many of its bytes have been read (hashed or sliced into
# originals): a mapped page read counts in the process's resident memory until let go (8 MB windows made a 4 MB
# file wholly resident at once; 256 KiB windows cost 0.2 s of madvise calls and page faults on a 240 MB file).
RELEASE_BYTES = 1 << 18
# SQLite's page cache while a session is imported, in KiB, against its 2 MB default: the bodies' key is a B-tree
# of random keys (SHA-256 hex), each insert touching a random page, so once that index outgrows the cache every
# row reads and writes pages (an import of 300k tiny lines took 18 s, 8 s with a cache as large as its indexes,
# when the messages' body index was keyed the same way; since migration 006 it grows at its end). Sized to the
# indexes, about 0.2 KiB a message, within these bounds: a larger cache than that only holds the bodies' own pages
# (60 MB more for a 35 MB file of long messages, no faster).
IMPORT_CACHE_KIB = (2_000, 65_536)
IMPORT_CACHE_KIB_PER_MESSAGE = 0.2
# And at most this share of the source's size: the cache is the import's own memory over the session's, and on a file
# of short messages (440 bytes each) the indexes' 0.2 KiB a message was 6 MB of a 22 MB file's 2x allowance, the
# reader's record holding 1.9x already (issue 17). Such a file imports slower instead (300k tiny lines, 70 MB: 7.8 s
# of CPU with a 60 MB cache, about 10 s with 9 MB; docs/performance.md).
IMPORT_CACHE_SOURCE_SHARE = 1 / 8
MESSAGE_COLUMNS = ("session_id", "idx", "message_id", "kind", "created_at", "sha256", "body")
BODY_COLUMNS = ("id", "key", "original", "chars", "text")
WORKING_STATE = "working_state"  # the event kind autosave writes (app/save.py); prune keeps a version holding one


def default_path() -> Path:
    """FOLDSCOPE_DB if set, else library.db in the platform's data folder (~/.local/share/foldscope on Linux)."""
    if os.environ.get("FOLDSCOPE_DB"):
        return Path(os.environ["FOLDSCOPE_DB"])
    return data_folder() / "library.db"


def describe(exc: BaseException, waited: float | None = None) -> str:
    """What an SQLite or OS error means for the library, in the user's words; `waited`: how long the connection
    waited for another writer (its timeout), so the message says what really happened."""
    text = str(exc)
    lowered = text.lower()
    waited = BUSY_TIMEOUT_S if waited is None else waited
    known = [
        ("file is not a database", "the file is not a foldscope library (not an SQLite database)"),
        ("malformed", "the library file is damaged (database disk image is malformed)"),
        ("could not decode", "the library file is damaged (text that is not UTF-8)"),
        ("readonly", "the library is read-only (the file or its folder cannot be written)"),
        ("read-only", "the library is read-only (the file or its folder cannot be written)"),
        ("disk is full", "the disk is full"),
        ("disk i/o error", "the disk reported an I/O error"),
        ("unable to open database", "the library file cannot be opened (its folder is missing or not writable)"),
        ("locked", f"another foldscope kept the library locked for over {waited:g} s"),
        ("busy", f"another foldscope kept the library busy for over {waited:g} s"),
    ]
    for needle, meaning in known:
        if needle in lowered:
            return meaning
    if isinstance(exc, OSError):
        return f"{exc.strerror or text}" + (f": {exc.filename}" if exc.filename else "")
    return f"{type(exc).__name__}: {text}".splitlines()[0]


def _guarded(method: Callable) -> Callable:
    """Turn SQLite and OS failures inside a Library method into one LibraryError naming the library."""

    @functools.wraps(method)
    def wrapper(self: Library, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except (sqlite3.Error, OSError) as exc:
            raise LibraryError(_shown(self.path), describe(exc, self.timeout)) from exc
        except OverflowError as exc:  # a number SQLite cannot bind (sqlite3 raises it past 64 bits): the library's problem,
            # never one that stops the session from opening (the window opens it without the library)
            raise LibraryError(_shown(self.path), f"cannot store a value of this session ({type(exc).__name__}: {exc})") from exc

    return wrapper


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
    # its inserts landed on a random page, and an import grew faster than its file (docs/performance.md, issue 17).
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


MIGRATIONS: list[tuple[str, Callable[[Any], None]]] = [
    ("001_tables", _m001_tables),
    ("002_message_search", _m002_message_search),
    ("003_search_indexed", _m003_search_indexed),
    ("004_message_bodies", _m004_message_bodies),
    ("005_snapshots", _m005_snapshots),
    ("006_body_ids", _m006_body_ids),
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


def _refuse_newer(conn: sqlite3.Connection, done: set[str] | None = None) -> None:
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
    _refuse_newer(conn)
    if _has_migrations_table(conn):
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        _refuse_newer(conn, done)
        if all(name in done for name, _ in migrations):
            return []
    conn.create_function("foldscope_sha256", 2, _legacy_sha256, deterministic=True)
    conn.create_function("foldscope_body_key", 2, lambda sha, text: body_key(sha, text or ""), deterministic=True)
    applied: list[str] = []
    with _atomic(conn):
        _refuse_newer(conn)  # another process may have migrated while this one waited for the lock
        if not _has_migrations_table(conn):
            conn.execute(CREATE_MIGRATIONS)
        done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
        _refuse_newer(conn, done)
        for name, step in migrations:
            if name in done:
                continue
            step(conn)
            conn.execute('INSERT INTO "migrations" ("name", "applied_at") VALUES (?, ?)', [name, _now()])
            applied.append(name)
            done.add(name)
        known = [name for name, _ in MIGRATIONS]
        version = SCHEMA_VERSION if all(name in done for name in known) else sum(1 for name in known if name in done)
        conn.execute(f"PRAGMA user_version = {int(version)}")
    return applied


def body_key(original_sha256: str, text: str) -> str:
    """A body's key: the SHA-256 of the original bytes' SHA-256 and the message's text."""
    return hashlib.sha256(original_sha256.encode("ascii") + b"\0" + text.encode("utf-8", "surrogatepass")).hexdigest()


def _legacy_sha256(original: Any, text: Any) -> str:
    data = original if isinstance(original, bytes) else str(original if original is not None else text or "").encode()
    return hashlib.sha256(data).hexdigest()


@contextlib.contextmanager
def _atomic(conn: sqlite3.Connection) -> Iterator[None]:
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


BUSY_TIMEOUT_S = 60.0


class Library:
    """The session library. One connection, owned by the thread that opened it (STYLE.md point 7).

    The connection is plain sqlite3 in autocommit mode, every write in its own BEGIN IMMEDIATE
    transaction; `db`, the sqlite-utils wrapper around it, is made when first used, so that creating a
    library and importing into it never import sqlite-utils. Any SQLite or OS failure comes out as one
    LibraryError naming the library and the problem.
    """

    @staticmethod
    def exists(path: str | Path | None = None) -> bool:
        """Whether a library file is there (default_path() by default): a command that only reads one (a listing,
        a look-up of a snapshot) opens none where none exists, so it creates nothing."""
        if path == ":memory:":
            return True
        try:
            (Path(path) if path is not None else default_path()).stat()
        except FileNotFoundError:
            return False
        except OSError:
            return True  # there but not usable (its folder is a file, no permission): opening it says why
        return True

    def __init__(self, path: str | Path | None = None, timeout: float | None = None) -> None:
        """Open (creating and migrating as needed) the library at path (default_path() by default; ":memory:"
        for a private one). `timeout`: how long a write waits for another writer (BUSY_TIMEOUT_S by default)."""
        self._db: sqlite_utils.Database | None = None
        self.timeout = BUSY_TIMEOUT_S if timeout is None else timeout
        self.path: Path | None = None if path == ":memory:" else (Path(path) if path is not None else default_path())
        try:
            self.conn = self._connect()
        except LibraryError as exc:
            raise LibraryError(_shown(self.path), exc.problem) from exc
        except (sqlite3.Error, OSError) as exc:
            raise LibraryError(_shown(self.path), describe(exc, self.timeout)) from exc

    def _connect(self) -> sqlite3.Connection:
        if self.path is None:
            conn = sqlite3.connect(":memory:", isolation_level=None)
        else:
            _create_private(self.path)
            # Another thread or process may be writing (an import, autosave, search indexing): wait for its
            # transaction rather than fail with "database is locked" after sqlite's 5 s default.
            conn = sqlite3.connect(str(self.path), timeout=self.timeout, isolation_level=None)
        try:
            _refuse_newer(conn)  # before anything writes: a newer library is left exactly as it is
            if self.path is not None:
                _journal_wal(conn)
                # FULL: each commit syncs the write-ahead log, so a committed import survives a power cut.
                conn.execute("PRAGMA synchronous=FULL")
            conn.execute("PRAGMA recursive_triggers=on")  # as sqlite_utils.Database sets it
            conn.execute("PRAGMA foreign_keys=ON")
            migrate(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @property
    def db(self) -> sqlite_utils.Database:
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    def _atomic(self) -> contextlib.AbstractContextManager[None]:
        return _atomic(self.conn)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Library:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def size(self) -> int:
        """Bytes the library takes on disk: its file and its write-ahead log."""
        if self.path is None:
            return 0
        return sum(Path(str(self.path) + suffix).stat().st_size for suffix in ("", "-wal") if Path(str(self.path) + suffix).exists())

    # Imports -----------------------------------------------------------------------------------

    @_guarded
    def import_session(self, session: Session, token_counts: tuple[str, list[int]] | None = None) -> int:
        """Store a session in one transaction and return its id; the same source bytes give the same id.

        Each message's original bytes (a BLOB) are stored once, as a body keyed by their SHA-256, with its
        text: for a line-based source the bytes of the line(s) it came from, sliced from the file (which
        must not have changed since it was read); for a native or payload file its JSON as the file held
        it. Bodies another session (an earlier version of the same file) already holds are not stored again.
        """
        with _Source(session) as source:
            existing = self.find(source.sha256)
            if existing is not None:
                if token_counts is not None:
                    self.store_token_counts(existing, *token_counts)
                return existing
            # The largest reported input, not the list of them: every request's int, held through the import, was 0.2 MB
            # of a 10k-message import's peak.
            peak = max((r.usage.reported_input for r in session.trace if r.usage is not None), default=None)
            # The commit returns once the import's pages are in the write-ahead log; copying them into
            # the database file, the checkpoint, is left to the next write or to close() instead of
            # holding up the import (docs/performance.md).
            self.conn.execute("PRAGMA wal_autocheckpoint=0")
            cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
            self.conn.execute(f"PRAGMA cache_size=-{import_cache_kib(len(session.record), source.size)}")
            try:
                session_id = self._import(session, source, peak, token_counts)
            finally:
                self.conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
                self.conn.execute(f"PRAGMA cache_size={int(cache)}")
                self.conn.execute("PRAGMA shrink_memory")  # the import's pages go back, not kept for the session
        return session_id

    def _import(
        self, session: Session, source: _Source, peak_reported: int | None, token_counts: tuple[str, list[int]] | None = None
    ) -> int:
        with self._atomic():
            # Looked up again under the write lock: another process may have imported the same bytes
            # while this one hashed them (two processes opening one session give one session).
            existing = self.find(source.sha256)
            if existing is not None:
                if token_counts is not None:
                    self.store_token_counts(existing, *token_counts)
                return existing
            cursor = self.conn.execute(
                "INSERT INTO sessions (source, format, source_sha256, source_bytes, model, messages, view_messages,"
                " record_chars, requests, peak_reported_input, warnings, imported_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
                [
                    source_key(session.source),
                    session.format,
                    source.sha256,
                    source.size,
                    session.model,
                    len(session.record),
                    len(session.view),
                    len(session.trace),
                    peak_reported,
                    _text_json(session.warnings),
                    _now(),
                ],
            )
            session_id = cursor.lastrowid
            assert session_id is not None  # set by the INSERT just run
            chars = [0]
            # Each new body takes the next id (every id of a batch is tried, those of bodies held already are skipped).
            first = self.conn.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM bodies").fetchone()[0]
            for start in range(0, len(session.record), IMPORT_BATCH):
                message_rows: list[tuple] = []
                keys: list[str] = []
                before = self.conn.total_changes
                self._insert_bodies(_body_rows(session, session_id, source, chars, message_rows, keys, start, start + IMPORT_BATCH, first))
                if self.conn.total_changes - before < len(message_rows):
                    message_rows = self._held_bodies(message_rows, keys, first)
                self._insert_messages(message_rows)
                first += len(message_rows)
                source.release()
            self.conn.execute("UPDATE sessions SET record_chars = ? WHERE id = ?", [chars[0], session_id])
            self.add_view_version(session_id, session.view, "import")
            for event in session.events:
                self.add_event(session_id, str(event.get("kind", "event")), event)
            if token_counts is not None:
                self.store_token_counts(session_id, *token_counts)
        return session_id

    def _insert_bodies(self, rows: Iterable[tuple]) -> None:
        # One prepared statement fed by a generator: a list of rows would hold every original at once.
        sql = f"INSERT INTO bodies ({', '.join(BODY_COLUMNS)}) VALUES ({', '.join('?' * len(BODY_COLUMNS))}) ON CONFLICT (key) DO NOTHING"
        self.conn.executemany(sql, rows)

    def _held_bodies(self, rows: list[tuple], keys: list[str], first: int) -> list[tuple]:
        """The message rows with each body's id as stored: a body this library held already (from another session, or
        an earlier message of this one) was not stored again, and its message takes the id it is held under."""
        stored = {row[0] for row in self.conn.execute("SELECT id FROM bodies WHERE id BETWEEN ? AND ?", [first, first + len(rows) - 1])}
        held = [key for row, key in zip(rows, keys) if row[-1] not in stored]
        found: dict[str, int] = {}
        for i in range(0, len(held), 500):  # well under SQLite's limit of bound parameters
            part = held[i : i + 500]
            found.update(self.conn.execute(f"SELECT key, id FROM bodies WHERE key IN ({', '.join('?' * len(part))})", part))
        return [row if row[-1] in stored else (*row[:-1], found[key]) for row, key in zip(rows, keys)]

    def _insert_messages(self, rows: Iterable[tuple]) -> None:
        # A seam: tests replace it to fail midway and check that nothing stays behind.
        sql = f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) VALUES ({', '.join('?' * len(MESSAGE_COLUMNS))})"
        self.conn.executemany(sql, rows)

    @_guarded
    def known_session(self, session: Session) -> int | None:
        """The id this library holds the session under (the same source bytes, as import_session keys it), or None;
        nothing is written. A file changed since it was read is not the session imported: None."""
        try:
            with _Source(session) as source:
                return self.find(source.sha256)
        except ReadError:
            return None

    @_guarded
    def find(self, source_sha256: str) -> int | None:
        row = self.conn.execute("SELECT id FROM sessions WHERE source_sha256 = ?", [source_sha256]).fetchone()
        return row[0] if row else None

    # Queries -----------------------------------------------------------------------------------

    @_guarded
    def list_sessions(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM sessions ORDER BY id")

    @_guarded
    def session_row(self, session_id: int) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM sessions WHERE id = ?", [session_id])
        if not rows:
            raise KeyError(session_id)
        return rows[0]

    @_guarded
    def messages(self, session_id: int) -> list[dict[str, Any]]:
        """A session's messages in record order, each with its body (original, sha256, chars, text, tokens)."""
        return self._rows(
            "SELECT m.session_id, m.idx, m.message_id, m.kind, m.created_at, b.original, m.sha256, b.chars, b.text,"
            " b.tokens, b.tokenizer, b.key AS body FROM messages m JOIN bodies b ON b.id = m.body"
            " WHERE m.session_id = ? ORDER BY m.idx",
            [session_id],
        )

    @_guarded
    def message_hashes(self, session_id: int) -> list[str]:
        """Each message's body key (its original bytes and text), in record order: what a prefix is compared by."""
        return [
            row[0]
            for row in self.conn.execute(
                # A left join: one item a message even where a damaged library lacks its body (None), so positions hold.
                "SELECT b.key FROM messages m LEFT JOIN bodies b ON b.id = m.body WHERE m.session_id = ? ORDER BY m.idx",
                [session_id],
            )
        ]

    def _body_ids(self, session_id: int) -> list[int]:
        """Each message's body id, in record order."""
        return [row[0] for row in self.conn.execute("SELECT body FROM messages WHERE session_id = ? ORDER BY idx", [session_id])]

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor]

    # Token counts --------------------------------------------------------------------------------

    @_guarded
    def store_token_counts(self, session_id: int, tokenizer: str, counts: list[int]) -> int:
        """Keep each message's token count (in record order) with the tokenizer's identity; returns how many
        bodies changed. A body shared with another session is counted once for both."""
        bodies = self._body_ids(session_id)
        if len(bodies) != len(counts):
            raise ValueError(f"{len(counts)} counts for a session of {len(bodies)} messages")
        with self._atomic():
            before = self.conn.total_changes
            self.conn.executemany(
                "UPDATE bodies SET tokens = ?, tokenizer = ? WHERE id = ? AND (tokens IS NOT ? OR tokenizer IS NOT ?)",
                ((count, tokenizer, body, count, tokenizer) for body, count in zip(bodies, counts)),
            )
            return self.conn.total_changes - before

    @_guarded
    def token_counts(self, session_id: int, tokenizer: str) -> list[int] | None:
        """Each message's stored token count by this tokenizer, in record order; None unless all are stored."""
        rows = self.conn.execute(
            "SELECT b.tokens, b.tokenizer FROM messages m JOIN bodies b ON b.id = m.body WHERE m.session_id = ? ORDER BY m.idx",
            [session_id],
        ).fetchall()
        if not rows or any(tokens is None or name != tokenizer for tokens, name in rows):
            return None
        return [tokens for tokens, _ in rows]

    # Snapshots: sessions rebuilt without their files (core.store.snapshot) --------------------------

    @_guarded
    def keep_snapshot(
        self,
        session_id: int,
        session: Session,
        path: str | Path,
        sample: str | None = None,
        memo: tuple[dict, ...] | None = None,
        data: bytes | None = None,
    ) -> None:
        """Keep what `session` (read from `path`, stored as `session_id`) needs to be rebuilt without reading the
        file: the reader's output and, when given, the counter's memo (Counter.memo()); replaces an older one.
        `data`: the session as snapshot.dump_session gave it when read, before a count changed it (the trace's
        measure sets the unseen head and the scale); by default it is dumped now."""
        from foldscope.core.store import snapshot

        reader = snapshot.reader_identity()
        if reader is None:
            return
        inputs = json.dumps(snapshot.inputs_of(path))  # ASCII: a name that is not UTF-8 keeps its escapes
        data = data if data is not None else snapshot.dump_session(session)
        counter = snapshot.counter_identity() if memo is not None else None
        kept = snapshot.dump_memo(memo, session.record) if memo is not None and counter is not None else None
        with self._atomic():
            self.conn.execute(
                "INSERT OR REPLACE INTO snapshots (source, sample, session_id, reader, inputs, session, counter, memo,"
                " created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [source_key(str(path)), sample or "", session_id, reader, inputs, data, counter, kept, _now()],
            )

    @_guarded
    def keep_memo(self, session_id: int, path: str | Path, sample: str | None, record: Any, memo: tuple[dict, ...]) -> bool:
        """Replace the counter's memo kept with this path's snapshot (what a later count added); False when none."""
        from foldscope.core.store import snapshot

        counter = snapshot.counter_identity()
        if counter is None:
            return False
        with self._atomic():
            cursor = self.conn.execute(
                "UPDATE snapshots SET counter = ?, memo = ? WHERE source = ? AND sample = ? AND session_id = ?",
                [counter, snapshot.dump_memo(memo, record), source_key(str(path)), sample or "", session_id],
            )
        return cursor.rowcount > 0

    @_guarded
    def stored_session(
        self, path: str | Path, sample: str | None = None, format: str | None = None
    ) -> tuple[int, Session, tuple | None] | None:
        """(session id, the session, the counter's memo or None) from this path's snapshot, when it is current: made
        by this foldscope's readers from the same files (core.store.snapshot), by the reader `format` names when
        given; None when the file must be read.
        A snapshot that cannot be loaded counts as none (the file is read, and a new one replaces it)."""
        from foldscope.core.store import snapshot

        row = self.conn.execute(
            "SELECT session_id, reader, inputs, session, counter, memo FROM snapshots WHERE source = ? AND sample = ?",
            [source_key(str(path)), sample or ""],
        ).fetchone()
        if row is None or row[1] != snapshot.reader_identity():
            return None
        session_id, _, inputs, data, counter, kept = row
        try:
            if not snapshot.still_current(json.loads(inputs), path):
                return None
            session = snapshot.load_session(data)
            if format is not None and session.format != format:
                return None
            memo = snapshot.load_memo(kept, session.record) if kept is not None and counter == snapshot.counter_identity() else None
        except (snapshot.SnapshotError, ValueError):
            return None
        return session_id, session, memo

    # Search ----------------------------------------------------------------------------------------

    @_guarded
    def index_for_search(self, batch: int = 5000) -> int:
        """Add the bodies not yet indexed to the search index; returns how many.

        search() calls it first; the GUI may call it on its database thread right after an import. It
        indexes in batches, each its own short transaction, so autosave never waits long behind it.
        """
        total = 0
        while True:
            with self._atomic():
                ids = [row[0] for row in self.conn.execute("SELECT id FROM bodies WHERE search_indexed = 0 ORDER BY id LIMIT ?", [batch])]
                if not ids:
                    return total
                marks = ", ".join("?" * len(ids))
                self.conn.execute(f"INSERT INTO bodies_fts (rowid, text) SELECT id, text FROM bodies WHERE id IN ({marks})", ids)
                self.conn.execute(f"UPDATE bodies SET search_indexed = 1 WHERE id IN ({marks})", ids)
            total += len(ids)

    @_guarded
    def search(self, query: str, limit: int = 100) -> list[tuple[int, int, str]]:
        """(session id, message index, snippet) for messages whose text holds every word of query, in the
        newest version of each source (an older version's copy of the same message is not repeated)."""
        match = fts_query(query)
        if not match:
            return []
        self.index_for_search()
        sql = (
            "SELECT m.session_id, m.idx, snippet(bodies_fts, 0, '[', ']', '…', 12) "
            "FROM bodies_fts JOIN bodies b ON b.id = bodies_fts.rowid JOIN messages m ON m.body = b.id "
            "WHERE bodies_fts MATCH ? AND m.session_id IN (SELECT MAX(id) FROM sessions GROUP BY COALESCE(source, id)) "
            "ORDER BY rank, m.session_id, m.idx LIMIT ?"
        )
        return [tuple(row) for row in self.conn.execute(sql, [match, limit]).fetchall()]

    # View versions and events -------------------------------------------------------------------

    @_guarded
    def add_view_version(self, session_id: int, view: Iterable[str], cause: str) -> int:
        """Record the active view as it now stands and why it changed; returns its version number."""
        with self._atomic():
            row = self.conn.execute("SELECT COALESCE(MAX(version), 0) FROM view_versions WHERE session_id = ?", [session_id]).fetchone()
            version = row[0] + 1
            self.conn.execute(
                "INSERT INTO view_versions (session_id, version, ids, cause, created_at) VALUES (?, ?, ?, ?, ?)",
                [session_id, version, ids_json(view), cause, _now()],
            )
        return version

    @_guarded
    def view_versions(self, session_id: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT * FROM view_versions WHERE session_id = ? ORDER BY version", [session_id])
        return [{**row, "ids": json.loads(row["ids"])} for row in rows]

    @_guarded
    def add_event(self, session_id: int, kind: str, data: dict[str, Any]) -> int:
        with self._atomic():
            cursor = self.conn.execute(
                "INSERT INTO events (session_id, at, kind, data) VALUES (?, ?, ?, ?)",
                [session_id, _now(), kind, json.dumps(data, ensure_ascii=False, default=str)],
            )
        assert cursor.lastrowid is not None  # set by the INSERT just run
        return cursor.lastrowid

    @_guarded
    def events(self, session_id: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT * FROM events WHERE session_id = ? ORDER BY id", [session_id])
        return [{**row, "data": json.loads(row["data"])} for row in rows]

    # Working states (autosave) ---------------------------------------------------------------------

    @_guarded
    def write_working_state(self, session_id: int, view: Iterable[str], cause: str, state: dict[str, Any]) -> int:
        """Autosave's one write: the view version and the working state together, in one transaction."""
        with self._atomic():
            version = self.add_view_version(session_id, view, cause)
            self.add_event(session_id, WORKING_STATE, state)
        return version

    @_guarded
    def latest_working_state(self, source: str | None, session_id: int | None = None) -> dict[str, Any] | None:
        """The newest working state written for this source path (in any version of it) or this session:
        {"session_id", "at", "data"}; a cleared one (saved or discarded) counts as the newest too."""
        row = self.conn.execute(
            "SELECT session_id, at, data FROM events WHERE kind = ?"
            " AND ((? IS NOT NULL AND json_extract(data, '$.source') = ?) OR session_id = ?)"
            " ORDER BY id DESC LIMIT 1",
            [WORKING_STATE, source, source, session_id],
        ).fetchone()
        return None if row is None else {"session_id": row[0], "at": row[1], "data": json.loads(row[2])}

    # Removing and pruning ----------------------------------------------------------------------------

    @_guarded
    def remove_sessions(self, session_ids: Iterable[int]) -> dict[str, int]:
        """Remove sessions with their views, events and the message bodies no other session holds."""
        ids = sorted(set(session_ids))
        with self._atomic():
            for session_id in ids:
                for table in ("snapshots", "events", "view_versions", "messages"):
                    self.conn.execute(f"DELETE FROM {table} WHERE session_id = ?", [session_id])
                self.conn.execute("DELETE FROM sessions WHERE id = ?", [session_id])
            bodies, freed = self._remove_unreferenced_bodies()
        return {"sessions": len(ids), "bodies": bodies, "bytes": freed}

    def _unreferenced_bodies(self) -> tuple[int, int]:
        row = self.conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(LENGTH(original) + LENGTH(CAST(text AS BLOB))), 0) FROM bodies"
            " WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = bodies.id)"
        ).fetchone()
        return int(row[0]), int(row[1])

    def _remove_unreferenced_bodies(self) -> tuple[int, int]:
        count, freed = self._unreferenced_bodies()
        if count:
            orphan = "NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = bodies.id)"
            # An external-content index forgets a row only when told its old text.
            self.conn.execute(
                "INSERT INTO bodies_fts (bodies_fts, rowid, text) SELECT 'delete', id, text FROM bodies"
                f" WHERE search_indexed = 1 AND {orphan}"
            )
            self.conn.execute(f"DELETE FROM bodies WHERE {orphan}")
        return count, freed

    @_guarded
    def prune_plan(self) -> list[dict[str, Any]]:
        """The sessions prune would remove, each with why: its source file is gone, or a newer version of the
        same source replaced it. A version holding a working state not yet saved or discarded is kept."""
        sessions = self.list_sessions()
        newest: dict[str, int] = {}
        for row in sessions:
            if row["source"]:
                newest[row["source"]] = max(newest.get(row["source"], 0), row["id"])
        plan = []
        for row in sessions:
            source = row["source"]
            if not source:
                continue
            if not Path(source).exists():
                plan.append({**row, "why": "its source file is gone"})
            elif row["id"] != newest[source] and not self._holds_pending_state(source, row["id"]):
                plan.append({**row, "why": f"replaced by a newer version of the same source (session {newest[source]})"})
        return plan

    def _holds_pending_state(self, source: str, session_id: int) -> bool:
        latest = self.latest_working_state(source)
        return latest is not None and latest["session_id"] == session_id and not latest["data"].get("cleared")

    @_guarded
    def prune(self, dry_run: bool = False) -> dict[str, Any]:
        """Remove what prune_plan names and every body no session references; compact the file after.
        With dry_run, say what would go and change nothing."""
        plan = self.prune_plan()
        before = self.size()
        if dry_run:
            kept = {row["id"] for row in plan}
            # Bodies only the planned sessions hold would go with them, as would those nobody holds now.
            row = self.conn.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(original) + LENGTH(CAST(text AS BLOB))), 0) FROM bodies"
                " WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = bodies.id AND m.session_id NOT IN"
                f" ({', '.join('?' * len(kept)) or 'NULL'}))",
                sorted(kept),
            ).fetchone()
            return {
                "dry_run": True,
                "sessions": plan,
                "bodies": int(row[0]),
                "body_bytes": int(row[1]),
                "size_before": before,
                "size_after": None,
            }
        removed = self.remove_sessions(row["id"] for row in plan)
        with self._atomic():
            bodies, freed = self._remove_unreferenced_bodies()
        if self.path is not None and (removed["sessions"] or removed["bodies"] or bodies):
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self.conn.execute("VACUUM")
            self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return {
            "dry_run": False,
            "sessions": plan,
            "bodies": removed["bodies"] + bodies,
            "body_bytes": removed["bytes"] + freed,
            "size_before": before,
            "size_after": self.size(),
        }


def set_aside(path: str | Path) -> Path | None:
    """Move a library file that cannot be used (with its write-ahead log) out of the way, never deleting it, so
    a fresh one can be made in its place; returns where it went (None when there was nothing)."""
    path = Path(path)
    if not path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
    aside = path.with_name(f"{path.name}.unusable-{stamp}")
    try:
        for suffix in ("-wal", "-shm", ""):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
    except OSError as exc:
        raise LibraryError(str(path), f"cannot set it aside: {describe(exc)}") from exc
    return aside


def _shown(path: Path | None) -> str | None:
    return None if path is None else str(path)


def _text_json(value: object) -> str:
    """JSON for a TEXT column: a warning quoting a file name whose bytes are not UTF-8 keeps them as escapes."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def source_key(source: str | None) -> str | None:
    """A session's source as the library keys it: the absolute path, so versions of one file share a key."""
    if not source:
        return None
    try:
        key = str(Path(source).resolve())
    except OSError:
        key = str(Path(source).absolute())
    # SQLite text is UTF-8: a name's bytes that are not (held as surrogates) are kept as their escapes.
    return key.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _create_private(path: Path) -> None:
    """The library's folder (0700 when foldscope makes it) and its file, created 0600 before SQLite opens it;
    SQLite gives its write-ahead log and shared-memory files the database file's mode."""
    make_private_folder(path.parent)
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, PRIVATE_FILE)
    except FileExistsError:
        with contextlib.suppress(OSError):  # an earlier foldscope made it 0644; a file not ours stays as it is
            if path.stat().st_mode & 0o077 and path.stat().st_uid == os.getuid():
                path.chmod(PRIVATE_FILE)
        return
    os.close(fd)
    fsync_folder(path.parent)


def _journal_wal(conn: sqlite3.Connection) -> None:
    """Switch to the write-ahead log; when another process is switching or migrating at that moment SQLite can
    answer "locked" without waiting, so try again for as long as the busy timeout."""
    import time

    deadline = time.monotonic() + BUSY_TIMEOUT_S
    while True:
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.02)


class _Source:
    """The session's source bytes while it is stored: its SHA-256 and size, and each message's original bytes."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lines: SourceLines | None = session.extras.get("source_lines")
        self.data: bytes | mmap.mmap = b""
        self._handle: BinaryIO | None = None
        self._dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
        self._unreleased = 0  # bytes sliced from the mapping since its pages were last let go

    def __enter__(self) -> _Source:
        path = Path(self.session.source) if self.session.source else None
        if path is not None and path.is_file():
            self._handle = open(path, "rb")
            stat = os.fstat(self._handle.fileno())
            if self.lines is not None and (stat.st_size, stat.st_mtime_ns) != (self.lines.size, self.lines.mtime_ns):
                self.close()
                raise ReadError(str(path), "", "the file changed after it was read; open it again to import it")
            # Mapped, not read: the pages are the file's own, shared with the page cache.
            self.data = mmap.mmap(self._handle.fileno(), 0, access=mmap.ACCESS_READ) if stat.st_size else b""
            self.sha256, self.size = self._hash(), stat.st_size
            spec = format_named(self.session.format)
            chosen = self.session.extras.get("inspect") or {"sample": self.session.extras.get("sample")}
            sample = chosen.get("sample") if spec and spec.samples else None
            if sample is not None:  # one file holds several sessions (an Inspect AI log): each is its own source
                epoch = chosen.get("epoch")
                self.sha256 = hashlib.sha256(f"{self.sha256}\0{sample}:{epoch}".encode()).hexdigest()
        else:
            self.lines = None
            data = json.dumps(native_dict(self.session), ensure_ascii=False, sort_keys=True).encode("utf-8")
            self.sha256, self.size = hashlib.sha256(data).hexdigest(), len(data)
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if isinstance(self.data, mmap.mmap):
            self.data.close()
        self.data = b""
        if self._handle is not None:
            self._handle.close()
            self._handle = None

    def _hash(self) -> str:
        """The file's SHA-256, hashed a window at a time with each window's pages let go after it: hashing the
        whole mapping at once would make the whole file resident for a moment, the import's peak."""
        digest = hashlib.sha256()
        with memoryview(self.data) as view:
            for start in range(0, len(view), RELEASE_BYTES):
                digest.update(view[start : start + RELEASE_BYTES])
                self.release()
        return digest.hexdigest()

    def release(self) -> None:
        """Let go of the file's pages this process has read (they stay in the page cache): a mapped page read
        counts in the process's resident memory, so the whole file would, once hashed and sliced."""
        if isinstance(self.data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            self.data.madvise(mmap.MADV_DONTNEED)

    def original(self, message: Message) -> bytes:
        source = self.lines
        lines = source.lines_of(message) if source is not None else ()
        if source is not None and lines:
            data, starts = self.data, source.starts
            if len(lines) == 1:
                got = data[starts[lines[0] - 1] : starts[lines[0]]].rstrip(b"\r\n")
            else:
                got = b"\n".join(data[starts[n - 1] : starts[n]].rstrip(b"\r\n") for n in lines)
            self._unreleased += len(got)
            if self._unreleased >= RELEASE_BYTES:
                self.release()
                self._unreleased = 0
            return got
        return self._dumps(message.raw if message.raw is not None else message_dict(message)).encode("utf-8")


def ids_json(view: Iterable[str], chunk: int = 1000) -> str:
    """json.dumps(list(view)), encoded a thousand ids at a time: the encoder holds a piece for every id until it
    joins them, which for a whole view was an import's peak (1.9 MB at 10k messages, 4 MB of file)."""
    ids = view if isinstance(view, list) else list(view)
    return "[" + ", ".join(json.dumps(ids[i : i + chunk])[1:-1] for i in range(0, len(ids), chunk)) + "]"


def import_cache_kib(messages: int, source_bytes: int) -> int:
    """The page cache an import of this many messages from a source of this size uses, in KiB: the indexes' size
    (IMPORT_CACHE_KIB_PER_MESSAGE), at most IMPORT_CACHE_SOURCE_SHARE of the source, within IMPORT_CACHE_KIB."""
    low, high = IMPORT_CACHE_KIB
    wanted = min(messages * IMPORT_CACHE_KIB_PER_MESSAGE, source_bytes * IMPORT_CACHE_SOURCE_SHARE / 1024)
    return int(min(high, max(low, wanted)))


def _body_rows(
    session: Session,
    session_id: int,
    source: _Source,
    chars: list[int],
    message_rows: list[tuple],
    keys: list[str],
    start: int,
    stop: int,
    first: int,
) -> Iterator[tuple]:
    """Body rows in BODY_COLUMNS order of the record's messages start to stop, their ids counted from `first`;
    appends each message's row (MESSAGE_COLUMNS, its body's id as tried) to message_rows and its body's key to keys,
    and adds the record's characters to chars[0] as it goes."""
    sha256, original, record = hashlib.sha256, source.original, session.record
    total = chars[0]
    for body_id, index in enumerate(range(start, min(stop, len(record))), first):
        message = record[index]
        data = original(message)
        text = message.text
        total += len(text)
        chars[0] = total
        digest = sha256(data).hexdigest()
        key = body_key(digest, text)
        keys.append(key)
        message_rows.append((session_id, index, message.id, message.kind, storable_time(message.created_at), digest, body_id))
        yield (body_id, key, data, len(text), text)


def _json_default(value: Any) -> Any:
    # A reader may keep its raw message as a read-only mapping; anything else is shown as text.
    return dict(value) if hasattr(value, "items") else str(value)


def fts_query(query: str) -> str:
    """The user's words as quoted FTS5 terms, so punctuation in a query is searched, not parsed."""
    words = re.findall(r"\S+", query)
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

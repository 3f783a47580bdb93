"""The library: a SQLite store of imported sessions, their messages, view versions and events."""

from __future__ import annotations

import contextlib
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
from foldscope.core.model.session import Message, ReadError, Session

WAL_AUTOCHECKPOINT = 1000  # SQLite's default, in pages
MESSAGE_COLUMNS = ("session_id", "idx", "message_id", "kind", "created_at", "original", "sha256", "chars", "text")


def default_path() -> Path:
    """FOLDSCOPE_DB if set, else the XDG data folder: ~/.local/share/foldscope/library.db."""
    if os.environ.get("FOLDSCOPE_DB"):
        return Path(os.environ["FOLDSCOPE_DB"])
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "foldscope" / "library.db"


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


MIGRATIONS: list[tuple[str, Callable[[Any], None]]] = [
    ("001_tables", _m001_tables),
    ("002_message_search", _m002_message_search),
    ("003_search_indexed", _m003_search_indexed),
]
CREATE_MIGRATIONS = 'CREATE TABLE "migrations" (\n   "name" TEXT PRIMARY KEY,\n   "applied_at" TEXT\n)'


def migrate(db: Any, migrations: Iterable[tuple[str, Callable]] = MIGRATIONS) -> list[str]:
    """Run the migrations this database (a sqlite3.Connection or a sqlite_utils.Database) has not had yet;
    returns their names."""
    conn = db if isinstance(db, sqlite3.Connection) else db.conn
    if conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'migrations'").fetchone() is None:
        with _atomic(conn):
            conn.execute(CREATE_MIGRATIONS)
    done = {row[0] for row in conn.execute("SELECT name FROM migrations")}
    applied = []
    for name, step in migrations:
        if name in done:
            continue
        with _atomic(conn):
            step(conn)
            conn.execute('INSERT INTO "migrations" ("name", "applied_at") VALUES (?, ?)', [name, _now()])
        applied.append(name)
    return applied


@contextlib.contextmanager
def _atomic(conn: sqlite3.Connection) -> Iterator[None]:
    """One transaction (a savepoint inside an open one), as sqlite_utils.Database.atomic, on a plain connection."""
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
    conn.execute("BEGIN")
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

    The connection is plain sqlite3 (as sqlite-utils opens it); `db`, the sqlite-utils wrapper around
    it, is made when first used, so that creating a library and importing into it never import sqlite-utils.
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self._db: sqlite_utils.Database | None = None
        if path == ":memory:":
            self.path = None
            self.conn = sqlite3.connect(":memory:")
        else:
            self.path = Path(path) if path is not None else default_path()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Another thread may be importing (a load the user replaced, autosave): wait for its
            # transaction rather than fail with "database is locked" after sqlite's 5 s default.
            self.conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA recursive_triggers=on")  # as sqlite_utils.Database sets it
        self.conn.execute("PRAGMA foreign_keys=ON")
        migrate(self.conn)

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

    # Imports -----------------------------------------------------------------------------------

    def import_session(self, session: Session) -> int:
        """Store a session in one transaction and return its id; the same source bytes give the same id.

        Each message keeps its original bytes (`original`, a BLOB) and their SHA-256: for a line-based
        source the bytes of the line(s) it came from, sliced from the file (which must not have changed
        since it was read); for a native or payload file its JSON as the file held it.
        """
        with _Source(session) as source:
            existing = self.find(source.sha256)
            if existing is not None:
                return existing
            reported = [r.usage.reported_input for r in session.trace if r.usage is not None]
            # The commit returns once the import's pages are in the write-ahead log (synchronous
            # NORMAL); copying them into the database file and syncing it, the checkpoint, is left to
            # the next write or to close() instead of holding up the import (docs/performance.md).
            self.conn.execute("PRAGMA wal_autocheckpoint=0")
            try:
                session_id = self._import(session, source, reported)
            finally:
                self.conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
        return session_id

    def _import(self, session: Session, source: _Source, reported: list[int]) -> int:
        with self._atomic():
            cursor = self.conn.execute(
                "INSERT INTO sessions (source, format, source_sha256, source_bytes, model, messages, view_messages,"
                " record_chars, requests, peak_reported_input, warnings, imported_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
                [session.source, session.format, source.sha256, source.size, session.model, len(session.record),
                 len(session.view), len(session.trace), max(reported) if reported else None,
                 json.dumps(session.warnings, ensure_ascii=False), _now()],
            )
            session_id = cursor.lastrowid
            assert session_id is not None  # set by the INSERT just run
            chars = [0]
            self._insert_messages(_message_rows(session, session_id, source, chars))
            self.conn.execute("UPDATE sessions SET record_chars = ? WHERE id = ?", [chars[0], session_id])
            self.add_view_version(session_id, session.view, "import")
            for event in session.events:
                self.add_event(session_id, str(event.get("kind", "event")), event)
        return session_id

    def _insert_messages(self, rows: Iterable[tuple]) -> None:
        # A seam: tests replace it to fail midway and check that nothing stays behind.
        # One prepared statement fed by a generator: sqlite-utils' insert_all rebuilds its SQL and
        # inspects every value per chunk, and a list of rows would hold every original at once.
        sql = f"INSERT INTO messages ({', '.join(MESSAGE_COLUMNS)}) VALUES ({', '.join('?' * len(MESSAGE_COLUMNS))})"
        self.conn.executemany(sql, rows)

    def find(self, source_sha256: str) -> int | None:
        row = self.conn.execute("SELECT id FROM sessions WHERE source_sha256 = ?", [source_sha256]).fetchone()
        return row[0] if row else None

    # Queries -----------------------------------------------------------------------------------

    def list_sessions(self) -> list[dict[str, Any]]:
        return list(self.db["sessions"].rows_where(order_by="id"))

    def session_row(self, session_id: int) -> dict[str, Any]:
        return self.db.table("sessions").get(session_id)

    def messages(self, session_id: int) -> list[dict[str, Any]]:
        return list(self.db["messages"].rows_where("session_id = ?", [session_id], order_by="idx"))

    def index_for_search(self) -> int:
        """Add the messages of sessions not yet indexed to the search index; returns how many sessions.

        search() calls it first; the GUI may call it on its database thread right after an import.
        """
        pending = [row[0] for row in self.db.execute("SELECT id FROM sessions WHERE search_indexed = 0")]
        for session_id in pending:
            with self.db.atomic():
                self.db.execute(
                    "INSERT INTO messages_fts (rowid, text) SELECT rowid, text FROM messages WHERE session_id = ?",
                    [session_id],
                )
                self.db.execute("UPDATE sessions SET search_indexed = 1 WHERE id = ?", [session_id])
        return len(pending)

    def search(self, query: str, limit: int = 100) -> list[tuple[int, int, str]]:
        """(session id, message index, snippet) for messages whose text holds every word of query."""
        match = fts_query(query)
        if not match:
            return []
        self.index_for_search()
        sql = (
            "SELECT m.session_id, m.idx, snippet(messages_fts, 0, '[', ']', '…', 12) "
            "FROM messages_fts JOIN messages m ON m.rowid = messages_fts.rowid "
            "WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?"
        )
        return [tuple(row) for row in self.db.execute(sql, [match, limit]).fetchall()]

    # View versions and events -------------------------------------------------------------------

    def add_view_version(self, session_id: int, view: Iterable[str], cause: str) -> int:
        """Record the active view as it now stands and why it changed; returns its version number."""
        with self._atomic():
            row = self.conn.execute(
                "SELECT COALESCE(MAX(version), 0) FROM view_versions WHERE session_id = ?", [session_id]
            ).fetchone()
            version = row[0] + 1
            self.conn.execute(
                "INSERT INTO view_versions (session_id, version, ids, cause, created_at) VALUES (?, ?, ?, ?, ?)",
                [session_id, version, json.dumps(list(view)), cause, _now()],
            )
        return version

    def view_versions(self, session_id: int) -> list[dict[str, Any]]:
        rows = self.db["view_versions"].rows_where("session_id = ?", [session_id], order_by="version")
        return [{**row, "ids": json.loads(row["ids"])} for row in rows]

    def add_event(self, session_id: int, kind: str, data: dict[str, Any]) -> int:
        with self._atomic():
            cursor = self.conn.execute(
                "INSERT INTO events (session_id, at, kind, data) VALUES (?, ?, ?, ?)",
                [session_id, _now(), kind, json.dumps(data, ensure_ascii=False, default=str)],
            )
        assert cursor.lastrowid is not None  # set by the INSERT just run
        return cursor.lastrowid

    def events(self, session_id: int) -> list[dict[str, Any]]:
        rows = self.db["events"].rows_where("session_id = ?", [session_id], order_by="id")
        return [{**row, "data": json.loads(row["data"])} for row in rows]


def source_fingerprint(session: Session) -> tuple[str, int]:
    """SHA-256 and size of the session's source file, or of its native form when it has no file."""
    with _Source(session) as source:
        return source.sha256, source.size


class _Source:
    """The session's source bytes while it is stored: its SHA-256 and size, and each message's original bytes."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lines: SourceLines | None = session.extras.get("source_lines")
        self.data: bytes | mmap.mmap = b""
        self._handle: BinaryIO | None = None
        self._dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode

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
            self.sha256, self.size = hashlib.sha256(self.data).hexdigest(), stat.st_size
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

    def original(self, message: Message) -> bytes:
        source = self.lines
        lines = source.lines_of(message) if source is not None else ()
        if source is not None and lines:
            data, starts = self.data, source.starts
            if len(lines) == 1:
                return data[starts[lines[0] - 1] : starts[lines[0]]].rstrip(b"\r\n")
            return b"\n".join(data[starts[n - 1] : starts[n]].rstrip(b"\r\n") for n in lines)
        return self._dumps(message.raw if message.raw is not None else message_dict(message)).encode("utf-8")


def _message_rows(session: Session, session_id: int, source: _Source, chars: list[int]) -> Iterator[tuple]:
    """Rows in MESSAGE_COLUMNS order; adds the record's characters to chars[0] as it goes."""
    sha256, original = hashlib.sha256, source.original
    total = 0
    for index, message in enumerate(session.record):
        data = original(message)
        text = message.text
        total += len(text)
        chars[0] = total
        yield (session_id, index, message.id, message.kind, message.created_at, data, sha256(data).hexdigest(),
               len(text), text)


def _json_default(value: Any) -> Any:
    # A reader may keep its raw message as a read-only mapping; anything else is shown as text.
    return dict(value) if hasattr(value, "items") else str(value)


def fts_query(query: str) -> str:
    """The user's words as quoted FTS5 terms, so punctuation in a query is searched, not parsed."""
    words = re.findall(r"\S+", query)
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")

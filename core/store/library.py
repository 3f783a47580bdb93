"""The library: a SQLite store of imported sessions, their messages, view versions and events."""

from __future__ import annotations

import array
import contextlib
import json
import re
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    import sqlite_utils  # imported when Library.db is first used, never to create, open or import (start-up time)

from foldscope.core.model.session import LibraryError, ReadError, Session
from foldscope.core.store.body_bytes import BODY_BYTES, BODY_TEXT, HugeBody, huge_start, write_huge
from foldscope.core.store.library_file import (
    BUSY_TIMEOUT_S,
    connect,
    default_path,
    describe,
    guarded,
    import_cache_kib,
    shown_path,
    source_key,
)
from foldscope.core.store.migrations import atomic, now
from foldscope.core.store.source_bytes import SourceBytes, body_rows

WAL_AUTOCHECKPOINT = 1000  # SQLite's default, in pages
# Messages stored a batch at a time: only one batch's message rows are held (a whole record's rows were most of an
# import's peak memory on a file of many tiny lines, and ten times this batch still a fifth of it).
IMPORT_BATCH = 1_000
MESSAGE_COLUMNS = ("session_id", "idx", "message_id", "kind", "created_at", "sha256", "body")
BODY_COLUMNS = ("id", "key", "original", "chars", "text")
WORKING_STATE = "working_state"  # the event kind autosave writes (app/save.py); prune keeps a version holding one


class Library:
    """The session library. One connection, owned by the thread that opened it (STYLE.md point 7).

    The connection is plain sqlite3 in autocommit mode, every write in its own BEGIN IMMEDIATE transaction; `db`, the
    sqlite-utils wrapper around it, is made when first used, so that creating a library and importing into it never
    import sqlite-utils. Any SQLite or OS failure comes out as one LibraryError naming the library and the problem.
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
            self.conn = connect(self.path, self.timeout)
        except LibraryError as exc:
            raise LibraryError(shown_path(self.path), exc.problem) from exc
        except (sqlite3.Error, OSError) as exc:
            raise LibraryError(shown_path(self.path), describe(exc, self.timeout)) from exc

    @property
    def db(self) -> sqlite_utils.Database:
        if self._db is None:
            import sqlite_utils

            self._db = sqlite_utils.Database(self.conn)
        return self._db

    def _atomic(self) -> contextlib.AbstractContextManager[None]:
        return atomic(self.conn)

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

    @guarded
    def import_session(self, session: Session, token_counts: tuple[str, list[int]] | None = None, *, least_cache: bool = False) -> int:
        """Store a session in one transaction and return its id; the same source bytes give the same id (`least_cache`:
        SQLite's default cache, not the indexes' size: a tenth more CPU, 8 MiB less at 50,000 messages).

        Each message's original bytes (a BLOB) are stored once, as a body keyed by their SHA-256, with its
        text: for a line-based source the bytes of the line(s) it came from, sliced from the file (which
        must not have changed since it was read); for a native or payload file its JSON as the file held
        it. Bodies another session (an earlier version of the same file) already holds are not stored again.
        """
        with SourceBytes(session) as source:
            existing = self.find(source.sha256)
            if existing is not None:
                if token_counts is not None:
                    self.store_token_counts(existing, *token_counts)
                return existing
            # The largest reported input, not the list of them: every request's int would be held through the import.
            peak = max((r.usage.reported_input for r in session.trace if r.usage is not None), default=None)
            # The commit returns once the import's pages are in the write-ahead log; copying them into the database
            # file, the checkpoint, is left to the next write or to close(), not holding up the import (docs/performance.md).
            self.conn.execute("PRAGMA wal_autocheckpoint=0")
            cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
            self.conn.execute(f"PRAGMA cache_size=-{import_cache_kib(len(session.record), source.size, least=least_cache)}")
            try:
                session_id = self._import(session, source, peak, token_counts)
            finally:
                self.conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
                self.conn.execute(f"PRAGMA cache_size={int(cache)}")
                self.conn.execute("PRAGMA shrink_memory")  # the import's pages go back, not kept for the session
        return session_id

    def _import(
        self, session: Session, source: SourceBytes, peak_reported: int | None, token_counts: tuple[str, list[int]] | None = None
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
                    now(),
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
                huge: list[HugeBody] = []
                before = self.conn.total_changes
                self._insert_bodies(
                    body_rows(session, session_id, source, chars, message_rows, keys, start, start + IMPORT_BATCH, first, huge)
                )
                if self.conn.total_changes - before < len(message_rows):
                    message_rows = self._held_bodies(message_rows, keys, first)
                for body in huge:
                    write_huge(self.conn, body, source.parts(body.original))
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

    @guarded
    def known_session(self, session: Session) -> int | None:
        """The id this library holds the session under (the same source bytes, as import_session keys it), or None;
        nothing is written. A file changed since it was read is not the session imported: None."""
        try:
            with SourceBytes(session) as source:
                return self.find(source.sha256)
        except ReadError:
            return None

    @guarded
    def find(self, source_sha256: str) -> int | None:
        row = self.conn.execute("SELECT id FROM sessions WHERE source_sha256 = ?", [source_sha256]).fetchone()
        return row[0] if row else None

    # Queries -----------------------------------------------------------------------------------

    @guarded
    def list_sessions(self) -> list[dict[str, Any]]:
        return self._rows("SELECT * FROM sessions ORDER BY id")

    @guarded
    def session_row(self, session_id: int) -> dict[str, Any]:
        rows = self._rows("SELECT * FROM sessions WHERE id = ?", [session_id])
        if not rows:
            raise KeyError(session_id)
        return rows[0]

    @guarded
    def messages(self, session_id: int) -> list[dict[str, Any]]:
        """A session's messages in record order, each with its body (original, sha256, chars, text, tokens)."""
        return self._rows(
            "SELECT m.session_id, m.idx, m.message_id, m.kind, m.created_at, COALESCE(b.original, x.original) AS original,"
            f" m.sha256, b.chars, {BODY_TEXT} AS text, b.tokens, b.tokenizer, b.key AS body"
            " FROM messages m JOIN bodies b ON b.id = m.body LEFT JOIN body_bytes x ON x.body = b.id"
            " WHERE m.session_id = ? ORDER BY m.idx",
            [session_id],
        )

    @guarded
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

    def _body_ids(self, session_id: int) -> array.array:
        """Each message's body id in record order, 0 (no body's) for none: an array, where a list held an int object an id."""
        rows = self.conn.execute("SELECT COALESCE(body, 0) FROM messages WHERE session_id = ? ORDER BY idx", [session_id])
        return array.array("q", (row[0] for row in rows))

    def _rows(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.conn.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row)) for row in cursor]

    # Token counts --------------------------------------------------------------------------------

    @guarded
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

    @guarded
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

    @guarded
    def keep_snapshot(
        self,
        session_id: int,
        session: Session,
        path: str | Path,
        sample: str | None = None,
        memo: tuple[Mapping, ...] | bytes | None = None,
        data: bytes | BinaryIO | None = None,
    ) -> None:
        """Keep what `session` (read from `path`, stored as `session_id`) needs to be rebuilt without reading the
        file: the reader's output and, when given, the counter's memo (Counter.memo(), or snapshot.dump_memo's bytes of
        it over this session's record); replaces an older one.
        `data`: the session as snapshot.dump_session gave it when read, before a count changed it (the trace's
        measure sets the unseen head and the scale), or a file holding it from its start (snapshot.dump_session_to);
        by default it is dumped now."""
        from foldscope.core.store import snapshot

        reader = snapshot.reader_identity()
        if reader is None:
            return
        inputs = json.dumps(snapshot.inputs_of(path))  # ASCII: a name that is not UTF-8 keeps its escapes
        data = data if data is not None else snapshot.dump_session(session)
        counter = snapshot.counter_identity() if memo is not None else None
        kept = snapshot.memo_bytes(memo, session.record) if memo is not None and counter is not None else None
        size = snapshot.size_of(data)
        with self._atomic():
            # The snapshot is written into a zero-filled blob a block at a time: the blob ends the row (migration 007), so
            # SQLite writes it without making it in memory. Bound whole, SQLite copied it and made its row from the copy.
            cursor = self.conn.execute(
                "INSERT OR REPLACE INTO snapshots (source, sample, session_id, reader, inputs, counter, memo, created_at,"
                " session) VALUES (?, ?, ?, ?, ?, ?, ?, ?, zeroblob(?))",
                [source_key(str(path)), sample or "", session_id, reader, inputs, counter, kept, now(), size],
            )
            assert cursor.lastrowid is not None  # set by the INSERT just run
            with self.conn.blobopen("snapshots", "session", cursor.lastrowid) as blob:
                snapshot.fill(blob, data)

    @guarded
    def keep_memo(self, session_id: int, path: str | Path, sample: str | None, record: Any, memo: tuple[Mapping, ...] | bytes) -> bool:
        """Replace the counter's memo kept with this path's snapshot (what a later count added); False when none."""
        from foldscope.core.store import snapshot

        counter = snapshot.counter_identity()
        if counter is None:
            return False
        with self._atomic():
            cursor = self.conn.execute(
                "UPDATE snapshots SET counter = ?, memo = ? WHERE source = ? AND sample = ? AND session_id = ?",
                [counter, snapshot.memo_bytes(memo, record), source_key(str(path)), sample or "", session_id],
            )
        return cursor.rowcount > 0

    @guarded
    def stored_session(
        self, path: str | Path, sample: str | None = None, format: str | None = None
    ) -> tuple[int, Session, tuple | None] | None:
        """(session id, the session, the counter's memo or None) from this path's snapshot, when it is current: made
        by this foldscope's readers from the same files (core.store.snapshot), by the reader `format` names when
        given; None when the file must be read.
        A snapshot that cannot be loaded counts as none (the file is read, and a new one replaces it)."""
        from foldscope.core.store import snapshot

        row = self.conn.execute(
            "SELECT session_id, reader, inputs, rowid, counter, memo FROM snapshots WHERE source = ? AND sample = ?",
            [source_key(str(path)), sample or ""],
        ).fetchone()
        if row is None or row[1] != snapshot.reader_identity():
            return None
        session_id, _, inputs, rowid, counter, kept = row
        try:
            if not snapshot.still_current(json.loads(inputs), path):
                return None
            with self.conn.blobopen("snapshots", "session", rowid, readonly=True) as data:  # not fetched whole beside it
                session = snapshot.load_session(data)
            if format is not None and session.format != format:
                return None
            memo = snapshot.load_memo(kept, session.record) if kept is not None and counter == snapshot.counter_identity() else None
        except (snapshot.SnapshotError, ValueError, sqlite3.OperationalError):  # the last: the row gone since it was found
            return None  # (another process kept a newer snapshot before the blob was opened)
        return session_id, session, memo

    # Search ----------------------------------------------------------------------------------------

    @guarded
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
                self.conn.execute(
                    f"INSERT INTO bodies_fts (rowid, text) SELECT b.id, {BODY_TEXT} FROM bodies b"
                    f" LEFT JOIN body_bytes x ON x.body = b.id WHERE b.id IN ({marks})",
                    ids,
                )
                self.conn.execute(f"UPDATE bodies SET search_indexed = 1 WHERE id IN ({marks})", ids)
            total += len(ids)

    @guarded
    def search(self, query: str, limit: int = 100) -> list[tuple[int, int, str]]:
        """(session id, message index, snippet) for messages whose text holds every word of query, in the
        newest version of each source (an older version's copy of the same message is not repeated)."""
        if not (match := fts_query(query)):
            return []
        self.index_for_search()
        sql = (
            "SELECT m.session_id, m.idx, snippet(bodies_fts, 0, '[', ']', '…', 12), b.id "
            "FROM bodies_fts JOIN bodies b ON b.id = bodies_fts.rowid JOIN messages m ON m.body = b.id "
            "WHERE bodies_fts MATCH ? AND m.session_id IN (SELECT MAX(id) FROM sessions GROUP BY COALESCE(source, id)) "
            "ORDER BY rank, m.session_id, m.idx LIMIT ?"
        )
        rows = self.conn.execute(sql, [match, limit]).fetchall()
        return [(session_id, idx, huge_start(self.conn, body) if snippet is None else snippet) for session_id, idx, snippet, body in rows]

    # View versions and events -------------------------------------------------------------------

    @guarded
    def add_view_version(self, session_id: int, view: Iterable[str], cause: str) -> int:
        """Record the active view as it now stands and why it changed; returns its version number."""
        with self._atomic():
            row = self.conn.execute("SELECT COALESCE(MAX(version), 0) FROM view_versions WHERE session_id = ?", [session_id]).fetchone()
            version = row[0] + 1
            self.conn.execute(
                "INSERT INTO view_versions (session_id, version, ids, cause, created_at) VALUES (?, ?, ?, ?, ?)",
                [session_id, version, ids_json(view), cause, now()],
            )
        return version

    @guarded
    def view_versions(self, session_id: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT * FROM view_versions WHERE session_id = ? ORDER BY version", [session_id])
        return [{**row, "ids": json.loads(row["ids"])} for row in rows]

    @guarded
    def add_event(self, session_id: int, kind: str, data: dict[str, Any]) -> int:
        with self._atomic():
            cursor = self.conn.execute(
                "INSERT INTO events (session_id, at, kind, data) VALUES (?, ?, ?, ?)",
                [session_id, now(), kind, json.dumps(data, ensure_ascii=False, default=str)],
            )
        assert cursor.lastrowid is not None  # set by the INSERT just run
        return cursor.lastrowid

    @guarded
    def events(self, session_id: int) -> list[dict[str, Any]]:
        rows = self._rows("SELECT * FROM events WHERE session_id = ? ORDER BY id", [session_id])
        return [{**row, "data": json.loads(row["data"])} for row in rows]

    # Working states (autosave) ---------------------------------------------------------------------

    @guarded
    def write_working_state(self, session_id: int, view: Iterable[str], cause: str, state: dict[str, Any]) -> int:
        """Autosave's one write: the view version and the working state together, in one transaction."""
        with self._atomic():
            version = self.add_view_version(session_id, view, cause)
            self.add_event(session_id, WORKING_STATE, state)
        return version

    @guarded
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

    @guarded
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
            f"SELECT COUNT(*), COALESCE(SUM({BODY_BYTES}), 0) FROM bodies b LEFT JOIN body_bytes x ON x.body = b.id"
            " WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = b.id)"
        ).fetchone()
        return int(row[0]), int(row[1])

    def _remove_unreferenced_bodies(self) -> tuple[int, int]:
        count, freed = self._unreferenced_bodies()
        if count:
            orphan = "NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = {}.id)"
            # An external-content index forgets a row only when told its old text.
            self.conn.execute(
                f"INSERT INTO bodies_fts (bodies_fts, rowid, text) SELECT 'delete', b.id, {BODY_TEXT} FROM bodies b"
                f" LEFT JOIN body_bytes x ON x.body = b.id WHERE b.search_indexed = 1 AND {orphan.format('b')}"
            )
            self.conn.execute(f"DELETE FROM body_bytes WHERE body IN (SELECT id FROM bodies WHERE {orphan.format('bodies')})")
            self.conn.execute(f"DELETE FROM bodies WHERE {orphan.format('bodies')}")
        return count, freed

    @guarded
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

    @guarded
    def prune(self, dry_run: bool = False) -> dict[str, Any]:
        """Remove what prune_plan names and every body no session references; compact the file after.
        With dry_run, say what would go and change nothing."""
        plan = self.prune_plan()
        before = self.size()
        if dry_run:
            kept = {row["id"] for row in plan}
            # Bodies only the planned sessions hold would go with them, as would those nobody holds now.
            row = self.conn.execute(
                f"SELECT COUNT(*), COALESCE(SUM({BODY_BYTES}), 0) FROM bodies b LEFT JOIN body_bytes x ON x.body = b.id"
                " WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.body = b.id AND m.session_id NOT IN"
                f" ({', '.join('?' * len(kept))}))",  # NOT IN () holds for every row; NOT IN (NULL) for none
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


def _text_json(value: object) -> str:
    """JSON for a TEXT column: a warning quoting a file name whose bytes are not UTF-8 keeps them as escapes."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text


def ids_json(view: Iterable[str], chunk: int = 1000) -> str:
    """json.dumps(list(view)), encoded a thousand ids at a time: the encoder holds a piece for every id until it
    joins them, which for a whole view was an import's peak (1.9 MB at 10k messages, 4 MB of file)."""
    ids = view if isinstance(view, list) else list(view)
    return "[" + ", ".join(json.dumps(ids[i : i + chunk])[1:-1] for i in range(0, len(ids), chunk)) + "]"


def fts_query(query: str) -> str:
    """The user's words as quoted FTS5 terms, so punctuation in a query is searched, not parsed."""
    words = re.findall(r"\S+", query)
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)

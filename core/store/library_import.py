"""The Library's imports: a session's messages and their bodies stored in one transaction, a batch at a time."""

from __future__ import annotations

import json
from collections.abc import Iterable

from foldscope.core.model.session import ReadError, Session
from foldscope.core.store.body_bytes import HugeBody, write_huge
from foldscope.core.store.library_base import LibraryBase
from foldscope.core.store.library_file import guarded, import_cache_kib, source_key
from foldscope.core.store.migrations import now
from foldscope.core.store.source_bytes import SourceBytes, body_rows

WAL_AUTOCHECKPOINT = 1000  # SQLite's default, in pages
# Messages stored a batch at a time: only one batch's message rows are held (a whole record's rows were most of an
# import's peak memory on a file of many tiny lines, and ten times this batch still a fifth of it).
IMPORT_BATCH = 1_000
MESSAGE_COLUMNS = ("session_id", "idx", "message_id", "kind", "created_at", "sha256", "body")
BODY_COLUMNS = ("id", "key", "original", "chars", "text")


class Imports(LibraryBase):
    """Library.import_session and what it stores through (known_session, find: the id a session's bytes are under)."""

    @guarded
    def import_session(
        self,
        session: Session,
        token_counts: tuple[str, list[int]] | None = None,
        *,
        least_cache: bool = False,
        names: dict[int, tuple[str, int, str]] | None = None,
    ) -> int:
        """Store a session in one transaction and return its id; the same source bytes give the same id (`least_cache`:
        SQLite's default cache, not the indexes' size: a tenth more CPU, 8 MiB less at 50,000 messages; `names`: given
        each huge text this import wrote into body_bytes, by id, as (the text, its name: write_huge's), for a snapshot
        pickled after it to name the text without hashing it again, snapshot.dump_session_to).

        Each message's original bytes (a BLOB) are stored once, as a body keyed by their SHA-256, with its
        text: for a line-based source the bytes of the line(s) it came from, sliced from the file (which
        must not have changed since it was read); for a native or payload file its JSON as the file held
        it. Bodies another session (an earlier version of the same file) already holds are not stored again.
        """
        with SourceBytes(session) as source:
            existing = self._held(source.sha256, token_counts)
            if existing is not None:
                return existing
            # The largest reported input, not the list of them: every request's int would be held through the import.
            peak = max((r.usage.reported_input for r in session.trace if r.usage is not None), default=None)
            # The commit returns once the import's pages are in the write-ahead log; copying them into the database
            # file, the checkpoint, is left to the next write or to close(), not holding up the import (docs/performance.md).
            self.conn.execute("PRAGMA wal_autocheckpoint=0")
            cache = self.conn.execute("PRAGMA cache_size").fetchone()[0]
            self.conn.execute(f"PRAGMA cache_size=-{import_cache_kib(len(session.record), source.size, least=least_cache)}")
            try:
                session_id = self._import(session, source, peak, token_counts, names)
            finally:
                self.conn.execute(f"PRAGMA wal_autocheckpoint={WAL_AUTOCHECKPOINT}")
                self.conn.execute(f"PRAGMA cache_size={int(cache)}")
                self.conn.execute("PRAGMA shrink_memory")  # the import's pages go back, not kept for the session
        return session_id

    def _import(
        self,
        session: Session,
        source: SourceBytes,
        peak_reported: int | None,
        token_counts: tuple[str, list[int]] | None = None,
        names: dict[int, tuple[str, int, str]] | None = None,
    ) -> int:
        with self._atomic():
            # Looked up again under the write lock: another process may have imported the same bytes
            # while this one hashed them (two processes opening one session give one session).
            existing = self._held(source.sha256, token_counts)
            if existing is not None:
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
                    name = write_huge(self.conn, body, source.parts(body.original))
                    # Only a message's own text: a call's, made for this write, would be kept alive by `names` alone
                    # (a 40 MB call's text held through the snapshot's pickling) for a snapshot that never names it.
                    if names is not None and name is not None and body.own:
                        names[id(body.text)] = (body.text, *name)
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

    def _held(self, source_sha256: str, token_counts: tuple[str, list[int]] | None) -> int | None:
        """The id a session of these source bytes is held under, its token counts stored (when given); None if none."""
        existing = self.find(source_sha256)
        if existing is not None and token_counts is not None:
            self.store_token_counts(existing, *token_counts)
        return existing

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


def _text_json(value: object) -> str:
    """JSON for a TEXT column: a warning quoting a file name whose bytes are not UTF-8 keeps them as escapes."""
    text = json.dumps(value, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(value)
    return text

"""The library's connection and what it records of a session: its rows, messages, token counts, view versions and events."""

from __future__ import annotations

import array
import contextlib
import json
import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    import sqlite_utils  # imported when Library.db is first used, never to create, open or import (start-up time)

from foldscope.core.model.session import LibraryError
from foldscope.core.store.body_bytes import BODY_TEXT
from foldscope.core.store.library_file import BUSY_TIMEOUT_S, connect, default_path, describe, guarded, shown_path
from foldscope.core.store.migrations import atomic, now

WORKING_STATE = "working_state"  # the event kind autosave writes (app/save.py); prune keeps a version holding one


class LibraryBase:
    """What every part of the Library (core.store.library) shares: the connection, and the rows each part reads and
    writes besides its own (a session's, its messages', their token counts, its view versions and events)."""

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

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def size(self) -> int:
        """Bytes the library takes on disk: its file and its write-ahead log."""
        if self.path is None:
            return 0
        return sum(Path(str(self.path) + suffix).stat().st_size for suffix in ("", "-wal") if Path(str(self.path) + suffix).exists())

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


def ids_json(view: Iterable[str], chunk: int = 1000) -> str:
    """json.dumps(list(view)), encoded a thousand ids at a time: the encoder holds a piece for every id until it
    joins them, which for a whole view was an import's peak (1.9 MB at 10k messages, 4 MB of file)."""
    ids = view if isinstance(view, list) else list(view)
    return "[" + ", ".join(json.dumps(ids[i : i + chunk])[1:-1] for i in range(0, len(ids), chunk)) + "]"

"""The library: a SQLite store of imported sessions, their messages, view versions and events."""

from __future__ import annotations

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Iterable

import sqlite_utils

from core.formats.lionagi_write import message_dict, native_dict
from core.model import Session

BATCH_SIZE = 500
MESSAGE_COLUMNS = ("session_id", "idx", "message_id", "kind", "created_at", "original", "sha256", "chars", "text")


def default_path() -> Path:
    """FOLDSCOPE_DB if set, else the XDG data folder: ~/.local/share/foldscope/library.db."""
    if os.environ.get("FOLDSCOPE_DB"):
        return Path(os.environ["FOLDSCOPE_DB"])
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "foldscope" / "library.db"


# Ordered, named migrations. Each runs once, in its own transaction, and is recorded in
# `migrations`; a library written by an older foldscope gets only the ones it lacks.
def _m001_tables(db: sqlite_utils.Database) -> None:
    db["sessions"].create(
        {
            "id": int, "source": str, "format": str, "source_sha256": str, "source_bytes": int,
            "model": str, "messages": int, "view_messages": int, "record_chars": int, "requests": int,
            "peak_reported_input": int, "warnings": str, "imported_at": str,
        },
        pk="id",
    )
    db["sessions"].create_index(["source_sha256"], unique=True)
    db["messages"].create(
        {
            "session_id": int, "idx": int, "message_id": str, "kind": str, "created_at": float,
            "original": str, "sha256": str, "chars": int, "text": str,
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


def _m002_message_search(db: sqlite_utils.Database) -> None:
    # Without triggers: an import fills the index for its own rows in one statement, far cheaper
    # than a trigger per row (import speed is a target).
    db["messages"].enable_fts(["text"], fts_version="FTS5", create_triggers=False)


def _m003_search_indexed(db: sqlite_utils.Database) -> None:
    # Sessions are indexed for search after their import, not inside it: tokenizing every
    # message text cost more than parsing the file, and import speed is a target.
    db["sessions"].add_column("search_indexed", int, not_null_default=0)
    db.execute("UPDATE sessions SET search_indexed = 1")  # migration 002 indexed what was there


MIGRATIONS: list[tuple[str, Callable[[sqlite_utils.Database], None]]] = [
    ("001_tables", _m001_tables),
    ("002_message_search", _m002_message_search),
    ("003_search_indexed", _m003_search_indexed),
]


def migrate(db: sqlite_utils.Database, migrations: Iterable[tuple[str, Callable]] = MIGRATIONS) -> list[str]:
    """Run the migrations this database has not had yet; returns their names."""
    if "migrations" not in db.table_names():
        db["migrations"].create({"name": str, "applied_at": str}, pk="name")
    done = {row["name"] for row in db["migrations"].rows}
    applied = []
    for name, step in migrations:
        if name in done:
            continue
        with db.atomic():
            step(db)
            db["migrations"].insert({"name": name, "applied_at": _now()})
        applied.append(name)
    return applied


class Library:
    """The session library. One connection, owned by the thread that opened it (STYLE.md point 7)."""

    def __init__(self, path: str | Path | None = None) -> None:
        if path == ":memory:":
            self.path = None
            self.db = sqlite_utils.Database(memory=True)
        else:
            self.path = Path(path) if path is not None else default_path()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.db = sqlite_utils.Database(self.path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.execute("PRAGMA foreign_keys=ON")
        migrate(self.db)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "Library":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # Imports -----------------------------------------------------------------------------------

    def import_session(self, session: Session) -> int:
        """Store a session in one transaction and return its id; the same source bytes give the same id."""
        sha, size = source_fingerprint(session)
        existing = self.find(sha)
        if existing is not None:
            return existing
        reported = [r.usage.reported_input for r in session.trace if r.usage is not None]
        rows = list(_message_rows(session))
        with self.db.atomic():
            session_id = self.db["sessions"].insert(
                {
                    "source": session.source, "format": session.format, "source_sha256": sha,
                    "source_bytes": size, "model": session.model, "messages": len(session.record),
                    "view_messages": len(session.view), "record_chars": sum(r["chars"] for r in rows),
                    "requests": len(session.trace), "peak_reported_input": max(reported) if reported else None,
                    "warnings": json.dumps(session.warnings, ensure_ascii=False), "imported_at": _now(),
                }
            ).last_pk
            for row in rows:
                row["session_id"] = session_id
            self._insert_messages(rows)
            self.add_view_version(session_id, session.view, "import")
            for event in session.events:
                self.add_event(session_id, str(event.get("kind", "event")), event)
        return session_id

    def _insert_messages(self, rows: list[dict[str, Any]]) -> None:
        # A seam: tests replace it to fail midway and check that nothing stays behind.
        # One prepared statement run in batches: sqlite-utils' insert_all rebuilds its SQL and
        # inspects every value per chunk, which cost as much as the JSON parse (import speed target).
        columns = list(MESSAGE_COLUMNS)
        sql = f"INSERT INTO messages ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})"
        for start in range(0, len(rows), BATCH_SIZE):
            batch = rows[start : start + BATCH_SIZE]
            self.db.conn.executemany(sql, [[row[c] for c in columns] for row in batch])

    def find(self, source_sha256: str) -> int | None:
        row = self.db.execute("SELECT id FROM sessions WHERE source_sha256 = ?", [source_sha256]).fetchone()
        return row[0] if row else None

    # Queries -----------------------------------------------------------------------------------

    def list_sessions(self) -> list[dict[str, Any]]:
        return list(self.db["sessions"].rows_where(order_by="id"))

    def session_row(self, session_id: int) -> dict[str, Any]:
        return self.db["sessions"].get(session_id)

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
        row = self.db.execute(
            "SELECT COALESCE(MAX(version), 0) FROM view_versions WHERE session_id = ?", [session_id]
        ).fetchone()
        version = row[0] + 1
        self.db["view_versions"].insert(
            {"session_id": session_id, "version": version, "ids": json.dumps(list(view)), "cause": cause,
             "created_at": _now()}
        )
        return version

    def view_versions(self, session_id: int) -> list[dict[str, Any]]:
        rows = self.db["view_versions"].rows_where("session_id = ?", [session_id], order_by="version")
        return [{**row, "ids": json.loads(row["ids"])} for row in rows]

    def add_event(self, session_id: int, kind: str, data: dict[str, Any]) -> int:
        return self.db["events"].insert(
            {"session_id": session_id, "at": _now(), "kind": kind, "data": json.dumps(data, ensure_ascii=False, default=str)}
        ).last_pk

    def events(self, session_id: int) -> list[dict[str, Any]]:
        rows = self.db["events"].rows_where("session_id = ?", [session_id], order_by="id")
        return [{**row, "data": json.loads(row["data"])} for row in rows]


def source_fingerprint(session: Session) -> tuple[str, int]:
    """SHA-256 and size of the session's source file, or of its native form when it has no file."""
    digest = hashlib.sha256()
    size = 0
    source = Path(session.source) if session.source else None
    if source is not None and source.is_file():
        with open(source, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
                size += len(block)
    else:
        data = json.dumps(native_dict(session), ensure_ascii=False, sort_keys=True).encode("utf-8")
        digest.update(data)
        size = len(data)
    return digest.hexdigest(), size


def _message_rows(session: Session) -> Iterable[dict[str, Any]]:
    dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
    for index, message in enumerate(session.record):
        original = dumps(message.raw if message.raw is not None else message_dict(message))
        text = message.text
        yield {
            "idx": index, "message_id": message.id, "kind": message.kind, "created_at": message.created_at,
            "original": original, "sha256": hashlib.sha256(original.encode("utf-8")).hexdigest(),
            "chars": len(text), "text": text,
        }


def _json_default(value: Any) -> Any:
    # A reader may keep its raw message as a read-only mapping; anything else is shown as text.
    return dict(value) if hasattr(value, "items") else str(value)


def fts_query(query: str) -> str:
    """The user's words as quoted FTS5 terms, so punctuation in a query is searched, not parsed."""
    words = re.findall(r"\S+", query)
    return " ".join('"' + word.replace('"', '""') + '"' for word in words)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")

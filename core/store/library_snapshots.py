"""The Library's snapshots: sessions rebuilt without their files (core.store.snapshot), kept and looked up."""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any, BinaryIO

from foldscope.core.model.session import Session
from foldscope.core.store.library_base import LibraryBase
from foldscope.core.store.library_file import guarded, source_key
from foldscope.core.store.migrations import now


class Snapshots(LibraryBase):
    """Library.keep_snapshot, keep_memo and stored_session."""

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
        file: the reader's output and, when given, the counter's memo (Counter.memo(), or snapshot_memo.dump_memo's bytes of
        it over this session's record); replaces an older one.
        `data`: the session as snapshot.dump_session gave it when read, before a count changed it (the trace's
        measure sets the unseen head and the scale), or a file holding it from its start (snapshot.dump_session_to),
        with held=True: its messages' huge texts named as the bodies stored under `session_id` hold them; by default
        it is dumped so now."""
        from foldscope.core.store import snapshot, snapshot_inputs, snapshot_memo

        reader = snapshot_inputs.reader_identity()
        if reader is None:
            return
        inputs = json.dumps(snapshot_inputs.inputs_of(path, session))  # ASCII: a name that is not UTF-8 keeps its escapes
        data = data if data is not None else snapshot.dump_session(session, held=True)
        counter = snapshot_inputs.counter_identity() if memo is not None else None
        kept = snapshot_memo.memo_bytes(memo, session.record) if memo is not None and counter is not None else None
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
        from foldscope.core.store import snapshot_inputs, snapshot_memo

        counter = snapshot_inputs.counter_identity()
        if counter is None:
            return False
        with self._atomic():
            cursor = self.conn.execute(
                "UPDATE snapshots SET counter = ?, memo = ? WHERE source = ? AND sample = ? AND session_id = ?",
                [counter, snapshot_memo.memo_bytes(memo, record), source_key(str(path)), sample or "", session_id],
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
        from foldscope.core.store import snapshot, snapshot_inputs, snapshot_memo

        row = self.conn.execute(
            "SELECT session_id, reader, inputs, rowid, counter, memo FROM snapshots WHERE source = ? AND sample = ?",
            [source_key(str(path)), sample or ""],
        ).fetchone()
        if row is None or row[1] != snapshot_inputs.reader_identity():
            return None
        session_id, _, inputs, rowid, counter, kept = row
        try:
            if not snapshot_inputs.still_current(json.loads(inputs), path):
                return None
            with self.conn.blobopen("snapshots", "session", rowid, readonly=True) as data:  # not fetched whole beside it
                session = snapshot.load_session(data, held=functools.partial(_held_text, self.conn, session_id))
            if format is not None and session.format != format:
                return None
            memo = (
                snapshot_memo.load_memo(kept, session.record)
                if kept is not None and counter == snapshot_inputs.counter_identity()
                else None
            )
        except (snapshot.SnapshotError, ValueError, sqlite3.OperationalError):  # the last: the row gone since it was found
            return None  # (another process kept a newer snapshot before the blob was opened)
        return session_id, session, memo


def _held_text(conn: sqlite3.Connection, session_id: int, place: int, message_id: str, size: int, digest: str) -> str:
    """The huge text a snapshot names as the body of its session's message at `place` (snapshot_stream.HELD), read from
    body_bytes a part at a time, or from the body's own row where it is stored whole there; ValueError when the session
    holds no such body or it is not that text."""
    from foldscope.core.store.snapshot_stream import held_name, read_held

    sql = "SELECT m.body, b.text FROM messages m JOIN bodies b ON b.id = m.body WHERE m.session_id = ? AND m.message_id = ? AND m.idx = ?"
    row = conn.execute(sql, [session_id, message_id, place]).fetchone()
    if row is None:
        raise ValueError("a held text whose message the library does not hold")
    if row[1] is not None:
        # A body stored whole in its row: a library made before migration 008 (which moved no body), and every later
        # session whose body is that one. Its text is the held text only if it names the same (review20).
        if held_name(row[1]) != (size, digest):
            raise ValueError("a held text that is not the one the snapshot named")
        return row[1]
    with conn.blobopen("body_bytes", "text", row[0], readonly=True) as blob:
        return read_held(blob, size, digest)

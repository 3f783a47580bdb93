"""A huge body kept apart (migration 008): its original and text in a row of body_bytes, written a part at a time."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Iterable, Iterator
from typing import NamedTuple

# A body whose original is this many bytes, or whose text this many characters, is a huge body: kept in its own row of
# body_bytes (migration 008), written there a part at a time, never bound whole (HugeBody).
HUGE_BODY = 1 << 22
PART_BYTES = 1 << 20  # a huge body is hashed and written this many bytes (or characters of its text) at a time

# A body's text: in its row, or a huge body's UTF-8 in body_bytes (the query joins it as x), read as text.
BODY_TEXT = "COALESCE(b.text, CAST(x.text AS TEXT))"
# What a body holds, in bytes: its original and its text (a query's b and x, as BODY_TEXT).
BODY_BYTES = "LENGTH(COALESCE(b.original, x.original)) + LENGTH(CAST(COALESCE(b.text, x.text) AS BLOB))"
HUGE_SNIPPET = 80  # characters of a huge body's text that stand for its snippet in a search's hits


class HugeBody(NamedTuple):
    """A huge body (HUGE_BODY) as the import writes it into body_bytes after its row in bodies: its id and key, its
    original (a span of the mapped file, or its bytes) and its text."""

    id: int
    key: str
    original: tuple[int, int] | bytes
    text: str
    text_bytes: int | None = None  # its text's UTF-8 length where known (migrations.body_key_and_size)
    # Whether the text is one of its message's own values, the same str each time it is asked for, as a snapshot names
    # a held text (snapshot_stream.held_places); a call's text is made anew each time, so no snapshot names it.
    own: bool = False

    def size(self) -> int:
        """Its original's bytes."""
        return len(self.original) if isinstance(self.original, bytes) else self.original[1] - self.original[0]

    def text_parts(self) -> Iterator[bytes]:
        """Its text as UTF-8, PART_BYTES characters at a time (each code point is encoded alone, so the parts join to
        the whole text's bytes)."""
        text = self.text
        for at in range(0, len(text), PART_BYTES):
            yield text[at : at + PART_BYTES].encode("utf-8")

    def text_size(self) -> int:
        """Its text's UTF-8 bytes: as its key's pass counted them, else counted a part at a time."""
        if self.text_bytes is not None:
            return self.text_bytes
        return len(self.text) if self.text.isascii() else sum(map(len, self.text_parts()))


def write_huge(conn: sqlite3.Connection, body: HugeBody, original: Iterable[bytes]) -> tuple[int, str] | None:
    """A huge body's original (given a part at a time: SourceBytes.parts) and text, in its row of body_bytes, a part at
    a time (unless the library held the body already, under another id). The row is made of two zero-filled blobs that
    end it, which SQLite writes without making them in memory, then filled: bound whole, SQLite copied the line and the
    text it was given and made the row from the copies, four times the message held at once (docs/performance.md).
    Returns the text's name as a snapshot names a held text (its UTF-8 size and SHA-256, snapshot_stream.held_name),
    hashed from the parts written; None where nothing was written."""
    if conn.execute("SELECT 1 FROM bodies WHERE id = ? AND key = ?", [body.id, body.key]).fetchone() is None:
        return None
    conn.execute(
        "INSERT INTO body_bytes (body, original, text) VALUES (?, zeroblob(?), zeroblob(?))", [body.id, body.size(), body.text_size()]
    )
    with conn.blobopen("body_bytes", "original", body.id) as blob:
        for part in original:
            blob.write(part)
    digest, size = hashlib.sha256(), 0
    with conn.blobopen("body_bytes", "text", body.id) as blob:
        for part in body.text_parts():
            blob.write(part)
            digest.update(part)
            size += len(part)
    return size, digest.hexdigest()


def huge_start(conn: sqlite3.Connection, body: int) -> str:
    """A huge body's snippet: the index reads its text from bodies, which holds none (body_bytes does), so it gives
    none; its text's start stands for it, read from body_bytes without reading the rest."""
    with conn.blobopen("body_bytes", "text", body, readonly=True) as blob:
        start = blob.read(HUGE_SNIPPET * 4).decode("utf-8", "ignore")  # a character cut at the end is left out
    return start[:HUGE_SNIPPET] + "…"

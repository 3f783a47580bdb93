"""A session's source bytes while it is stored: the file mapped, hashed and sliced into each message's original, and
the body rows made from them."""

from __future__ import annotations

import hashlib
import json
import mmap
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

if TYPE_CHECKING:
    from foldscope.core.formats.stream import SourceLines

from foldscope.core.formats.lionagi_write import message_dict, native_dict
from foldscope.core.formats.registry import format_named
from foldscope.core.model.session import Message, ReadError, Session, storable_time
from foldscope.core.store import body_bytes, snapshot_inputs
from foldscope.core.store.body_bytes import HugeBody
from foldscope.core.store.migrations import body_key_and_size

# The mapped source file's pages are let go each time this many of its bytes have been read (hashed or sliced into
# originals): a mapped page read counts in the process's resident memory until let go. Small enough that a small
# file is never wholly resident at once, large enough that the madvise calls and page faults stay a small cost.
RELEASE_BYTES = 1 << 18


class SourceBytes:
    """The session's source bytes while it is stored: its SHA-256 and size, and each message's original bytes."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self.lines: SourceLines | None = session.extras.get("source_lines")
        self.data: bytes | mmap.mmap = b""
        self._handle: BinaryIO | None = None
        self._dumps = json.JSONEncoder(ensure_ascii=False, default=_json_default).encode
        self._unreleased = 0  # bytes sliced from the mapping since its pages were last let go

    def __enter__(self) -> SourceBytes:
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
            snapshot_inputs.file_hashed(path, stat, self.sha256, self.session)  # its snapshot names the file by it
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
        span = self.span_of(message)
        if span is not None:
            return self._slice(*span)
        source = self.lines
        lines = source.lines_of(message) if source is not None else ()
        if source is not None and lines:
            data, starts = self.data, source.starts
            return self._counted(b"\n".join(data[starts[n - 1] : starts[n]].rstrip(b"\r\n") for n in lines))
        return self._dumps(message.raw if message.raw is not None else message_dict(message)).encode("utf-8")

    def span_of(self, message: Message) -> tuple[int, int] | None:
        """(start, stop) of the message's original in the mapped file when it is one line (without its line break);
        None when it is several lines joined or made from the message."""
        source = self.lines
        lines = source.lines_of(message) if source is not None else ()
        if source is None or len(lines) != 1:
            return None
        starts = source.starts
        start = starts[lines[0] - 1]
        return start, line_end(self.data, start, starts[lines[0]])

    def parts(self, original: tuple[int, int] | bytes) -> Iterator[bytes]:
        """A huge body's original (a span of the file, or its bytes) body_bytes.PART_BYTES at a time: a span is sliced a part at a
        time, its pages let go after each, never held whole."""
        if isinstance(original, bytes):
            with memoryview(original) as view:
                for at in range(0, len(view), body_bytes.PART_BYTES):
                    yield bytes(view[at : at + body_bytes.PART_BYTES])
            return
        start, stop = original
        for at in range(start, stop, body_bytes.PART_BYTES):
            yield self._slice(at, min(stop, at + body_bytes.PART_BYTES))

    def _slice(self, start: int, stop: int) -> bytes:
        return self._counted(self.data[start:stop])

    def _counted(self, got: bytes) -> bytes:
        """got, the mapping's pages let go once RELEASE_BYTES of it have been sliced since they last were."""
        self._unreleased += len(got)
        if self._unreleased >= RELEASE_BYTES:
            self.release()
            self._unreleased = 0
        return got


def line_end(data: bytes | mmap.mmap, start: int, stop: int) -> int:
    """Where the line in data[start:stop] ends without its line break: sliced once there, a huge line is not copied a
    second time by rstrip."""
    while stop > start and data[stop - 1] in (10, 13):  # b"\n", b"\r"
        stop -= 1
    return stop


def _json_default(value: Any) -> Any:
    # A reader may keep its raw message as a read-only mapping; anything else is shown as text.
    return dict(value) if hasattr(value, "items") else str(value)


def body_rows(
    session: Session,
    session_id: int,
    source: SourceBytes,
    chars: list[int],
    message_rows: list[tuple],
    keys: list[str],
    start: int,
    stop: int,
    first: int,
    huge: list[HugeBody] | None = None,
) -> Iterator[tuple]:
    """Body rows in BODY_COLUMNS order of the record's messages start to stop, their ids counted from `first`;
    appends each message's row (MESSAGE_COLUMNS, its body's id as tried) to message_rows and its body's key to keys,
    and adds the record's characters to chars[0] as it goes. A huge body (body_bytes.HUGE_BODY) is given with no original and no
    text, and appended to `huge` for the caller to write into body_bytes (without `huge`, every body is whole)."""
    sha256, original, record = hashlib.sha256, source.original, session.record
    total = chars[0]
    for body_id, index in enumerate(range(start, min(stop, len(record))), first):
        message = record[index]
        text = message.text
        total += len(text)
        chars[0] = total
        span = source.span_of(message) if huge is not None else None
        if huge is not None and ((span is not None and span[1] - span[0] >= body_bytes.HUGE_BODY) or len(text) >= body_bytes.HUGE_BODY):
            kept: tuple[int, int] | bytes = span if span is not None else original(message)
            hashing = sha256()
            for part in source.parts(kept):
                hashing.update(part)
            digest = hashing.hexdigest()
            data = None
        else:
            data = original(message)
            digest = sha256(data).hexdigest()
        key, text_bytes = body_key_and_size(digest, text)  # the UTF-8 size its key's pass counted: a huge body's blob's
        keys.append(key)
        message_rows.append((session_id, index, message.id, message.kind, storable_time(message.created_at), digest, body_id))
        if data is None:
            assert huge is not None
            content = message.content
            own = isinstance(content, Mapping) and any(value is text for value in content.values())
            huge.append(HugeBody(body_id, key, kept, text, text_bytes, own))
            yield (body_id, key, None, len(text), None)
            continue
        # SQLite reads a bound str through the UTF-8 copy CPython then keeps inside a non-ASCII str for the str's life:
        # bound as the message's own, each such text was held twice while the session stayed open (docs/performance.md).
        yield (body_id, key, data, len(text), text if text.isascii() else text[:1] + text[1:])

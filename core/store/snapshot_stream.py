"""A snapshot's stream: compressed and decompressed a block at a time, its huge texts written beside its pickles."""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import pickle
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, BinaryIO

from foldscope.core.model.session import Message
from foldscope.core.store import body_bytes

BLOCK = 1 << 20  # a snapshot is compressed, decompressed and written into the library this many bytes at a time (fill)
# A message's content or metadata value that is a text of this many characters is a huge text: written into the
# snapshot a part at a time before the batch of messages holding it, which names it by a persistent id. Pickled as a
# str, CPython copied it whole into one bytes object (and the compressor made its output whole from that).
HUGE_TEXT = 1 << 22
PART = 1 << 20  # characters (written) or bytes (read) of a huge text at a time
MARK = "huge text"  # the pickle before a huge text's bytes: (MARK, its UTF-8 size)
READ_BLOCK = 1 << 18  # bytes of a file read into one buffer at a time (each_block)


def huge_texts(messages: Iterable[Message]) -> list[str]:
    """The huge texts among the messages' content and metadata values, each once, in the order met."""
    found: dict[int, str] = {}
    for message in messages:
        for fields in (message.content, message.metadata):
            if isinstance(fields, Mapping):
                for value in fields.values():
                    if type(value) is str and len(value) >= HUGE_TEXT:
                        found.setdefault(id(value), value)
    return list(found.values())


# A huge text that is its message's own text (Message.text) is held by the library as that message's body's text
# (body_bytes.HUGE_BODY): a snapshot kept there names it by a pickle of (HELD, the message's place in the record, its
# id, the text's UTF-8 size, that UTF-8's SHA-256) instead of holding it again. Compressed into the snapshot and
# written as its blob, a 20 MB message's text cost 0.2-0.3 s of CPU more than its body's own write (docs/performance.md,
# huge20); named, it costs its hash, and the snapshot is as fast to load from the body's row.
HELD = "held text"


def held_places(messages: Iterable[Message], start: int) -> dict[int, tuple[int, str, str]]:
    """The messages' own texts that are huge bodies' (body_bytes.HUGE_BODY), by id: (the message's place, counted from
    `start`, its id, the text; the text kept, so its id names no other object while this is used)."""
    places: dict[int, tuple[int, str, str]] = {}
    for place, message in enumerate(messages, start):
        content = message.content
        if isinstance(content, Mapping) and any(type(v) is str and len(v) >= body_bytes.HUGE_BODY for v in content.values()):
            text = message.text  # asked only of a message holding a huge text: a call's text is made each time
            if len(text) >= body_bytes.HUGE_BODY:
                places.setdefault(id(text), (place, message.id, text))
    return places


def write_held(out: BinaryIO | Any, text: str, place: int, message_id: str, name: tuple[int, str] | None = None) -> None:
    """A huge text the library holds as the body of the message at `place`, named in the snapshot's stream (HELD):
    by `name` where its import has named it (body_bytes.write_huge), else by held_name."""
    out.write(pickle.dumps((HELD, place, message_id, *(name or held_name(text))), protocol=5))


def held_name(text: str) -> tuple[int, str]:
    """What names a held text: its UTF-8 size and that UTF-8's SHA-256, made a part at a time."""
    size, digest = 0, hashlib.sha256()
    for part in _parts(text):
        size += len(part)
        digest.update(part)
    return size, digest.hexdigest()


def is_held(value: Any) -> bool:
    return (
        type(value) is tuple
        and len(value) == 5
        and value[0] == HELD
        and all(type(v) is t for v, t in zip(value[1:], (int, str, int, str)))
        and value[3] >= 0
    )


def read_held(blob: Any, size: int, digest: str) -> str:
    """A held text from its body's UTF-8 (an SQLite blob of it, read a part at a time); ValueError when that is not the
    text the snapshot named (another size or hash: the body was stored by another reader, or changed)."""
    if len(blob) != size:
        raise ValueError("a held text of another size")
    hashing = hashlib.sha256()
    text = read_text(blob, size, hashing)
    if hashing.hexdigest() != digest:
        raise ValueError("a held text that is not the one the snapshot named")
    return text


def _parts(text: str) -> Iterator[bytes]:
    for at in range(0, len(text), PART):
        yield text[at : at + PART].encode("utf-8", "surrogatepass")  # each code point alone: the parts join to the whole


def write_text(out: BinaryIO | Any, text: str) -> None:
    """A huge text into the snapshot's stream: a pickle of (MARK, its UTF-8 size), then its UTF-8 a part at a time
    (into a Deflating stream, coded as its first part suits: Deflating.text)."""
    size = len(text) if text.isascii() else sum(map(len, _parts(text)))
    out.write(pickle.dumps((MARK, size), protocol=5))
    parts = _parts(text)
    first = next(parts, b"")
    with out.text(first) if isinstance(out, Deflating) else contextlib.nullcontext():
        out.write(first)
        for part in parts:
            out.write(part)


def is_mark(value: Any) -> bool:
    return type(value) is tuple and len(value) == 2 and value[0] == MARK and type(value[1]) is int and value[1] >= 0


def read_text(stream: Any, size: int, seen: Any = None) -> str:
    """A huge text's `size` bytes of UTF-8 from the stream, decoded a part at a time (the whole bytes are never held
    beside the text), each part given to `seen` (a hash's update) too; EOFError when the stream ends first."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    parts: list[str] = []
    left = size
    while left:
        data = stream.read(min(PART, left))
        if not data:
            raise EOFError("a snapshot cut inside a huge text")
        left -= len(data)
        if seen is not None:
            seen.update(data)
        parts.append(decoder.decode(data))
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


# A zlib stream's header for level 1 and the default window: what zlib.compress(data, 1) starts with.
HEADER = b"\x78\x01"
SAMPLE = 1 << 16  # bytes of a huge text's first part compressed both ways to choose its coding (Deflating.text)
# A huge text is coded by Huffman alone where that leaves it at most this much larger than level 1 does: text with
# few repeats to find (random letters, CJK, base64), where level 1's search for them took three times as long
# (bench/bench_huge.py; docs/performance.md, "A huge text's coding").
HUFFMAN_ALLOWANCE = 1.05


def _raw(strategy: int) -> Any:
    """A level 1 compressor of bare deflate blocks (no zlib header or checksum: Deflating writes those)."""
    return zlib.compressobj(1, zlib.DEFLATED, -zlib.MAX_WBITS, 8, strategy)


def huffman_suits(sample: bytes) -> bool:
    """Whether Huffman coding alone shrinks these bytes about as much as level 1 (within HUFFMAN_ALLOWANCE)."""
    sample = sample[:SAMPLE]
    level_1 = _raw(zlib.Z_DEFAULT_STRATEGY)
    huffman = _raw(zlib.Z_HUFFMAN_ONLY)
    return len(huffman.compress(sample) + huffman.flush()) <= HUFFMAN_ALLOWANCE * len(level_1.compress(sample) + level_1.flush())


class Deflating:
    """A file the pickler writes to that passes on only the compressed bytes: a zlib stream at level 1, what
    zlib.compress gives, but for a huge text whose bytes suit Huffman coding alone (Deflating.text).

    The stream is written as zlib writes one (its header, deflate blocks, the Adler-32 of the data), with the blocks
    of each stretch from a compressor of their own: a stretch ends with a sync flush (byte-aligned, not the last block),
    so the next compressor's blocks follow as the same deflate stream, as pigz joins its threads' blocks. Any zlib
    reader inflates it; where no huge text changes the coding, the bytes are zlib.compress(data, 1)'s."""

    def __init__(self, out: BinaryIO) -> None:
        self._out = out
        self._zlib = _raw(zlib.Z_DEFAULT_STRATEGY)
        self._adler = zlib.adler32(b"")
        out.write(HEADER)

    def write(self, data: Any) -> int:
        with memoryview(data) as view:  # a block at a time: compressed whole, a huge text's output was held whole
            self._adler = zlib.adler32(view, self._adler)
            for start in range(0, len(view), BLOCK):
                self._out.write(self._zlib.compress(view[start : start + BLOCK]))
            return len(view)

    @contextlib.contextmanager
    def text(self, first: bytes) -> Iterator[None]:
        """Within it, the bytes written are one huge text's, whose first part is `first`: coded by Huffman alone where
        that suits them (huffman_suits), then level 1 again."""
        if not huffman_suits(first):
            yield
            return
        self._switch(_raw(zlib.Z_HUFFMAN_ONLY))
        try:
            yield
        finally:
            self._switch(_raw(zlib.Z_DEFAULT_STRATEGY))

    def _switch(self, compressor: Any) -> None:
        self._out.write(self._zlib.flush(zlib.Z_SYNC_FLUSH))
        self._zlib = compressor

    def finish(self) -> None:
        self._out.write(self._zlib.flush())
        self._out.write(self._adler.to_bytes(4, "big"))


class Inflating:
    """The file a snapshot is unpickled from, decompressed as the unpickler reads it (a frame at a time): the whole
    pickle (80 MB at 50,000 messages, twice the compressed blob) is never held beside the session it builds."""

    def __init__(self, data: bytes | Any) -> None:
        self._data, self._taken = data, 0  # bytes, or anything sliced as they are (an SQLite blob)
        self._zlib = zlib.decompressobj()
        self._buffer = bytearray()
        self._at = 0  # where reading is in the buffer

    def _fill(self) -> bool:
        """More decompressed bytes in the buffer; False at the stream's end (or the data's, for a cut one)."""
        if self._zlib.eof:
            return False
        source = self._zlib.unconsumed_tail
        if not source:
            source = self._data[self._taken : self._taken + BLOCK]
            self._taken += len(source)
            if not source:
                self._buffer += self._zlib.flush()
                return False
        if self._at > BLOCK:  # what was read is let go, so the buffer holds about one block
            del self._buffer[: self._at]
            self._at = 0
        self._buffer += self._zlib.decompress(source, BLOCK)
        return True

    def read(self, size: int = -1) -> bytes:
        while (size < 0 or len(self._buffer) - self._at < size) and self._fill():
            pass
        end = len(self._buffer) if size < 0 else min(len(self._buffer), self._at + size)
        out = bytes(self._buffer[self._at : end])
        self._at = end
        return out

    def readinto(self, target: Any) -> int:
        data = self.read(len(target))
        target[: len(data)] = data
        return len(data)

    def readline(self) -> bytes:
        while (end := self._buffer.find(b"\n", self._at)) < 0 and self._fill():
            pass
        return self.read(end + 1 - self._at if end >= 0 else -1)


def each_block(handle: Any, use: Callable[[memoryview], Any]) -> None:
    """Each block of a file (from where it stands) to `use`, read into one buffer again and again: a session's file
    hashed (snapshot_inputs.file_sha256), a spill copied into its row (snapshot.fill). A block read as bytes was made
    while the one before was still held (2 MiB at once); a block given to `use` is valid only during the call."""
    buffer = bytearray(READ_BLOCK)
    with memoryview(buffer) as view:
        while size := handle.readinto(buffer):
            use(view[:size])

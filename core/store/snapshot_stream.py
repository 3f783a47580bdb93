"""A snapshot's stream: compressed and decompressed a block at a time, its huge texts written beside its pickles."""

from __future__ import annotations

import codecs
import pickle
import zlib
from collections.abc import Iterable, Mapping
from typing import Any, BinaryIO

from foldscope.core.model.session import Message

BLOCK = 1 << 20  # a snapshot is compressed, decompressed and written into the library this many bytes at a time (fill)
# A message's content or metadata value that is a text of this many characters is a huge text: written into the
# snapshot a part at a time before the batch of messages holding it, which names it by a persistent id. Pickled as a
# str, CPython copied it whole into one bytes object (and the compressor made its output whole from that).
HUGE_TEXT = 1 << 22
PART = 1 << 20  # characters (written) or bytes (read) of a huge text at a time
MARK = "huge text"  # the pickle before a huge text's bytes: (MARK, its UTF-8 size)


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


def _parts(text: str) -> Iterable[bytes]:
    for at in range(0, len(text), PART):
        yield text[at : at + PART].encode("utf-8", "surrogatepass")  # each code point alone: the parts join to the whole


def write_text(out: BinaryIO | Any, text: str) -> None:
    """A huge text into the snapshot's stream: a pickle of (MARK, its UTF-8 size), then its UTF-8 a part at a time."""
    size = len(text) if text.isascii() else sum(map(len, _parts(text)))
    out.write(pickle.dumps((MARK, size), protocol=5))
    for part in _parts(text):
        out.write(part)


def is_mark(value: Any) -> bool:
    return type(value) is tuple and len(value) == 2 and value[0] == MARK and type(value[1]) is int and value[1] >= 0


def read_text(stream: Any, size: int) -> str:
    """A huge text's `size` bytes of UTF-8 from the stream, decoded a part at a time (the whole bytes are never held
    beside the text); EOFError when the stream ends first."""
    decoder = codecs.getincrementaldecoder("utf-8")("surrogatepass")
    parts: list[str] = []
    left = size
    while left:
        data = stream.read(min(PART, left))
        if not data:
            raise EOFError("a snapshot cut inside a huge text")
        left -= len(data)
        parts.append(decoder.decode(data))
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


class Deflating:
    """A file the pickler writes to that passes on only the compressed bytes (zlib level 1, as zlib.compress gives)."""

    def __init__(self, out: BinaryIO) -> None:
        self._zlib = zlib.compressobj(1)
        self._out = out

    def write(self, data: Any) -> int:
        with memoryview(data) as view:  # a block at a time: compressed whole, a huge text's output was held whole
            for start in range(0, len(view), BLOCK):
                self._out.write(self._zlib.compress(view[start : start + BLOCK]))
            return len(view)

    def finish(self) -> None:
        self._out.write(self._zlib.flush())


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

"""A counting child: the process that builds the encoding and counts the texts its parent sends down a pipe (serve,
its entry point main), and how a parent starts one, as a fresh interpreter (spawn) or forked with the encoding it has
built (fork), and stops it (stop)."""

from __future__ import annotations

import marshal
import os
import sys
from collections.abc import Callable
from functools import partial
from typing import Any, BinaryIO, NamedTuple, Protocol

from foldscope.core.request import long_parts, long_pieces, tokens
from foldscope.core.request.counting import forked_on_pipes
from foldscope.core.request.passages import Passages

# How a child is started as a fresh interpreter (core.request.counting.ahead): `python -m MODULE DOWN UP`.
MODULE = "foldscope.core.request.counting.child"


# A text of this many characters or more goes down a pipe apart from its message: its UTF-8 written a megabyte at a
# time, where marshal would make a whole copy of it (50 MB more for a 50 MB message, the parent's peak).
HUGE = 1 << 22
_CHUNK = 1 << 20
_APART = 56  # the bits of a message's length below the number of texts sent apart (in the top byte)
# A text sent apart as UTF-8 the parent has made (_as_utf8) says so in the top bit of its number of parts: its size and
# bytes follow, written and read as they are. In marshal's form a message's parts were copied into its growing buffer
# (a realloc at each growth: 0.056 s of CPU and 70 MB of fresh pages in the parent of a 50 MB message of CJK sentences,
# copied again by the child's loads; docs/performance.md, huge25).
_UTF8 = 1 << 63
# A text of a "counts" message this long (a part of a huge body, BodyParts: to twice long_pieces.TEXT_PART), not ASCII
# and holding no long piece, goes down as its UTF-8 where the child counts with quicktok, which counts the bytes as they
# come: the child decoded the text from marshal's UTF-8 and encoded it again for quicktok (0.06 + 0.05 s of a 50 MB
# message of CJK sentences), and marshal copies bytes where it encoded the str (docs/performance.md, huge23).
UTF8_TEXT = long_pieces.LONG_PIECE


def send(stream: BinaryIO, value: Any) -> None:
    """One message down a pipe: its length (8 bytes, little-endian), then the value in marshal form (data only). A
    (kind, text) or (kind, [text, ...]) message's HUGE texts follow it apart (their number in the length's top byte),
    each in parts cut between two pieces (long_pieces.cuts: a part's count is the count of the text there), each part
    its UTF-8 length then its UTF-8 a megabyte at a time, and so do its texts sent as their UTF-8 (_UTF8); the receiver
    puts them back in their places."""
    value, apart = _set_apart(_as_utf8(value))
    data = marshal.dumps(value)
    stream.write((len(data) | len(apart) << _APART).to_bytes(8, "little"))
    stream.write(data)  # apart: the two added would copy a huge message's text once more
    for text in apart:
        if type(text) is bytes:  # UTF-8 made for the child (_as_utf8): written as it is
            stream.write((_UTF8 | 1).to_bytes(8, "little"))
            stream.write(len(text).to_bytes(8, "little"))
            stream.write(text)
            continue
        if isinstance(text, long_parts.Parts):  # one text as its chunks (Helper.count_parts): one part, never joined
            stream.write((1).to_bytes(8, "little"))
            stream.write(sum(_utf8_size(chunk, 0, len(chunk)) for chunk in text.chunks).to_bytes(8, "little"))
            for chunk in text.chunks:
                for at in range(0, len(chunk), _CHUNK):
                    stream.write(_utf8(chunk, at, len(chunk)))
            continue
        cuts = long_pieces.cuts(text, long_pieces.TEXT_PART)
        stream.write((len(cuts) - 1).to_bytes(8, "little"))
        for start, end in zip(cuts, cuts[1:]):
            stream.write(_utf8_size(text, start, end).to_bytes(8, "little"))
            for at in range(start, end, _CHUNK):
                stream.write(_utf8(text, at, end))
    stream.flush()


def receive(stream: BinaryIO, parts: bool = False) -> Any:
    """The next message send wrote (EOFError when the other end closed the pipe, even within a message). With `parts`,
    a text sent apart comes as the list of its parts (a counting child counts them one by one: never the whole text
    at once, nor its UTF-8 and its str together), a part longer than _CHUNK bytes as a long_parts.Parts, decoded a
    chunk at a time (one piece of 50 MB is one part: its UTF-8 and its str were 100 MB at once)."""
    size = int.from_bytes(_read(stream, 8), "little")
    value = marshal.loads(_read(stream, size & ((1 << _APART) - 1)))  # data only (lists of str and int), from our own
    apart = []
    for _ in range(size >> _APART):
        if (number := _number(stream)) & _UTF8:  # UTF-8 sent as it is: given as those bytes, a counting child counts them
            data = _read(stream, _number(stream))
            apart.append(data if parts else _text(data))
            continue
        cut = [_part(stream, _number(stream)) for _ in range(number)]
        apart.append(cut if parts else "".join(map(whole, cut)))
    value = _put_back(value, apart) if apart else value
    return value if parts else _as_texts(value)


def whole(part: str | bytes | long_parts.Parts) -> str:
    """A part receive gave, as one str."""
    return part if isinstance(part, str) else _text(part) if isinstance(part, bytes) else part.join()


def _as_utf8(value: Any) -> Any:
    """A "counts" message with each text quicktok counts as it counts its UTF-8 (_sent_as) as that UTF-8; any other as
    it is (tiktoken's child counts a str: by passages, long pieces in windows)."""
    if not (type(value) is tuple and len(value) == 2 and value[0] == "counts" and type(value[1]) is list):
        return value
    if tokens.BACKEND != tokens.FAST:
        return value
    texts = [_sent_as(text) for text in value[1]]
    return ("counts", texts) if any(type(text) is bytes for text in texts) else value


def _sent_as(text: Any) -> Any:
    """A text's UTF-8 where quicktok counts the text in one call of it (tokens.FastEncoding.count: no long piece, not
    cut in parts) and it is worth sending so (not ASCII, whose str marshal copies); else the text."""
    if type(text) is not str or not UTF8_TEXT <= len(text) <= 2 * long_pieces.TEXT_PART or text.isascii():
        return text
    if long_pieces.has_long_piece(text):
        return text
    try:
        return text.encode()
    except UnicodeEncodeError:  # a lone surrogate: the child repairs the str, as tokens.FastEncoding.count_whole does
        return text


def _as_texts(value: Any) -> Any:
    """A "counts" message's texts sent as UTF-8 (_as_utf8) as str again, for a receiver that is not a counting child."""
    if type(value) is tuple and len(value) == 2 and value[0] == "counts" and type(value[1]) is list:
        if any(type(text) is bytes for text in value[1]):
            return "counts", [_text(text) if type(text) is bytes else text for text in value[1]]
    return value


def _number(stream: BinaryIO) -> int:
    return int.from_bytes(_read(stream, 8), "little")


def _part(stream: BinaryIO, size: int) -> str | long_parts.Parts:
    """A part of `size` UTF-8 bytes: one str, or over _CHUNK bytes its chunks' strs, each decoded before the next is
    read and cut before a character's first byte (the bytes of the character it would cut carried to the next)."""
    if size <= _CHUNK:
        return _text(_read(stream, size, into=True))
    chunks, carry, left = [], b"", size
    while left:
        data = carry + _read(stream, min(_CHUNK - len(carry), left), into=True)
        left -= len(data) - len(carry)
        cut = len(data)
        if left:  # back to the last character's first byte (a continuation byte is 0b10xxxxxx)
            cut -= 1
            while cut > len(data) - 4 and cut > 0 and data[cut] & 0xC0 == 0x80:
                cut -= 1
        carry = data[cut:]
        chunks.append(_text(data[:cut]))
    return long_parts.Parts(chunks)


def _text(data: bytes | bytearray) -> str:
    return str(data, "utf-8", "surrogatepass")


def _utf8(text: str, at: int, end: int) -> bytes:
    return text[at : min(at + _CHUNK, end)].encode("utf-8", "surrogatepass")  # as marshal writes a lone surrogate


def _utf8_size(text: str, start: int, end: int) -> int:
    """The UTF-8 length of text[start:end] (an ASCII text's is its length: none of it encoded)."""
    if text.isascii():
        return end - start
    return sum(len(_utf8(text, at, end)) for at in range(start, end, _CHUNK))


def _read(stream: BinaryIO, size: int, into: bool = False) -> Any:
    """size bytes from the pipe (a bytearray filled in place with `into`: one buffer, no chunks joined)."""
    data: bytes | bytearray
    if not into:
        data = stream.read(size)
    else:
        data = bytearray(size)
        view, got = memoryview(data), 0
        while got < size and (n := stream.readinto(view[got:])):  # type: ignore[attr-defined]
            got += n
        view.release()
        if got < size:
            data = data[:got]
    if len(data) != size:
        raise EOFError("the counting child's pipe is closed")
    return data


def _apart(text: Any) -> bool:
    """Whether a text goes apart from its message: a HUGE str, any text given as its chunks (long_parts.Parts), or
    its UTF-8 (_as_utf8)."""
    return isinstance(text, str) and len(text) >= HUGE or isinstance(text, long_parts.Parts) or type(text) is bytes


def _set_apart(value: Any) -> tuple[Any, list[Any]]:
    """(value with its texts sent apart as None, those texts), for a (kind, text) or (kind, [text, ...]) message."""
    if not (isinstance(value, tuple) and len(value) == 2):
        return value, []
    kind, payload = value
    if isinstance(payload, str):
        return ((kind, None), [payload]) if len(payload) >= HUGE else (value, [])
    if not isinstance(payload, list) or not any(map(_apart, payload)):
        return value, []
    apart = [text for text in payload if _apart(text)]
    if len(apart) > 255:
        return value, []
    return (kind, [None if _apart(text) else text for text in payload]), apart


def _put_back(value: Any, texts: list[Any]) -> Any:
    """The message _set_apart took apart, its texts back in their places."""
    kind, payload = value
    if payload is None:
        return kind, texts[0]
    given = iter(texts)
    return kind, [next(given) if text is None else text for text in payload]


def serve(down: int, up: int) -> None:
    """A counting child's whole life: build the encoding, then answer what comes down `down` on `up` until the parent
    closes its end. The forked helper (core.request.counting.helper), a spawned child (main) and a forked one (fork) run it."""
    requests, answers = os.fdopen(down, "rb"), os.fdopen(up, "wb")
    enc = tokens.local_encoding()  # a failure exits the child; the parent then builds, and raises, itself
    encode = enc.encode_ordinary
    count = tokens.counter()
    if tokens.windowed():
        # tiktoken's merge is quadratic in a piece's length: a long piece is merged in windows here, as the parent's
        # own count would, so its progress is heard (orphaned) and the child stops with its parent, not hours on.
        count = partial(long_pieces.count_ordinary, enc)
    passages = Passages(tokens.by_passages())  # long texts' passages this child has counted (core.request.passages)

    def count_all(texts: list[str]) -> list[int]:
        return [count(text) for text in texts]  # each text's ids (if any are made) freed as soon as counted

    def count_parts(parts: long_parts.Parts) -> int:
        """A part read in chunks: counted from them where its long piece allows (quicktok's), else joined."""
        counted = long_parts.count(enc, parts) if hasattr(enc, "count_whole") else None
        return counted if counted is not None else count(parts.join())

    # A text sent as its UTF-8 (_as_utf8: only to a child counting with quicktok) is counted as those bytes.
    count_utf8 = enc.count_whole if hasattr(enc, "count_whole") else lambda data: count(_text(data))
    parent = os.getppid()

    def orphaned(done: int, total: int) -> None:
        """A long piece's progress: its parent killed (no one to read the answer), the count stops, not seconds on."""
        if os.getppid() != parent:
            raise EOFError("the counting child's parent is gone")

    with long_pieces.reporting(orphaned):
        while True:
            try:
                kind, payload = receive(requests, parts=True)
                if kind == "one":
                    send(answers, encode(payload if isinstance(payload, str) else "".join(map(whole, payload))))
                elif kind == "counts":
                    send(answers, _summed(payload, lambda texts: passages.counts(texts, count_all), count_parts, count_utf8))
                else:
                    send(answers, [encode(text if isinstance(text, str) else "".join(map(whole, text))) for text in payload])
            except EOFError:
                return


def _summed(
    texts: list[Any],
    counts: Callable[[list[str]], list[int]],
    count_parts: Callable[[long_parts.Parts], int] | None = None,
    count_utf8: Callable[[bytes], int] | None = None,
) -> list[int]:
    """Each text's count, a text received in parts (receive) counted as the sum of its parts' counts: the parts that
    are a str by `counts` (all at once), a long_parts.Parts by `count_parts` (else joined, by `counts`), a text sent as
    its UTF-8 by `count_utf8` (else decoded, by `counts`)."""
    flat = [part for text in texts for part in ([text] if isinstance(text, (str, bytes)) else text)]
    if count_parts is None or count_utf8 is None:
        flat = [whole(part) if type(part) is bytes or count_parts is None else part for part in flat]
    counted = iter(counts([part for part in flat if isinstance(part, str)]))

    def count(part: Any) -> int:
        if isinstance(part, str):
            return next(counted)
        return count_utf8(part) if type(part) is bytes else count_parts(part)  # type: ignore[misc]  # None: none here

    by_part = iter(list(map(count, flat)))
    return [next(by_part) if isinstance(text, (str, bytes)) else sum(next(by_part) for _ in text) for text in texts]


def main(argv: list[str]) -> int:
    """The spawned child's entry point: serve the two pipe ends its parent handed it (their numbers in argv)."""
    serve(int(argv[0]), int(argv[1]))
    return 0


class Process(Protocol):
    """What a parent does with its counting child's process: a spawned one's Popen, or a forked one's (Forked)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    def kill(self) -> None: ...

    def poll(self) -> int | None: ...

    def wait(self) -> int: ...


class Child(NamedTuple):
    """A counting child and this process's ends of its two pipes (what it reads from, what it answers on)."""

    process: Process
    down: int
    up: int


class Forked:
    """A counting child forked from this process (fork), stopped and reaped as a Popen is."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def kill(self) -> None:
        if self.returncode is None:
            try:
                os.kill(self.pid, 9)
            except ProcessLookupError:
                pass

    def poll(self) -> int | None:
        return self._reaped(os.WNOHANG)

    def wait(self) -> int:
        code = self._reaped(0)
        assert code is not None
        return code

    def _reaped(self, flags: int) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, flags)
            except ChildProcessError:  # reaped already by someone else: gone all the same
                pid, status = self.pid, 0
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode


def fork() -> Child | None:
    """A counting child forked from this process, to count with the encoding it has built: it serves at once, where a
    spawned child first starts an interpreter and builds its own (about 0.7 s of CPU); forked before this process has
    one (the tokenizer's helper), it builds it. It serves until this process closes its pipe or stops it. Only where a
    fork is safe (no other thread runs); None when no process can be had."""
    got = forked_on_pipes(serve)  # core.request.counting's: the store's child is forked so too
    return None if got is None else Child(Forked(got[0]), got[1], got[2])


def spawn() -> Child | None:
    """Start a counting child: a fresh interpreter running this module (main), never a fork, which a process with
    threads cannot do safely. None when none can be started (no interpreter, or no way to hand it the pipes)."""
    import subprocess  # only where a child starts: the spawned child itself never needs it

    down_r, down_w = os.pipe()
    up_r, up_w = os.pipe()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", MODULE, str(down_r), str(up_w)],
            pass_fds=(down_r, up_w),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except (OSError, ValueError):
        for fd in (down_r, down_w, up_r, up_w):
            os.close(fd)
        return None
    os.close(down_r)
    os.close(up_w)
    return Child(process, down_w, up_r)


def stop(child: Child) -> None:
    """Stop a child no one counts with, and reap it."""
    for fd in (child.down, child.up):
        try:
            os.close(fd)
        except OSError:
            pass
    child.process.kill()
    child.process.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""JSONL lines streamed from a file: each parsed as it comes, a damaged one warned or refused, where each line starts."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Callable, Iterator, Sized
from pathlib import Path
from typing import Any, Protocol

from foldscope.core.formats import fast_json
from foldscope.core.model.session import Message, ReadError


class SessionBuilder(Protocol):
    """What the line reader asks of the builder it reads for (core.formats.stream.SessionBuilder): its file, where
    each line starts, the shared line numbers, and where a skipped line is said."""

    file: str
    format: str
    source: SourceLines | None
    ints: list[int]
    line: int
    skip_bad_lines: bool
    skipped: int
    events: list[dict[str, Any]]

    @property
    def record(self) -> Sized: ...  # the full record so far (a gap event names where it stood)

    @property
    def trace(self) -> Sized: ...  # the requests so far

    def warn(self, line: int, text: str) -> None: ...


# Where the next read may hand the file's start to another process (core.request.counting.during_read): (byte offset,
# call), taken by the next iter_json_lines, or None. The call is made once, with the read's builder, at the first line
# starting at or past the offset; where it answers True (the forked child), the read ends before that line, as if the
# file ended there. Where it answers False it may set the next split, taken by this read.
split_at: tuple[int, Callable[[Any], bool]] | None = None


def iter_json_lines(path: Path, builder: SessionBuilder) -> Iterator[tuple[int, int, Any]]:
    """Yield (line number, byte offset, parsed value) for every non-blank line, one line in memory at a time.

    A line that is not JSON (or not UTF-8) is skipped with a warning naming it: on the last line it is the usual sign
    of a session cut off mid-write; in the middle, a damaged line, whose place is marked by a `gap` event.
    """
    global split_at
    split, split_at = split_at, None
    try:
        handle = open(path, "rb")
    except OSError as exc:
        raise ReadError(str(path), "", f"cannot open: {exc.strerror or exc}") from None
    with handle:
        # Where every line starts (and, last, where the file ends): the store slices each message's
        # original bytes from the file by these, so no line's bytes are kept in memory meanwhile.
        stat = os.fstat(handle.fileno())
        builder.skip_bad_lines = True
        builder.source = SourceLines(builder.file, stat.st_size, stat.st_mtime_ns, array("q"))
        starts = builder.source.starts
        pending: tuple[int, int, bytes] | None = None
        offset = 0
        ints = builder.ints
        decode = fast_json.decode
        for number, raw in enumerate(_raw_lines(handle), 1):
            if split is not None and offset >= split[0]:
                if split[1](builder):
                    break
                split, split_at = split_at, None  # the call may arm a later split (another child, further on)
            ints.append(number)  # the line's int, which the record's index and the requests share (FullRecord)
            starts.append(offset)
            start, offset = offset, offset + len(raw)
            if raw[0] in _SPACE and not raw.strip():  # looks at the first byte before copying the line
                continue
            if pending is not None:
                if len(pending[2]) >= HUGE_LINE and _escaped_huge(pending[2]):
                    held, pending = [pending], None  # its bytes held by `held` alone, so _huge_value can free them
                    value, pending = _huge_value(held, builder, last=False), held[0]
                else:
                    try:  # msgspec straight (fast_json.loads without its call): a million tiny lines are two calls each less
                        value = decode(pending[2])
                    except fast_json.REFUSALS:
                        value = _parse(pending, builder, last=False)
                if value is not _SKIP:
                    yield pending[0], pending[1], value
            pending = (number, start, raw)
        raw = b""  # the last line's bytes held by `pending` alone
        if pending is not None:
            if _escaped_huge(pending[2]):
                held, pending = [pending], None
                value, pending = _huge_value(held, builder, last=True), held[0]
            else:
                value = _parse(pending, builder, last=True)
            if value is not _SKIP:
                yield pending[0], pending[1], value
        starts.append(offset)


# A line longer than this is read in one read into one bytes object (_whole_line): iterating the file, its buffer joined
# the line's chunks, the line held twice at once (the read's peak for one huge message).
LONG_LINE = 1 << 20
_BLOCK = 1 << 16  # the bytes read at a time (_raw_lines): a few dozen lines of a session


def _raw_lines(handle: Any) -> Iterator[bytes]:
    """Each line of the file with its newline (the last as it ends), read a block at a time and cut where bytes.find
    finds each newline (memchr): readline looked at each byte in the file's buffer, 7% of a Claude Code read's
    instructions (docs/performance.md). A line whose bytes read so far reach LONG_LINE is read whole (_whole_line)."""
    long_line = LONG_LINE
    rest = b""
    while True:
        # While one line runs on, read as much as it holds (its bytes copied twice at most), but never past LONG_LINE:
        # a line that reaches it is read whole, not cut from a block twice its size.
        block = handle.read(max(_BLOCK, min(len(rest), long_line - len(rest))))
        if not block:
            break
        find = block.find
        end = find(b"\n")
        if end < 0:  # the line runs on through the block
            rest = rest + block
        else:
            # Only the line carried over is joined, not the whole block with it: rest + block copied every byte of the
            # file once more (3% of a Claude Code read's instructions, docs/performance.md).
            end += 1
            yield rest + block[:end] if rest else block[:end]
            start, end = end, find(b"\n", end)
            while end >= 0:
                end += 1
                yield block[start:end]
                start, end = end, find(b"\n", end)
            rest = block[start:]
        del block
        if len(rest) >= long_line:  # the line runs on past LONG_LINE: read it whole, the handle just past `rest`
            yield _whole_line(handle, rest)
            rest = b""
    if rest:
        yield rest


def _whole_line(handle: Any, head: bytes) -> bytes:
    """The line whose first LONG_LINE bytes `head` are (the handle just past them), with its newline if it has one: its
    end found a block at a time, then the line read again from its start in one read, into one bytes object."""
    if not handle.seekable():  # a pipe: read on, its chunks joined (twice the line at once, as iterating it held)
        return head + handle.readline()
    start = handle.tell() - len(head)
    size = len(head)
    while block := handle.read(LONG_LINE):
        end = block.find(b"\n")
        if end >= 0:
            size += end + 1
            break
        size += len(block)
    del block
    handle.seek(start)
    return handle.read(size)


# A line this long, ASCII and holding an escape is decoded by the json module from its text once its bytes are freed
# (_huge_value): msgspec decodes an escaped string through a scratch copy beside the line's bytes and its value, so a
# 50 MB message of code or JSON logs peaked at the line, the scratch and the text, about 3.3 times the message.
HUGE_LINE = 1 << 22


def _escaped_huge(raw: bytes) -> bool:
    return len(raw) >= HUGE_LINE and b"\\" in raw and raw.isascii()


def _huge_value(held: list[tuple[int, int, Any]], builder: SessionBuilder, last: bool) -> Any:
    """The value of the one line in `held` (an escaped huge line, _escaped_huge), its bytes dropped before it is parsed:
    at most its text and its value at once. The json module's value is msgspec's wherever msgspec accepts the line
    (core.formats.fast_json); a line neither accepts goes to _parse, which names the problem as it always does.
    `held` is given back the line's number and offset (its bytes no longer)."""
    number, start, raw = held.pop()
    held.append((number, start, b""))
    text = raw.decode("ascii")
    del raw
    try:
        return _decode(text)
    except (ValueError, RecursionError):
        return _parse((number, start, text.encode("ascii")), builder, last)


class LineTail:
    """A growing JSONL file read step by step: each `read()` yields the complete lines written since the last.

    The incremental seam for following a live session (core.formats.follow): a line counts once its newline
    is written, so the part of a last line still being written waits for the next step, where a full read
    (iter_json_lines) would skip it as truncated. The builder's SourceLines grow with the lines read.
    """

    def __init__(self, path: Path, builder: SessionBuilder) -> None:
        self.path, self.builder = path, builder
        self.offset = 0  # bytes consumed: the end of the last complete line
        self.line = 0  # lines consumed, blank ones included
        self.parsed = 0  # non-blank lines parsed over every step: what following has cost in lines
        builder.source = SourceLines(builder.file, 0, 0, array("q", [0]))

    def read(self) -> Iterator[tuple[int, int, Any]]:
        """(line number, byte offset, parsed value) of each new complete, non-blank line; a bad one is a ReadError."""
        try:
            handle = open(self.path, "rb")
        except OSError as exc:
            raise ReadError(str(self.path), "", f"cannot open: {exc.strerror or exc}") from None
        with handle:
            stat = os.fstat(handle.fileno())
            if stat.st_size < self.offset:
                raise ReadError(
                    str(self.path), "", f"the file shrank from {self.offset:,} to {stat.st_size:,} bytes: it was rewritten, not appended to"
                )
            source = self.builder.source
            assert source is not None
            handle.seek(self.offset)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # still being written: read it whole next time
                self.line += 1
                self.builder.ints.append(self.line)
                start, self.offset = self.offset, self.offset + len(raw)
                source.starts.append(self.offset)  # the last entry is always where the lines read end
                if raw[0] in _SPACE and not raw.strip():
                    continue
                self.parsed += 1
                yield self.line, start, _parse((self.line, start, raw), self.builder, last=False)
            source.size, source.mtime_ns = self.offset, stat.st_mtime_ns


_SKIP = object()
MAX_SKIPPED_LINES = 20  # past this many damaged lines (or a quarter of the lines), a file is not read as a session


def too_damaged(skipped: int, lines: int) -> bool:
    """Whether `skipped` damaged lines among the first `lines` are too many to read past: a file that is mostly
    not JSON lines is refused at its first bad line's place rather than read as a handful of survivors."""
    return skipped > MAX_SKIPPED_LINES or (skipped > 1 and skipped * 4 > lines)


_SPACE = b" \t\r\n\f\v"
_decoder = json.JSONDecoder()
# typeshed's JSONDecoder omits scan_once, the attribute its __init__ sets to the scanner (c_make_scanner)
_scan = _decoder.scan_once  # type: ignore[attr-defined]  # the C scanner json.loads ends in, without its per-call regex and detection steps


def _decode(text: str) -> Any:
    """json.loads of one line: the C scanner from the first byte, then only whitespace may follow."""
    if not text or text[0] in " \t\r\n":
        return _decoder.decode(text)
    try:
        value, end = _scan(text, 0)
    except StopIteration as stop:
        raise json.JSONDecodeError("Expecting value", text, stop.value) from None
    if end != len(text) and text[end:].strip(" \t\n\r"):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


# What a mapping step can raise on input shaped in a way no branch expected; one line, never a traceback.
_UNEXPECTED = (ValueError, TypeError, KeyError, IndexError, AttributeError, RecursionError)


def feed_all(lines: Iterator[tuple[int, int, Any]], feed: Any, builder: SessionBuilder) -> None:
    """Feed each (line, offset, value) to a reader; an unexpected failure becomes a ReadError naming the line."""
    number = 0
    try:
        for number, offset, value in lines:
            builder.line = number
            feed(number, offset, value)
    except _UNEXPECTED as exc:
        raise ReadError(builder.file, f"line {number}", f"unexpected content ({type(exc).__name__}: {exc})") from exc


# The json module's messages that end "at" name a position it gives apart (our place says the line and column).
_JSON_WORDS = {
    "Unterminated string starting at": "a string that never ends",
    "Invalid control character at": "a control character inside a string",
    "Invalid \\escape": "an invalid backslash escape",
}


def json_problem(exc: json.JSONDecodeError, column: bool = False) -> str:
    """A decoder error as a problem that reads whole ("not JSON: a string that never ends"), never cut at "at";
    with `column`, the decoder's column in it (where the place names only the line)."""
    msg = _JSON_WORDS.get(exc.msg, exc.msg[:-3] if exc.msg.endswith(" at") else exc.msg)
    where = f" at column {exc.colno}" if column else ""
    return f"not JSON{where}: {msg[:1].lower()}{msg[1:]}"


def _parse(item: tuple[int, int, bytes], builder: SessionBuilder, last: bool) -> Any:
    number, _, raw = item
    value = fast_json.loads(raw)  # msgspec, where it accepts the line; else the json module's way below
    if value is not fast_json.REFUSED:
        return value
    try:
        return _decode(raw.decode("utf-8") if number > 1 else raw.decode("utf-8-sig"))
    except UnicodeDecodeError:
        problem = "bytes that are not UTF-8"
    except json.JSONDecodeError as exc:
        problem = json_problem(exc, column=True)  # the line is ours; the column is the decoder's
    except RecursionError:
        problem = fast_json.TOO_DEEP
    except ValueError as exc:
        problem = f"not JSON ({exc.__class__.__name__}: {str(exc)[:80]})"
    if last:
        builder.warn(number, f"truncated last line skipped: {problem}")
        return _SKIP
    if builder.skip_bad_lines and not too_damaged(builder.skipped + 1, number):
        # A whole read goes on past a damaged line: the rest of the session is there to read. The line is named,
        # and its place marked in the record (a `gap` event): the requests after it are counted without it.
        builder.skipped += 1
        builder.warn(number, f"{problem}; skipped, and the requests after it are counted without it")
        builder.events.append(
            {
                "kind": "gap",
                "source": builder.format,
                "line": number,
                "problem": problem,
                "first_index": len(builder.record),
                "at_request": len(builder.trace),
            }
        )
        return _SKIP
    raise ReadError(builder.file, f"line {number}", problem)


def head_values(head: bytes, lines: int = 20) -> list[Any]:
    """The JSON values of the first non-blank lines of a file's head, up to the first that does not parse."""
    values = []
    for raw in head.splitlines()[:lines]:
        if raw.strip():
            try:
                values.append(json.loads(raw))
            except (ValueError, RecursionError):
                break
    return values


class SourceLines:
    """Where each message's original bytes lie in its source file: the line starts, and the lines of each message.

    A message's original is its provenance line, or, for one put together from several lines (a
    response split over lines), the lines in `multi`, joined by newlines without their line ends.
    `size` and `mtime_ns` are the file's when it was read, so a store can tell the file has changed.
    """

    def __init__(self, file: str, size: int, mtime_ns: int, starts: array) -> None:
        self.file, self.size, self.mtime_ns, self.starts = file, size, mtime_ns, starts
        self.multi: dict[str, tuple[int, ...]] = {}

    def lines_of(self, message: Message) -> tuple[int, ...]:
        lines = self.multi.get(message.id)
        if lines is not None:
            return lines
        p = message.provenance
        return (p.line,) if p is not None and p.file == self.file and p.line > 0 else ()

    def span(self, line: int) -> tuple[int, int]:
        """(start, end) of a 1-based line, its line end included."""
        return self.starts[line - 1], self.starts[line]

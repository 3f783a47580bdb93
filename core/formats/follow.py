"""Following a session file an agent is still writing: each poll reads only the lines added since the last.

A Follower keeps one reader's state open (its SessionBuilder and the format's line mapper) and a LineTail
(core.formats.stream) on the file. `poll()` feeds the new complete lines and says what grew; `session()`
is the session as read so far (SessionBuilder.snapshot): what is still open, a response whose lines are
still coming, enters the record when its turn ends. Which formats are followed, and by which line mapper,
each format's declaration says (FormatSpec.follow). Claude Code and Codex files are read line by line; a Gemini
CLI chat too, its newest model message held until it settles (core.formats.gemini_cli._Followed).
A pi file is a tree: an entry that extends the branch being read is fed like any other; one that starts
another branch makes the follower read the file again whole (counted in `rereads`), as opening it would.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.registry import followed, format_named
from foldscope.core.formats.stream import LineTail, SessionBuilder, feed_all
from foldscope.core.model.session import ReadError, Session


def followable(format_name: str | None) -> bool:
    """Whether files of this format are read line by line as they grow (its declaration's `follow`)."""
    spec = format_named(format_name)
    return spec is not None and spec.follow is not None


def refusal(format_name: str | None) -> str:
    """Why a file of this format is not followed: the formats that are."""
    return f"following reads the line-based formats ({', '.join(s.name for s in followed())}), not {format_name}"


@dataclass(frozen=True)
class Growth:
    """What one poll added: lines parsed, messages entered in the full record, requests entered in the trace."""

    lines: int
    messages: int
    requests: int
    reread: bool = False  # the file was read again whole (a pi file that switched branch)

    def __bool__(self) -> bool:
        return bool(self.lines or self.reread)


class Follower:
    """One session file followed as it grows; the first poll reads what is there already."""

    def __init__(self, path: str | Path, format: str | None = None) -> None:
        self.path = Path(path)
        self.format = format or detect_format(self.path)
        spec = format_named(self.format)
        if spec is None or spec.follow is None:
            raise ReadError(str(self.path), "", refusal(self.format))
        self.rereads = 0  # whole reads of a file that branched (a pi tree)
        self._whole: Session | None = None  # set once the file branched: from then on each growth reads it whole
        self.builder = SessionBuilder(self.path, self.format)
        self.tail = LineTail(self.path, self.builder)
        self._line = spec.follow(self.builder)  # the reader's line mapper, kept open between polls

    @property
    def lines_read(self) -> int:
        """Non-blank lines parsed since following began, over every poll (whole re-reads not included)."""
        return self.tail.parsed

    def poll(self, until: int | None = None) -> Growth:
        """Read the lines added since the last poll; ReadError on a line that is not JSON or a file rewritten.
        With `until`, stop after the line that ends at or past that byte (the first part of a large file)."""
        b = self.builder
        before = self.session() if self._whole is not None else None
        messages, requests, parsed = len(b.record), len(b.trace) + b.request_open, self.tail.parsed
        feed_all(self.tail.read() if until is None else self._read_until(until), self._line.feed, b)
        lines = self.tail.parsed - parsed
        if self._line.branched and lines:
            if before is None:
                before = b.snapshot()
            self._whole = load_session(self.path, self.format)
            self.rereads += 1
            return Growth(lines, len(self._whole.record) - len(before.record), len(self._whole.trace) - len(before.trace), reread=True)
        return Growth(lines, len(b.record) - messages, len(b.trace) + b.request_open - requests)

    def _read_until(self, until: int) -> Iterator[tuple[int, int, Any]]:
        for line in self.tail.read():
            yield line
            if self.tail.offset >= until:
                return

    @property
    def bytes_read(self) -> int:
        """Where the complete lines read so far end."""
        return self.tail.offset

    def session(self) -> Session:
        """The session as read so far."""
        if self._whole is not None:
            return self._whole
        return self._line.snapshot()

"""Following a session file an agent is still writing: each poll reads only the lines added since the last.

A Follower keeps one reader's state open (its SessionBuilder and the format's line mapper) and a LineTail
(core.formats.stream) on the file. `poll()` feeds the new complete lines and says what grew; `session()`
is the session as read so far (SessionBuilder.snapshot): what is still open, a response whose lines are
still coming, enters the record when its turn ends. Claude Code and Codex files are read line by line.
A pi file is a tree: an entry that extends the branch being read is fed like any other; one that starts
another branch makes the follower read the file again whole (counted in `rereads`), as opening it would.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from foldscope.core.formats import detect_format, load_session
from foldscope.core.formats.stream import LineTail, SessionBuilder, feed_all
from foldscope.core.model.session import ReadError, Session

FOLLOWED = ("claude_code", "codex", "pi")


@dataclass(frozen=True)
class Growth:
    """What one poll added: lines parsed, messages entered in the full record, requests entered in the trace."""

    lines: int
    messages: int
    requests: int
    reread: bool = False  # the file was read again whole (a pi file that switched branch)

    def __bool__(self) -> bool:
        return bool(self.lines or self.reread)


def _claude_code(builder: SessionBuilder) -> Any:
    from foldscope.core.formats import claude_code

    return claude_code._Reader(builder)  # the reader's own line mapper, kept open between polls


def _codex(builder: SessionBuilder) -> Callable[[int, int, Any], None]:
    from foldscope.core.formats import codex

    return codex._Reader(builder).feed


class _PiLine:
    """pi's line mapper, fed in file order while the file stays one branch (each entry's parent the last entry)."""

    def __init__(self, builder: SessionBuilder) -> None:
        from foldscope.core.formats import pi

        self.b = builder
        self.reader = pi._Reader(builder, [("", None, 0, -1)], None)
        self.last: str | None = None  # the id of the last entry fed: the branch's leaf
        self.branched = False

    def feed(self, line: int, offset: int, value: Any) -> None:
        if self.branched:
            return  # the follower reads the file again whole
        if not isinstance(value, dict):
            self.b.warn(line, f"entry is a JSON {type(value).__name__}, not an object; skipped")
            return
        if value.get("type") == "session":
            if not len(self.b.record) and "header" not in self.b.extras:
                self.b.extras["header"] = value
                self.reader.lines[0] = line  # v1's firstKeptEntryIndex counts the header
                model = value.get("modelId")
                self.reader.model = model if isinstance(model, str) else self.reader.model
            else:
                self.b.warn(line, "a second session header; skipped")
            return
        eid, parent = value.get("id"), value.get("parentId")
        if isinstance(eid, str):
            if self.last is not None and parent != self.last:
                self.branched = True  # another branch: which one is the session's is decided over the whole file
                return
            self.last = eid
            self.reader._entry_lines[eid] = line
        self.reader.lines.append(line)
        self.reader.feed(line, offset, value)


class Follower:
    """One session file followed as it grows; the first poll reads what is there already."""

    def __init__(self, path: str | Path, format: str | None = None) -> None:
        self.path = Path(path)
        self.format = format or detect_format(self.path)
        if self.format not in FOLLOWED:
            raise ReadError(str(self.path), "", f"following reads the line-based formats ({', '.join(FOLLOWED)}), "
                            f"not {self.format}")
        self.rereads = 0  # whole reads of a pi file that branched
        self._whole: Session | None = None  # set once a pi file branched: from then on each growth reads it whole
        self.builder = SessionBuilder(self.path, self.format)
        self.tail = LineTail(self.path, self.builder)
        self._pi: _PiLine | None = None
        self._claude: Any = None
        if self.format == "pi":
            self._pi = _PiLine(self.builder)
            self._feed: Callable[[int, int, Any], None] = self._pi.feed
        elif self.format == "claude_code":
            self._claude = _claude_code(self.builder)
            self._feed = self._claude.feed
        else:
            self._feed = _codex(self.builder)

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
        feed_all(self.tail.read() if until is None else self._read_until(until), self._feed, b)
        lines = self.tail.parsed - parsed
        if self._pi is not None and self._pi.branched and lines:
            if before is None:
                before = b.snapshot()
            self._whole = load_session(self.path, self.format)
            self.rereads += 1
            return Growth(lines, len(self._whole.record) - len(before.record),
                          len(self._whole.trace) - len(before.trace), reread=True)
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
        held = getattr(self._claude, "usage", None)  # the open response's usage, held until it ends
        if held is not None:
            from foldscope.core.formats.claude_code import _usage

            return self.builder.snapshot(_usage(held, lambda problem: None))  # warned once, when the response ends
        return self.builder.snapshot()

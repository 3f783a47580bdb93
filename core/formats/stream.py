"""Shared machinery of the line-based readers: streaming JSONL lines and building a Session as they come."""

from __future__ import annotations

import json
import os
from array import array
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from foldscope.core.formats import fast_json
from foldscope.core.model.session import FullRecord, Message, Provenance, ReadError, Request, Session, Usage, new_message
from foldscope.core.model.views import TrackedView, ViewSharer


def iter_json_lines(path: Path, builder: SessionBuilder) -> Iterator[tuple[int, int, Any]]:
    """Yield (line number, byte offset, parsed value) for every non-blank line, one line in memory at a time.

    A line that is not JSON (or not UTF-8) is skipped with a warning naming it: on the last line it is the usual sign
    of a session cut off mid-write; in the middle, a damaged line, whose place is marked by a `gap` event.
    """
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
        for number, raw in enumerate(handle, 1):
            ints.append(number)  # the line's int, which the record's index and the requests share (FullRecord)
            starts.append(offset)
            start, offset = offset, offset + len(raw)
            if raw[0] in _SPACE and not raw.strip():  # looks at the first byte before copying the line
                continue
            if pending is not None:
                try:  # msgspec straight (fast_json.loads without its call): a million tiny lines are two calls each less
                    value = decode(pending[2])
                except fast_json.REFUSALS:
                    value = _parse(pending, builder, last=False)
                if value is not _SKIP:
                    yield pending[0], pending[1], value
            pending = (number, start, raw)
        if pending is not None:
            value = _parse(pending, builder, last=True)
            if value is not _SKIP:
                yield pending[0], pending[1], value
        starts.append(offset)


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


def parse_time(value: Any) -> float | None:
    """An ISO-8601 string or epoch number (seconds or milliseconds) as epoch seconds, else None.

    The same text as the last call's gives the same float object: lines written in one millisecond (a question and
    its answer, a response's split lines, its tool results) share one time, where each kept a float of its own,
    24 bytes a message (docs/performance.md, import memory)."""
    if type(value) is not str:
        return _parse_time(value)
    last = _last_time
    if value == last[0]:
        return last[1]
    got = None
    if len(value) == 24 and value[23] == "Z" and value[19] == ".":
        second = _last_second
        if value[:19] == second[0]:
            millis = value[20:23]
            if millis.isascii() and millis.isdigit() and second[1] is not None:
                got = (second[1] + int(millis) * 1000) / 1_000_000
    if got is None:
        got = _parse_time(value)
    _remember_time(value, got)
    return got


def _remember_time(text: str, value: float | None) -> None:
    global _last_time
    _last_time = (text, value)  # one tuple, replaced whole: a reader on another thread sees a text with its own value


_last_time: tuple[str | None, float | None] = (None, None)


def _parse_time(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value / 1000.0 if value > 1e11 else float(value)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        if len(value) == 24 and value[23] == "Z" and value[19] == ".":
            # The whole second of a time as Claude Code writes it (2026-01-01T00:00:00.001Z), in microseconds:
            # the next times in the same second add their milliseconds to it, where fromisoformat costs a
            # microsecond or two a line. timestamp() is (its microseconds since the epoch) / 10**6 divided as
            # integers, and so is the sum, so both round alike (tests/core/formats/test_stream_time.py).
            _last_second[:] = [value[:19], _whole_micros(parsed)]
        return parsed.timestamp()
    return None


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_last_second: list[Any] = [None, None]  # [the first 19 characters of a time, its whole second's microseconds or None]


def _whole_micros(parsed: datetime) -> int | None:
    """Microseconds from the epoch to the start of `parsed`'s second; None when it is naive or not UTC."""
    if parsed.utcoffset() != timedelta(0):
        return None
    delta = parsed.replace(microsecond=0) - _EPOCH
    return (delta.days * 86400 + delta.seconds) * 1_000_000


def as_int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def str_field(mapping: Mapping[str, Any], key: str, default: str = "") -> str:
    """mapping[key] when it is a string, else `default`."""
    value = mapping.get(key)
    return value if isinstance(value, str) else default


def text_of(content: Any) -> str:
    """The text of a content value: a string, or the text parts of a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif block.get("type") in ("image", "input_image", "image_url"):
                    parts.append("[image]")
        return "\n".join(parts)
    return "" if content is None else json.dumps(content, ensure_ascii=False)


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


class SessionBuilder:
    """Collects the full record, the active view, the trace, events and warnings while a reader streams."""

    def __init__(self, path: Path, format: str) -> None:
        self.path = path
        self.file = str(path)
        self.format = format
        # Item v is the int v: the line numbers as the file is read (iter_json_lines, LineTail), from which the
        # record's indexes, the views' lengths and the requests' indexes are taken, one int object a value.
        self.ints: list[int] = [0]
        self.record = FullRecord(ints=self.ints)
        self._view = TrackedView()  # the active view; it tells the request views what changed (core.model.views)
        self.trace: list[Request] = []
        self.events: list[dict[str, Any]] = []
        self.warnings: list[str] = []
        self.extras: dict[str, Any] = {}
        self.model: str | None = None
        self._open: dict[str, Any] | None = None
        self._views = ViewSharer(self.ints)  # the requests' views share one growing list (core.model.views)
        self._turn: dict[str, Any] | None = None
        self._calls: dict[str, tuple[str, str, Any]] = {}  # call id -> (action_request id, function, arguments)
        self._reserved: set[str] = set()
        self.source: SourceLines | None = None  # set by iter_json_lines
        self.line = 0  # the line being fed, so a split response knows every line it came from
        # A damaged line in the middle: a whole read (iter_json_lines) skips it, names it and marks the gap; following
        # (LineTail) stops there with the line's problem, having shown the lines before it.
        self.skip_bad_lines = False
        self.skipped = 0  # damaged lines skipped so far

    @property
    def view(self) -> list[str]:
        return self._view

    @view.setter
    def view(self, ids: list[str]) -> None:
        self._view = ids if isinstance(ids, TrackedView) else TrackedView(ids)

    # -- problems -------------------------------------------------------------------------
    def warn(self, line: int, problem: str) -> None:
        self.warnings.append(f"{self.file}: line {line}: {problem}")

    def fail(self, line: int, problem: str) -> ReadError:
        return ReadError(self.file, f"line {line}", problem)

    # -- the full record and the active view ---------------------------------------------
    def add(
        self,
        id: str,
        kind: str,
        content: Mapping[str, Any],
        line: int,
        *,
        at: float | None = None,
        metadata: Mapping[str, Any] | None = None,
        in_view: bool = True,
    ) -> str:
        """Append a message (a unique id is made, with a warning, when the source repeats one)."""
        if self._turn is not None:
            self.end_turn()
        if type(id) is str and id not in self.record and id not in self._reserved:
            mid = id  # a new id, nearly every one: unique() would reserve it only for this to let it go
        else:
            mid = self.unique(id, line)
            self._reserved.discard(mid)
        self.record.append(new_message(mid, kind, at, content, {} if metadata is None else metadata, self.file, line))
        if in_view:
            self.view.append(mid)
        return mid

    def compact(
        self, summary: str, line: int, *, id: str, at: float | None, keep: Sequence[str] = (), event: Mapping[str, Any] | None = None
    ) -> str:
        """A source compaction: the view becomes a note plus `keep`; the older messages stay in the record."""
        self.end_turn()
        in_view = set(self.view)
        kept = [m for m in keep if m in in_view]
        kept_set = set(kept)
        replaced = [m for m in self.view if m not in kept_set]
        first = self.record.index_of(replaced[0]) if replaced else len(self.record)
        meta = {"context_first_index": first, "compaction": True, "replaced": len(replaced)}
        self.view = kept
        note = self.add(id, "note", {"assistant_response": summary}, line, at=at, metadata=meta, in_view=False)
        # The note follows the kept system messages at the head (Codex keeps its base instructions).
        head = 0
        while head < len(self.view) and self.record.get(self.view[head]).kind == "system":
            head += 1
        self.view.insert(head, note)
        self.events.append(
            {
                "kind": "compaction",
                "at_request": len(self.trace) + (self._open is not None),
                "line": line,
                "note_id": note,
                "first_index": first,
                "replaced": len(replaced),
                **(event or {}),
            }
        )
        return note

    # -- the trace ------------------------------------------------------------------------
    def open_request(self, at: float | None = None, model: str | None = None) -> None:
        """Start request k: its view is the active view as it stands now, before the k-th response."""
        self.close_request()
        self._open = {
            "view": self._views.view(self.view),
            "at": at,
            "model": model,
            "usage": None,
            "response": None,
            "unseen": [],
            "miss": None,
        }
        if model and model != "<synthetic>":
            self.model = model

    def answer(self, response_id: str) -> None:
        if self._open is not None and self._open["response"] is None:
            self._open["response"] = response_id

    def report_usage(self, usage: Usage | None) -> None:
        if self._open is not None and usage is not None:
            self._open["usage"] = usage

    @property
    def request_open(self) -> bool:
        return self._open is not None

    def close_request(self) -> None:
        o, self._open = self._open, None
        if o is not None:
            k, ints = len(self.trace), self.ints
            self.trace.append(
                Request(
                    ints[k] if k < len(ints) else k,
                    o["view"],
                    o["response"],
                    o["usage"],
                    o["at"],
                    o["model"],
                    cache_miss_reason=o["miss"],
                    unseen_input=tuple(o["unseen"]),
                )
            )

    def unseen_input(self, what: str) -> None:
        """Name input the open request carried that the file does not hold (Request.unseen_input)."""
        if self._open is not None and what not in self._open["unseen"]:
            self._open["unseen"].append(what)

    def cache_miss(self, reason: str | None) -> None:
        """The provider's own word on the open request's cache miss (Request.cache_miss_reason)."""
        if self._open is not None and reason:
            self._open["miss"] = reason

    def unsent(self, kind: str, line: int, offset: int) -> None:
        """A line never sent to the model: counted, and its place kept so the GUI can show it from the file."""
        bucket = self.extras.setdefault("unsent", {})
        bucket.setdefault(kind, []).append((line, offset))

    # -- one model response: its text, its tool calls, and the results that answer them ----------
    def start_response(self, id: str, line: int, at: float | None, model: str | None, metadata: Mapping[str, Any] | None = None) -> None:
        """Open request k and the k-th response; its messages enter the record when the turn ends."""
        self.end_turn()
        self.open_request(at, model)
        rid = self.unique(id, line)
        self.answer(rid)
        self._turn = {
            "id": rid,
            "line": line,
            "at": at,
            "text": [],
            "thinking": [],
            "calls": {},
            "results": [],
            "meta": dict(metadata or {}),
            "lines": [line],
        }

    @property
    def turn_open(self) -> bool:
        return self._turn is not None

    def _open_turn(self) -> dict[str, Any]:
        """The open response: the readers call turn_* only between start_response and end_turn."""
        assert self._turn is not None, "no response is open"
        return self._turn

    def turn_text(self, text: str) -> None:
        if text:
            self._open_turn()["text"].append(text)
            self._turn_line()

    def turn_thinking(self, text: str) -> None:
        if text:
            self._open_turn()["thinking"].append(text)
            self._turn_line()

    def _turn_line(self) -> None:
        lines = self._open_turn()["lines"]
        if self.line > lines[-1]:
            lines.append(self.line)

    def also_from(self, message_id: str, lines: tuple[int, ...]) -> None:
        """Record that a message came from these source lines (in order), not only its provenance line."""
        if self.source is not None and len(lines) > 1:
            self.source.multi[message_id] = tuple(lines)

    def turn_meta(self, **facts: Any) -> None:
        self._open_turn()["meta"].update(facts)

    def turn_call(
        self, call_id: str, function: str, arguments: Any, line: int, at: float | None, metadata: Mapping[str, Any] | None = None
    ) -> None:
        mid = self.unique(call_id or f"call-line{line}", line)
        args = arguments if isinstance(arguments, Mapping) else {"input": arguments}
        self._open_turn()["calls"][call_id or mid] = [mid, function, args, line, at, dict(metadata or {}), None]

    def result(self, call_id: str, output: Any, line: int, at: float | None, *, id: str, metadata: Mapping[str, Any] | None = None) -> None:
        """A tool result: held with its call while that call's turn is open, else linked to an earlier call."""
        meta = {"call_id": call_id, **(metadata or {})}
        turn = self._turn
        if turn is not None and call_id in turn["calls"]:
            call = turn["calls"][call_id]
            rid = self.unique(id, line)
            if call[6] is None:
                call[6] = rid
            turn["results"].append((rid, call[1], call[2], call[0], output, line, at, meta))
            return
        self.end_turn()
        link: tuple[str | None, str, Any] | None = self._calls.get(call_id)
        if link is None:
            self.warn(line, f"tool result {call_id!r} has no tool call; kept unlinked")
            meta["orphan"] = True
            link = (None, "", {})
        content = {"function": link[1], "arguments": link[2], "output": output, "action_request_id": link[0]}
        self.add(id, "action_response", content, line, at=at, metadata=meta)

    def end_turn(self) -> None:
        """Put the open response into the record: the assistant message, its calls, then the held results."""
        turn, self._turn = self._turn, None
        if turn is None:
            return
        self.also_from(turn["id"], tuple(turn["lines"]))
        for message in self._turn_messages(turn):
            self._reserved.discard(message.id)
            self.record.append(message)
            self.view.append(message.id)
        for call_id, (mid, function, args, *_rest) in turn["calls"].items():
            self._calls[call_id] = (mid, function, args)

    def _turn_messages(self, turn: dict[str, Any]) -> list[Message]:
        """The messages a response makes, in record order, without changing the builder (snapshot reads them too)."""
        meta = dict(turn["meta"])
        if turn["thinking"]:
            meta["thinking"] = "\n\n".join(turn["thinking"])
        out = [
            Message(
                turn["id"],
                "assistant",
                turn["at"],
                {"assistant_response": "\n\n".join(turn["text"])},
                meta,
                Provenance(self.file, turn["line"]),
            )
        ]
        for call_id, (mid, function, args, line, at, cmeta, rid) in turn["calls"].items():
            content = {"function": function, "arguments": args, "action_response_id": rid}
            out.append(Message(mid, "action_request", at, content, {"call_id": call_id, **cmeta}, Provenance(self.file, line)))
        for rid, function, args, req, output, line, at, rmeta in turn["results"]:
            content = {"function": function, "arguments": args, "output": output, "action_request_id": req}
            out.append(Message(rid, "action_response", at, content, rmeta, Provenance(self.file, line)))
        return out

    def unique(self, id: str, line: int) -> str:
        """Reserve an id for a message that enters the record later; a repeated id is renamed with a warning."""
        mid = str(id)
        if mid in self.record or mid in self._reserved:
            n = 2
            while f"{mid}#{n}" in self.record or f"{mid}#{n}" in self._reserved:
                n += 1
            self.warn(line, f"duplicate id {mid!r}, kept as {mid}#{n}")
            mid = f"{mid}#{n}"
        self._reserved.add(mid)
        return mid

    def snapshot(self, open_usage: Usage | None = None) -> Session:
        """The session as read so far, leaving the builder open to read more (following a live file).

        Nothing open is closed: a response whose lines may still come is shown as it stands (its messages
        made afresh for this snapshot, in a record that extends the builder's), and the request it answers is
        in the trace. With no response open the record is the builder's own (it only grows); the view,
        trace, events and warnings are always copies. `open_usage`: the open request's usage as a reader
        holds it so far (Claude Code reports a split response's usage only when the response ends).
        """
        record, view = self.record, list(self.view)
        turn = self._turn
        if turn is not None:
            provisional = self._turn_messages(turn)
            record = FullRecord(list(self.record) + provisional)
            view += [m.id for m in provisional]
        trace = list(self.trace)
        o = self._open
        if o is not None:
            usage = open_usage if open_usage is not None else o["usage"]
            trace.append(
                Request(
                    len(trace),
                    o["view"],
                    o["response"],
                    usage,
                    o["at"],
                    o["model"],
                    cache_miss_reason=o["miss"],
                    unseen_input=tuple(o["unseen"]),
                )
            )
        extras = dict(self.extras)
        if self.source is not None:
            extras["source_lines"] = self.source
        return Session(
            record=record,
            view=view,
            format=self.format,
            source=self.file,
            events=list(self.events),
            trace=trace,
            warnings=list(self.warnings),
            model=self.model,
            extras=extras,
        )

    def build(self) -> Session:
        self.end_turn()
        self.close_request()
        if not len(self.record):
            raise ReadError(self.file, "", f"no messages found for format {self.format}")
        self.record.let_go_of_ints()
        if self.source is not None:
            self.extras["source_lines"] = self.source
        return Session(
            record=self.record,
            view=list(self.view),
            format=self.format,
            source=self.file,
            events=self.events,
            trace=self.trace,
            warnings=self.warnings,
            model=self.model,
            extras=self.extras,
        )

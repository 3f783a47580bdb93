"""The line-based readers' SessionBuilder, building a Session as lines stream; their line and field readers named here too."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from foldscope.core.formats.stream_fields import as_int, parse_time, str_field, text_of
from foldscope.core.formats.stream_lines import (
    MAX_SKIPPED_LINES,
    LineTail,
    SourceLines,
    feed_all,
    head_values,
    iter_json_lines,
    json_problem,
    too_damaged,
)
from foldscope.core.model.session import Fields, FullRecord, Message, ReadError, Request, Session, Usage, new_message
from foldscope.core.model.views import TrackedView, ViewSharer

# The readers' one import: the lines streamed (stream_lines) and their fields read (stream_fields) with the builder.
__all__ = [
    "MAX_SKIPPED_LINES",
    "LineTail",
    "SessionBuilder",
    "SourceLines",
    "as_int",
    "feed_all",
    "head_values",
    "iter_json_lines",
    "json_problem",
    "parse_time",
    "str_field",
    "text_of",
    "too_damaged",
]

# The keys of a response's calls' and results' contents, in their order (SessionBuilder._turn_messages).
_CALL_KEYS = ("function", "arguments", "action_response_id")
_RESULT_KEYS = ("function", "arguments", "output", "action_request_id")


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
            self._turn_part("text", text)

    def turn_thinking(self, text: str) -> None:
        if text:
            self._turn_part("thinking", text)

    def _turn_part(self, part: str, text: str) -> None:
        """A text or thinking part of the open response, and the line it came from (one call a block: a read's commonest)."""
        turn = self._open_turn()
        turn[part].append(text)
        lines = turn["lines"]
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
        args = arguments if type(arguments) is dict or isinstance(arguments, Mapping) else {"input": arguments}
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
        discard, append, view = self._reserved.discard, self.record.append, self._view
        for message in self._turn_messages(turn):
            discard(message.id)
            append(message)
            view.append(message.id)
        for call_id, (mid, function, args, *_rest) in turn["calls"].items():
            self._calls[call_id] = (mid, function, args)

    def _turn_messages(self, turn: dict[str, Any]) -> list[Message]:
        """The messages a response makes, in record order, without changing the builder (snapshot reads them too)."""
        meta = turn["meta"]
        if turn["thinking"]:
            meta = {**meta, "thinking": "\n\n".join(turn["thinking"])}
        # new_message: the Message the dataclass makes, through its slots (a response's messages are most of a record's),
        # its content of fixed keys made a Fields without a dict between (Fields.zipped)
        file = self.file
        text = Fields.one("assistant_response", "\n\n".join(turn["text"]))
        out = [new_message(turn["id"], "assistant", turn["at"], text, Fields(meta), file, turn["line"])]
        for call_id, (mid, function, args, line, at, cmeta, rid) in turn["calls"].items():
            content = Fields.zipped(_CALL_KEYS, (function, args, rid))
            out.append(new_message(mid, "action_request", at, content, {"call_id": call_id, **cmeta}, file, line))
        for rid, function, args, req, output, line, at, rmeta in turn["results"]:
            content = Fields.zipped(_RESULT_KEYS, (function, args, output, req))
            out.append(new_message(rid, "action_response", at, content, rmeta, file, line))
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

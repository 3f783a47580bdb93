"""Reader for Claude Code session JSONL (and its subagent files): the full record, the views and the trace.

Mapping, in the vocabulary of DESIGN.md:
- one API response split over several `assistant` lines sharing `message.id` is one assistant message
  (its text blocks joined) plus one action_request per tool_use block; its usage is the last line's.
  Lines without `message.id` (extractor output) are grouped by `requestId`, else by their usage figures.
  Thinking is kept in the assistant message's metadata["thinking"] (signatures dropped), not in its
  content: the API drops earlier turns' thinking from the context, so it is not part of a request's size.
- tool_result blocks are action_responses linked to their tool_use by id; `is_error` is in metadata.
  Results that arrive between the lines of one split response are held until the response is complete,
  so the record reads assistant, calls, results, as the next request carried them.
- `compact_boundary` plus the `isCompactSummary` line that follows become a note and a view change;
  the event carries compactMetadata's trigger and preTokens.
- Responses by `<synthetic>` (Claude Code's own placeholders, never an API call) are kept in the record,
  out of the view and out of the trace. In a file that mixes main and sidechain lines, the sidechain
  lines are kept in the record (metadata["sidechain"]) out of the view and trace.
- Lines never sent to the model (progress, file-history-snapshot, queue-operation, system lines other
  than compact_boundary) go to extras["unsent"] as {kind: [(line, byte offset)]}; `summary` lines
  (session titles) to extras["summaries"]; an extractor's first meta line to extras["extractor"].
- Tree: each line names its parent (`parentUuid`; a compact_boundary, whose parentUuid is null, by its
  `logicalParentUuid`). A line whose parent is not the newest line is a rewind (or an edited prompt): the
  view goes back to the view as it stood after the parent, so each request's view is the path to its
  line. The abandoned messages stay in the record; a `branch` event names them (`abandoned`), the view
  kept (`kept`) and the first message after it (`next`), and extras["abandoned"] lists them all.
  Sibling lines of one response (parallel tool results each naming their own tool_use line) are not a
  rewind. A line whose `uuid` was already read (a resume writes earlier lines again) is skipped, with a
  warning when its message differs; extras["repeated_lines"] counts them.
- extras["children"]: paths (str) of the subagent files beside the session: `<stem>/subagents/*.jsonl`,
  or (older layout) `agent-*.jsonl` in the same folder with the same sessionId. Open each with `read`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from foldscope.core.formats.agent_setup import agent_setup
from foldscope.core.formats.claude_code_children import find_children, read_children, started_agent
from foldscope.core.formats.claude_code_fields import attachment_text, images_of, miss_reason, usage_of
from foldscope.core.formats.claude_code_tree import Tree
from foldscope.core.formats.spec import Figure, FormatSpec, Sessions, project_files
from foldscope.core.formats.stream import SessionBuilder, feed_all, head_values, iter_json_lines, parse_time, str_field, text_of
from foldscope.core.model.session import Fields, Session

FORMAT = "claude_code"

UNSENT = {"progress", "file-history-snapshot", "queue-operation"}
_LINE_TYPES = UNSENT | {"user", "assistant", "system", "summary", "attachment"}
_MARKERS = ("uuid", "sessionId", "leafUuid", "parentUuid", "messageId")


def sniff(head: bytes, path: Path) -> bool:
    """True when the first lines are Claude Code entries (or an extractor's meta line before them)."""
    for value in head_values(head):
        if not isinstance(value, dict):
            continue
        if str(value.get("type")) in _LINE_TYPES and any(k in value for k in _MARKERS):
            return True
        if "_type" in value and "sessionId" in value:
            continue
        return False
    return False


def read(path: Path, *, children: bool = True) -> Session:
    """The session; with `children`, its subagent files as Session.children (a subagent's own are not read)."""
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    reader = _Reader(builder)
    feed_all(iter_json_lines(path, builder), reader.feed, builder)
    reader.finish()
    session = builder.build()
    if reader.repeated:
        session.extras["repeated_lines"] = reader.repeated
    for event in session.events:
        if event["kind"] == "branch":
            first = event.pop("first_index")
            event["next"] = session.record[first].id if first < len(session.record) else None
    found = find_children(path, reader.session_id)
    if found:
        session.extras["children"] = [str(p) for p in found]
    if children and found:
        session.children = read_children(session, found, reader.agent_calls, read)
    return session


class _Reader(Tree):
    def __init__(self, builder: SessionBuilder) -> None:
        super().__init__()  # the tree's state (claude_code_tree)
        self.b = builder
        self.key: Any = None  # grouping key of the open response
        self.usage: Any = None  # the open response's latest usage, as the line held it
        self.usage_line = 0  # and the line that held it
        self.boundary: dict[str, Any] | None = None
        self.session_id: str | None = None
        self.main_sidechain: bool | None = None
        self.agent_calls: dict[str, str] = {}  # a subagent's agentId -> the tool_use id of the call that started it
        self.heads_wanted = True  # till the session's id, cwd and version are read (_heads)

    def feed(self, line: int, offset: int, value: Any) -> None:
        b = self.b
        if not isinstance(value, dict):
            b.warn(line, f"entry is a JSON {type(value).__name__}, not an object; skipped")
            return
        kind = value.get("type")
        if kind is None and "_type" in value and not len(b.record):
            b.extras["extractor"] = value
            return
        if not isinstance(kind, str):
            b.warn(line, "entry has no string `type`; skipped")
            return
        if self.heads_wanted:
            self._heads(value)
        if kind == "user" and self._typed_prompt(line, value):
            return
        # Each field asked once a line, here, and handed on (a read's Python is most of its time, docs/performance.md)
        uuid = value.get("uuid")
        side = value.get("isSidechain") is True
        if not isinstance(uuid, str):
            uuid = None
        elif self.main_sidechain is None and kind in ("user", "assistant"):
            self.main_sidechain = side
        if side != bool(self.main_sidechain):
            uuid = None  # a sidechain line of a file that mixes them: its subagent's chain, not this one's
        if uuid is not None:
            if uuid in self.marks:  # a resume writes earlier lines again: already read, not a new message
                self._repeat(line, uuid, value)
                return
            parent = value.get("parentUuid")
            if parent is None or parent != self.tip:  # under the newest line, most lines: nothing for _follow to do
                self._follow(line, value)
        self._dispatch(line, offset, kind, value, side)
        if uuid is not None:
            self._mark(line, uuid)

    def _heads(self, value: dict) -> None:
        """The session's id, where it ran and the release that wrote it, each the first line's to name it; asked of
        each line only until all three are found."""
        extras = self.b.extras
        if self.session_id is None and isinstance(value.get("sessionId"), str):
            self.session_id = value["sessionId"]
        if "cwd" not in extras and isinstance(value.get("cwd"), str):
            extras["cwd"] = value["cwd"]  # where the session ran: `foldscope sessions` shows it as the project
        if "agent_version" not in extras and isinstance(value.get("version"), str):
            extras["agent_version"] = value["version"]  # the Claude Code release that wrote it (the report shows it)
        self.heads_wanted = self.session_id is None or "cwd" not in extras or "agent_version" not in extras

    def _typed_prompt(self, line: int, value: dict) -> bool:
        """The commonest line, a typed prompt (string content) on the main chain under the newest line, read
        straight into the record; False, having changed nothing, for any other line, which the general steps
        (_follow, _dispatch, _user) read. Those steps make the same message, view and marks of such a line, each
        asking on the way what is settled here at once (tests/core/formats/test_claude_code_fast.py)."""
        message = value.get("message")
        content = message.get("content") if type(message) is dict else None
        if type(content) is not str:  # asked first: a tool result's line (a list of blocks) is as common as an answer's
            return False
        uuid = value.get("uuid")
        if type(uuid) is not str or self.main_sidechain is not False or self.boundary is not None or uuid in self.marks:
            return False
        parent = value.get("parentUuid")
        if parent is None or parent != self.tip or value.get("isSidechain") is True or value.get("isCompactSummary"):
            return False
        b = self.b
        if self.key is not None:
            self._end_response()
        meta = Fields({"uuid": uuid, "is_meta": True}) if value.get("isMeta") else Fields.one("uuid", uuid)
        b.add(uuid, "instruction", Fields.one("instruction", content), line, at=parse_time(value.get("timestamp")), metadata=meta)
        self.marks[uuid] = line
        if self.views[-1] is not b.view:
            self.view_starts.append(line)
            self.views.append(b.view)
        self.tip = uuid
        return True

    def _agent_link(self, kind: str, value: dict, side: bool) -> None:
        """Which tool call started which subagent (claude_code_children.started_agent); a sidechain line names its own."""
        agent, call = started_agent(kind, value)
        if isinstance(agent, str) and isinstance(call, str):
            self.agent_calls.setdefault(agent, call)
        if side and isinstance(value.get("agentId"), str):
            self.b.extras.setdefault("agent_id_in_file", value["agentId"])

    def _dispatch(self, line: int, offset: int, kind: str, value: dict, side: bool) -> None:
        """`side`: whether the line is on a sidechain (its isSidechain true)."""
        b = self.b
        if kind in ("progress", "user"):
            self._agent_link(kind, value, side)
        if kind in UNSENT:
            b.unsent(kind, line, offset)
        elif kind == "attachment":
            self._attachment(line, offset, value)
        elif kind == "summary":
            b.extras.setdefault("summaries", []).append({"line": line, "summary": value.get("summary"), "leafUuid": value.get("leafUuid")})
        elif kind == "system":
            if value.get("subtype") == "compact_boundary":
                self._boundary(line, value)
            else:
                b.unsent(f"system:{value.get('subtype')}", line, offset)
        elif kind in ("user", "assistant"):
            message = value.get("message")
            if not isinstance(message, dict):
                b.warn(line, f"{kind} entry has no `message` object; skipped")
                return
            if self.main_sidechain is None:
                self.main_sidechain = side
            if self.boundary is not None and not value.get("isCompactSummary"):
                self._compact(line, None, value)
            if side != self.main_sidechain:
                self._sidechain(kind, line, value, message)
            elif kind == "user":
                self._user(line, value, message)
            else:
                self._assistant(line, value, message)
        else:
            b.warn(line, f"unknown entry type {kind!r}; skipped")
            b.unsent(f"unknown:{kind}", line, offset)

    # -- user lines ---------------------------------------------------------------------------
    def _user(self, line: int, value: dict, message: Mapping) -> None:
        b = self.b
        at = parse_time(value.get("timestamp"))
        uuid = _uuid_of(value, line)
        content = message.get("content")
        if value.get("isCompactSummary"):
            self._compact(line, text_of(content), value)
            return
        if isinstance(content, str):  # a typed prompt, the commonest line: one text, no result, no image
            if self.key is not None:
                self._end_response()
            meta: dict[str, Any] = {"uuid": uuid, "is_meta": True} if value.get("isMeta") else {"uuid": uuid}
            b.add(uuid, "instruction", {"instruction": content}, line, at=at, metadata=meta)
            return
        if not isinstance(content, list):
            b.warn(line, "user message has no string or list `content`; skipped")
            return
        results: list[dict] = []
        rest: list[Any] = []
        for x in content:
            (results if isinstance(x, dict) and x.get("type") == "tool_result" else rest).append(x)
        if rest and any(not isinstance(x, (str, dict)) for x in rest):
            b.warn(line, "user content holds a block that is neither text nor an object; kept as text")
        many = len(results) + bool(rest) > 1
        for i, block in enumerate(results):
            call_id = block.get("tool_use_id")
            if not isinstance(call_id, str):
                b.warn(line, "tool_result without a string `tool_use_id`; skipped")
                continue
            meta = {"uuid": uuid, "is_error": block.get("is_error") is True}
            output = block.get("content")
            if type(output) is not str:  # a string holds no image and is its own text
                if images := images_of(output):
                    meta["images"] = images
                output = text_of(output)
            b.result(call_id, output, line, at, id=f"{uuid}/{i}" if many else uuid, metadata=meta)
        if rest:
            if self.key is not None:
                self._end_response()
            meta = {"uuid": uuid}
            if value.get("isMeta"):
                meta["is_meta"] = True
            if images := images_of(rest):
                meta["images"] = images
            text = text_of([x if isinstance(x, (str, dict)) else str(x) for x in rest])
            b.add(f"{uuid}/text" if results else uuid, "instruction", {"instruction": text}, line, at=at, metadata=meta)

    # -- assistant lines ----------------------------------------------------------------------
    def _assistant(self, line: int, value: dict, message: Mapping) -> None:
        b = self.b
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            b.warn(line, "assistant message has no list `content`; skipped")
            return
        at = parse_time(value.get("timestamp"))
        # Interned: every response names its model, the same few strings, each line's its own copy once decoded.
        model = message.get("model")
        model = sys.intern(model) if isinstance(model, str) else None
        raw_usage = message.get("usage")
        mid = message.get("id")
        if not isinstance(mid, str):
            mid = None
        uuid = _uuid_of(value, line)
        if model == "<synthetic>":
            self._end_response()
            b.add(
                mid or uuid,
                "assistant",
                {"assistant_response": text_of(content)},
                line,
                at=at,
                metadata={"uuid": uuid, "synthetic": True},
                in_view=False,
            )
            return
        rid = value.get("requestId")
        if mid:
            key: Any = ("id", mid)
        elif isinstance(rid, str) and rid:
            key = ("request", rid)
        elif isinstance(raw_usage, dict):
            key = (
                "usage",
                raw_usage.get("input_tokens"),
                raw_usage.get("cache_read_input_tokens"),
                raw_usage.get("cache_creation_input_tokens"),
            )
        else:
            key = ("line", line)
        if key != self.key or not b.turn_open:
            self._report_usage()
            b.start_response(mid or uuid, line, at, model, {"uuid": uuid, "model": model})
            self.key = key
            self.turn_uuids = set()
        diagnostics = message.get("diagnostics")
        if isinstance(diagnostics, dict) and diagnostics.get("cache_miss_reason") is not None:
            b.cache_miss(miss_reason(diagnostics["cache_miss_reason"]))
            b.turn_meta(diagnostics=diagnostics)
        for block in content:
            if not isinstance(block, dict):
                b.warn(line, "assistant content block is not an object; kept as text")
                b.turn_text(str(block))
                continue
            kind = block.get("type")
            if kind == "text":
                text = block.get("text")
                if text and isinstance(text, str):
                    b.turn_text(text)
            elif kind == "thinking":
                text = block.get("thinking")
                if text and isinstance(text, str):
                    b.turn_thinking(text)
            elif kind == "redacted_thinking":
                b.turn_meta(redacted_thinking=True)
            elif kind in ("tool_use", "server_tool_use"):
                call_id = str_field(block, "id")
                name = str_field(block, "name")
                b.turn_call(call_id, name, block.get("input", {}), line, at, {"uuid": uuid})
            else:
                b.turn_text(text_of([block]))
        if raw_usage is not None:
            self.usage, self.usage_line = raw_usage, line
        stop = message.get("stop_reason")
        if stop:
            b.turn_meta(stop_reason=sys.intern(stop) if isinstance(stop, str) else stop)

    def _report_usage(self) -> None:
        """The open request's usage: the last line's of its response (the request stays open till the next)."""
        if self.usage is not None:
            self.b.report_usage(usage_of(self.usage, lambda problem: self.b.warn(self.usage_line, problem)))
            self.usage = None

    def _end_response(self) -> None:
        self._report_usage()
        self.b.end_turn()
        self.key = None

    # -- compaction, sidechains -----------------------------------------------------------------
    def _boundary(self, line: int, value: dict) -> None:
        if self.boundary is not None:
            self._compact(line, None, value)
        self._end_response()
        compact = value.get("compactMetadata")
        meta = compact if isinstance(compact, dict) else {}
        self.boundary = {
            "boundary_line": line,
            "trigger": meta.get("trigger"),
            "pre_tokens": meta.get("preTokens"),
            "post_tokens": meta.get("postTokens"),
            "uuid": value.get("uuid"),
            "at": parse_time(value.get("timestamp")),
            "text": value.get("content") if isinstance(value.get("content"), str) else "",
        }

    def _compact(self, line: int, summary: str | None, value: dict) -> None:
        self._end_response()
        bd, self.boundary = self.boundary, None
        if bd is None:  # a summary line with no boundary before it (older versions)
            bd = {"boundary_line": None, "trigger": None, "pre_tokens": None, "post_tokens": None, "uuid": None, "text": "", "at": None}
        uuid = value.get("uuid") if summary is not None and isinstance(value.get("uuid"), str) else None
        note_id = uuid or bd["uuid"] or f"compaction-line{line}"
        event = {"source": "claude_code", "trigger": bd["trigger"], "pre_tokens": bd["pre_tokens"], "boundary_line": bd["boundary_line"]}
        if bd["post_tokens"] is not None:
            event["post_tokens"] = bd["post_tokens"]
        text = summary if summary is not None else (bd["text"] or "Conversation compacted")
        at = parse_time(value.get("timestamp")) if summary is not None else bd["at"]
        note = self.b.compact(text, line if summary is not None else bd["boundary_line"] or line, id=note_id, at=at, event=event)
        if summary is not None and bd["boundary_line"]:
            self.b.also_from(note, (bd["boundary_line"], line))  # its original: the boundary and the summary

    def _attachment(self, line: int, offset: int, value: dict) -> None:
        """An `attachment` line: context Claude Code attaches to the next request (a hook's added context, a
        queued prompt, a skill or plan reminder) as a meta instruction when it holds text; else never sent."""
        attachment = value.get("attachment")
        kind = attachment.get("type") if isinstance(attachment, dict) else None
        text = attachment_text(attachment) if isinstance(attachment, dict) else None
        if not text:
            self.b.unsent(f"attachment:{kind}", line, offset)
            return
        if self.key is not None:
            self._end_response()
        uuid = str_field(value, "uuid", f"line{line}")
        self.b.add(
            uuid,
            "instruction",
            {"instruction": text},
            line,
            at=parse_time(value.get("timestamp")),
            metadata={"uuid": uuid, "is_meta": True, "attachment": kind},
        )

    def _sidechain(self, kind: str, line: int, value: dict, message: Mapping) -> None:
        uuid = str_field(value, "uuid", f"line{line}")
        body = text_of(message.get("content"))
        content = {"assistant_response": body} if kind == "assistant" else {"instruction": body}
        self.b.add(
            uuid,
            "assistant" if kind == "assistant" else "instruction",
            content,
            line,
            at=parse_time(value.get("timestamp")),
            metadata={"uuid": uuid, "sidechain": True},
            in_view=False,
        )

    def finish(self) -> None:
        if self.boundary is not None:
            self._compact(self.boundary["boundary_line"], None, {})
        self._end_response()


def _uuid_of(value: dict, line: int) -> str:
    """The line's uuid, or its place (`line<n>`) where it names none as a string."""
    uuid = value.get("uuid")
    return uuid if isinstance(uuid, str) else f"line{line}"


class _Followed:
    """The line mapper a follower keeps open between polls (core.formats.follow): Claude Code is one line after another."""

    branched = False

    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.reader = _Reader(builder)
        self.feed = self.reader.feed

    def snapshot(self) -> Session:
        held = self.reader.usage  # the open response's usage, held until it ends
        if held is not None:
            return self.b.snapshot(usage_of(held, lambda problem: None))  # warned once, when the response ends
        return self.b.snapshot()


def _session_files(root: Path) -> Iterator[Path]:
    """`projects/<project>/<session>.jsonl`; the older `agent-*.jsonl` files are subagents, not sessions of their own."""
    return (p for p in project_files(root) if not p.name.startswith("agent-"))


# A 200,000-token window (1,000,000 for a model named with [1m]); it compacts automatically at the window less
# the output it reserves (up to 20,000) and a 13,000-token buffer.
WINDOW, WINDOW_1M = 200_000, 1_000_000
OUTPUT_RESERVE, BUFFER = 20_000, 13_000
ALIASES = ("opus", "sonnet", "haiku", "opusplan")  # the names Claude Code takes for its own models


def _window(model: str | None) -> Figure | None:
    """Claude Code runs a Claude model in 200,000 tokens, 1,000,000 only when the model is named with [1m] (the
    price list's capacity does not change what it allows); with no model named, its default window."""
    if model is None:
        return WINDOW, "Claude Code's default window"
    name = model.lower().removesuffix("[1m]")
    if "claude" not in name and name not in ALIASES:
        return None
    if model.lower().endswith("[1m]"):
        return WINDOW_1M, f"Claude Code's rule for {model}: 1,000,000 for a model named with [1m]"
    return WINDOW, f"Claude Code's rule for {model}: 200,000 unless named with [1m]"


def _compaction(window: int) -> Figure | None:
    if window <= OUTPUT_RESERVE + BUFFER:  # the rule gives no point in a window this small (a proxied model's): none
        return None
    return (
        window - OUTPUT_RESERVE - BUFFER,
        "Claude Code's auto-compact point (the window less 20,000 reserved for output and a 13,000 buffer)",
    )


SPEC = FormatSpec(
    name=FORMAT,
    title="Claude Code",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=False,
    follow=_Followed,
    first_part=True,
    sessions=Sessions(env="CLAUDE_CONFIG_DIR", default=".claude", folder="projects", files=_session_files),
    window=_window,
    compaction=_compaction,
    no_summary="no agent-acompact-* summariser file beside the session",
    cache="explicit",
    usage_precision="exact",
    no_requests=None,
    setup=agent_setup,
)

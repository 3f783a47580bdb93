"""Reader for Gemini CLI chat recordings (`chats/session-*.jsonl`, and the older single-JSON file): a request per gemini message.

The writer is google-gemini/gemini-cli @ 5411f113cafae26161b4969b0237b8e1e024e2c2 :
packages/core/src/services/chatRecordingService.ts (types in chatRecordingTypes.ts). Mapping, in the vocabulary
of DESIGN.md:
- The first line is the session's metadata (sessionId, projectHash, startTime, lastUpdated, kind, directories):
  extras["header"]; `{"$set": {...}}` lines update it (extras["metadata"], the last value of each key).
- A message record `{id, timestamp, type, content, ...}`. The same id written again is the same message patched
  (its tokens and tool calls are added by re-appending it): the last write wins, so a first pass keeps each
  message's last version and the second builds the session from them, in the order the messages first appeared.
- `user` -> an instruction (its content's text parts). `info`, `error`, `warning` are the CLI's own notices, never
  sent: counted as unsent lines.
- `gemini` -> one model call: request k, whose view is every message before it; the response's text, its
  thoughts (metadata "thinking"), one action_request per `toolCalls[]` entry and an action_response for its
  `result` (the functionResponse parts the next call sent). Its usage is `tokens` (recordMessageTokens:
  input = promptTokenCount, cached included; cached = cachedContentTokenCount; thoughts; tool =
  toolUsePromptTokenCount): fresh input = input - cached + tool, cache read = cached, output = output + thoughts
  (thinking is billed as output). Gemini's cache is implicit: reads, never a write.
- `{"$rewindTo": id}`: the conversation went back to before that message (rewindTo slices it off): the view
  drops it and what followed; the record keeps them (a `branch` event, as Claude Code's rewinds).
- `{"$set": {"messages": [...]}}`: a checkpoint that replaces the message list (updateMessagesFromHistory, after
  /compress or tool-output masking, or on resume). With messages of ids never seen before it is a compaction:
  the first new user message is the summary (a note), any other new message enters the view after it, and the
  kept messages follow in the checkpoint's order. Without new ids but shorter, it is a rollback (a `branch`).
- A subagent's chat is its own file in `chats/<parent sessionId>/` (metadata `kind: "subagent"`): read as one of the
  session's children (Session.children), counted apart as Claude Code's subagents are (core.forensics.children).
- The older layout is one JSON object with the same metadata and a `messages` list; its places are message
  numbers, not lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foldscope.core.formats import fast_json
from foldscope.core.formats.child_files import readable_children
from foldscope.core.formats.spec import Figure, FormatSpec, Sessions, chat_files
from foldscope.core.formats.stream import SessionBuilder, feed_all, head_values, iter_json_lines, parse_time, text_of
from foldscope.core.model.session import ReadError, Session, Usage, bad_usage_warning, usage_figures, usage_object_warning

FORMAT = "gemini_cli"
MAX_BYTES = 512 * 1024 * 1024  # an older single-JSON file larger than this is refused
_NOTICES = {"info", "error", "warning"}
_LEGACY = re.compile(rb'^\s*\{[^\[]*?"(?:sessionId|projectHash)"\s*:')


def sniff(head: bytes, path: Path) -> bool:
    values = head_values(head, 1)
    if values:
        first = values[0]
        return isinstance(first, dict) and isinstance(first.get("sessionId"), str) and "projectHash" in first
    # The older layout: one pretty-printed object whose opening keys are the session's metadata.
    return bool(_LEGACY.match(head)) and b'"projectHash"' in head and b'"messages"' in head


def read(path: Path, *, children: bool = True) -> Session:
    """The session; with `children`, its subagents' files (`chats/<its sessionId>/`) as Session.children."""
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    if _is_legacy(path):
        lines: Iterator[tuple[int, int, Any]] = _legacy_lines(path)
    else:
        lines = iter_json_lines(path, builder)
    log = _Log(builder)
    feed_all(lines, log.feed, builder)
    _Replay(builder, log).run()
    session = builder.build()
    for event in session.events:
        if event["kind"] == "branch":
            first = event.pop("first_index")
            event["next"] = session.record[first].id if first < len(session.record) else None
    found = find_children(path, session.extras.get("header"))
    if found:
        session.extras["children"] = [str(p) for p in found]
    if children and found:
        session.children = _read_children(session, found)
    return session


def find_children(path: Path, header: Any) -> list[Path]:
    """A main session's subagents: chatRecordingService.ts (5411f113, initialize) writes a subagent's chat to
    `chats/<parent sessionId, sanitised>/<its sessionId>.jsonl` with `kind: "subagent"` in its metadata line."""
    if not isinstance(header, dict) or header.get("kind") == "subagent" or not isinstance(header.get("sessionId"), str):
        return []
    folder = path.parent / re.sub(r"[^a-zA-Z0-9_-]", "_", header["sessionId"])  # sanitizeFilenamePart (fileUtils.ts)
    try:
        files = sorted(p for p in folder.glob("*.jsonl") if p.is_file())
    except OSError:
        return []
    return [p for p in files if _subagent_header(p)]


def _subagent_header(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            first = json.loads(handle.readline(1 << 20))
    except (OSError, ValueError):
        return False
    return isinstance(first, dict) and first.get("kind") == "subagent"


def _read_children(session: Session, paths: list[Path]) -> list[Session]:
    """Each subagent's chat as a child session; one that does not read is left out with a warning on the parent."""
    out = []
    for _, child in readable_children(session, paths, lambda path: read(path, children=False)):
        header = child.extras.get("header")
        agent = header.get("sessionId") if isinstance(header, dict) else None
        child.extras.update({"agent_id": agent, "child_kind": "subagent"})
        out.append(child)
    return out


def _is_legacy(path: Path) -> bool:
    with open(path, "rb") as handle:
        head = handle.read(64 * 1024)
    return not head_values(head, 1) and head.lstrip().startswith(b"{")


def _legacy_lines(path: Path) -> Iterator[tuple[int, int, Any]]:
    """The older single-JSON file as the lines the JSONL layout would hold: its metadata, then each message."""
    document = fast_json.read_document(path, MAX_BYTES)
    if not isinstance(document, dict):
        raise ReadError(str(path), "", f"a JSON {type(document).__name__}, not a Gemini CLI session object")
    messages = document.get("messages")
    if not isinstance(messages, list):
        raise ReadError(str(path), "", "the session has no `messages` list")
    yield 1, 0, {k: v for k, v in document.items() if k != "messages"}
    for n, message in enumerate(messages, 2):
        yield n, 0, message


class _Log:
    """The first pass: each message's last version, and the order of what happened (first writes, rewinds,
    checkpoints), replaying the writer's message list as it goes."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.latest: dict[str, tuple[dict[str, Any], int]] = {}  # a message's key -> its last version and its line
        self.offsets: dict[str, int] = {}  # where that line starts (an unsent notice is shown from the file)
        self.ops: list[tuple[str, int, Any]] = []
        self.current: list[str] = []  # the writer's message list, as keys
        self.header_seen = False
        self._keys: dict[str, int] = {}  # id -> how many messages of that id there have been

    def _key(self, mid: str, new: bool) -> str:
        if new:
            self._keys[mid] = self._keys.get(mid, 0) + 1
        n = self._keys.get(mid, 1)
        return mid if n == 1 else f"{mid}#{n}"

    def feed(self, line: int, offset: int, value: Any) -> None:
        if not isinstance(value, dict):
            self.b.warn(line, f"record is a JSON {type(value).__name__}, not an object; skipped")
            return
        if not self.header_seen and "$set" not in value and "$rewindTo" not in value and "type" not in value:
            self.header_seen = True
            self.b.extras["header"] = value
            return
        if "$rewindTo" in value:
            target = value["$rewindTo"]
            key = self._key(target, False) if isinstance(target, str) else None
            if key is None or key not in self.current:
                self.b.warn(line, f"rewind to {target!r}, a message not in the conversation; skipped")
                return
            self.current = self.current[: self.current.index(key)]
            self.ops.append(("rewind", line, key))
            return
        if "$set" in value:
            update = value["$set"]
            if not isinstance(update, dict):
                self.b.warn(line, "`$set` is not an object; skipped")
                return
            self.b.extras.setdefault("metadata", {}).update({k: v for k, v in update.items() if k != "messages"})
            if "messages" in update:
                self._checkpoint(line, update["messages"])
            return
        mid = value.get("id")
        if not isinstance(mid, str) or not isinstance(value.get("type"), str):
            self.b.warn(line, "a message record without a string `id` and `type`; skipped")
            return
        key = self._key(mid, mid not in self._keys or self._key(mid, False) not in self.current)
        if key not in self.latest:
            self.ops.append(("message", line, key))
            self.current.append(key)
        self.latest[key] = (value, line)
        self.offsets[key] = offset

    def _checkpoint(self, line: int, messages: Any) -> None:
        if not isinstance(messages, list):
            self.b.warn(line, "`$set.messages` is not a list; skipped")
            return
        keys, new = [], []
        for message in messages:
            mid = message.get("id") if isinstance(message, dict) else None
            if not isinstance(mid, str):
                self.b.warn(line, "a checkpoint message without a string `id`; skipped")
                continue
            known = mid in self._keys and self._key(mid, False) in self.latest
            key = self._key(mid, False) if known else self._key(mid, True)
            if not known:
                self.latest[key] = (message, line)
                new.append(key)
            keys.append(key)
        self.current = keys
        self.ops.append(("checkpoint", line, (keys, new)))


class _Replay:
    """The second pass: the session built from the messages' last versions, in the order the log gives."""

    def __init__(self, builder: SessionBuilder, log: _Log) -> None:
        self.b = builder
        self.log = log
        self.ids: dict[str, list[str]] = {}  # a message's key -> the ids of the messages it made

    def run(self) -> None:
        for op, line, arg in self.log.ops:
            if op == "message":
                self._message(arg, *self.log.latest[arg])
            elif op == "rewind":
                self._rewind(line, arg)
            else:
                self._checkpoint(line, *arg)
        self.b.end_turn()

    def _message(self, key: str, value: dict[str, Any], line: int, *, in_view: bool = True) -> None:
        b = self.b
        kind, at = value.get("type"), parse_time(value.get("timestamp"))
        if kind == "user":
            self.ids[key] = [b.add(key, "instruction", {"instruction": _text(value.get("content"))}, line, at=at, in_view=in_view)]
        elif kind == "gemini" and in_view:
            self._response(key, value, line, at)
        elif kind == "gemini":  # a checkpoint's synthetic model turn (after a summary): no model call
            self.ids[key] = [
                b.add(
                    key,
                    "assistant",
                    {"assistant_response": _text(value.get("content"))},
                    line,
                    at=at,
                    metadata={"synthetic": True},
                    in_view=False,
                )
            ]
        elif kind in _NOTICES:
            b.unsent(f"gemini {kind}", line, self.log.offsets.get(key, 0))
            self.ids[key] = []
        else:
            b.warn(line, f"a message of type {kind!r}, not one Gemini CLI writes; skipped")
            self.ids[key] = []

    def _response(self, key: str, value: dict[str, Any], line: int, at: float | None) -> None:
        b = self.b
        before = len(b.view)
        model = value.get("model") if isinstance(value.get("model"), str) else None
        b.start_response(key, line, at, model, {"model": model} if model else None)
        b.report_usage(_usage(value.get("tokens"), lambda problem: b.warn(line, problem)))
        text = _text(value.get("content"))
        if text:
            b.turn_text(text)
        thoughts = value.get("thoughts")
        for thought in thoughts if isinstance(thoughts, list) else ():
            if isinstance(thought, dict):
                said = ": ".join(str(thought[k]) for k in ("subject", "description") if thought.get(k))
                if said:
                    b.turn_thinking(said)
        calls = value.get("toolCalls")
        for n, call in enumerate(calls if isinstance(calls, list) else ()):
            if not isinstance(call, dict):
                b.warn(line, f"tool call {n} is not an object; skipped")
                continue
            given_id, given_name = call.get("id"), call.get("name")
            call_id = given_id if isinstance(given_id, str) else f"{key}-call{n}"
            name = given_name if isinstance(given_name, str) else ""
            b.turn_call(
                call_id,
                name,
                call.get("args") if isinstance(call.get("args"), dict) else {},
                line,
                parse_time(call.get("timestamp")) or at,
                {"status": call.get("status")},
            )
            if call.get("result") is not None:
                b.result(call_id, _result_text(call["result"]), line, parse_time(call.get("timestamp")) or at, id=f"{call_id}-result")
        b.end_turn()
        self.ids[key] = list(b.view[before:])  # the response, its calls and their results

    def _rewind(self, line: int, key: str) -> None:
        b = self.b
        b.end_turn()
        first = self.ids.get(key, [])
        view = list(b.view)
        cut = next((view.index(m) for m in first if m in view), None)
        if cut is None:
            return
        kept, abandoned = view[:cut], view[cut:]
        b.view = kept
        b.events.append(
            {
                "kind": "branch",
                "source": FORMAT,
                "action": "rewind",
                "at_request": len(b.trace),
                "line": line,
                "parent_line": None,
                "abandoned": abandoned,
                "kept": list(kept),
                "first_index": len(b.record),
            }
        )
        b.extras.setdefault("abandoned", []).extend(abandoned)

    def _checkpoint(self, line: int, keys: list[str], new: list[str]) -> None:
        b = self.b
        b.end_turn()
        b.close_request()  # the last call before the checkpoint is over: its usage is the size compressed
        old = [m for k in keys if k not in new for m in self.ids.get(k, [])]
        if not new:
            if old != list(b.view):  # a rollback: the checkpoint holds fewer messages than the view
                dropped = [m for m in b.view if m not in set(old)]
                b.view = old
                b.events.append(
                    {
                        "kind": "branch",
                        "source": FORMAT,
                        "action": "rollback",
                        "at_request": len(b.trace),
                        "line": line,
                        "parent_line": None,
                        "abandoned": dropped,
                        "kept": list(old),
                        "first_index": len(b.record),
                    }
                )
            return
        summary_key = next((k for k in new if self.log.latest[k][0].get("type") == "user"), new[0])
        summary, _ = self.log.latest[summary_key]
        before = b.trace[-1].usage.reported_input if b.trace and b.trace[-1].usage else None
        note = b.compact(
            _text(summary.get("content")),
            line,
            id=summary_key,
            at=parse_time(summary.get("timestamp")),
            keep=old,
            event={"source": FORMAT, "tokens_before": before, "kept_messages": len(old)},
        )
        self.ids[summary_key] = [note]
        for k in new:
            if k != summary_key:
                self._message(k, *self.log.latest[k], in_view=False)
        b.view = [m for k in keys for m in self.ids.get(k, [])]


_SETTLED = ("success", "error", "cancelled")  # a tool call's last states (chatRecordingTypes.ts ToolCallRecord)


class _Followed:
    """Gemini CLI's line mapper for a growing chat (core.formats.follow): the two passes of `read` run as lines come.

    chatRecordingService.ts writes a model message, then appends it again with its tokens and again with its tool
    calls' results, before the next message begins. So the newest model message is held while it is unsettled (no
    tokens yet, or a tool call still running) and entered when it settles or another message follows it. A later
    line that patches a message already entered, a `$rewindTo` or a `$set.messages` checkpoint sets `branched`:
    the follower reads the file again whole, as opening it would (counted in its rereads)."""

    def __init__(self, builder: SessionBuilder) -> None:
        if _is_legacy(Path(builder.path)):  # one JSON object, rewritten whole on each save: it does not grow by lines
            raise ReadError(str(builder.path), "", "the older single-JSON chat is rewritten whole, not grown by lines: open it instead")
        self.b = builder
        self.log = _Log(builder)
        self.replay = _Replay(builder, self.log)
        self.entered: set[str] = set()  # the message keys replayed into the builder
        self.queue: list[tuple[int, str]] = []  # message ops logged, not yet entered: (line, key)
        self.branched = False

    def feed(self, line: int, offset: int, value: Any) -> None:
        if self.branched:
            return  # the follower reads the file again whole
        ops = len(self.log.ops)
        mid = value.get("id") if isinstance(value, dict) and "type" in value else None
        patch = isinstance(mid, str) and mid in self.log._keys and self.log._key(mid, False) in self.entered
        self.log.feed(line, offset, value)
        new = self.log.ops[ops:]
        if any(op != "message" for op, _, _ in new) or (patch and not new):
            self.branched = True
            return
        self.queue += [(op_line, key) for _, op_line, key in new]
        while self.queue:
            op_line, key = self.queue[0]
            value = self.log.latest[key][0]
            if len(self.queue) == 1 and not _settled(value):
                break  # the newest model message: its tokens or tool results are still to come
            self.replay._message(key, value, op_line)
            self.entered.add(key)
            self.queue.pop(0)

    def snapshot(self) -> Session:
        return self.b.snapshot()


def _settled(value: dict[str, Any]) -> bool:
    """A message that later lines will not patch: anything but a model message, or one with its tokens whose tool
    calls have all ended."""
    if value.get("type") != "gemini":
        return True
    calls = value.get("toolCalls")
    calls = calls if isinstance(calls, list) else []
    return "tokens" in value and all(isinstance(c, dict) and c.get("status") in _SETTLED for c in calls)


def _text(content: Any) -> str:
    """A PartListUnion's text: a string, a part, or a list of parts (their `text`)."""
    if isinstance(content, dict):
        content = [content]
    return text_of(content)


def _result_text(result: Any) -> str:
    """A tool call's result as sent: its functionResponse parts' responses (an `output` text as it is)."""
    parts = result if isinstance(result, list) else [result]
    out = []
    for part in parts:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict) and set(response) == {"output"} and isinstance(response["output"], str):
            out.append(response["output"])
        elif response is not None:
            out.append(json.dumps(response, ensure_ascii=False))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(out)


def _usage(raw: Any, warn: Any) -> Usage | None:
    """A gemini message's `tokens` as the provider's usage; a figure of the wrong type makes it unknown, said."""
    if not isinstance(raw, dict):
        if raw is not None:
            warn(usage_object_warning(raw))
        return None
    got, bad = usage_figures(raw, ("input", "output", "cached", "thoughts", "tool"))
    if bad:
        warn(bad_usage_warning(bad))
        return None
    cached = min(got["cached"], got["input"])
    return Usage(input=got["input"] - cached + got["tool"], cache_read=cached, output=got["output"] + got["thoughts"])


# tokenLimits.ts: every model's limit is 1,048,576 tokens (DEFAULT_TOKEN_LIMIT); chatCompressionService.ts compresses
# when the history passes DEFAULT_COMPRESSION_TOKEN_THRESHOLD, half of it.
TOKEN_LIMIT = 1_048_576
COMPRESSION_THRESHOLD = 0.5


def _window(model: str | None) -> Figure:
    return TOKEN_LIMIT, "Gemini CLI's token limit (tokenLimits.ts: 1,048,576 for every model)"


def _compaction(window: int) -> Figure:
    return (
        int(window * COMPRESSION_THRESHOLD),
        "Gemini CLI's compression threshold (half the token limit by default, chatCompressionService.ts)",
    )


def _session_files(root: Path) -> Iterator[Path]:
    """`tmp/<project>/chats/session-*.jsonl` (and the older `.json`); a subagent's, in `chats/<parent>/`, left out."""
    return chat_files(root, lambda p: p.name.startswith("session-") and p.suffix in (".jsonl", ".json"))


UNKNOWN_PROJECT = "unknown"  # a file kept outside Gemini CLI's chats folder: its folder names no project


def _project(path: Path) -> str:
    """`tmp/<project>/chats/<file>` (a subagent's one folder deeper): the folder Gemini CLI named after the project.
    A file kept anywhere else names none: its own folder's name would be a wrong one."""
    for chats in (path.parent, path.parent.parent):
        if chats.name == "chats" and chats.parent.name:
            return chats.parent.name
    return UNKNOWN_PROJECT


SPEC = FormatSpec(
    name=FORMAT,
    title="Gemini CLI",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=False,
    follow=_Followed,
    first_part=False,  # a message is patched by later lines
    sessions=Sessions(env="GEMINI_CLI_HOME", default="", folder=".gemini/tmp", files=_session_files, project=_project),
    window=_window,
    compaction=_compaction,
    no_summary="Gemini CLI's compression call is not recorded in the session file",
    cache="implicit",
    usage_precision="exact",
    no_requests=None,
)

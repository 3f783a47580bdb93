"""Reader for pi session JSONL, v1 (linear, no ids) to v3 (an id/parentId tree): one branch as a Session.

Two passes keep memory small: the first streams the file keeping only (id, parent, line, offset) per
entry, to find the branch; the second seeks to that branch's lines and maps them in branch order.
- v1: the chain is the file order. v2/v3: the branch ending at the newest leaf (the leaf written last),
  or at `leaf` when given; the other leaves are listed in extras["leaves"] ({id, line, depth}) so the
  GUI can reopen the session on another branch. A parent cycle is a ReadError; a parent missing from
  the file (an excerpt) ends the branch there, with a warning.
- messages: user -> instruction; assistant -> one response and one request, its text joined, thinking in
  metadata["thinking"], one action_request per toolCall block, usage {input, cacheRead, cacheWrite,
  output} as the request's reported usage; toolResult -> action_response linked by toolCallId
  (`isError` in metadata); bashExecution and custom messages -> instructions (an excluded bash run stays
  out of the view).
- `compaction` (summary plus firstKeptEntryId, or v1's firstKeptEntryIndex) -> a note and a view change:
  the view becomes the note, then the kept messages; `branch_summary` -> a note that joins the view.
- model_change names later requests' model; thinking_level_change, custom, label and session_info are
  never sent to the model: extras["unsent"]. The header line is extras["header"].
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from foldscope.core.formats.images import describe as describe_image
from foldscope.core.formats.spec import Figure, FormatSpec, Sessions, no_window, project_files
from foldscope.core.formats.stream import SessionBuilder, feed_all, head_values, iter_json_lines, parse_time, str_field, text_of
from foldscope.core.model.providers import is_openai_model
from foldscope.core.model.session import Message, ReadError, Session, Usage, bad_usage_warning, usage_figures, usage_object_warning

FORMAT = "pi"

_UNSENT = {"thinking_level_change", "custom", "label", "session_info", "model_change"}


def sniff(head: bytes, path: Path) -> bool:
    """True when the first complete line is a pi session header or a pi entry with a role-bearing message."""
    values = head_values(head, 5)
    value = values[0] if values else None
    if not isinstance(value, dict):
        return False
    if value.get("type") == "session":
        return "cwd" in value or "version" in value or "id" in value
    message = value.get("message")
    return value.get("type") == "message" and isinstance(message, dict) and "role" in message


def read(path: Path, leaf: str | None = None) -> Session:
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    entries, header = _index(path, builder)
    branch = _branch(entries, leaf, builder)
    reader = _Reader(builder, entries, header)
    with open(path, "rb") as handle:
        feed_all(_reread(handle, branch), reader.feed, builder)
    session = builder.build()
    if header is not None:
        session.extras["header"] = header
    return session


def _reread(handle, branch: list[tuple]):
    """Pass two: the branch's lines, parsed again, in branch order (pass one checked they parse)."""
    for number, offset, _ in branch:
        handle.seek(offset)
        yield number, offset, json.loads(handle.readline())


def _index(path: Path, b: SessionBuilder) -> tuple[list[tuple], dict | None]:
    """Pass one: (id, parent id, line, offset) per entry, in file order (v1 entries get id None)."""
    entries: list[tuple] = []
    header = None
    for number, offset, value in iter_json_lines(path, b):
        if not isinstance(value, dict):
            b.warn(number, f"entry is a JSON {type(value).__name__}, not an object; skipped")
            continue
        if value.get("type") == "session" and header is None and not entries:
            header = value
            entries.append(("", None, number, offset))  # v1's firstKeptEntryIndex counts the header
            continue
        if value.get("type") == "session":
            b.warn(number, "a second session header; skipped")
            continue
        eid = value.get("id")
        parent = value.get("parentId")
        entries.append((eid if isinstance(eid, str) else None, parent if isinstance(parent, str) else None, number, offset))
    if header is None:
        entries.insert(0, ("", None, 0, -1))
    b.extras["version"] = header.get("version", 1) if header else (2 if any(e[0] for e in entries[1:]) else 1)
    return entries, header


def _branch(entries: list[tuple], leaf: str | None, b: SessionBuilder) -> list[tuple]:
    """The chain to map, root first, as (line, offset, id) triples."""
    body = entries[1:]
    if not any(e[0] for e in body):
        return [(n, off, None) for _, _, n, off in body]
    by_id: dict[str, tuple] = {}
    for eid, parent, number, offset in body:
        if eid is None:
            b.warn(number, "entry without an `id` in a tree session; skipped")
        elif eid in by_id:
            b.warn(number, f"duplicate entry id {eid!r}; the first one is kept")
        else:
            by_id[eid] = (parent, number, offset)
    parents = {v[0] for v in by_id.values() if v[0] is not None}
    leaves = sorted((v[1], k) for k, v in by_id.items() if k not in parents)
    if leaf is None:
        if not leaves:
            raise b.fail(body[-1][2], "every entry is some entry's parent: a cycle in parentId links")
        leaf = leaves[-1][1]
    elif leaf not in by_id:
        raise ReadError(b.file, "", f"no entry with id {leaf!r} to open as the leaf")
    chain: list[tuple] = []
    seen: set[str] = set()
    current: str | None = leaf
    while current is not None:
        if current in seen:
            raise b.fail(by_id[current][1], f"parentId cycle through entry {current!r}")
        seen.add(current)
        if current not in by_id:
            b.warn(chain[-1][0], f"parent {current!r} is not in the file; the branch starts after it")
            break
        parent, number, offset = by_id[current]
        chain.append((number, offset, current))
        current = parent
    chain.reverse()
    b.extras["leaves"] = [{"id": k, "line": n, "depth": _depth(k, by_id)} for n, k in leaves if k != leaf]
    b.extras["leaf"] = leaf
    return chain


def _depth(eid: str, by_id: dict[str, tuple]) -> int:
    depth, seen = 0, set()
    while eid in by_id and eid not in seen:
        seen.add(eid)
        eid = by_id[eid][0]
        depth += 1
    return depth


class _Reader:
    def __init__(self, builder: SessionBuilder, entries: list[tuple], header: dict | None) -> None:
        self.b = builder
        self.lines = [e[2] for e in entries]  # v1: firstKeptEntryIndex -> line
        self.position: dict[int, int] = {}  # line -> position on the branch
        self._entry_lines = {e[0]: e[2] for e in entries if e[0]}  # entry id -> line
        self.model = header.get("modelId") if header and isinstance(header.get("modelId"), str) else None

    def feed(self, line: int, offset: int, value: Any) -> None:
        b = self.b
        kind = value.get("type") if isinstance(value.get("type"), str) else None
        key = value.get("id") if isinstance(value.get("id"), str) else f"L{line}"
        self.position[line] = len(self.position)
        at = parse_time(value.get("timestamp"))
        if kind == "message":
            message = value.get("message")
            if not isinstance(message, dict):
                b.warn(line, "message entry has no `message` object; skipped")
            else:
                self._message(message, key, line, at)
        elif kind == "compaction":
            self._compaction(value, key, line, at)
        elif kind == "branch_summary":
            b.add(
                key,
                "note",
                {"assistant_response": str(value.get("summary", ""))},
                line,
                at=at,
                metadata={"branch_summary": True, "from_id": value.get("fromId")},
            )
        elif kind == "custom_message":
            b.add(
                key,
                "instruction",
                {"instruction": text_of(value.get("content"))},
                line,
                at=at,
                metadata={"role": "custom", "custom_type": value.get("customType")},
            )
        elif kind in _UNSENT:
            if kind == "model_change" and isinstance(value.get("modelId"), str):
                self.model = value["modelId"]
            b.unsent(kind, line, offset)
        else:
            b.warn(line, f"unknown entry type {kind!r}; skipped")
            b.unsent(f"unknown:{kind}", line, offset)

    def _images(self, content: Any) -> list[dict]:
        """A content list's image blocks, each counted by the rule of the provider of the model in use
        (core.formats.images: OpenAI's tiles for a gpt-* or o-series model, else Anthropic's pixels)."""
        if not isinstance(content, list):
            return []
        model = self.model or ""
        provider = "openai" if is_openai_model(model) else "anthropic"
        return [f for block in content if (f := describe_image(block, provider, model)) is not None]

    def _message(self, message: Mapping, key: str, line: int, at: float | None) -> None:
        b = self.b
        role = message.get("role")
        content = message.get("content")
        if role == "user":
            images = self._images(content)
            b.add(key, "instruction", {"instruction": text_of(content)}, line, at=at, metadata={"images": images} if images else None)
        elif role == "assistant":
            model = message.get("model") if isinstance(message.get("model"), str) else self.model
            b.start_response(key, line, at, model, {"model": model, "stop_reason": message.get("stopReason")})
            for block in content if isinstance(content, list) else [content]:
                if not isinstance(block, dict):
                    b.turn_text(text_of([block]) if isinstance(block, str) else "")
                elif block.get("type") == "thinking":
                    b.turn_thinking(str_field(block, "thinking"))
                elif block.get("type") == "toolCall":
                    call_id = str_field(block, "id")
                    name = str_field(block, "name")
                    b.turn_call(call_id, name, block.get("arguments", {}), line, at)
                else:
                    b.turn_text(text_of([block]))
            if message.get("errorMessage"):
                b.turn_meta(error=message.get("errorMessage"))
            usage = message.get("usage")
            if isinstance(usage, dict):
                got, bad = usage_figures(usage, ("input", "cacheRead", "cacheWrite", "output"))
                if bad:
                    b.warn(line, bad_usage_warning(bad))
                else:
                    b.report_usage(
                        Usage(input=got["input"], cache_read=got["cacheRead"], cache_write=got["cacheWrite"], output=got["output"])
                    )
            elif usage is not None:
                b.warn(line, usage_object_warning(usage))
        elif role == "toolResult":
            answers = message.get("toolCallId")
            if not isinstance(answers, str):
                b.warn(line, "toolResult without a string `toolCallId`; skipped")
                return
            meta: dict = {"is_error": message.get("isError") is True}
            if images := self._images(content):
                meta["images"] = images
            b.result(answers, text_of(content), line, at, id=key, metadata=meta)
        elif role == "bashExecution":
            text = f"{message.get('command', '')}\n{message.get('output', '')}"
            b.add(
                key,
                "instruction",
                {"instruction": text},
                line,
                at=at,
                metadata={"role": role},
                in_view=not message.get("excludeFromContext"),
            )
        elif role in ("custom", "hookMessage", "branchSummary", "compactionSummary"):
            body = content if content is not None else message.get("summary")
            b.add(key, "instruction", {"instruction": text_of(body)}, line, at=at, metadata={"role": role})
        else:
            b.warn(line, f"message with unknown role {role!r}; skipped")

    def _compaction(self, value: Mapping, key: str, line: int, at: float | None) -> None:
        b = self.b
        b.end_turn()
        first = value.get("firstKeptEntryId")
        index = value.get("firstKeptEntryIndex")
        first_line = self._entry_lines.get(first) if isinstance(first, str) else None
        if first_line is None and isinstance(index, int) and 0 < index < len(self.lines):
            first, first_line = index, self.lines[index]
        keep: list[str] = []
        if first_line is not None and first_line in self.position:
            start = self.position[first_line]
            keep = [m for m in b.view if self.position.get(_line_of(b.record.get(m)), -1) >= start]
        elif first is not None:
            b.warn(line, f"compaction's first kept entry {first!r} is not on this branch; nothing kept")
        b.compact(
            str(value.get("summary", "")),
            line,
            id=key,
            at=at,
            keep=keep,
            event={"source": "pi", "tokens_before": value.get("tokensBefore"), "first_kept": first},
        )


def _line_of(message: Message) -> int:
    """The source line of a message the builder added (every one it adds has a provenance)."""
    assert message.provenance is not None
    return message.provenance.line


class _Followed:
    """pi's line mapper, fed in file order while the file stays one branch (each entry's parent the last entry); an
    entry that starts another branch sets `branched`, and the follower reads the file again whole (core.formats.follow)."""

    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.reader = _Reader(builder, [("", None, 0, -1)], None)
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

    def snapshot(self) -> Session:
        return self.b.snapshot()


def _session_files(root: Path) -> Iterator[Path]:
    """`sessions/<project>/*.jsonl`."""
    return project_files(root)


# pi compacts when the context passes the window less compaction.reserveTokens (16,384 by default).
RESERVE = 16_384


def _compaction(window: int) -> Figure | None:
    if window <= RESERVE:  # the rule gives no point in a window this small
        return None
    return window - RESERVE, "pi's compaction point (the window less reserveTokens, 16,384 by default)"


SPEC = FormatSpec(
    name=FORMAT,
    title="pi",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=False,
    follow=_Followed,
    first_part=False,  # a tree: its first lines may be another branch
    sessions=Sessions(env="PI_CODING_AGENT_DIR", default=".pi/agent", folder="sessions", files=_session_files),
    window=no_window,
    compaction=_compaction,
    no_summary=None,
    cache="explicit",
    usage_precision="exact",
    no_requests=None,
)

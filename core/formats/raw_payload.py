"""Reader for a raw request payload: an Anthropic Messages or OpenAI Chat Completions request body as JSON.

The payload is one request, so the Session has one Request whose view is every message, in order.
- Anthropic: `system` (a string or text blocks) -> system; user text -> instruction; tool_result blocks ->
  action_responses (is_error in metadata); assistant text -> assistant (thinking in metadata["thinking"]);
  tool_use blocks -> action_requests.
- OpenAI: system and developer -> system (metadata["role"]); user -> instruction; assistant content ->
  assistant, its `tool_calls` -> action_requests (arguments parsed from their JSON string); tool
  messages -> action_responses linked by tool_call_id.
Calls and results are linked both ways. Everything but the messages (model, tools, max_tokens, ...)
is kept in extras["request"]. Provenance is (file, 0, JSON path of the message). A payload is one JSON
document, so it is read whole; files over MAX_BYTES are refused rather than read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from foldscope.core.formats import fast_json
from foldscope.core.formats.spec import FormatSpec, no_compaction, no_window
from foldscope.core.formats.stream import json_problem, text_of
from foldscope.core.model.session import FullRecord, Message, Provenance, ReadError, Request, Session

FORMAT = "raw_payload"
MAX_BYTES = 256 * 1024 * 1024

_MESSAGES_LIST = re.compile(rb'"messages"\s*:\s*\[')


def sniff(head: bytes, path: Path) -> bool:
    """True for one JSON object holding a `messages` list of role-bearing messages (not JSON lines)."""
    text = head.lstrip()
    if not text.startswith(b"{") or not _MESSAGES_LIST.search(head):
        return False
    first = text.split(b"\n", 1)[0]
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):
        return b'"role"' in head  # a multi-line document: its first line alone is not JSON
    return isinstance(value, dict) and isinstance(value.get("messages"), list) and "type" not in value


def read(path: Path) -> Session:
    path = Path(path)
    file = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ReadError(file, "", f"a request payload of {size} bytes is larger than {MAX_BYTES}")
        payload = json.loads(path.read_bytes())
    except OSError as exc:
        raise ReadError(file, "", f"cannot read the file: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ReadError(file, f"byte {exc.start}", "not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise ReadError(file, f"line {exc.lineno} column {exc.colno}", json_problem(exc)) from None
    except RecursionError:
        raise ReadError(file, "", fast_json.TOO_DEEP) from None
    except ValueError as exc:
        raise ReadError(file, "", f"not JSON ({exc})") from None
    if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
        raise ReadError(file, "$", "not a request payload: no `messages` list")
    builder = _Builder(file)
    builder.system(payload.get("system"))
    links = _links(payload["messages"])
    for i, message in enumerate(payload["messages"]):
        builder.message(message, f"$.messages[{i}]", links)
    if not builder.messages:
        raise ReadError(file, "$.messages", "the request has no messages")
    record = FullRecord(builder.messages)
    view = [m.id for m in builder.messages]
    model = payload.get("model") if isinstance(payload.get("model"), str) else None
    trace = [Request(0, tuple(view), None, None, None, model)]
    request = {k: v for k, v in payload.items() if k not in ("messages", "system")}
    return Session(
        record=record,
        view=view,
        format=FORMAT,
        source=file,
        trace=trace,
        warnings=builder.warnings,
        model=model,
        extras={"request": request, "dialect": builder.dialect},
    )


def _links(messages: list) -> dict[str, str]:
    """Call id -> the id its result message will have (so a call names its result when it is made)."""
    links: dict[str, str] = {}
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        if m.get("role") == "tool" and isinstance(m.get("tool_call_id"), str):
            links[m["tool_call_id"]] = f"m{i}"
        elif isinstance(m.get("content"), list):
            for j, block in enumerate(m["content"]):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    links[str(block.get("tool_use_id"))] = f"m{i}.{j}"
    return links


class _Builder:
    def __init__(self, file: str) -> None:
        self.file = file
        self.messages: list[Message] = []
        self.ids: set[str] = set()
        self.calls: dict[str, tuple[str, str, Any]] = {}
        self.warnings: list[str] = []
        self.dialect = "anthropic"

    def add(self, mid: str, kind: str, content: dict, place: str, metadata: dict | None = None) -> None:
        if mid in self.ids:  # a repeated tool call id: keep both, the second renamed
            self.warnings.append(f"{self.file}: {place}: duplicate id {mid!r}, kept as {mid}#{len(self.ids)}")
            mid = f"{mid}#{len(self.ids)}"
        self.ids.add(mid)
        self.messages.append(Message(mid, kind, None, content, metadata or {}, Provenance(self.file, 0, place)))

    def system(self, value: Any) -> None:
        if value is None:
            return
        text = text_of(value)
        if text:
            self.add("system", "system", {"system_message": text}, "$.system")

    def message(self, m: Any, place: str, links: dict[str, str]) -> None:
        if not isinstance(m, dict):
            raise ReadError(self.file, place, "a message is not an object")
        role, content = m.get("role"), m.get("content")
        base = place.rsplit("[", 1)[1].rstrip("]")
        if role in ("system", "developer"):
            self.dialect = "openai"
            self.add(f"m{base}", "system", {"system_message": text_of(content)}, place, {"role": role})
        elif role == "tool":
            self.dialect = "openai"
            self.result(str(m.get("tool_call_id")), text_of(content), f"m{base}", place, False)
        elif role == "user":
            blocks = content if isinstance(content, list) else [content]
            rest = []
            for j, block in enumerate(blocks):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self.result(
                        str(block.get("tool_use_id")),
                        text_of(block.get("content")),
                        f"m{base}.{j}",
                        f"{place}.content[{j}]",
                        block.get("is_error") is True,
                    )
                elif block is not None:
                    rest.append(block)
            if rest:
                self.add(f"m{base}", "instruction", {"instruction": text_of(rest)}, place)
        elif role == "assistant":
            self.assistant(m, content, base, place, links)
        else:
            raise ReadError(self.file, place, f"unknown message role {role!r}")

    def assistant(self, m: dict, content: Any, base: str, place: str, links: dict[str, str]) -> None:
        blocks = content if isinstance(content, list) else ([content] if content is not None else [])
        text = [text_of([b]) for b in blocks if not (isinstance(b, dict) and b.get("type") in ("tool_use", "thinking"))]
        thinking = [b.get("thinking", "") for b in blocks if isinstance(b, dict) and b.get("type") == "thinking"]
        meta = {"thinking": "\n\n".join(thinking)} if thinking else {}
        self.add(f"m{base}", "assistant", {"assistant_response": "\n\n".join(t for t in text if t)}, place, meta)
        calls = [
            (b.get("id"), b.get("name"), b.get("input", {}), f"{place}.content[{j}]")
            for j, b in enumerate(blocks)
            if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        for j, call in enumerate(m.get("tool_calls") or []):
            if isinstance(call, dict) and isinstance(call.get("function"), dict):
                self.dialect = "openai"
                fn = call["function"]
                calls.append((call.get("id"), fn.get("name"), _arguments(fn.get("arguments")), f"{place}.tool_calls[{j}]"))
        for call_id, name, args, where in calls:
            call_id = str(call_id)
            args = args if isinstance(args, dict) else {"input": args}
            content = {"function": str(name or ""), "arguments": args, "action_response_id": links.get(call_id)}
            self.add(call_id, "action_request", content, where, {"call_id": call_id})
            self.calls[call_id] = (self.messages[-1].id, str(name or ""), args)

    def result(self, call_id: str, output: str, mid: str, place: str, is_error: bool) -> None:
        link: tuple[str | None, str, Any] | None = self.calls.get(call_id)
        meta = {"call_id": call_id, "is_error": is_error}
        if link is None:
            self.warnings.append(f"{self.file}: {place}: tool result {call_id!r} has no tool call; kept unlinked")
            link, meta["orphan"] = (None, "", {}), True
        content = {"function": link[1], "arguments": link[2], "output": output, "action_request_id": link[0]}
        self.add(mid, "action_response", content, place, meta)


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            return json.loads(raw)
        except ValueError:
            return {"input": raw}
    return raw


SPEC = FormatSpec(
    name=FORMAT,
    title="a raw request payload",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=False,
    provider_text=False,
    follow=None,
    first_part=False,
    sessions=None,
    window=no_window,
    compaction=no_compaction,
    no_summary=None,
    cache="none",  # one request body: no usage
    usage_precision="exact",
    no_requests=None,
)

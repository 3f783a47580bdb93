"""Reader for Codex CLI rollout JSONL: base instructions, response items, reported usage and compactions.

Mapping, in the vocabulary of DESIGN.md:
- `session_meta` base instructions are the system message (id "base_instructions"); later session_meta
  lines (a resumed or forked rollout) go to extras["session_meta"] only.
- `response_item` messages: user -> instruction; developer and system -> system (metadata["role"]) while
  they lead the rollout, else instruction (metadata["role"]): a developer message added at a turn stands
  where Codex sent it, so hoisting it into the system block does not break the modelled prefix.
- `event_msg` `user_message` is the prompt as the UI shows it; it is an instruction only where no
  `response_item` user message carries the same text (0.128 writes some prompts only this way).
  A run of model output items (reasoning, assistant message, function_call, custom_tool_call,
  local_shell_call, web_search_call) is one response, so one request: its assistant message joins the
  output text; reasoning summaries go to metadata["thinking"] (encrypted reasoning is dropped, its size
  kept); web searches to metadata["web_search"] (the provider ran them; no result is in the file, so
  the request names them in Request.unseen_input).
- function_call / custom_tool_call / local_shell_call are action_requests; *_output items are
  action_responses linked by `call_id`.
- `event_msg` `token_count` gives the current request's reported usage from `last_token_usage`
  (input_tokens includes cached_input_tokens: fresh = input - cached, cache_read = cached);
  `model_context_window` goes to extras["context_window"]. Other event_msg and turn_context lines are
  UI copies never sent to the model: extras["unsent"] (turn_context's model names the requests).
- `compacted` is a note (its `message`) and a view change; the base instructions stay in the view before
  it; the `replacement_history` items enter the record after the note, in the view, with
  metadata["replacement"].
Sanitised text (`[REDACTED_* len=N sha=S]`) is kept as it is, and each such marker is named in its message's
metadata as an unseen part of N characters (core.model.unseen_text): the count reads it as N characters of text
the file does not hold, not as the marker's own text.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from foldscope.core.formats.images import describe as describe_image
from foldscope.core.formats.spec import Figure, FormatSpec, Sessions, no_window, walk_files
from foldscope.core.formats.stream import SessionBuilder, as_int, feed_all, head_values, iter_json_lines, parse_time, str_field, text_of
from foldscope.core.model.session import Session, Usage, bad_usage_warning, usage_figures, usage_object_warning
from foldscope.core.model.unseen_text import UNSEEN_TEXT, unseen_part

FORMAT = "codex"

_ENVELOPES = {"session_meta", "response_item", "event_msg", "turn_context", "compacted"}
_OUTPUT_ITEMS = {"reasoning", "function_call", "custom_tool_call", "local_shell_call", "web_search_call"}
_RESULT_ITEMS = {"function_call_output", "custom_tool_call_output", "local_shell_call_output"}
_UNSENT_ITEMS = {"ghost_snapshot"}
# The sanitised corpus writes one text as [REDACTED_TEXT len=N sha=S] in a response item and as
# [REDACTED_MESSAGE len=N sha=S] in its event copy: compared by length and hash.
_REDACTED = re.compile(r"\[REDACTED_[A-Z]+ (len=\d+ sha=\w+)\]")
# Any sanitiser's marker, its kind (TEXT, OUTPUT, ARGUMENTS, ENCRYPTED_CONTENT, ...) and the characters it replaced.
_MARKER = re.compile(r"\[REDACTED_[A-Z_]+ len=(\d+) sha=\w+\]")


def _unseen(*texts: Any) -> list[dict[str, Any]]:
    """The unseen parts (core.model.unseen_text) the sanitiser's markers in these texts stand for, in order."""
    return [
        unseen_part(m.group(0), int(m.group(1)))
        for text in texts
        if isinstance(text, str) and "[REDACTED_" in text
        for m in _MARKER.finditer(text)
    ]


def _with_unseen(metadata: Mapping[str, Any] | None, *texts: Any) -> dict[str, Any]:
    """`metadata` with the unseen parts of the message's texts named, when it has any."""
    parts = _unseen(*texts)
    return {**(metadata or {}), UNSEEN_TEXT: parts} if parts else dict(metadata or {})


def _same_text(text: str) -> str:
    return _REDACTED.sub(r"\1", text).strip()


def sniff(head: bytes, path: Path) -> bool:
    """True when the first complete line is a Codex rollout envelope ({timestamp, type, payload})."""
    values = head_values(head, 5)
    value = values[0] if values else None
    return isinstance(value, dict) and str(value.get("type")) in _ENVELOPES and isinstance(value.get("payload"), dict)


def read(path: Path) -> Session:
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    reader = _Reader(builder)
    feed_all(iter_json_lines(path, builder), reader.feed, builder)
    return builder.build()


class _Reader:
    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.model: str | None = None
        self.in_response = False
        self.meta_seen = False
        self.conversation = False  # a message other than system or developer has been read
        self.prompts: Counter[str] = Counter()  # user texts of response items not yet matched by their event copy
        self.from_events: Counter[str] = Counter()  # user texts taken from events, not yet matched by an item
        self.turn_unseen: list[dict[str, Any]] = []  # the unseen parts of the open response's text so far

    def feed(self, line: int, offset: int, value: Any) -> None:
        b = self.b
        if not isinstance(value, dict):
            b.warn(line, f"entry is a JSON {type(value).__name__}, not an object; skipped")
            return
        kind, payload = value.get("type"), value.get("payload")
        kind = kind if isinstance(kind, str) else None
        if not isinstance(payload, dict):
            b.warn(line, f"entry {kind!r} has no `payload` object; skipped")
            return
        at = parse_time(value.get("timestamp"))
        if kind == "response_item":
            self._item(payload, line, offset, at)
        elif kind == "event_msg":
            if payload.get("type") == "token_count":
                self._token_count(payload, line)
            elif payload.get("type") == "user_message" and self._event_prompt(payload, line, at):
                return
            b.unsent(f"event_msg:{payload.get('type')}", line, offset)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.model = payload["model"]
            b.unsent("turn_context", line, offset)
        elif kind == "session_meta":
            self._session_meta(payload, line, at)
        elif kind == "compacted":
            self._compacted(payload, line, offset, at)
        else:
            b.warn(line, f"unknown entry type {kind!r}; skipped")
            b.unsent(f"unknown:{kind}", line, offset)

    def _event_prompt(self, payload: Mapping, line: int, at: float | None) -> bool:
        """A user_message event with no response item of the same text: the prompt, as an instruction."""
        text = payload.get("message")
        if not isinstance(text, str) or not text:
            return False
        key = _same_text(text)
        if self.prompts[key]:
            self.prompts[key] -= 1
            return False
        self.in_response = False
        self.conversation = True
        self.from_events[key] += 1
        self.b.add(
            f"user_message-L{line}",
            "instruction",
            {"instruction": text},
            line,
            at=at,
            metadata=_with_unseen({"from_event": "user_message"}, text),
        )
        return True

    def _session_meta(self, payload: Mapping, line: int, at: float | None) -> None:
        b = self.b
        facts = {k: v for k, v in payload.items() if k not in ("base_instructions", "instructions")}
        b.extras.setdefault("session_meta", []).append(facts)
        if self.meta_seen:
            return
        self.meta_seen = True
        base = payload.get("base_instructions", payload.get("instructions"))
        text = base.get("text") if isinstance(base, dict) else base
        if isinstance(text, str) and text:
            b.add(
                "base_instructions",
                "system",
                {"system_message": text},
                line,
                at=at,
                metadata=_with_unseen({"role": "base_instructions"}, text),
            )

    def _item(self, item: Mapping, line: int, offset: int, at: float | None) -> None:
        b = self.b
        kind = item.get("type") if isinstance(item.get("type"), str) else None
        extra: dict = {}
        if kind == "message" and item.get("role") == "assistant" or kind in _OUTPUT_ITEMS:
            self.conversation = True
            if not self.in_response or not b.turn_open:
                b.start_response(f"response-L{line}", line, at, self.model, {"model": self.model, **extra})
                self.in_response = True
                self.turn_unseen = []
            self._output(item, kind, line, at, extra)
            return
        self.in_response = False
        if kind == "message":
            role = item.get("role")
            text = text_of(item.get("content"))
            mid = str_field(item, "id", f"{role}-L{line}")
            if role == "user":
                key = _same_text(text)
                if self.from_events[key]:  # its event copy came first and stands for it already
                    self.from_events[key] -= 1
                    return
                self.prompts[key] += 1
                self.conversation = True
                content = item.get("content")
                images = (
                    [f for c in content if (f := describe_image(c, "openai", self.model)) is not None] if isinstance(content, list) else []
                )
                b.add(
                    mid,
                    "instruction",
                    {"instruction": text},
                    line,
                    at=at,
                    metadata=_with_unseen({**extra, "images": images} if images else extra, text),
                )
            elif role in ("developer", "system") and not self.conversation:
                b.add(mid, "system", {"system_message": text}, line, at=at, metadata=_with_unseen({"role": role, **extra}, text))
            elif role in ("developer", "system"):
                b.add(mid, "instruction", {"instruction": text}, line, at=at, metadata=_with_unseen({"role": role, **extra}, text))
            else:
                b.warn(line, f"message with unknown role {role!r}; skipped")
        elif kind in _RESULT_ITEMS:
            call_id = item.get("call_id")
            if not isinstance(call_id, str):
                b.warn(line, f"{kind} without a string `call_id`; skipped")
                return
            output = _output_text(item.get("output"))
            b.result(call_id, output, line, at, id=f"{call_id}:output", metadata=_with_unseen(extra, output))
        elif kind in _UNSENT_ITEMS:
            b.unsent(f"response_item:{kind}", line, offset)
        else:
            b.warn(line, f"unknown response item {kind!r}; skipped")
            b.unsent(f"response_item:{kind}", line, offset)

    def _output(self, item: Mapping, kind: str, line: int, at: float | None, extra: dict) -> None:
        b = self.b
        if kind == "message":
            text = text_of(item.get("content"))
            b.turn_text(text)
            parts = _unseen(text)
            if parts:
                self.turn_unseen.extend(parts)
                b.turn_meta(**{UNSEEN_TEXT: list(self.turn_unseen)})
        elif kind == "reasoning":
            summary = item.get("summary")
            b.turn_thinking(text_of(summary if isinstance(summary, list) else []))
            if isinstance(item.get("content"), list):
                b.turn_thinking(text_of(item["content"]))
            if isinstance(item.get("encrypted_content"), str):
                b.turn_meta(encrypted_reasoning_chars=len(item["encrypted_content"]))
        elif kind == "web_search_call":
            b.turn_meta(web_search=item.get("action"))
            action = item.get("action")
            query = action.get("query") if isinstance(action, dict) and isinstance(action.get("query"), str) else None
            b.unseen_input(
                f"web search results{f' for {query!r}' if query else ''} (the provider ran the search; the file holds no results)"
            )
        else:
            call_id = str_field(item, "call_id")
            name = str_field(item, "name", kind.removesuffix("_call"))
            if kind == "function_call":
                args = _arguments(item.get("arguments"))
            elif kind == "custom_tool_call":
                args = {"input": item.get("input")}
            else:
                args = {"action": item.get("action")}
            raw = item.get("arguments") if kind == "function_call" else item.get("input")
            b.turn_call(call_id, name, args, line, at, _with_unseen({"item": kind, **extra}, name, raw))

    def _token_count(self, payload: Mapping, line: int) -> None:
        info = payload.get("info")
        if not isinstance(info, dict):
            return
        if as_int(info.get("model_context_window")):
            self.b.extras["context_window"] = info["model_context_window"]
        last = info.get("last_token_usage")
        if last is not None and not isinstance(last, dict):
            self.b.warn(line, usage_object_warning(last))
            return
        if not isinstance(last, dict) or "input_tokens" not in last:
            return
        got, bad = usage_figures(last, ("input_tokens", "cached_input_tokens", "output_tokens"))
        if bad:
            self.b.warn(line, bad_usage_warning(bad))
            return
        if not got["input_tokens"]:
            return
        total, cached = got["input_tokens"], got["cached_input_tokens"]
        usage = Usage(input=max(total - cached, 0), cache_read=min(cached, total), output=got["output_tokens"])
        if self.b.request_open:
            self.b.report_usage(usage)
        else:
            self.b.warn(line, "token_count before any response; not attached to a request")

    def _compacted(self, payload: Mapping, line: int, offset: int, at: float | None) -> None:
        b = self.b
        self.in_response = False
        history = payload.get("replacement_history")
        summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
        items = history if isinstance(history, list) else []
        text = summary or f"[compacted: replacement history of {len(items)} items]"
        keep = ["base_instructions"] if "base_instructions" in b.record else []
        b.compact(
            text,
            line,
            id=f"compaction-L{line}",
            at=at,
            keep=keep,
            event={"source": "codex", "replacement_items": len(items) if isinstance(history, list) else None},
        )
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                b.warn(line, "replacement_history item is not an object; skipped")
                continue
            role, meta = item.get("role"), {"replacement": True, "item": item.get("type")}
            mid = f"compaction-L{line}.{i}"
            if item.get("type") == "message" and role == "user":
                said = text_of(item.get("content"))
                b.add(mid, "instruction", {"instruction": said}, line, at=at, metadata=_with_unseen(meta, said))
            elif item.get("type") == "message" and role in ("developer", "system"):
                said = text_of(item.get("content"))
                b.add(mid, "system", {"system_message": said}, line, at=at, metadata=_with_unseen({"role": role, **meta}, said))
            else:  # assistant text, or an item only the provider can read (remote compaction)
                body = item.get("content") if item.get("type") == "message" else item
                b.add(
                    mid,
                    "assistant",
                    {"assistant_response": text_of(body) if isinstance(body, list) else json.dumps(body, ensure_ascii=False)},
                    line,
                    at=at,
                    metadata=meta,
                )


def _arguments(raw: Any) -> Any:
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return value if isinstance(value, dict) else {"input": value}
    return raw if isinstance(raw, dict) else {"input": raw}


def _output_text(raw: Any) -> str:
    if isinstance(raw, dict) and isinstance(raw.get("content"), str):
        return raw["content"]
    return text_of(raw)


class _Followed:
    """The line mapper a follower keeps open between polls (core.formats.follow): a rollout is one line after another."""

    branched = False

    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.feed = _Reader(builder).feed

    def snapshot(self) -> Session:
        return self.b.snapshot()


def _session_files(root: Path) -> Iterator[Path]:
    """`sessions/YYYY/MM/DD/rollout-*.jsonl`."""
    return walk_files(root, "rollout-*.jsonl")


# Codex compacts at model_auto_compact_token_limit, by default nine tenths of the window (the file states the
# window itself, as model_context_window: core.readout.agent_limits reads that first).
COMPACT_SHARE = 0.9


def _compaction(window: int) -> Figure:
    return (
        int(window * COMPACT_SHARE),
        "Codex's auto-compact limit (model_auto_compact_token_limit; nine tenths of the window by default)",
    )


SPEC = FormatSpec(
    name=FORMAT,
    title="Codex",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=True,
    follow=_Followed,
    first_part=True,
    sessions=Sessions(env="CODEX_HOME", default=".codex", folder="sessions", files=_session_files),
    window=no_window,
    compaction=_compaction,
    no_summary="Codex compacts on the server: the file holds no summary request",
    cache="implicit",
    usage_precision="exact",
    no_requests=None,
)

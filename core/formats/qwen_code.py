"""Reader for Qwen Code chat records (`projects/<cwd>/chats/<session>.jsonl`): a uuid/parentUuid tree, one branch read.

The writer is QwenLM/qwen-code @ 015346f1d5d7312fddaf84a7ef1f83c7d217d389 :
packages/core/src/services/chatRecordingService.ts. Mapping, in the vocabulary of DESIGN.md:
- Each line is a ChatRecord {uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version, message?,
  usageMetadata?, model?, systemPayload?}; the records form a tree (a rewind re-roots the next record at an
  earlier one). The session is the branch that ends at the file's last record, read root first, as pi's reader
  reads its tree; the records off that branch are not read.
- `user` -> an instruction (its message's text parts). `assistant` -> one model call: request k, whose view is
  every message before it; its text parts, its thought parts (metadata "thinking") and one action_request per
  functionCall part. `tool_result` -> an action_response per functionResponse part, linked by the call's id.
  Records of a subagent (`isSidechain`) are its own, not the session's.
- Usage is the assistant record's `usageMetadata` (Gemini's shape; promptTokenCount is the whole prompt, the
  cached part included, whatever the provider): fresh input = promptTokenCount - cachedContentTokenCount, cache
  read = cachedContentTokenCount, output = candidatesTokenCount + thoughtsTokenCount. No cache write is reported.
  The `system/ui_telemetry` api_response events repeat the same figures; they are not read twice.
- `system/chat_compression` holds the model-facing history after compression (`compressedHistory`, Content[]):
  its first content is the summary (a note), a model acknowledgement after it enters the view, and the rest is
  the history kept, matched to the branch's last messages by their parts. `info.originalTokenCount` and
  `info.newTokenCount` are the sizes before and after. Other system records are never sent (unsent lines).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foldscope.core.formats.spec import Figure, FormatSpec, Sessions, chat_files, chats_project
from foldscope.core.formats.stream import SessionBuilder, feed_all, head_values, iter_json_lines, parse_time
from foldscope.core.model.session import Session, Usage, bad_usage_warning, usage_figures, usage_object_warning

FORMAT = "qwen_code"
_TYPES = {"user", "assistant", "tool_result", "system"}


def sniff(head: bytes, path: Path) -> bool:
    """Qwen Code's records carry a uuid and a Gemini-style message (`parts`, never Claude Code's `content`)."""
    for value in head_values(head):
        if not isinstance(value, dict) or value.get("type") not in _TYPES or "uuid" not in value:
            return False
        message = value.get("message")
        if isinstance(message, dict):
            return "parts" in message and "content" not in message
        if "systemPayload" not in value:
            return False
    return False


def read(path: Path) -> Session:
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    records: dict[str, tuple[int, int, dict[str, Any]]] = {}
    last: str | None = None
    for line, offset, value in iter_json_lines(path, builder):
        if not isinstance(value, dict) or not isinstance(value.get("uuid"), str):
            builder.warn(line, "a record without a string `uuid`; skipped")
            continue
        if value.get("isSidechain"):
            continue  # a subagent's record: its own session's
        uid = value["uuid"]
        if uid in records:
            if not _continues(records[uid][2], value):
                builder.warn(line, f"uuid {uid!r} again, a record of another kind; skipped")
                continue
            records[uid] = (records[uid][0], records[uid][1], _merged(records[uid][2], value))
        else:
            records[uid] = (line, offset, value)
        if "message" in value or value.get("subtype") == "chat_compression":
            last = uid  # the branch ends at the last message (a later bookkeeping record is not its leaf)
    branch: list[tuple[int, int, dict[str, Any]]] = []
    seen: set[str] = set()
    while last is not None and last in records and last not in seen:
        seen.add(last)
        branch.append(records[last])
        parent = records[last][2].get("parentUuid")
        last = parent if isinstance(parent, str) else None
    branch.reverse()
    if len(branch) < len(records):
        builder.extras["off_branch"] = len(records) - len(branch)
    feed_all(iter(branch), _Reader(builder).feed, builder)
    return builder.build()


def _continues(first: dict[str, Any], then: dict[str, Any]) -> bool:
    """A response written over several lines under one uuid (its thought, then its calls) is one record."""
    return first.get("type") == then.get("type") == "assistant"


def _merged(first: dict[str, Any], then: dict[str, Any]) -> dict[str, Any]:
    """The record's parts in the order written; its usage and model as the last line that has them says."""
    out = {**first, **{k: v for k, v in then.items() if v is not None}}
    message = first.get("message")
    out["message"] = {**(message if isinstance(message, dict) else {}), "parts": _parts(first) + _parts(then)}
    return out


def _parts(record: dict[str, Any]) -> list[Any]:
    message = record.get("message")
    parts = message.get("parts") if isinstance(message, dict) else None
    return parts if isinstance(parts, list) else []


class _Reader:
    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.parts: list[tuple[str, list[str]]] = []  # each message-bearing record on the branch: its message's id and part signatures

    def feed(self, line: int, offset: int, value: dict[str, Any]) -> None:
        b = self.b
        if "cwd" not in b.extras and isinstance(value.get("cwd"), str):
            b.extras["cwd"] = value["cwd"]
        kind, at = value.get("type"), parse_time(value.get("timestamp"))
        parts = [p for p in _parts(value) if isinstance(p, dict)]
        uid = value["uuid"]
        if kind == "user":
            text = "\n".join(p["text"] for p in parts if isinstance(p.get("text"), str) and not p.get("thought"))
            b.add(uid, "instruction", {"instruction": text}, line, at=at)
            self.parts.append((uid, _signature(parts)))
        elif kind == "assistant":
            model = value.get("model") if isinstance(value.get("model"), str) else None
            b.start_response(uid, line, at, model, {"model": model} if model else None)
            b.report_usage(_usage(value.get("usageMetadata"), lambda problem: b.warn(line, problem)))
            for n, part in enumerate(parts):
                if isinstance(part.get("text"), str):
                    (b.turn_thinking if part.get("thought") else b.turn_text)(part["text"])
                call = part.get("functionCall")
                if isinstance(call, dict):
                    given_id, name = call.get("id"), call.get("name")
                    b.turn_call(
                        given_id if isinstance(given_id, str) else f"{uid}-call{n}",
                        name if isinstance(name, str) else "",
                        call.get("args") if isinstance(call.get("args"), dict) else {},
                        line,
                        at,
                    )
            self.parts.append((uid, _signature(parts)))
        elif kind == "tool_result":
            for n, part in enumerate(parts):
                response = part.get("functionResponse")
                if isinstance(response, dict):
                    given_id = response.get("id")
                    b.result(
                        given_id if isinstance(given_id, str) else "",
                        _output(response.get("response")),
                        line,
                        at,
                        id=f"{uid}-{n}" if n else uid,
                    )
            self.parts.append((uid, _signature(parts)))
        elif kind == "system" and value.get("subtype") == "chat_compression":
            self._compression(line, at, value.get("systemPayload"))
        else:
            b.unsent(f"qwen {kind}/{value.get('subtype')}", line, offset)

    def _compression(self, line: int, at: float | None, payload: Any) -> None:
        b = self.b
        history = payload.get("compressedHistory") if isinstance(payload, dict) else None
        if not isinstance(history, list) or not history or not all(isinstance(c, dict) for c in history):
            b.warn(line, "a chat_compression without a compressed history; skipped")
            return
        b.end_turn()
        b.close_request()
        contents = [[p for p in c.get("parts", []) if isinstance(p, dict)] if isinstance(c.get("parts"), list) else [] for c in history]
        summary = "\n".join(p["text"] for p in contents[0] if isinstance(p.get("text"), str))
        ack = contents[1] if len(history) > 1 and history[1].get("role") == "model" else None
        kept_parts = [s for c in contents[2 if ack is not None else 1 :] for s in _signature(c)]
        kept = self._kept(kept_parts, line)
        info = payload.get("info") if isinstance(payload.get("info"), dict) else {}
        note = b.compact(
            summary,
            line,
            id=f"compression-L{line}",
            at=at,
            keep=[m for m in b.view if m in kept],
            event={"source": FORMAT, "tokens_before": info.get("originalTokenCount"), "tokens_after": info.get("newTokenCount")},
        )
        view = [note]
        if ack is not None:
            text = "\n".join(p["text"] for p in ack if isinstance(p.get("text"), str))
            view.append(
                b.add(
                    f"compression-L{line}-ack",
                    "assistant",
                    {"assistant_response": text},
                    line,
                    at=at,
                    metadata={"synthetic": True},
                    in_view=False,
                )
            )
        b.view = view + [m for m in b.view if m != note]
        self.parts = [(f"compression-L{line}", [])]

    def _kept(self, wanted: list[str], line: int) -> set[str]:
        """The ids of the branch's last messages whose parts are the kept history's, in order."""
        if not wanted:
            return set()
        got: list[str] = []
        ids: list[str] = []
        for uid, signature in reversed(self.parts):
            got = signature + got
            ids.append(uid)
            if len(got) >= len(wanted):
                break
        if got != wanted:
            self.b.warn(line, "the compression's kept history does not match the messages before it; none kept")
            return set()
        ids_set = set(ids)
        # A message's calls and results entered the view beside it: keep everything from the first kept message on.
        view = list(self.b.view)
        first = next((i for i, m in enumerate(view) if m in ids_set), len(view))
        return set(view[first:])


def _signature(parts: list[dict[str, Any]]) -> list[str]:
    """What a content's parts are, to match the kept history with the messages it came from."""
    out = []
    for part in parts:
        if isinstance(part.get("text"), str) and not part.get("thought"):
            out.append("text:" + part["text"])
        elif isinstance(part.get("functionCall"), dict):
            out.append(f"call:{part['functionCall'].get('id')}")
        elif isinstance(part.get("functionResponse"), dict):
            out.append(f"response:{part['functionResponse'].get('id')}")
    return out


def _output(response: Any) -> str:
    if isinstance(response, dict) and set(response) == {"output"} and isinstance(response["output"], str):
        return response["output"]
    return json.dumps(response, ensure_ascii=False)


def _usage(raw: Any, warn: Any) -> Usage | None:
    """An assistant record's usageMetadata as the provider's usage; a figure of the wrong type makes it unknown."""
    if not isinstance(raw, dict):
        if raw is not None:
            warn(usage_object_warning(raw))
        return None
    got, bad = usage_figures(raw, ("promptTokenCount", "candidatesTokenCount", "thoughtsTokenCount", "cachedContentTokenCount"))
    if bad:
        warn(bad_usage_warning(bad))
        return None
    cached = min(got["cachedContentTokenCount"], got["promptTokenCount"])
    return Usage(input=got["promptTokenCount"] - cached, cache_read=cached, output=got["candidatesTokenCount"] + got["thoughtsTokenCount"])


def _session_files(root: Path) -> Iterator[Path]:
    """`projects/<cwd>/chats/<session>.jsonl`."""
    return chat_files(root, lambda p: p.suffix == ".jsonl")


# tokenLimits.ts: a model Qwen Code does not list has a 200,000-token input limit; chatCompressionService.ts
# compresses at COMPRESSION_TOKEN_THRESHOLD, 0.7 of it.
COMPRESSION_THRESHOLD = 0.7


def _compaction(window: int) -> Figure:
    return int(window * COMPRESSION_THRESHOLD), "Qwen Code's compression threshold (0.7 of the window by default)"


def _window(model: str | None) -> Figure | None:
    return None  # the limit is per model (tokenLimits.ts); the price list's window is used instead


SPEC = FormatSpec(
    name=FORMAT,
    title="Qwen Code",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=False,
    follow=None,
    first_part=False,  # a tree: read as a whole
    sessions=Sessions(env="QWEN_HOME", default=".qwen", folder="projects", files=_session_files, project=chats_project),
    window=_window,
    compaction=_compaction,
    no_summary="Qwen Code's compression call is not recorded in the session file",
    cache="implicit",
    usage_precision="exact",
    no_requests=None,
)

"""Reader for a Cline, Roo Code or Kilo Code task (`tasks/<id>/`): its messages sent and its requests' usage.

The writers are cline/cline @ 21cb8d2525bcedf1f4b6890b27a74a14fe7451e4 (apps/vscode/src/core/storage/disk.ts names
the files; shared/ExtensionMessage.ts types ClineMessage, ClineApiReqInfo and ClineCompactionInfo;
shared/messages/metrics.ts the assistant messages' metrics) and RooCodeInc/Roo-Code @
cb836567180a3ff1da6d082f3178b90c3bd22a70 (packages/types/src/message.ts: contextCondense, contextTruncation;
src/core/task-persistence/apiMessages.ts: condenseParent, isSummary, truncationParent, isTruncationMarker). A task
folder holds `api_conversation_history.json` (the Anthropic-style messages sent: no system prompt, no tools, so the
head is unseen) and `ui_messages.json` (what the panel showed); either file opens the task, the other read from
beside it. Mapping, in the vocabulary of DESIGN.md:
- With the API history: a user message -> an instruction (its text blocks; the first is the task), its
  tool_result blocks -> action_responses; an assistant message -> one model call, request k, whose view is every
  message before it: its text, its thinking (metadata "thinking") and one action_request per tool_use block.
- A native tool call's result can be written as a text block, not a tool_result: cline @ v3.51.0's
  ToolResultUtils.pushToolResult writes "[<tool> for '<what>'] Result:\n..." (or "Tool [<tool>] was not
  executed ...") as text when it finds no tool_use id for the call. Such a block in the user message after an
  assistant message with tool_use blocks is the result of that message's next unanswered call of the same
  name, in order. A call still unanswered there was sent with "result missing" (ContextManager.ts's
  ensureToolResultsFollowToolUse adds it), and is read so. Cline sent the text blocks after its "result
  missing" results: reading the text as the result differs from that by a few tokens a call.
- Usage: the k-th `say: "api_req_started"` in ui_messages.json is the k-th model call; its text is JSON
  {tokensIn, tokensOut, cacheWrites, cacheReads, cost}. Anthropic's path reports tokensIn as fresh input and the
  cache fields apart. A provider that folds its input into the cache fields (DeepSeek's handler: cacheWrites is
  the cache miss, cacheReads the hit, tokensIn 0) is read as fresh input = cacheWrites, cache read = cacheReads,
  no cache write: so a task whose requests all report tokensIn 0 with cache writes is read that way. A call with
  a cancelReason and every figure 0 failed before it streamed: its usage is unknown, not zero. Cline's own
  provider passes Anthropic's cache writes on as tokensIn with cacheWrites 0: where the recorded cost is what
  tokensIn costs as cache writes and not as fresh input, it is read as writes (as_billed).
- Without ui_messages.json, usage is the assistant message's `metrics.tokens` {prompt, completion, cached}: on
  Anthropic's path prompt is the fresh input and cached the cache's part (writes and reads, not split: read as
  reads); elsewhere prompt is the whole input and cached its part read from the cache (metrics.ts).
- Without api_conversation_history.json, the requests are the ui's api_req_started, each sending its `request`
  text (the user side of that call: an instruction), answered by the `text`, `reasoning` and tool messages that
  follow it; the results of its calls that open the next request's text are read as theirs (core.formats.cline_ui).
- Compactions: Cline's `say: "compaction"` (status completed, tokensBefore/After, messagesBefore/After); Roo's
  `say: "condense_context"` (contextCondense: prevContextTokens, newContextTokens, summary, condenseId) and
  `say: "sliding_window_truncation"` (contextTruncation: messagesRemoved, prevContextTokens, newContextTokens),
  whose API messages stay in the history tagged with `condenseParent`/`truncationParent` (kept out of the view
  after it) beside a summary (`isSummary`) or marker (`isTruncationMarker`) message, the note. Each applies
  before the first request the ui records after it. A `conversationHistoryDeletedRange` [start, end] on a ui
  message is Cline's sliding truncation: API messages start..end leave the view from the next request on.
  `say: "deleted_api_reqs"` is the usage of requests deleted by a checkpoint restore (getApiMetrics.ts): kept
  in extras, never a request of its own.
Places are message numbers (1 for the file's first element), as in the older Gemini CLI layout.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from foldscope.core.formats import fast_json
from foldscope.core.formats.cline_ui import split_results, ui_call
from foldscope.core.formats.cline_usage import as_billed
from foldscope.core.formats.spec import FormatSpec, Sessions, no_compaction, no_window
from foldscope.core.formats.stream import SessionBuilder, parse_time
from foldscope.core.model.session import ReadError, Session, Usage, bad_usage_warning, usage_figures, usage_object_warning

FORMAT = "cline"
API = "api_conversation_history.json"
UI = "ui_messages.json"
COMPANIONS = (API, UI, "task_metadata.json")  # a task's files: one changed makes the library read the task again
MAX_BYTES = 512 * 1024 * 1024  # a task file larger than this is refused
_API_HEAD = re.compile(rb'^\s*\[\s*\{\s*"role"\s*:\s*"(?:user|assistant)"\s*,\s*"content"\s*:')
_UI_HEAD = re.compile(rb'^\s*\[\s*\{\s*"ts"\s*:\s*\d+\s*,\s*"type"\s*:\s*"(?:say|ask)"')
_CWD = re.compile(r"# Current Working Directory \((.+?)\) Files")
# A tool's result Cline wrote as text (ToolResultUtils.pushToolResult, toolDescription; the skipped-tool message).
_TEXT_RESULT = re.compile(r"\[([\w-]+)(?: for .*?)?\] Result:|Tool \[([\w-]+)\] was not executed")
MISSING_RESULT = "result missing"  # what ContextManager.ensureToolResultsFollowToolUse sends for an unanswered call
# Providers whose handler reports the whole input in the cache fields (tokensIn 0; cacheWrites the cache miss).
FOLDED_PROVIDERS = {"deepseek"}
# Providers on Anthropic's path, where metrics.tokens.prompt is the fresh input (seen in the real Cline 3.51 task).
ANTHROPIC_PROVIDERS = {"anthropic", "bedrock", "vertex", "claude-code"}


def sniff(head: bytes, path: Path) -> bool:
    """A JSON array of Anthropic-style messages (role, then content) or of the panel's say/ask messages; or, shown
    no bytes, a task folder holding either file."""
    if not head and path.is_dir():
        return (path / API).is_file() or (path / UI).is_file()
    return bool(_API_HEAD.match(head) or _UI_HEAD.match(head))


def _kind(head: bytes) -> str | None:
    return "api" if _API_HEAD.match(head) else "ui" if _UI_HEAD.match(head) else None


def _load(path: Path, what: str) -> list[Any]:
    document = fast_json.read_document(path, MAX_BYTES)
    if not isinstance(document, list):
        raise ReadError(str(path), "", f"a JSON {type(document).__name__}, not a list of {what}")
    return document


def task_files(path: Path) -> tuple[Path | None, Path | None]:
    """The task's API history and ui messages: the file given (by its content) and its companion beside it."""
    path = Path(path)
    if path.is_dir():
        api, ui = path / API, path / UI
        return (api if api.is_file() else None), (ui if ui.is_file() else None)
    with open(path, "rb") as handle:
        kind = _kind(handle.read(64 * 1024))
    if kind is None:
        raise ReadError(str(path), "", "neither a Cline API history nor its ui messages (a JSON list of messages)")
    beside = path.parent / (UI if kind == "api" else API)
    companion = beside if beside != path and beside.is_file() else None
    return (path, companion) if kind == "api" else (companion, path)


def read(path: Path) -> Session:
    path = Path(path)
    api_path, ui_path = task_files(path)
    if api_path is None and ui_path is None:
        raise ReadError(str(path), "", f"a task folder holds neither {API} nor {UI}")
    builder = SessionBuilder(path, FORMAT)
    api = _load(api_path, "messages") if api_path is not None else None
    ui = _load(ui_path, "ui messages") if ui_path is not None else None
    task = _Task(builder, ui_path, ui or [])
    if api is None:
        builder.warnings.append(f"{path}: {API} is missing: the messages sent are each request's `request` text")
        task.read_ui_only()
    else:
        if ui is None:
            builder.warnings.append(
                f"{path}: {UI} is missing: usage is each assistant message's metrics "
                "(cache writes not told apart from reads); compactions are not recorded"
            )
        task.read_api(api, ui is not None)
    _task_metadata(builder, path if path.is_dir() else path.parent)
    return builder.build()


def _task_metadata(builder: SessionBuilder, folder: Path) -> None:
    """task_metadata.json (files in context, model usage) beside the task: kept as it is, when it reads."""
    meta = folder / "task_metadata.json"
    try:
        value = json.loads(meta.read_bytes()) if meta.is_file() and meta.stat().st_size < 16 * 2**20 else None
    except (OSError, ValueError, RecursionError):
        builder.warnings.append(f"{meta}: not JSON; not read")
        return
    if isinstance(value, dict):
        builder.extras["task_metadata"] = value


class _Task:
    def __init__(self, builder: SessionBuilder, ui_path: Path | None, ui: list[Any]) -> None:
        self.b = builder
        self.ui_file = str(ui_path) if ui_path is not None else ""
        self.ui = ui
        self.requests: list[tuple[int, dict[str, Any], float | None]] = []  # (ui message number, ApiReqInfo, ts)
        self.changes: list[tuple[int, str, dict[str, Any], float | None, int]] = []  # (before request k, kind, facts, ts, n)
        self.provider: str | None = None
        self.api_of: dict[int, list[str]] = {}  # API message index -> the ids of the messages it made
        self.tags: dict[int, dict[str, Any]] = {}  # API message index -> its Roo tags
        self.markers: dict[Any, int] = {}  # a Roo truncation's id -> the API index of its marker
        self.calls: list[tuple[str, str]] = []  # the last assistant message's tool_use blocks (id, name)
        self._scan_ui()
        self.folded = self._folded()

    def warn_ui(self, n: int, problem: str) -> None:
        self.b.warnings.append(f"{self.ui_file}: message {n}: {problem}")

    # -- ui_messages.json: the requests' usage and the compactions, in the order they happened ------------
    def _scan_ui(self) -> None:
        for n, m in enumerate(self.ui, 1):
            if not isinstance(m, dict):
                self.warn_ui(n, f"a JSON {type(m).__name__}, not a message object; skipped")
                continue
            say, at = m.get("say"), _ts(m.get("ts"))
            info = m.get("modelInfo")
            if isinstance(info, dict) and isinstance(info.get("providerId"), str):
                self.provider = info["providerId"]
            if m.get("type") != "say":
                continue
            k = len(self.requests)
            if say == "api_req_started":
                self.requests.append((n, self._json_text(n, m), at))
            elif say == "compaction":
                facts = self._json_text(n, m)
                if facts.get("status", "completed") == "completed":
                    self.changes.append((k, "cline", facts, at, n))
            elif say == "condense_context":
                condense = m.get("contextCondense")
                if isinstance(condense, dict):
                    self.changes.append((k, "roo_condense", condense, at, n))
                else:
                    self.warn_ui(n, "a condense_context without its contextCondense object; skipped")
            elif say == "sliding_window_truncation":
                truncation = m.get("contextTruncation")
                if isinstance(truncation, dict):
                    self.changes.append((k, "roo_truncation", truncation, at, n))
                else:
                    self.warn_ui(n, "a sliding_window_truncation without its contextTruncation object; skipped")
            elif say == "deleted_api_reqs":
                self.b.extras.setdefault("deleted_api_reqs", []).append(self._json_text(n, m))
            deleted = m.get("conversationHistoryDeletedRange")
            if deleted is not None:
                if _is_range(deleted):
                    if not self.changes or self.changes[-1][1] != "range" or self.changes[-1][2]["range"] != list(deleted):
                        self.changes.append((k, "range", {"range": list(deleted)}, at, n))
                else:
                    self.warn_ui(n, "conversationHistoryDeletedRange is not a [start, end] pair; skipped")

    def _json_text(self, n: int, m: dict[str, Any]) -> dict[str, Any]:
        text = m.get("text")
        try:
            value = json.loads(text) if isinstance(text, str) else None
        except (ValueError, RecursionError):
            value = None
        if not isinstance(value, dict):
            self.warn_ui(n, f"a {m.get('say')} whose text is not a JSON object; read as empty")
            return {}
        return value

    def _folded(self) -> bool:
        if self.provider in FOLDED_PROVIDERS:
            return True
        if self.provider is not None:
            return False
        infos = [info for _n, info, _at in self.requests if isinstance(info.get("cacheWrites"), int)]
        return bool(infos) and all(info.get("tokensIn") == 0 for info in infos) and any(info["cacheWrites"] > 0 for info in infos)

    def usage(self, k: int, model: str | None = None) -> Usage | None:
        """The k-th request's usage as Cline recorded it (`model`: the model it named, which prices as_billed)."""
        if k >= len(self.requests):
            return None
        n, info, at = self.requests[k]
        if not info:
            return None
        got, bad = usage_figures(info, ("tokensIn", "tokensOut", "cacheWrites", "cacheReads"))
        if bad:
            self.warn_ui(n, bad_usage_warning(bad))
            return None
        if info.get("cancelReason") is not None and not any(got.values()):
            return None  # a call that failed before it streamed: the zeros are Cline's defaults, not a report
        if self.folded:
            return Usage(input=got["tokensIn"] + got["cacheWrites"], cache_read=got["cacheReads"], output=got["tokensOut"])
        usage = Usage(input=got["tokensIn"], cache_read=got["cacheReads"], cache_write=got["cacheWrites"], output=got["tokensOut"])
        return as_billed(usage, info.get("cost"), model, at)

    def _cwd(self, text: str) -> None:
        if "cwd" not in self.b.extras:
            found = _CWD.search(text)
            if found:
                self.b.extras["cwd"] = found.group(1)

    # -- the changes to the view before request k --------------------------------------------------------
    def apply_changes(self, k: int, done: list[int]) -> None:
        while done[0] < len(self.changes) and self.changes[done[0]][0] <= k:
            self._apply(*self.changes[done[0]])
            done[0] += 1

    def _apply(self, k: int, kind: str, facts: dict[str, Any], at: float | None, n: int) -> None:
        b = self.b
        view = list(b.view)
        if kind == "range":
            start, end = facts["range"]
            gone = {mid for i in range(start, end + 1) for mid in self.api_of.get(i, [])}
            keep = [m for m in view if m not in gone]
            summary = f"Cline's sliding truncation: API messages {start}..{end} are left out of the requests"
            event = {
                "source": FORMAT,
                "kind_of": "truncation",
                "range": [start, end],
                "messages_before": len(view),
                "messages_after": len(keep),
            }
        elif kind == "roo_condense":
            condense_id = facts.get("condenseId")
            gone = self._tagged("condenseParent", condense_id) if condense_id else set(view)
            keep = [m for m in view if m not in gone]
            summary = _text(facts.get("summary"))
            event = {
                "source": FORMAT,
                "kind_of": "condense",
                "tokens_before": facts.get("prevContextTokens"),
                "tokens_after": facts.get("newContextTokens"),
                "cost": facts.get("cost"),
            }
        elif kind == "roo_truncation":
            gone = self._tagged("truncationParent", facts.get("truncationId"))
            removed = facts.get("messagesRemoved")
            keep = [m for m in view if m not in gone]
            summary = f"[Sliding window truncation: {removed} messages hidden to reduce context]"
            event = {
                "source": FORMAT,
                "kind_of": "truncation",
                "messages_removed": removed,
                "tokens_before": facts.get("prevContextTokens"),
                "tokens_after": facts.get("newContextTokens"),
            }
        else:
            after = facts.get("messagesAfter")
            # The summary becomes the first of the messages after; the rest are the last ones before it.
            kept = max(0, after - 1) if isinstance(after, int) and not isinstance(after, bool) else 0
            keep = view[len(view) - kept :] if kept else []
            summary = "Cline compacted the conversation (its summary is not in the task's files)"
            event = {
                "source": FORMAT,
                "kind_of": facts.get("mode", "auto"),
                "tokens_before": facts.get("tokensBefore"),
                "tokens_after": facts.get("tokensAfter"),
                "messages_before": facts.get("messagesBefore"),
                "messages_after": facts.get("messagesAfter"),
            }
        note = b.compact(summary, n, id=f"{kind}-ui{n}", at=at, keep=keep, event=event)
        if kind == "range":
            self._place(note, facts["range"][0])
        elif kind == "roo_truncation":
            self._place(note, self.markers.get(facts.get("truncationId"), 0))

    def _place(self, note: str, at: int) -> None:
        """Put a truncation's note where its marker stands: after the kept messages before API message `at`."""
        index = {mid: i for i, ids in self.api_of.items() for mid in ids}
        rest = [m for m in self.b.view if m != note]
        before = [m for m in rest if index.get(m, at) < at]
        self.b.view = before + [note] + rest[len(before) :]

    def _tagged(self, key: str, value: Any) -> set[str]:
        return {mid for i, tags in self.tags.items() if tags.get(key) == value for mid in self.api_of.get(i, [])}

    # -- with the API history ---------------------------------------------------------------------------
    def read_api(self, api: list[Any], has_ui: bool) -> None:
        b = self.b
        done = [0]
        k = 0
        for i, m in enumerate(api):
            n = i + 1
            if not isinstance(m, dict) or m.get("role") not in ("user", "assistant"):
                b.warn(n, "not a message with a role of user or assistant; skipped")
                continue
            self.tags[i] = {key: m[key] for key in ("condenseParent", "truncationParent") if key in m}
            at = _ts(m.get("ts"))
            content = m.get("content")
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list):
                b.warn(n, "content is neither text nor a list of blocks; skipped")
                continue
            blocks = [block for block in blocks if isinstance(block, dict)]
            if m.get("isTruncationMarker"):
                self.markers[m.get("truncationId")] = i
            if m.get("isSummary") or m.get("isTruncationMarker"):
                if not has_ui:  # the ui's event carries the sizes; without it the marker is the compaction
                    self._api_only_change(i, m, blocks, at)
                continue
            if m["role"] == "assistant":
                if has_ui:
                    self.apply_changes(k, done)
                    if k >= len(self.requests):
                        b.warn(n, f"assistant message {k + 1} has no api_req_started in {UI}; its usage is unknown")
                    elif at is None:
                        at = self.requests[k][2]
                self._assistant(i, n, m, blocks, at, k, has_ui)
                k += 1
            else:
                self._user(i, n, blocks, at)
        if has_ui and k != len(self.requests):
            b.warnings.append(
                f"{self.ui_file}: {len(self.requests)} api_req_started for {k} assistant messages in "
                f"{API}: the requests are paired in order"
            )
        self.apply_changes(k, done)

    def _api_only_change(self, i: int, m: dict[str, Any], blocks: list[dict[str, Any]], at: float | None) -> None:
        text = "\n".join(x["text"] for x in blocks if isinstance(x.get("text"), str))
        if m.get("isSummary"):
            gone = self._tagged("condenseParent", m.get("condenseId"))
            event = {"source": FORMAT, "kind_of": "condense"}
        else:
            # Its marker's place is all the file says of a truncation's moment without the ui's event.
            gone = self._tagged("truncationParent", m.get("truncationId"))
            event = {"source": FORMAT, "kind_of": "truncation"}
        keep = [mid for mid in self.b.view if mid not in gone]
        note = self.b.compact(text, i + 1, id=f"api{i + 1}-note", at=at, keep=keep, event=event)
        if not m.get("isSummary"):
            self._place(note, i)
        self.api_of[i] = [note]

    def _user(self, i: int, n: int, blocks: list[dict[str, Any]], at: float | None) -> None:
        b = self.b
        before = set(b.view)
        texts = []
        results = 0
        open_calls, self.calls = self.calls, []
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "tool_result":
                call = block.get("tool_use_id")
                open_calls = [c for c in open_calls if c[0] != call]
                b.result(call if isinstance(call, str) else "", _result_text(block.get("content")), n, at, id=f"api{n}-result{j}")
                results += 1
            elif kind == "text" and isinstance(block.get("text"), str):
                answered = _text_result_call(block["text"], open_calls)
                if answered is None:
                    texts.append(block["text"])
                    continue
                open_calls.remove(answered)
                b.result(answered[0], block["text"], n, at, id=f"api{n}-result{j}")
                results += 1
            elif kind == "image":
                texts.append("[image]")
        for call, _name in open_calls:
            b.result(call, MISSING_RESULT, n, at, id=f"api{n}-missing-{call}", metadata={"synthesised": "result missing"})
            results += 1
        if texts or not results:
            text = "\n\n".join(texts)
            self._cwd(text)
            b.add(f"api{n}", "instruction", {"instruction": text}, n, at=at)
        self.api_of[i] = [m for m in b.view if m not in before]

    def _assistant(self, i: int, n: int, m: dict[str, Any], blocks: list[dict[str, Any]], at: float | None, k: int, has_ui: bool) -> None:
        b = self.b
        info = m.get("modelInfo")
        model = info.get("modelId") if isinstance(info, dict) and isinstance(info.get("modelId"), str) else None
        if isinstance(info, dict) and isinstance(info.get("providerId"), str) and self.provider is None:
            self.provider = info["providerId"]
        rid = f"api{n}"
        before = set(b.view)
        self.calls = []
        b.start_response(rid, n, at, model, {"model": model} if model else None)
        b.report_usage(self.usage(k, model) if has_ui else self._metrics(n, m.get("metrics")))
        for j, block in enumerate(blocks):
            kind = block.get("type")
            if kind == "text" and isinstance(block.get("text"), str):
                b.turn_text(block["text"])
            elif kind in ("thinking", "redacted_thinking"):
                b.turn_thinking(_text(block.get("thinking"), "[redacted]"))
            elif kind == "tool_use":
                call, name = block.get("id"), block.get("name")
                if isinstance(call, str):
                    self.calls.append((call, name if isinstance(name, str) else ""))
                b.turn_call(
                    call if isinstance(call, str) else f"{rid}-call{j}", name if isinstance(name, str) else "", block.get("input"), n, at
                )
        b.end_turn()
        self.api_of[i] = [m for m in b.view if m not in before]

    def _metrics(self, n: int, metrics: Any) -> Usage | None:
        tokens = metrics.get("tokens") if isinstance(metrics, dict) else None
        if not isinstance(tokens, dict):
            if tokens is not None:
                self.b.warn(n, usage_object_warning(tokens))
            return None
        got, bad = usage_figures(tokens, ("prompt", "completion", "cached"))
        if bad:
            self.b.warn(n, bad_usage_warning(bad))
            return None
        if self.provider in ANTHROPIC_PROVIDERS:
            return Usage(input=got["prompt"], cache_read=got["cached"], output=got["completion"])
        cached = min(got["cached"], got["prompt"])
        return Usage(input=got["prompt"] - cached, cache_read=cached, output=got["completion"])

    # -- without the API history: the panel's messages ------------------------------------------------------
    def read_ui_only(self) -> None:
        b = self.b
        done = [0]
        k = 0
        calls: list[str] = []  # the calls of the response before: the next request's text opens on their results
        for n, m in enumerate(self.ui, 1):
            if not isinstance(m, dict):
                continue
            at = _ts(m.get("ts"))
            say, ask = m.get("say"), m.get("ask")
            text = _text(m.get("text"))
            if say == "api_req_started":
                b.end_turn()
                self.apply_changes(k, done)
                request = self.requests[k][1].get("request") if k < len(self.requests) else None
                if isinstance(request, str) and request:
                    self._cwd(request)
                    results, rest = split_results(request, len(calls))  # the calls' results, then the instruction
                    for j, (call, result) in enumerate(zip(calls, results)):
                        b.result(call, result, n, at, id=f"ui{n}-result{j}")
                    if rest or not results:
                        b.add(f"ui{n}-request", "instruction", {"instruction": rest}, n, at=at)
                calls = []
                info = m.get("modelInfo")
                model = info.get("modelId") if isinstance(info, dict) and isinstance(info.get("modelId"), str) else None
                b.start_response(f"ui{n}", n, at, model, {"model": model} if model else None)
                b.report_usage(self.usage(k, model))
                k += 1
            elif say == "user_feedback" or say == "text" and k == 0:
                # Shown in the panel; what was sent is the next request's `request` text, which repeats it.
                b.end_turn()
                b.add(f"ui{n}", "instruction", {"instruction": text}, n, at=at, in_view=False)
            elif not b.turn_open:
                b.unsent(f"cline {m.get('type')}/{say or ask}", n, 0)
            elif say == "text":
                b.turn_text(text)
            elif say == "reasoning":
                b.turn_thinking(text)
            elif say in ("tool", "command", "use_mcp_server") or ask in ("tool", "command", "use_mcp_server"):
                b.turn_call(f"ui{n}-call", *ui_call(str(say or ask), text), n, at)
                calls.append(f"ui{n}-call")
            else:
                b.unsent(f"cline {m.get('type')}/{say or ask}", n, 0)
        b.end_turn()
        self.apply_changes(k, done)


def _text(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _text_result_call(text: str, calls: list[tuple[str, str]]) -> tuple[str, str] | None:
    """The open call (id, name) a text block is the written-as-text result of: the first of its tool's name."""
    found = _TEXT_RESULT.match(text) if calls else None
    if found is None:
        return None
    name = found.group(1) or found.group(2)
    return next((call for call in calls if call[1] == name), None)


def _result_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(x["text"] if isinstance(x, dict) and isinstance(x.get("text"), str) else "[image]" for x in content)
    return json.dumps(content, ensure_ascii=False)


def _is_range(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 2 and all(type(x) is int and 0 <= x < 2**31 for x in value) and value[0] <= value[1]


def _ts(value: Any) -> float | None:
    """Cline stamps messages with Date.now(), milliseconds since the epoch."""
    if type(value) is int and 0 < value < 10**14:
        return value / 1000
    return parse_time(value) if isinstance(value, str) else None


# -- where the three extensions keep their tasks -------------------------------------------------------------
EXTENSIONS = ("saoudrizwan.claude-dev", "rooveterinaryinc.roo-cline", "kilocode.kilo-code")
EDITORS = ("Code", "Code - Insiders", "VSCodium", "Cursor", "Windsurf")
# VS Code's user data under the home (Linux, macOS); $VSCODE_APPDATA replaces both (VS Code's paths.js).
APPDATA = (".config", "Library/Application Support", "")


def _session_files(root: Path) -> Iterator[Path]:
    """`<editor>/User/globalStorage/<extension>/tasks/<id>/`: its ui_messages.json, else its API history."""
    seen: set[Path] = set()
    for appdata in APPDATA:
        for editor in EDITORS:
            for extension in EXTENSIONS:
                tasks = root / appdata / editor / "User" / "globalStorage" / extension / "tasks"
                for task in _children(tasks):
                    if task in seen:
                        continue
                    seen.add(task)
                    for name in (UI, API):
                        if (task / name).is_file():
                            yield task / name
                            break


def _where(root: Path) -> str:
    """The task folders _session_files looks in under `root`, as one brace pattern."""
    return f"{root}/{{{','.join(APPDATA)}}}/{{{','.join(EDITORS)}}}/User/globalStorage/{{{','.join(EXTENSIONS)}}}/tasks"


def _children(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if p.is_dir())
    except OSError:
        return []


def _project(path: Path) -> str:
    """A task names no project but in its requests' environment details: its extension's folder then."""
    return path.parent.parent.parent.name


SPEC = FormatSpec(
    name=FORMAT,
    title="Cline (and Roo Code, Kilo Code)",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=False,
    follow=None,
    first_part=False,  # one JSON document per file
    # Five editors' user data in two places each (APPDATA): the folder is the home (or $VSCODE_APPDATA) itself,
    # and _session_files looks in each editor's globalStorage under it.
    sessions=Sessions(env="VSCODE_APPDATA", default="", folder=".", files=_session_files, project=_project, where=_where),
    window=no_window,
    compaction=no_compaction,
    no_summary="Cline's summarising call is not recorded in the task's files",
    cache="explicit",
    usage_precision="exact",
    no_requests=None,
)

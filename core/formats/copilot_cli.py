"""Reader for GitHub Copilot CLI sessions (`session-state/<id>/events.jsonl`): a request per assistant.message.

Copilot CLI is closed source: the layout is as its events files show it and as the parsers that read them do
(Piebald-AI/splitrail @ 56e4be45a7ea4734b07abc7691010ef7ce844e43 : src/analyzers/copilot_cli.rs; ryoppippi/ccusage
rust/crates/ccusage/src/adapter/copilot/README.md: `usage.inputTokens` includes the cache reads and writes).
Mapping, in the vocabulary of DESIGN.md:
- Each line is an event `{type, data, id, timestamp, parentId}`. `session.start` (and `session.resume`, a new
  process on the same session) names the session, its folder (`context.cwd`) and model: extras["header"].
- `system.message` -> a system message; `user.message` -> an instruction (`transformedContent`, the text the
  model was given, else `content`).
- `assistant.message` -> one model call: request k, whose view is every message before it; its `content`, its
  `reasoningText` and the `assistant.reasoning` events before it (metadata "thinking"), one action_request per
  `toolRequests[]` entry. `tool.execution_complete` -> the action_response (`result.content`), linked by
  `toolCallId`. Events of a subagent (`parentToolCallId`) are its own, not the session's requests.
- `session.compaction_start` / `session.compaction_complete` -> a compaction: the view becomes a note holding
  `summaryContent`, with the sizes before (`preCompactionTokens`) and after (`postCompactionTokens`).
  `session.truncation` drops its `messagesRemovedDuringTruncation` oldest chat messages from the view.
- Every other event (turn bounds, hooks, tool starts, infos, errors, checkpoints, aborts) is never sent: unsent.

Usage. The events carry none per call: `session.shutdown` holds, per process, each model's totals
(`modelMetrics.<model>.usage`: inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens; `requests.count`),
and each assistant.message its `outputTokens`. So, unless an OpenTelemetry export of the session is found, the
per-request figures are foldscope's estimates: each process's input totals are shared among its requests of that
model in proportion to their size (the head Copilot counted at shutdown, systemTokens + toolDefinitionsTokens,
plus the request's characters over four), and its output total in proportion to the messages' outputTokens. The
sums equal the totals exactly; the request counts and the output are checked against them and any difference is
said. The session says so (extras[ESTIMATED_USAGE] and its first warning): every screen names the figures.

The OpenTelemetry file export (COPILOT_OTEL_FILE_EXPORTER_PATH, or `<copilot home>/otel/*.jsonl`) has usage per
call: one span a line as microsoft/vscode-copilot-chat src/platform/otel/node/fileExporters.ts serialises it
(`name`, `startTime` [s, ns], `attributes`), a `chat` span per model call with the GenAI attributes
(genAiAttributes.ts: gen_ai.usage.input_tokens, its cache_read and cache_creation parts included, as the
semantic conventions say; gen_ai.usage.output_tokens; gen_ai.conversation.id, the session's id). When the
session's chat spans are as many as its requests, they are its usage, in order, as the provider reported it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from foldscope.core.formats.spec import FormatSpec, Sessions, no_compaction, no_window
from foldscope.core.formats.stream import SessionBuilder, feed_all, head_values, iter_json_lines, parse_time, text_of
from foldscope.core.model.session import ESTIMATED_USAGE, Message, Session, Usage, usage_figures

FORMAT = "copilot_cli"
OTEL_ENV = "COPILOT_OTEL_FILE_EXPORTER_PATH"
Warn = Callable[[int, str], None]  # a problem at a line of the events file (0: of the session as a whole)
CHARS_PER_TOKEN = 4  # the estimate's rough size of a request's text; the totals then scale every request alike
_KINDS = ("session.", "user.", "assistant.", "tool.", "system.", "hook.", "subagent.", "abort")
_USAGE_KEYS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def sniff(head: bytes, path: Path) -> bool:
    """Copilot CLI's events: `{type: "session.start", data: {...}, id, timestamp}`, a dotted type and a data object."""
    values = head_values(head, 3)
    if not values:
        return False
    first = values[0]
    return (
        isinstance(first, dict)
        and isinstance(first.get("type"), str)
        and first["type"].startswith(_KINDS)
        and isinstance(first.get("data"), dict)
        and "parentId" in first
    )


def read(path: Path) -> Session:
    path = Path(path)
    builder = SessionBuilder(path, FORMAT)
    reader = _Reader(builder)
    feed_all(iter_json_lines(path, builder), reader.feed, builder)
    return reader.finish(builder.build())


class _Reader:
    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.model: str | None = None
        self.reasoning: list[str] = []  # assistant.reasoning events waiting for the message they precede
        self.calls: list[tuple[int, str | None, int | None]] = []  # each request: its process, model, outputTokens
        self.process = 0  # the shutdowns so far: request k's usage is in the next shutdown's totals
        self.shutdowns: list[tuple[int, dict[str, Any]]] = []
        self.compacting: dict[str, Any] | None = None
        self.subagent_calls = 0
        self.message: str | None = None  # the messageId of the response open now

    def feed(self, line: int, offset: int, value: Any) -> None:
        b = self.b
        if not isinstance(value, dict) or not isinstance(value.get("type"), str):
            b.warn(line, "an event without a string `type`; skipped")
            return
        kind, data = value["type"], value.get("data")
        if not isinstance(data, dict):
            b.warn(line, f"a {kind} event whose `data` is not an object; skipped")
            return
        at = parse_time(value.get("timestamp"))
        if data.get("parentToolCallId") is not None and kind in ("assistant.message", "tool.execution_complete"):
            self.subagent_calls += kind == "assistant.message"
            b.unsent(f"copilot {kind} (subagent)", line, offset)
            return
        if kind in ("session.start", "session.resume"):
            b.extras.setdefault("header", data)
            context = data.get("context")
            if isinstance(context, dict) and isinstance(context.get("cwd"), str) and "cwd" not in b.extras:
                b.extras["cwd"] = context["cwd"]
            self._set_model(data.get("selectedModel"))
            b.unsent(f"copilot {kind}", line, offset)
        elif kind == "session.model_change":
            self._set_model(data.get("newModel"))
            b.unsent(f"copilot {kind}", line, offset)
        elif kind == "system.message":
            b.add(str(value.get("id") or f"system-L{line}"), "system", {"system_message": text_of(data.get("content"))}, line, at=at)
        elif kind == "user.message":
            text = data.get("transformedContent")
            text = text if isinstance(text, str) else text_of(data.get("content"))
            b.add(str(value.get("id") or f"user-L{line}"), "instruction", {"instruction": text}, line, at=at)
        elif kind == "assistant.reasoning":
            if isinstance(data.get("content"), str):
                self.reasoning.append(data["content"])
        elif kind == "assistant.message":
            self._response(line, at, value, data)
        elif kind == "tool.execution_complete":
            call = data.get("toolCallId")
            result = data.get("result")
            output = result.get("content") if isinstance(result, dict) else result
            meta = {} if data.get("success", True) is not False else {"is_error": True}
            b.result(
                call if isinstance(call, str) else "",
                output if isinstance(output, str) else text_of(output),
                line,
                at,
                id=str(value.get("id") or f"result-L{line}"),
                metadata=meta,
            )
        elif kind == "session.compaction_start":
            self.compacting = data
            b.unsent(f"copilot {kind}", line, offset)
        elif kind == "session.compaction_complete":
            self._compaction(line, at, value, data)
        elif kind == "session.truncation":
            self._truncation(line, at, data)
        elif kind == "session.shutdown":
            self.shutdowns.append((line, data))
            self.process += 1
            b.unsent(f"copilot {kind}", line, offset)
        else:
            b.unsent(f"copilot {kind}", line, offset)

    def _set_model(self, model: Any) -> None:
        if isinstance(model, str) and model and model != "auto":
            self.model = model

    def _response(self, line: int, at: float | None, value: dict[str, Any], data: dict[str, Any]) -> None:
        b = self.b
        model = data.get("model") if isinstance(data.get("model"), str) else self.model
        mid = str(data.get("messageId") or value.get("id") or f"assistant-L{line}")
        out = _count(data.get("outputTokens"))
        chunk = _count(data.get("chunkIndex"))
        if chunk and b.turn_open and mid == self.message and self.calls:
            # A later chunk of the same message (chunkIndex, chunkCount): the same call, its text and requests go on.
            process, was_model, was_out = self.calls[-1]
            self.calls[-1] = (process, was_model, None if was_out is None and out is None else (was_out or 0) + (out or 0))
        else:
            b.start_response(mid, line, at, model, {"model": model} if model else None)
            self.calls.append((self.process, model, out))
            self.message = mid
        for thought in self.reasoning:
            b.turn_thinking(thought)
        self.reasoning = []
        if isinstance(data.get("reasoningText"), str):
            b.turn_thinking(data["reasoningText"])
        if isinstance(data.get("content"), str):
            b.turn_text(data["content"])
        requests = data.get("toolRequests")
        for n, call in enumerate(requests if isinstance(requests, list) else ()):
            if not isinstance(call, dict):
                b.warn(line, f"tool request {n} is not an object; skipped")
                continue
            call_id, name = call.get("toolCallId"), call.get("name")
            b.turn_call(
                call_id if isinstance(call_id, str) else f"{mid}-call{n}",
                name if isinstance(name, str) else "",
                _arguments(call.get("arguments")),
                line,
                at,
            )

    def _compaction(self, line: int, at: float | None, value: dict[str, Any], data: dict[str, Any]) -> None:
        b = self.b
        start, self.compacting = self.compacting or {}, None
        if data.get("success") is False:
            b.warn(line, "a compaction that did not succeed; the view is left as it was")
            return
        summary = data.get("summaryContent")
        b.end_turn()
        b.close_request()
        before = _count(data.get("preCompactionTokens"), start.get("preCompactionTokens"))
        b.compact(
            summary if isinstance(summary, str) else text_of(summary),
            line,
            id=str(value.get("id") or f"compaction-L{line}"),
            at=at,
            keep=[m for m in b.view if b.record.get(m).kind == "system"],
            event={"source": FORMAT, "tokens_before": before, "tokens_after": _count(data.get("postCompactionTokens"))},
        )

    def _truncation(self, line: int, at: float | None, data: dict[str, Any]) -> None:
        b = self.b
        removed = _count(data.get("messagesRemovedDuringTruncation"))
        if not removed:
            return
        b.end_turn()
        b.close_request()
        # Copilot's chat messages: a system, a user, an assistant with its tool calls, a tool result each.
        groups: list[list[str]] = []
        for mid in b.view:
            kind = b.record.get(mid).kind
            if kind == "action_request" and groups:
                groups[-1].append(mid)
            elif kind != "system":
                groups.append([mid])
        gone = {m for group in groups[:removed] for m in group}
        b.compact(
            f"[Copilot CLI truncated the conversation: its {removed} oldest messages left out]",
            line,
            id=f"truncation-L{line}",
            at=at,
            keep=[m for m in b.view if m not in gone],
            event={
                "source": FORMAT,
                "kind_of": "truncation",
                "messages_removed": removed,
                "tokens_before": _count(data.get("preTruncationTokensInMessages")),
                "tokens_after": _count(data.get("postTruncationTokensInMessages")),
            },
        )

    # -- usage: the OpenTelemetry export's per call, else the shutdowns' totals shared out ---------------------
    def finish(self, session: Session) -> Session:
        notes: list[str] = []

        def warn(line: int, problem: str) -> None:
            notes.append(f"{session.source}: line {line}: {problem}" if line else f"{session.source}: {problem}")

        if self.subagent_calls:
            session.extras["subagent_calls"] = self.subagent_calls
        calls = self.calls[: len(session.trace)]
        header = session.extras.get("header")
        sid = header.get("sessionId") if isinstance(header, dict) else None
        spans = otel_usage(Path(session.source), sid if isinstance(sid, str) else None, warn) if calls else []
        if spans and len(spans) == len(calls):
            session.trace[:] = [replace(r, usage=u) for r, u in zip(session.trace, spans, strict=True)]
            session.extras["usage_source"] = "OpenTelemetry export"
        elif spans:
            warn(0, f"the OpenTelemetry export holds {len(spans)} chat spans for {len(calls)} requests; not used")
        if "usage_source" not in session.extras and self.shutdowns and calls:
            why = _estimate(session, calls, self.shutdowns, warn)
            if why is not None:
                session.warnings.insert(0, f"{session.source}: {why}")
        session.warnings.extend(notes)
        return session


def _arguments(raw: Any) -> Any:
    """A tool request's arguments: an object, or JSON text of one (older versions wrote a string)."""
    if isinstance(raw, str):
        try:
            parsed = json.loads(raw)
        except ValueError:
            return {"input": raw}
        return parsed if isinstance(parsed, dict) else {"input": raw}
    return raw if isinstance(raw, dict) else {}


def _count(*values: Any) -> int | None:
    """The first value that is a count (an int, not a bool, not negative), else None."""
    return next((v for v in values if isinstance(v, int) and not isinstance(v, bool) and v >= 0), None)


def _chars(message: Message) -> int:
    """A message's size in characters: its texts, and its other fields as JSON."""
    n = 0
    for value in message.content.values():
        n += len(value) if isinstance(value, str) else len(json.dumps(value, ensure_ascii=False, default=str))
    return n


def share(total: int, weights: Sequence[int]) -> list[int]:
    """`total` shared in proportion to `weights` (equally when they are all 0), rounded so the parts sum to it."""
    if not weights:
        return []
    if sum(weights) <= 0:
        weights = [1] * len(weights)
    whole = sum(weights)
    parts = [total * w // whole for w in weights]  # whole numbers throughout: exact at any size
    rests = [total * w % whole for w in weights]
    for k in sorted(range(len(weights)), key=lambda k: -rests[k])[: total - sum(parts)]:
        parts[k] += 1
    return parts


def _estimate(
    session: Session, calls: list[tuple[int, str | None, int | None]], shutdowns: list[tuple[int, dict[str, Any]]], warn: Warn
) -> str | None:
    """Each request's usage shared out of its process's totals (the module's docstring says how); what to say of it,
    or None when no totals could be shared."""
    chars: dict[str, int] = {}
    sizes = []
    for request in session.trace:
        n = 0
        for mid in request.view:
            if mid not in chars:
                chars[mid] = _chars(session.record.get(mid))
            n += chars[mid]
        sizes.append(n)
    usages: list[Usage | None] = [None] * len(calls)
    totals: dict[str, dict[str, int]] = {}
    for process, (line, data) in enumerate(shutdowns):
        head = sum(_count(data.get(key)) or 0 for key in ("systemTokens", "toolDefinitionsTokens"))
        for model, usage, count in _process_totals(line, data, warn):
            mine = [k for k, (p, m, _out) in enumerate(calls) if p == process and (model is None or m == model)]
            name = model or "every model (tokenDetails)"
            if not isinstance(usage, dict):
                if mine:
                    warn(line, f"{name}: no usage totals at shutdown; its {len(mine)} requests' usage is unknown")
                continue
            got, bad = usage_figures(usage, _USAGE_KEYS)
            if bad:
                warn(line, f"{name}: usage totals of the wrong type ({', '.join(bad)}); its requests' usage is unknown")
                continue
            said = totals.setdefault(name, dict.fromkeys(("requests", "in_file", *_USAGE_KEYS), 0))
            said["requests"] += count or 0
            said["in_file"] += len(mine)
            for key in _USAGE_KEYS:
                said[key] += got[key]
            if not mine:
                if any(got.values()):
                    warn(line, f"{name}: usage totals at shutdown, but no request of that model in the file")
                continue
            if count is not None and count != len(mine):
                warn(line, f"{name}: Copilot counted {count} requests, the file holds {len(mine)}; the totals are shared among those")
            cached = got["cacheReadTokens"] + got["cacheWriteTokens"]
            if cached > got["inputTokens"]:
                warn(line, f"{name}: cache reads and writes ({cached:,}) exceed the input total ({got['inputTokens']:,})")
            weights = [head * CHARS_PER_TOKEN + sizes[k] for k in mine]  # in quarter tokens: the head, then the text
            fresh = share(max(0, got["inputTokens"] - cached), weights)
            read = share(got["cacheReadTokens"], weights)
            written = share(got["cacheWriteTokens"], weights)
            said_out = [calls[k][2] or 0 for k in mine]
            if sum(said_out) != got["outputTokens"]:
                warn(
                    line,
                    f"{name}: the messages' outputTokens sum to {sum(said_out):,}, the shutdown's total is "
                    f"{got['outputTokens']:,}; the total is shared in their proportion",
                )
            output = share(got["outputTokens"], said_out)
            for n, k in enumerate(mine):
                usages[k] = Usage(input=fresh[n], cache_read=read[n], cache_write=written[n], output=output[n])
    after = sum(1 for p, _m, _o in calls if p >= len(shutdowns))
    if after:
        warn(0, f"{after} requests after the last session.shutdown: no totals cover them, their usage is unknown")
    if not any(u is not None for u in usages):
        return None
    session.trace[:] = [r if u is None else replace(r, usage=u) for r, u in zip(session.trace, usages, strict=False)] + session.trace[
        len(usages) :
    ]
    why = (
        "Copilot CLI records usage only as each model's totals at session.shutdown: every request's usage shown is "
        "foldscope's estimate, the totals shared among the requests by their size (their sums equal the totals)"
    )
    session.extras[ESTIMATED_USAGE] = {"why": why, "totals": totals}
    session.extras["usage_source"] = "estimated from session.shutdown totals"
    return why


def _process_totals(line: int, data: dict[str, Any], warn: Warn) -> list[tuple[str | None, Any, int | None]]:
    """A shutdown's totals: (model, its usage object, its request count) per model; or, when no model has a usage
    object, the process's `tokenDetails` as one usage over every model (None)."""
    metrics = data.get("modelMetrics")
    if not isinstance(metrics, dict):
        warn(line, "a session.shutdown without its modelMetrics object; its requests' usage is unknown")
        return []
    out: list[tuple[str | None, Any, int | None]] = []
    for model, metric in metrics.items():
        metric = metric if isinstance(metric, dict) else {}
        requests = metric.get("requests")
        out.append((model, metric.get("usage"), _count(requests.get("count")) if isinstance(requests, dict) else _count(requests)))
    details = data.get("tokenDetails")
    if isinstance(details, dict) and not any(isinstance(usage, dict) for _m, usage, _c in out):
        figures = {}
        for key, detail in (
            ("inputTokens", "input"),
            ("outputTokens", "output"),
            ("cacheReadTokens", "cache_read"),
            ("cacheWriteTokens", "cache_write"),
        ):
            got = details.get(detail)
            figures[key] = got.get("tokenCount", 0) if isinstance(got, dict) else 0
        counts = [c for _m, _u, c in out if c is not None]
        return [(None, figures, sum(counts) if counts else None)]
    return out


# -- the OpenTelemetry export ------------------------------------------------------------------------------------
def otel_files(events: Path) -> list[Path]:
    """The export files that may hold a session's spans: $COPILOT_OTEL_FILE_EXPORTER_PATH, and the `otel/*.jsonl`
    of the Copilot folder the events file is in (`<home>/session-state/<id>/events.jsonl`)."""
    found = []
    named = os.environ.get(OTEL_ENV, "").strip()
    if named and Path(named).is_file():
        found.append(Path(named))
    folder = events.resolve().parent.parent.parent / "otel"
    try:
        found += sorted(p for p in folder.iterdir() if p.suffix == ".jsonl" and p.is_file())
    except OSError:
        pass
    return list(dict.fromkeys(found))


def otel_usage(events: Path, session_id: str | None, warn: Warn) -> list[Usage]:
    """The session's chat spans' usage, in the order the calls started; [] when no export holds its spans."""
    if session_id is None:
        return []
    spans: list[tuple[float, Usage]] = []
    for path in otel_files(events):
        try:
            handle = open(path, "rb")
        except OSError:
            continue
        with handle:
            for number, raw in enumerate(handle, 1):
                if b'"attributes"' not in raw or session_id.encode() not in raw:
                    continue
                try:
                    span = json.loads(raw)
                except ValueError:
                    warn(0, f"OpenTelemetry export {path}, line {number}: not JSON; skipped")
                    continue
                got = _span_usage(span, session_id)
                if isinstance(got, str):
                    warn(0, f"OpenTelemetry export {path}, line {number}: {got}; skipped")
                elif got is not None:
                    spans.append(got)
    spans.sort(key=lambda s: s[0])
    return [usage for _start, usage in spans]


def _span_usage(span: Any, session_id: str) -> tuple[float, Usage] | str | None:
    """A chat span of the session: (its start, its usage); a problem as text; None for any other span."""
    if not isinstance(span, dict) or not isinstance(span.get("attributes"), dict):
        return None
    attrs = span["attributes"]
    if attrs.get("gen_ai.conversation.id") != session_id or attrs.get("gen_ai.operation.name") != "chat":
        return None
    keys = (
        "gen_ai.usage.input_tokens",
        "gen_ai.usage.output_tokens",
        "gen_ai.usage.cache_read.input_tokens",
        "gen_ai.usage.cache_creation.input_tokens",
    )
    got, bad = usage_figures(attrs, keys)
    if bad:
        return f"chat span usage of the wrong type ({', '.join(bad)})"
    start = span.get("startTime")
    if isinstance(start, list) and len(start) == 2 and all(isinstance(x, int | float) for x in start):
        at = start[0] + start[1] / 1e9
    else:
        at = parse_time(start) or 0.0
    read, written = got["gen_ai.usage.cache_read.input_tokens"], got["gen_ai.usage.cache_creation.input_tokens"]
    fresh = max(0, got["gen_ai.usage.input_tokens"] - read - written)
    return at, Usage(input=fresh, cache_read=read, cache_write=written, output=got["gen_ai.usage.output_tokens"])


class _Followed:
    """The line mapper a follower keeps open between polls: the events file is one line after another."""

    branched = False

    def __init__(self, builder: SessionBuilder) -> None:
        self.b = builder
        self.reader = _Reader(builder)
        self.feed = self.reader.feed

    def snapshot(self) -> Session:
        session = self.b.snapshot()
        if self.reader.shutdowns:  # the totals arrive at shutdown: from then on the requests have their estimates
            return self.reader.finish(session)
        return session


def _session_files(root: Path) -> Iterator[Path]:
    """`session-state/<id>/events.jsonl`, and the flat `session-state/<id>.jsonl` of versions before 1.0."""
    try:
        children = sorted(root.iterdir())
    except OSError:
        return
    for child in children:
        if child.is_dir() and (child / "events.jsonl").is_file():
            yield child / "events.jsonl"
        elif child.suffix == ".jsonl" and child.is_file():
            yield child


def _project(path: Path) -> str:
    """An events file names no folder in its path (its folder is the session's id): the id stands for it."""
    return path.parent.name if path.name == "events.jsonl" else path.stem


SPEC = FormatSpec(
    name=FORMAT,
    title="GitHub Copilot CLI",
    sniff=sniff,
    read=read,
    trace_later=False,
    samples=None,
    unseen_head=True,
    provider_text=False,
    follow=_Followed,
    first_part=False,  # the usage arrives at shutdown, at the file's end
    sessions=Sessions(env="COPILOT_HOME", default=".copilot", folder="session-state", files=_session_files, project=_project),
    window=no_window,
    compaction=no_compaction,
    no_summary="Copilot CLI's compaction call is not recorded in the events file",
    cache="explicit",
    usage_precision="exact",  # where usage is shared out of totals, extras[ESTIMATED_USAGE] says so per session
    no_requests=None,
)
